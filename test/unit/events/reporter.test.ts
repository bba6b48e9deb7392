import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import type { CameraStatus } from '../../../src/ingest/index.js';
import type { Detection } from '../../../src/core/frame.js';
import { letterbox } from '../../../src/core/geometry.js';
import { parseConfig } from '../../../src/config/index.js';
import { Discovery } from '../../../src/publish/ha-discovery.js';
import { Reporter, type ReporterDeps } from '../../helpers/reporting.js';
import {
  topics,
  type CameraStatusPayload,
  type CrossingPayload,
  type DetectionsPayload,
  type EventPayload,
} from '../../../src/publish/topics.js';
import { FakeClock, recordingLog, silentLog } from '../../helpers/fakes.js';
import { FakeMqtt, FakeOutput } from '../../helpers/fake-output.js';
import { tempDir } from '../../helpers/env.js';
import { cameraStatus } from '../../helpers/fake-stages.js';
import { named, plain, SPECIAL_NAMES } from '../../helpers/names.js';
import { CamerasBox } from '../../helpers/cameras-now.js';

const cameraConfig = (yaml: string) =>
  parseConfig(`model:\n  path: m.onnx\ncameras:\n  gate:\n    url: rtsp://h/s\n${yaml}`, 'c.yaml', {}).config;

const parse = <T>(s: string): T => JSON.parse(s) as T;

const det = (label: string, score: number, box: [number, number, number, number]): Detection => ({
  label,
  score,
  box,
});

const deps = (
  out: FakeOutput,
  base: string,
  cameraStatus: ReporterDeps['cameraStatus'] = () => undefined,
  detections: ReporterDeps['detections'] = { publish: 'every_frame', heartbeat_s: 10 },
): ReporterDeps => ({
  out,
  topics: topics(base),
  clock: new FakeClock(),
  cameraStatus,
  log: silentLog,
  detections,
});

describe('reporter', () => {
  const cfg = cameraConfig('    objects:\n      filters:\n        person: { min_score: 0.5 }\n');
  const geometry = letterbox(640, 480, 320);
  const result = (seq: number, ts: number, detections: Detection[], cached = false) => ({
    camera: 'gate',
    seq,
    ts,
    geometry,
    cached,
    detections,
    data: Buffer.alloc(0),
  });

  it('publishes detections per frame, events, and retained counts only when they change', () => {
    const out = new FakeOutput();
    const r = new Reporter(cfg.cameras, { ...cfg.events, min_frames: 2, end_after_s: 1 }, deps(out, 'argus'));
    r.onResult(result(1, 1000, [det('person', 0.9, [1, 2, 3, 4]), det('person', 0.2, [50, 50, 60, 60])]));
    r.onResult(result(2, 1200, [det('person', 0.9, [1, 2, 3, 4])], true));
    r.onResult(result(3, 1400, [det('person', 0.9, [1, 2, 3, 4])], true));
    const d = out.of('detection');
    assert.equal(d.length, 3);
    assert.equal(d[0]!.topic, 'argus/cameras/gate/detections');
    assert.deepEqual(parse<DetectionsPayload>(d[0]!.payload), {
      camera: 'gate',
      ts: new Date(1000).toISOString(),
      frame: 1,
      cached: false,
      width: 640,
      height: 480,
      detections: [{ label: 'person', score: 0.9, box: [1, 2, 3, 4], id: null, track: 'tentative' }],
    });
    assert.equal(parse<DetectionsPayload>(d[1]!.payload).cached, true);
    // Confirmed at its second frame: its detections carry the id of its event (`new`).
    const newId = parse<EventPayload>(out.of('event')[0]!.payload).id;
    assert.deepEqual(
      d.slice(1).map((m) => parse<DetectionsPayload>(m.payload).detections.map((x) => [x.id, x.track])),
      [[[newId, 'confirmed']], [[newId, 'confirmed']]],
    );
    const ev = out.of('event');
    assert.equal(ev.length, 1);
    assert.equal(ev[0]!.topic, 'argus/events');
    const e = parse<EventPayload>(ev[0]!.payload);
    assert.deepEqual(
      [
        e.type,
        e.label,
        e.camera,
        e.start_ts,
        e.end_ts,
        e.stationary,
        e.zones,
        e.current_zones,
        e.entered_zones,
      ],
      ['new', 'person', 'gate', new Date(1000).toISOString(), null, false, [], [], []],
    );
    assert.equal('startTs' in e || 'currentZones' in e, false, 'camelCase stays inside');
    assert.deepEqual(
      out.of('state').map((s) => [s.topic, s.payload]),
      [
        ['argus/cameras/gate/person', '1'],
        ['argus/cameras/gate/person/active', '1'],
      ],
    );
    r.tick(2500);
    assert.equal(out.of('event').length, 1, 'time alone ends nothing');
    r.onResult(result(4, 2500, []));
    r.onResult(result(5, 2700, []));
    assert.equal(parse<EventPayload>(out.of('event')[1]!.payload).type, 'end');
    assert.deepEqual(
      out
        .of('state')
        .slice(2)
        .map((s) => [s.topic, s.payload]),
      [
        ['argus/cameras/gate/person', '0'],
        ['argus/cameras/gate/person/active', '0'],
      ],
    );
  });

  it("by default publishes a camera's detections when they change, and a heartbeat; events and counts as ever", () => {
    const out = new FakeOutput();
    const changes = { publish: 'changes', heartbeat_s: 10 } as const;
    const r = new Reporter(
      cfg.cameras,
      { ...cfg.events, min_frames: 2 },
      deps(out, 'argus', undefined, changes),
    );
    const person = det('person', 0.9, [100, 100, 200, 300]);
    // 5 frames/s for 30 s: the person stands still (cached answers, and an analysed one at 10 s,
    // a pixel off); a weak detection below the camera's min_score comes and goes unseen.
    for (let seq = 1, ts = 0; ts < 30_000; seq++, ts += 200) {
      const analysed = seq === 1 || ts === 10_000;
      const box: [number, number, number, number] =
        ts >= 10_000 ? [101, 100, 201, 300] : [100, 100, 200, 300];
      const weak = seq % 3 === 0 ? [det('person', 0.2, [500, 10, 520, 40])] : [];
      r.onResult(result(seq, ts, [{ ...person, box }, ...weak], !analysed));
    }
    const d = out.of('detection').map((m) => parse<DetectionsPayload>(m.payload));
    assert.deepEqual(
      d.map((m) => [m.frame, m.cached]),
      [
        [1, false],
        [2, true],
        [52, true],
        [102, true],
      ],
      'the first frame, the frame that confirmed the person (its detection now has an id), then a heartbeat every 10 s',
    );
    assert.deepEqual(
      out
        .of('event')
        .map((m) => [parse<EventPayload>(m.payload).type, parse<EventPayload>(m.payload).stationary]),
      [
        ['new', false],
        ['update', true],
      ],
      'its events, as ever: new, then stationary after 10 s',
    );
    r.onResult(result(151, 30_000, [], true));
    assert.deepEqual(
      parse<DetectionsPayload>(out.of('detection')[4]!.payload).detections,
      [],
      'gone: at once',
    );
  });

  it('starts the counts of tracked labels (and their zones) at 0, and those of cameras a reload adds', async () => {
    const tracked = cameraConfig(
      [
        '    objects:',
        '      track: [person, car]',
        '    zones:',
        '      drive:',
        '        points: [[0, 0], [10, 0], [10, 10]]',
        '        objects: [car]',
      ].join('\n') + '\n',
    );
    const out = new FakeOutput();
    const r = new Reporter({}, tracked.events, deps(out, 'argus'));
    await r.start();
    assert.deepEqual(out.of('state'), [], 'no cameras, nothing');
    r.setCameras(tracked.cameras);
    assert.deepEqual(
      out.of('state').map((s) => `${s.topic} ${s.payload}`),
      [
        'argus/cameras/gate/person 0',
        'argus/cameras/gate/person/active 0',
        'argus/cameras/gate/car 0',
        'argus/cameras/gate/car/active 0',
        'argus/cameras/gate/zones/drive/car 0',
        'argus/cameras/gate/zones/drive/car/active 0',
        'argus/cameras/gate/zones/drive/car/dwell_s 0',
      ],
    );
    const again = new FakeOutput();
    const restarted = new Reporter(tracked.cameras, tracked.events, deps(again, 'argus'));
    await restarted.start();
    assert.equal(again.of('state').length, 7, 'at start too');
    await r.stop();
    await restarted.stop();
  });

  it('drops counts within a second of the object leaving, before its end', () => {
    const out = new FakeOutput();
    const r = new Reporter(cfg.cameras, { ...cfg.events, min_frames: 1, end_after_s: 3 }, deps(out, 'argus'));
    r.onResult(result(1, 1000, [det('person', 0.9, [1, 2, 30, 80])]));
    r.onResult(result(2, 1200, []));
    r.onResult(result(3, 2000, []));
    assert.equal(out.of('state').at(-1)!.payload, '1', 'held for a second');
    r.tick(5000);
    assert.equal(out.of('state').at(-1)!.payload, '1', 'time alone changes no count');
    r.onResult(result(4, 2300, []));
    assert.deepEqual(
      out.of('state').map((s) => [s.topic, s.payload]),
      [
        ['argus/cameras/gate/person', '1'],
        ['argus/cameras/gate/person/active', '1'],
        ['argus/cameras/gate/person', '0'],
        ['argus/cameras/gate/person/active', '0'],
      ],
    );
    assert.deepEqual(
      out.of('event').map((e) => parse<EventPayload>(e.payload).type),
      ['new'],
      'its track is still in the lost buffer',
    );
  });

  it("starts at 0 a camera that tracks every label: its zones' objects, and Home Assistant's default labels while discovery runs", async () => {
    const every = (ha: boolean, zones: string[]) =>
      parseConfig(
        [
          'model:',
          '  path: m.onnx',
          `home_assistant: { enabled: ${ha}, default_labels: [person] }`,
          'cameras:',
          '  gate:',
          '    url: rtsp://h/s',
          '    zones:',
          ...zones.flatMap((z) => [
            `      ${z}:`,
            '        points: [[0, 0], [10, 0], [10, 10]]',
            '        objects: [car]',
          ]),
        ].join('\n') + '\n',
        'c.yaml',
        {},
      ).config;
    const run = async (ha: boolean) => {
      const cfg = every(ha, ['drive']);
      const out = new FakeMqtt();
      const d = deps(out, 'argus');
      const box = new CamerasBox(cfg.cameras);
      const homeAssistant = new Discovery(cfg, box.now, {
        out,
        topics: d.topics,
        clock: d.clock,
        log: silentLog,
      });
      const r = new Reporter(cfg.cameras, cfg.events, { ...d, homeAssistant, box });
      await r.start();
      const zeros = () =>
        out
          .of('state')
          .filter((s) => s.payload === '0')
          .map((s) => s.topic);
      return { r, out, zeros };
    };
    const off = await run(false);
    assert.deepEqual(off.zeros(), [
      'argus/cameras/gate/zones/drive/car',
      'argus/cameras/gate/zones/drive/car/active',
      'argus/cameras/gate/zones/drive/car/dwell_s',
    ]);
    assert.deepEqual(off.r.countsOf('gate'), { labels: named(), zones: named({ drive: named({ car: 0 }) }) });
    await off.r.stop();

    const on = await run(true);
    assert.deepEqual(on.zeros(), [
      'argus/cameras/gate/person',
      'argus/cameras/gate/person/active',
      'argus/cameras/gate/zones/drive/car',
      'argus/cameras/gate/zones/drive/car/active',
      'argus/cameras/gate/zones/drive/car/dwell_s',
    ]);
    assert.deepEqual(on.r.countsOf('gate'), {
      labels: named({ person: 0 }),
      zones: named({ drive: named({ car: 0 }) }),
    });
    // A reload that adds a zone starts its counts at 0; those the camera had are not sent again.
    on.out.sent = [];
    on.r.setCameras(every(true, ['drive', 'yard']).cameras);
    assert.deepEqual(on.zeros(), [
      'argus/cameras/gate/zones/yard/car',
      'argus/cameras/gate/zones/yard/car/active',
      'argus/cameras/gate/zones/yard/car/dwell_s',
    ]);
    await on.r.stop();
  });

  it('a reload that removes or disables a camera, or switches its detection off, ends its objects at once, and zeroes its counts', () => {
    for (const change of ['removed', 'disabled', 'detection off'] as const) {
      const out = new FakeOutput();
      const r = new Reporter(cfg.cameras, { ...cfg.events, min_frames: 1 }, deps(out, 'argus'));
      r.onResult(result(1, 1000, [det('person', 0.9, [1, 2, 30, 80])]));
      const gate = cfg.cameras.gate!;
      r.setCameras(
        change === 'removed'
          ? {}
          : { gate: change === 'disabled' ? { ...gate, enabled: false } : { ...gate, detect: false } },
      );
      // An answer in flight when detection went off is no event.
      r.onResult(result(2, 1200, [det('person', 0.9, [1, 2, 30, 80])]));
      assert.deepEqual(
        out.of('event').map((e) => parse<EventPayload>(e.payload).type),
        ['new', 'end'],
        change,
      );
      assert.equal(
        out.of('state').find((m) => m.topic === 'argus/cameras/gate/person' && m.payload === '0') !==
          undefined,
        true,
        change,
      );
    }
  });

  it('publishes retained counts per zone and label as objects enter and leave it', () => {
    const zoned = cameraConfig(
      [
        '    zones:',
        '      drive:',
        '        points: [[0, 0], [100, 0], [100, 100], [0, 100]]',
        '        inertia: 1',
      ].join('\n'),
    );
    const out = new FakeOutput();
    const r = new Reporter(zoned.cameras, { ...zoned.events, min_frames: 1 }, deps(out, 'argus'));
    // Standing in the drive (its feet at y 80), then walking out of it (feet at y 180).
    r.onResult(result(1, 1000, [det('person', 0.9, [10, 20, 40, 80])]));
    r.onResult(result(2, 1200, [det('person', 0.9, [12, 120, 42, 180])]));
    const zoneStates = out
      .of('state')
      .filter((m) => m.topic.includes('/zones/'))
      .map((m) => [m.topic, m.payload]);
    assert.deepEqual(zoneStates, [
      ['argus/cameras/gate/zones/drive/person', '1'],
      ['argus/cameras/gate/zones/drive/person/active', '1'],
      ['argus/cameras/gate/zones/drive/person', '0'],
      ['argus/cameras/gate/zones/drive/person/active', '0'],
    ]);
  });

  it('answers the counts in view, and a reload sends no 0 for a count that is not 0', () => {
    const zone = [
      '    zones:',
      '      drive:',
      '        points: [[0, 0], [100, 0], [100, 100], [0, 100]]',
      '        inertia: 1',
    ];
    const every = cameraConfig(zone.join('\n') + '\n');
    const tracked = cameraConfig(
      ['    objects:', '      track: [person, car]', ...zone, '        objects: [person, car]'].join('\n') +
        '\n',
    );
    const out = new FakeOutput();
    const r = new Reporter(every.cameras, { ...every.events, min_frames: 1 }, deps(out, 'argus'));
    r.onResult(result(1, 1000, [det('person', 0.9, [10, 20, 40, 80])]));
    assert.deepEqual(r.countsOf('gate'), {
      labels: named({ person: 1 }),
      zones: named({ drive: named({ person: 1 }) }),
    });
    out.sent = [];
    r.setCameras(tracked.cameras);
    assert.deepEqual(
      out.of('state').map((s) => `${s.topic} ${s.payload}`),
      [
        'argus/cameras/gate/car 0',
        'argus/cameras/gate/car/active 0',
        'argus/cameras/gate/zones/drive/car 0',
        'argus/cameras/gate/zones/drive/car/active 0',
        'argus/cameras/gate/zones/drive/car/dwell_s 0',
      ],
      "the person's counts (in view and active, the camera's and the zone's) stay as they are",
    );
    assert.deepEqual(r.countsOf('gate'), {
      labels: named({ person: 1, car: 0 }),
      zones: named({ drive: named({ person: 1, car: 0 }) }),
    });
  });

  it('publishes retained camera statuses with detector errors until the next analysed frame', () => {
    const out = new FakeOutput();
    let current: CameraStatus | undefined = undefined;
    const r = new Reporter(
      cfg.cameras,
      cfg.events,
      deps(out, 'site/argus', () => current),
    );
    const status: CameraStatus = {
      camera: 'gate',
      state: 'backoff',
      since: 0,
      restarts: 2,
      framesReceived: 10,
      bytesReceived: 100,
      lastFrameAt: 5,
      lastError: { cause: 'unreachable', message: 'Connection refused', at: 7 },
      retryAt: 9,
      source: { width: 640, height: 480 },
    };
    r.onCameraStatus(status);
    const s = parse<CameraStatusPayload>(out.of('state')[0]!.payload);
    assert.equal(out.of('state')[0]!.topic, 'site/argus/cameras/gate/status');
    assert.deepEqual(
      [s.state, s.restarts, s.last_error?.cause, s.last_error?.message],
      ['backoff', 2, 'unreachable', 'Connection refused'],
    );
    current = { ...status, state: 'streaming', lastError: null };
    r.onCameraStatus(current);
    r.onDetectorError('gate', 'inference missed its 1000 ms deadline');
    const withErr = parse<CameraStatusPayload>(out.of('state').at(-1)!.payload);
    assert.deepEqual([withErr.state, withErr.last_error?.cause], ['streaming', 'detector']);
    r.onResult(result(1, 100, []));
    assert.equal(parse<CameraStatusPayload>(out.of('state').at(-1)!.payload).last_error, null);
  });

  it('a streaming camera turns lagging once (status, one warning) and back once; not while offline', () => {
    const out = new FakeOutput();
    const { log, lines } = recordingLog();
    let state: CameraStatus['state'] = 'streaming';
    let lag = { lagMs: 400 as number | null, lagging: false };
    const status = (camera: string): CameraStatus => cameraStatus(camera, { state });
    const r = new Reporter(cfg.cameras, cfg.events, {
      ...deps(out, 'argus', status),
      log,
      lag: { of: () => lag, afterS: 10 },
    });
    const statuses = (): CameraStatusPayload[] =>
      out
        .of('state')
        .filter((m) => m.topic === 'argus/cameras/gate/status')
        .map((m) => parse<CameraStatusPayload>(m.payload));
    r.tick(1000);
    assert.deepEqual(statuses(), [], 'answered in time: nothing to say');
    lag = { lagMs: 12_340, lagging: true };
    r.tick(2000);
    r.tick(3000);
    assert.equal(statuses().length, 1, 'once');
    assert.deepEqual(statuses()[0]!.last_error, {
      cause: 'lagging',
      message:
        'its newest answered frame is 12.3 s old (over scheduler.lagging_after_s: 10 s): the detector cannot keep up',
      at: new Date(2000).toISOString(),
    });
    assert.equal(statuses()[0]!.lag_s, 12.3);
    r.onCameraStatus(status('gate'));
    assert.equal(statuses().at(-1)!.last_error?.cause, 'lagging', "ingest's own status keeps saying it");
    lag = { lagMs: 300, lagging: false };
    r.onResult(result(1, 3500, []));
    assert.equal(statuses().at(-1)!.last_error, null, 'the answer that ends it says so at once');
    r.tick(4000);
    assert.deepEqual(
      [statuses().length, statuses().at(-1)!.last_error, statuses().at(-1)!.lag_s],
      [3, null, 0.3],
    );
    assert.deepEqual(
      lines.filter((l) => /lagging|in time again/.test(l.msg)).map((l) => l.msg),
      [
        'camera lagging: its frames get no answer in time (the detector cannot keep up); its objects and counts hold',
        'camera answered in time again',
      ],
    );
    state = 'offline';
    lag = { lagMs: 60_000, lagging: true };
    r.tick(5000);
    assert.equal(statuses().length, 3, 'an offline camera is not lagging: its own status says why');
    // Lagging, then offline: ingest's status says so at once, and the next tick says no more.
    state = 'streaming';
    r.tick(6000);
    assert.equal(statuses().at(-1)!.last_error?.cause, 'lagging');
    state = 'offline';
    r.onCameraStatus(status('gate'));
    assert.deepEqual([statuses().at(-1)!.state, statuses().at(-1)!.last_error], ['offline', null]);
    r.tick(7000);
    assert.equal(lines.at(-1)!.msg, 'camera no longer lagging: it is offline');
  });

  it('says detector_unavailable once while a camera’s model is unavailable, and once when it is back', () => {
    const out = new FakeOutput();
    const status: CameraStatus = {
      camera: 'gate',
      state: 'streaming',
      since: 0,
      restarts: 0,
      framesReceived: 10,
      bytesReceived: 100,
      lastFrameAt: 5,
      lastError: null,
      retryAt: null,
      source: { width: 640, height: 480 },
    };
    let away: string | undefined;
    const clock = new FakeClock();
    const cameras = {
      gate: { ...cfg.cameras.gate!, model: 'plates' },
      yard: { ...cfg.cameras.gate!, model: 'default' },
    };
    const r = new Reporter(cameras, cfg.events, {
      ...deps(out, 'argus', (c) => ({ ...status, camera: c })),
      clock,
      modelUnavailable: (m) => (m === 'plates' ? away : undefined),
    });
    const statuses = (): [string | undefined, CameraStatusPayload['last_error']][] =>
      out.of('state').map((m) => [m.topic.split('/')[2], parse<CameraStatusPayload>(m.payload).last_error]);

    // The server goes: the camera on that model says so, once; the other camera says nothing.
    away = 'POST http://gpu-box:8000/v2/models/plates/infer: ECONNREFUSED';
    r.onModelAvailability('plates');
    r.onDetectorError('gate', 'model plates is unavailable: ECONNREFUSED');
    r.onDetectorError('gate', 'model plates is unavailable: ECONNREFUSED');
    assert.deepEqual(statuses(), [
      ['gate', { cause: 'detector_unavailable', message: away, at: new Date(clock.now()).toISOString() }],
    ]);
    // A status published meanwhile (ingest's) keeps saying it.
    r.onCameraStatus({ ...status, camera: 'gate' });
    assert.equal(statuses().at(-1)![1]!.cause, 'detector_unavailable');

    // Told again without a change (a reload swapped the model for one as far away): nothing.
    r.onModelAvailability('plates');
    r.onModelAvailability('default');
    assert.equal(statuses().length, 2);

    // Back: once more, without it; the batches it refused meanwhile are forgotten.
    away = undefined;
    r.onModelAvailability('plates');
    r.onModelAvailability('plates');
    assert.deepEqual(statuses().slice(2), [['gate', null]]);

    // A camera moved by a reload onto a model that is away says so at once.
    away = 'gone';
    r.setCameras({ gate: cameras.gate, yard: { ...cameras.yard, model: 'plates' } });
    assert.deepEqual(statuses().at(-1), [
      'yard',
      { cause: 'detector_unavailable', message: 'gone', at: new Date(clock.now()).toISOString() },
    ]);
  });

  describe('line crossings', () => {
    const lined = cameraConfig(
      [
        '    lines:',
        '      door:',
        '        points: [[320, 0], [320, 480]]',
        '        objects: [person]',
        '        directions: [entering, leaving]',
      ].join('\n') + '\n',
    );
    /** A person walking right across x = 320, 20 px per frame from x = 200 (10 frames). */
    const walk = (r: Reporter, from = 0): void => {
      for (let i = 0; i < 12; i++) {
        const x = 200 + i * 20;
        r.onResult(result(from + i, 1000 + (from + i) * 200, [det('person', 0.9, [x, 200, x + 40, 300])]));
      }
    };
    const counts = (out: FakeOutput) =>
      out
        .of('state')
        .filter((s) => s.topic.includes('/lines/'))
        .map((s) => [s.topic, s.payload]);

    it('publishes a crossing (QoS 1 topic) and a retained count per line, label and direction', async (t) => {
      const dir = await tempDir(t);
      const out = new FakeOutput();
      const r = new Reporter(
        lined.cameras,
        { ...lined.events, min_frames: 1 },
        { ...deps(out, 'argus'), stateDir: dir },
      );
      await r.start();
      assert.deepEqual(
        counts(out),
        [
          ['argus/cameras/gate/lines/door/person/entering', '0'],
          ['argus/cameras/gate/lines/door/person/leaving', '0'],
        ],
        'zeros for the listed objects, so subscribers see every count before the first crossing',
      );
      walk(r);
      const crossings = out.of('event').filter((e) => e.topic === 'argus/crossings');
      assert.equal(crossings.length, 1);
      const c = parse<CrossingPayload>(crossings[0]!.payload);
      const id = parse<EventPayload>(out.of('event')[0]!.payload).id;
      assert.deepEqual(
        [c.camera, c.line, c.direction, c.label, c.id, c.count],
        ['gate', 'door', 'leaving', 'person', id, 1],
      );
      assert.deepEqual(counts(out).at(-1), ['argus/cameras/gate/lines/door/person/leaving', '1']);
      await r.stop();
    });

    it('keeps counts across a restart in the state directory, and starts afresh from a corrupt file', async (t) => {
      const dir = await tempDir(t);
      const events = { ...lined.events, min_frames: 1 };
      const first = new Reporter(lined.cameras, events, {
        ...deps(new FakeOutput(), 'argus'),
        stateDir: dir,
      });
      await first.start();
      walk(first);
      await first.stop();
      const saved = JSON.parse(await readFile(join(dir, 'line-counts.json'), 'utf8')) as unknown;
      assert.deepEqual(saved, { version: 1, counts: { gate: { door: { person: { leaving: 1 } } } } });

      const out = new FakeOutput();
      const second = new Reporter(lined.cameras, events, { ...deps(out, 'argus'), stateDir: dir });
      await second.start();
      assert.deepEqual(counts(out), [
        ['argus/cameras/gate/lines/door/person/entering', '0'],
        ['argus/cameras/gate/lines/door/person/leaving', '1'],
      ]);
      walk(second, 100);
      assert.deepEqual(counts(out).at(-1), ['argus/cameras/gate/lines/door/person/leaving', '2']);
      await second.stop();

      await writeFile(join(dir, 'line-counts.json'), '{"version": 1, "counts": {"gate": tru');
      const out3 = new FakeOutput();
      const third = new Reporter(lined.cameras, events, { ...deps(out3, 'argus'), stateDir: dir });
      await third.start();
      assert.deepEqual(
        counts(out3).map(([, n]) => n),
        ['0', '0'],
      );
      assert.match(await readFile(join(dir, 'line-counts.json.corrupt'), 'utf8'), /tru$/, 'kept aside');
      await third.stop();
    });

    it('counts of lines this config does not have stay in the state file (another config may share it)', async (t) => {
      const dir = await tempDir(t);
      const other = { version: 1, counts: { yard: { fence: { person: { in: 41 } } } } };
      await writeFile(join(dir, 'line-counts.json'), JSON.stringify(other));
      const r = new Reporter(
        lined.cameras,
        { ...lined.events, min_frames: 1 },
        { ...deps(new FakeOutput(), 'argus'), stateDir: dir },
      );
      await r.start();
      walk(r);
      await r.stop();
      const saved = JSON.parse(await readFile(join(dir, 'line-counts.json'), 'utf8')) as typeof other;
      assert.deepEqual(saved.counts, { ...other.counts, gate: { door: { person: { leaving: 1 } } } });
    });

    it('a reset sets to 0 the counts of a line that lists no objects (every label it counted)', async () => {
      const open = cameraConfig(
        [
          '    lines:',
          '      door:',
          '        points: [[320, 0], [320, 480]]',
          '        directions: [entering, leaving]',
        ].join('\n') + '\n',
      );
      const out = new FakeOutput();
      const r = new Reporter(open.cameras, { ...open.events, min_frames: 1 }, deps(out, 'argus'));
      await r.start();
      walk(r);
      assert.ok(
        counts(out).some(([, n]) => n === '1'),
        'a crossing was counted',
      );
      out.sent = [];
      assert.equal(r.events.resetLine('gate', 'door'), true);
      assert.deepEqual(counts(out), [
        ['argus/cameras/gate/lines/door/person/entering', '0'],
        ['argus/cameras/gate/lines/door/person/leaving', '0'],
      ]);
      await r.stop();
    });

    it('a disabled line counts nothing and keeps its counts; a reset sets them to 0, kept across a restart', async (t) => {
      const dir = await tempDir(t);
      const events = { ...lined.events, min_frames: 1 };
      const out = new FakeOutput();
      const r = new Reporter(lined.cameras, events, { ...deps(out, 'argus'), stateDir: dir });
      await r.start();
      walk(r);
      const gate = lined.cameras.gate!;
      const off = { ...gate, lines: { door: { ...gate.lines.door!, enabled: false } } };
      r.setCameras({ gate: off });
      out.sent = [];
      walk(r, 20);
      assert.deepEqual(
        out.of('event').filter((e) => e.topic === 'argus/crossings'),
        [],
        'not counted',
      );
      assert.deepEqual(counts(out), [], 'the counts stay as they were');
      r.setCameras(lined.cameras);
      assert.equal(r.events.resetLine('gate', 'door'), true);
      assert.equal(r.events.resetLine('gate', 'nowhere'), false);
      assert.deepEqual(counts(out), [
        ['argus/cameras/gate/lines/door/person/entering', '0'],
        ['argus/cameras/gate/lines/door/person/leaving', '0'],
      ]);
      await r.stop();
      const restarted = new FakeOutput();
      const again = new Reporter(lined.cameras, events, { ...deps(restarted, 'argus'), stateDir: dir });
      await again.start();
      assert.deepEqual(counts(restarted), [
        ['argus/cameras/gate/lines/door/person/entering', '0'],
        ['argus/cameras/gate/lines/door/person/leaving', '0'],
      ]);
      await again.stop();
    });

    it('a reload that adds a line counts crossings from then on', async () => {
      const plain = cameraConfig('');
      const out = new FakeOutput();
      const r = new Reporter(plain.cameras, { ...plain.events, min_frames: 1 }, deps(out, 'argus'));
      await r.start();
      r.onResult(result(0, 1000, [det('person', 0.9, [200, 200, 240, 300])]));
      r.setCameras(lined.cameras);
      walk(r, 1);
      assert.equal(out.of('event').filter((e) => e.topic === 'argus/crossings').length, 1);
      await r.stop();
    });

    it('a reload that removes a line clears its retained counts; one that adds a line publishes it', async () => {
      const out = new FakeOutput();
      const r = new Reporter(lined.cameras, { ...lined.events, min_frames: 1 }, deps(out, 'argus'));
      await r.start();
      walk(r);
      const moved = cameraConfig(
        [
          '    lines:',
          '      gate_line:',
          '        points: [[0, 100], [640, 100]]',
          '        objects: [car]',
        ].join('\n') + '\n',
      );
      out.sent = [];
      r.setCameras(moved.cameras);
      assert.deepEqual(counts(out), [
        ['argus/cameras/gate/lines/gate_line/car/in', '0'],
        ['argus/cameras/gate/lines/gate_line/car/out', '0'],
        ['argus/cameras/gate/lines/door/person/entering', ''],
        ['argus/cameras/gate/lines/door/person/leaving', ''],
      ]);
      await r.stop();
    });
  });
  describe('issue 45: line counts from 0 for every label, speeds in calibrated zones', () => {
    const tracked = cameraConfig(
      [
        '    objects:',
        '      track: [person, car]',
        '    lines:',
        '      door:',
        '        points: [[320, 0], [320, 480]]',
      ].join('\n') + '\n',
    );
    const lineStates = (out: FakeOutput) =>
      out
        .of('state')
        .filter((s) => s.topic.includes('/lines/'))
        .map((s) => [s.topic, s.payload] as const);

    it('starts at 0 every count of a line without objects, for each label the camera tracks', async () => {
      const out = new FakeOutput();
      const r = new Reporter(tracked.cameras, tracked.events, deps(out, 'argus'));
      await r.start();
      assert.deepEqual(lineStates(out), [
        ['argus/cameras/gate/lines/door/person/in', '0'],
        ['argus/cameras/gate/lines/door/person/out', '0'],
        ['argus/cameras/gate/lines/door/car/in', '0'],
        ['argus/cameras/gate/lines/door/car/out', '0'],
      ]);
      await r.stop();
    });

    it('never publishes 0 over a count restored from the state directory', async (t) => {
      const dir = await tempDir(t);
      await writeFile(
        join(dir, 'line-counts.json'),
        JSON.stringify({ version: 1, counts: { gate: { door: { car: { out: 7 }, bus: { in: 2 } } } } }),
      );
      const out = new FakeOutput();
      const r = new Reporter(tracked.cameras, tracked.events, { ...deps(out, 'argus'), stateDir: dir });
      await r.start();
      const states = lineStates(out);
      assert.deepEqual(
        states.filter(([topic]) => topic === 'argus/cameras/gate/lines/door/car/out'),
        [['argus/cameras/gate/lines/door/car/out', '7']],
        'the restored count, and no 0 before or after it',
      );
      assert.deepEqual(
        new Map(states),
        new Map([
          ['argus/cameras/gate/lines/door/person/in', '0'],
          ['argus/cameras/gate/lines/door/person/out', '0'],
          ['argus/cameras/gate/lines/door/car/in', '0'],
          ['argus/cameras/gate/lines/door/car/out', '7'],
          ['argus/cameras/gate/lines/door/bus/in', '2'],
          ['argus/cameras/gate/lines/door/bus/out', '0'],
        ]),
      );
      await r.stop();
    });

    it("publishes a calibrated zone's last speed per label, retained, held when nothing is measured", async () => {
      // A 640 x 480 picture of 64 m x 48 m of ground: 10 px a metre.
      const road = cameraConfig(
        [
          '    zones:',
          '      road:',
          '        points: [[0, 0], [640, 0], [640, 480], [0, 480]]',
          '        distances: [64, 48, 64, 48]',
          '        inertia: 1',
          '      door:',
          '        points: [[0, 0], [640, 0], [640, 480]]',
        ].join('\n') + '\n',
      );
      const out = new FakeOutput();
      const r = new Reporter(road.cameras, { ...road.events, min_frames: 1 }, deps(out, 'argus'));
      await r.start();
      const speeds = () =>
        out
          .of('state')
          .filter((s) => s.topic.endsWith('/speed'))
          .map((s) => [s.topic, Number(s.payload)] as const);
      assert.deepEqual(speeds(), [], 'nothing before a speed is measured');
      // A car driving right at 50 px (5 m) per 200 ms: 25 m/s, 90 km/h.
      for (let i = 0; i < 8; i++) {
        const x = 40 + i * 50;
        r.onResult(result(i, 1000 + i * 200, [det('car', 0.9, [x, 200, x + 60, 260])]));
      }
      const measured = speeds();
      assert.ok(measured.length >= 1, 'speeds published');
      assert.ok(
        measured.every(([topic]) => topic === 'argus/cameras/gate/zones/road/car/speed'),
        'only the calibrated zone',
      );
      const last = measured.at(-1)![1];
      assert.ok(Math.abs(last - 90) < 5, `about 90 km/h: ${last}`);
      // Gone (retained states are the FakeOutput's 'state' kind): the last value stays.
      const before = speeds().length;
      r.onResult(result(20, 5000, []));
      r.onResult(result(21, 5200, []));
      assert.equal(speeds().length, before, 'no object, no speed published: the last one holds');
      await r.stop();
    });
  });
  describe('event snapshots and the history', () => {
    const g = letterbox(640, 480, 64);
    const pictured = (seq: number, ts: number, detections: Detection[], grey: number) => ({
      ...result(seq, ts, detections),
      geometry: g,
      data: Buffer.alloc(g.dstW * g.dstH * 3, grey),
    });

    it('each event names its snapshot, published as a JPEG and kept with the event across a restart', async (t) => {
      const dir = await tempDir(t);
      const out = new FakeOutput();
      const events = { ...cfg.events, min_frames: 2, end_after_s: 1 };
      const r = new Reporter(cfg.cameras, events, { ...deps(out, 'argus'), stateDir: dir });
      await r.start();
      r.onResult(pictured(1, 1000, [det('person', 0.9, [100, 100, 300, 400])], 200));
      r.onResult(pictured(2, 1200, [det('person', 0.8, [110, 100, 310, 400])], 50));
      r.onResult(pictured(3, 2500, [], 50));
      r.onResult(pictured(4, 2700, [], 50));
      r.tick(2700);
      await r.stop();
      const [n, end] = out.of('event').map((e) => parse<EventPayload>(e.payload));
      const path = `/api/events/${encodeURIComponent(n!.id)}/snapshot.jpg`;
      const snapshot = { path, ts: new Date(1000).toISOString(), score: 0.9, box: [100, 100, 300, 400] };
      assert.deepEqual([n!.type, n!.snapshot], ['new', snapshot], 'the best frame before the new: the first');
      assert.deepEqual([end!.type, end!.snapshot], ['end', snapshot]);
      const jpegs = out.of('state').filter((m) => m.topic === 'argus/cameras/gate/person/snapshot');
      assert.equal(jpegs.length, 1);
      assert.equal((await sharp(jpegs[0]!.data).metadata()).format, 'jpeg');

      const again = new Reporter(cfg.cameras, events, { ...deps(new FakeOutput(), 'argus'), stateDir: dir });
      await again.start();
      assert.deepEqual(again.history?.list({ limit: 10 }), [end]);
      assert.deepEqual(await again.history?.snapshot(n!.id, 'full'), jpegs[0]!.data);
      assert.ok(await again.history?.snapshot(n!.id, 'crop'));
      await again.stop();
    });

    it('a camera with snapshots off publishes events without a snapshot', async () => {
      const out = new FakeOutput();
      const cams = { gate: { ...cfg.cameras.gate!, snapshots: false } };
      const r = new Reporter(cams, { ...cfg.events, min_frames: 1 }, deps(out, 'argus'));
      await r.start();
      r.onResult(pictured(1, 1000, [det('person', 0.9, [100, 100, 300, 400])], 200));
      r.tick(3000);
      await r.stop();
      const evs = out.of('event').map((e) => parse<EventPayload>(e.payload));
      assert.deepEqual(
        evs.map((e) => [e.type, e.snapshot]),
        [
          ['new', null],
          ['end', null],
        ],
      );
      assert.equal(out.of('state').filter((m) => m.topic.endsWith('/snapshot')).length, 0);
    });

    it('without a state directory, snapshots are published and no history is kept', async () => {
      const out = new FakeOutput();
      const r = new Reporter(cfg.cameras, { ...cfg.events, min_frames: 1 }, deps(out, 'argus'));
      await r.start();
      r.onResult(pictured(1, 1000, [det('person', 0.9, [100, 100, 300, 400])], 200));
      await r.stop();
      assert.equal(r.history, undefined);
      assert.equal(out.of('state').filter((m) => m.topic.endsWith('/snapshot')).length, 1);
    });
  });
});

describe('reporter: names a user chose', () => {
  // Five cameras, each with five zones (the whole picture) and five lines (across x = 320, from
  // top to bottom, so a walk to the right goes the second way), and five labels, each named
  // __proto__, constructor, toString, hasOwnProperty and valueOf.
  const [first, second] = ['valueOf', 'hasOwnProperty'];
  const yaml = [
    'model:',
    '  path: m.onnx',
    'cameras:',
    ...SPECIAL_NAMES.flatMap((cam) => [
      `  ${cam}:`,
      '    url: rtsp://h/s',
      '    objects:',
      `      track: [${SPECIAL_NAMES.join(', ')}]`,
      '      filters:',
      ...SPECIAL_NAMES.map((label) => `        ${label}: { min_score: 0.5 }`),
      '    zones:',
      ...SPECIAL_NAMES.map(
        (zone) => `      ${zone}: { points: [[0, 0], [640, 0], [640, 480], [0, 480]], inertia: 1 }`,
      ),
      '    lines:',
      ...SPECIAL_NAMES.map(
        (line) => `      ${line}: { points: [[320, 0], [320, 480]], directions: [${first}, ${second}] }`,
      ),
    ]),
  ].join('\n');
  const { cameras, events } = parseConfig(`${yaml}\n`, 'c.yaml', {}).config;
  const geometry = letterbox(640, 480, 320);
  const frame = (camera: string, seq: number, detections: Detection[]) => ({
    camera,
    seq,
    ts: 1000 + seq * 200,
    geometry,
    cached: false,
    detections,
    data: Buffer.alloc(0),
  });
  /** One object of each label, side by side, left of the lines. */
  const everyLabel = SPECIAL_NAMES.map((label, i) => det(label, 0.9, [10 + i * 50, 200, 50 + i * 50, 300]));
  /** `label` walking right across x = 320, 20 px per frame from x = 200. */
  const walk = (r: Reporter, camera: string, label: string): void => {
    for (let i = 0; i < 12; i++)
      r.onResult(frame(camera, i + 1, [det(label, 0.9, [200 + i * 20, 200, 240 + i * 20, 300])]));
  };
  const states = (out: FakeOutput) => new Map(out.of('state').map((s) => [s.topic, s.payload]));

  it('starts at 0 and counts every camera, zone and label as it is named', async () => {
    const out = new FakeOutput();
    const r = new Reporter(cameras, { ...events, min_frames: 1 }, deps(out, 'argus'));
    await r.start();
    const zeros = states(out);
    for (const cam of SPECIAL_NAMES)
      for (const label of SPECIAL_NAMES) {
        assert.equal(zeros.get(`argus/cameras/${cam}/${label}`), '0', `${cam} ${label}`);
        for (const zone of SPECIAL_NAMES)
          assert.equal(
            zeros.get(`argus/cameras/${cam}/zones/${zone}/${label}`),
            '0',
            `${cam} ${zone} ${label}`,
          );
      }
    for (const [i, cam] of SPECIAL_NAMES.entries()) r.onResult(frame(cam, i + 1, everyLabel));
    const now = states(out);
    for (const cam of SPECIAL_NAMES) {
      for (const label of SPECIAL_NAMES) {
        assert.equal(now.get(`argus/cameras/${cam}/${label}`), '1', `${cam} ${label}`);
        for (const zone of SPECIAL_NAMES)
          assert.equal(
            now.get(`argus/cameras/${cam}/zones/${zone}/${label}`),
            '1',
            `${cam} ${zone} ${label}`,
          );
      }
      const perLabel = named(SPECIAL_NAMES.map((label): [string, number] => [label, 1]));
      assert.deepEqual(
        r.countsOf(cam),
        {
          labels: perLabel,
          zones: named(SPECIAL_NAMES.map((zone): [string, typeof perLabel] => [zone, perLabel])),
        },
        cam,
      );
    }
    assert.deepEqual(r.countsOf('missing'), { labels: named(), zones: named() }, 'no such camera');
    assert.equal(Object.hasOwn(Object.prototype, 'inView'), false, 'nothing was set on every object');
    await r.stop();
  });

  it('counts crossings of every line, label and direction as it is named, kept across a restart', async (t) => {
    const dir = await tempDir(t);
    const out = new FakeOutput();
    const r = new Reporter(cameras, { ...events, min_frames: 1 }, { ...deps(out, 'argus'), stateDir: dir });
    await r.start();
    for (const [i, cam] of SPECIAL_NAMES.entries()) walk(r, cam, SPECIAL_NAMES[(i + 1) % 5]!);
    await r.stop();
    const topic = (cam: string, line: string, label: string) =>
      `argus/cameras/${cam}/lines/${line}/${label}/${second}`;
    const crossed = SPECIAL_NAMES.flatMap((cam, i) =>
      SPECIAL_NAMES.map((line) => topic(cam, line, SPECIAL_NAMES[(i + 1) % 5]!)),
    );
    const crossings = out.of('event').filter((e) => e.topic === 'argus/crossings');
    assert.equal(crossings.length, 25, 'one per camera and line');
    assert.deepEqual(
      crossed.map((tp) => states(out).get(tp)),
      crossed.map(() => '1'),
    );
    const saved = JSON.parse(await readFile(join(dir, 'line-counts.json'), 'utf8')) as {
      counts: Record<string, Record<string, Record<string, Record<string, number>>>>;
    };
    assert.deepEqual(Object.keys(saved.counts), [...SPECIAL_NAMES]);
    // JSON.parse keeps `__proto__` as an own key; reading it gives that entry, not the prototype.
    const proto = saved.counts['__proto__']!;
    assert.deepEqual(Object.keys(proto), [...SPECIAL_NAMES]);
    assert.deepEqual(plain(proto[SPECIAL_NAMES[2]!]), { constructor: { [second]: 1 } }, 'toString');

    const again = new FakeOutput();
    const restarted = new Reporter(cameras, events, { ...deps(again, 'argus'), stateDir: dir });
    await restarted.start();
    assert.deepEqual(
      crossed.map((tp) => states(again).get(tp)),
      crossed.map(() => '1'),
      'the retained counts of the last run, from the state directory',
    );
    await restarted.stop();
  });
});

describe('events with fleet: name the box that made them (issue 48 item 2)', () => {
  const cfg = cameraConfig('');
  const geometry = letterbox(640, 480, 320);
  const frame = (seq: number, ts: number, detections: Detection[]) => ({
    camera: 'gate',
    seq,
    ts,
    geometry,
    cached: false,
    detections,
    data: Buffer.alloc(0),
  });

  it('each event (MQTT and history) carries its owner, the end of one handed on too', async (t) => {
    const dir = await tempDir(t);
    const out = new FakeOutput();
    let owner: { box: string; epoch: number } | undefined = { box: 'b1', epoch: 42 };
    const r = new Reporter(
      cfg.cameras,
      { ...cfg.events, min_frames: 1 },
      { ...deps(out, 'argus'), stateDir: dir, owner: (c) => (c === 'gate' ? owner : undefined) },
    );
    await r.start();
    r.onResult(frame(1, 1000, [det('person', 0.9, [1, 2, 3, 4])]));
    const [created] = out.of('event').map((m) => parse<EventPayload>(m.payload));
    assert.equal(created?.type, 'new');
    assert.deepEqual(created?.owner, { box: 'b1', epoch: 42 });
    assert.deepEqual(parse<DetectionsPayload>(out.of('detection')[0]!.payload).owner, {
      box: 'b1',
      epoch: 42,
    });
    // Handed on: no longer this box's (its owner gone), the camera stops here and its event ends.
    owner = undefined;
    r.setCameras({});
    const ended = out
      .of('event')
      .map((m) => parse<EventPayload>(m.payload))
      .at(-1);
    assert.equal(ended?.type, 'end');
    assert.deepEqual(ended?.owner, { box: 'b1', epoch: 42 }, 'the box that made it');
    const [stored] = r.history!.list({ limit: 10 });
    assert.deepEqual((stored as { owner?: unknown }).owner, { box: 'b1', epoch: 42 });
    await r.stop();
  });

  it('without fleet: no owner field', () => {
    const out = new FakeOutput();
    const r = new Reporter(cfg.cameras, { ...cfg.events, min_frames: 1 }, deps(out, 'argus'));
    r.onResult(frame(1, 1000, [det('person', 0.9, [1, 2, 3, 4])]));
    const e = parse<EventPayload>(out.of('event')[0]!.payload);
    assert.equal('owner' in e, false);
  });
});
