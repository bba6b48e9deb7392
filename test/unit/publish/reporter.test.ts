import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CameraStatus } from '../../../src/ingest/index.js';
import type { Detection } from '../../../src/core/frame.js';
import { letterbox } from '../../../src/core/geometry.js';
import { parseConfig } from '../../../src/config/index.js';
import { Reporter, type ReporterDeps } from '../../../src/publish/reporter.js';
import {
  topics,
  type CameraStatusPayload,
  type DetectionsPayload,
  type EventPayload,
} from '../../../src/publish/topics.js';
import { FakeClock } from '../../helpers/fakes.js';
import { FakeOutput } from '../../helpers/fake-output.js';

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
): ReporterDeps => ({ out, topics: topics(base), clock: new FakeClock(), cameraStatus });

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
      detections: [{ label: 'person', score: 0.9, box: [1, 2, 3, 4] }],
    });
    assert.equal(parse<DetectionsPayload>(d[1]!.payload).cached, true);
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

  it('drops counts within a second of the object leaving, before its end', () => {
    const out = new FakeOutput();
    const r = new Reporter(cfg.cameras, { ...cfg.events, min_frames: 1, end_after_s: 3 }, deps(out, 'argus'));
    r.onResult(result(1, 1000, [det('person', 0.9, [1, 2, 30, 80])]));
    r.onResult(result(2, 1200, []));
    r.tick(2000);
    assert.equal(out.of('state').at(-1)!.payload, '1', 'held for a second');
    r.tick(2300);
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

  it('publishes retained counts per zone and label as objects enter and leave it', () => {
    const zoned = cameraConfig(
      ['    zones:', '      drive:', '        points: [[0, 0], [100, 0], [100, 100], [0, 100]]'].join('\n'),
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
});
