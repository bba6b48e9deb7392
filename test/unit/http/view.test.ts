import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import sharp from 'sharp';
import type { Detection, Picture, Result } from '../../../src/core/frame.js';
import { letterbox } from '../../../src/core/geometry.js';
import type { CameraConfig } from '../../../src/config/index.js';
import { EventStore, type CountsInView, type EventQuery } from '../../../src/events/index.js';
import { HttpError } from '../../../src/http/errors.js';
import { LiveView } from '../../../src/http/view.js';
import { FrameDropped } from '../../../src/scheduler/index.js';
import { cameraConfig } from '../../helpers/config.js';
import {
  cameraStats,
  cameraStatus,
  FakeStages,
  localModelStats,
  remoteModelStats,
} from '../../helpers/fake-stages.js';
import { tempDir } from '../../helpers/env.js';
import { liveView } from '../../helpers/live-view.js';
import { silentLog } from '../../helpers/fakes.js';
import { named, plain, SPECIAL_NAMES } from '../../helpers/names.js';

const person: Detection = { label: 'person', score: 0.9, box: [10, 20, 30, 40] };

function setup(
  submit: (p: Picture, priority: number, model: string) => Promise<Detection[]> = () => Promise.resolve([]),
  counts?: (camera: string) => CountsInView,
) {
  const stages = new FakeStages();
  let cameras: Record<string, CameraConfig> = {
    gate: cameraConfig(),
    yard: cameraConfig({ enabled: false }),
  };
  const submitted: { picture: Picture; priority: number; model: string }[] = [];
  const view = new LiveView(
    { detect_priority: 7 },
    {
      ...stages,
      scheduler: {
        stats: stages.scheduler.stats,
        submit: (picture, priority, model) => {
          submitted.push({ picture, priority, model });
          return submit(picture, priority, model);
        },
      },
      stats: { rates: () => ({ gate: { fpsIn: 5, fpsAnalysed: 1.5, fpsCached: 3.5 } }) },
      cameras: () => cameras,
      metrics: new Registry(),
      counts,
    },
  );
  const result = (camera: string): Result => ({
    camera,
    seq: 3,
    ts: 1_000,
    data: Buffer.alloc(32 * 32 * 3, 90),
    geometry: letterbox(64, 48, 32),
    cached: true,
    detections: [person],
  });
  return { stages, view, result, submitted, setCameras: (c: typeof cameras) => (cameras = c) };
}

describe('live view (HTTP API models)', () => {
  it('is healthy while every model has a session ready, with each camera state from ingest', () => {
    const { stages, view } = setup();
    stages.statuses = [cameraStatus('gate', { state: 'backoff' })];
    const plates = remoteModelStats({ connections: 1, inputSize: 32 });
    stages.modelStats.plates = plates;
    assert.deepEqual(view.health(), {
      ok: true,
      detector: { ready_workers: 3, provider: 'cpu,kserve' },
      models: named({
        default: { ready_workers: 2, provider: 'cpu' },
        plates: { ready_workers: 1, provider: 'kserve' },
      }),
      mqtt: { connected: true, last_error: null },
      cameras: named({ gate: 'backoff' }),
      event_faults: named({}),
      rings: named(),
    });
    // A ring whose directory cannot be used is said, by camera; the daemon stays healthy (it detects).
    const ring = {
      segments: 0,
      bytes: 0,
      bytesWritten: 0,
      segmentsWritten: 0,
      segmentsLost: 2,
      bytesDropped: 9,
    };
    stages.rings = { gate: { ...ring, problem: 'the ring directory /r/abc is a symbolic link' }, yard: ring };
    assert.deepEqual(
      [view.health().ok, view.health().rings],
      [
        true,
        named({
          gate: { ok: false, error: 'the ring directory /r/abc is a symbolic link' },
          yard: { ok: true, error: null },
        }),
      ],
    );
    assert.deepEqual(
      view.cameras().map((c) => [c.camera, c.ring]),
      [
        ['gate', { ok: false, error: 'the ring directory /r/abc is a symbolic link', bytes: 0 }],
        ['yard', { ok: true, error: null, bytes: 0 }],
      ],
    );
    stages.rings = {};
    plates.state = 'down';
    assert.equal(view.health().ok, false, 'a model no frame of its cameras can reach');
  });

  it('is unhealthy while the broker refuses the login, saying so; a broker away is no failure', () => {
    const { stages, view } = setup();
    const error = (cause: 'auth' | 'unreachable', message: string) => ({
      ...stages.out,
      connected: false,
      lastError: { cause, message, at: 5 },
    });
    stages.out = error('auth', 'Connection refused: Bad User Name or Password');
    assert.deepEqual(
      [view.health().ok, view.health().mqtt],
      [
        false,
        {
          connected: false,
          last_error: { cause: 'auth', message: 'Connection refused: Bad User Name or Password' },
        },
      ],
    );
    stages.out = error('unreachable', 'connect ECONNREFUSED 127.0.0.1:1883');
    assert.equal(view.health().ok, true);
    assert.equal(view.health().mqtt.last_error?.cause, 'unreachable');
  });

  it('lists every configured camera with its status, rates, queue and latest answer', () => {
    const { stages, view, result } = setup();
    stages.statuses = [
      cameraStatus('gate', {
        state: 'backoff',
        since: 0,
        restarts: 4,
        lastError: { cause: 'auth', message: '401 Unauthorized', at: 5 },
      }),
    ];
    stages.cams.gate = cameraStats({ queueDepth: 1, lagMs: 12_345, lagging: true });
    view.onResult(result('gate'));
    const [gate, yard] = view.cameras();
    assert.deepEqual(gate, {
      camera: 'gate',
      model: 'default',
      state: 'backoff',
      since: new Date(0).toISOString(),
      restarts: 4,
      last_error: { cause: 'auth', message: '401 Unauthorized' },
      source: { width: 640, height: 480 },
      fps_in: 5,
      fps_analysed: 1.5,
      queue_depth: 1,
      lag_s: 12.3,
      lagging: true,
      has_frame: true,
      last_frame_ts: new Date(1000).toISOString(),
      cached: true,
      detections: [{ ...person, zones: [] }],
      boxes: { labels: named({ person: 1 }), zones: named() },
      counts: { labels: named(), zones: named() },
      line_counts: named(),
      zone_dwell_s: named(),
      objects: [],
      // In the frame's source pixels (its geometry: 64×48 here), not the stream's reported size.
      geometry: { width: 64, height: 48, zones: named(), lines: named(), masks: [], cache_mask: [] },
      ring: null,
    });
    assert.deepEqual([yard!.camera, yard!.state, yard!.has_frame], ['yard', 'disabled', false]);
    assert.deepEqual(view.cameraNames(), ['gate', 'yard']);
  });

  it('says detector_unavailable while a camera’s model is unavailable, as its MQTT status does', () => {
    const { stages, view } = setup();
    stages.statuses = [cameraStatus('gate', { state: 'streaming' })];
    const message = 'POST http://gpu-box.lan/v2/models/default/infer: HTTP 500: CUDA out of memory';
    stages.away.set('default', message);
    const [gate] = view.cameras();
    assert.deepEqual(
      [gate!.state, gate!.last_error],
      ['streaming', { cause: 'detector_unavailable', message }],
    );
    stages.away.clear();
    assert.equal(view.cameras()[0]!.last_error, null);
  });

  it('serves the latest frame as an annotated JPEG, and forgets cameras removed by a reload', async () => {
    const { view, result, setCameras } = setup();
    assert.equal(await view.latestJpeg('gate'), undefined);
    view.onResult(result('gate'));
    const meta = await sharp((await view.latestJpeg('gate'))!.jpeg).metadata();
    assert.deepEqual([meta.format, meta.width, meta.height], ['jpeg', 32, 24], 'the padding is cut away');
    const cameras = { yard: cameraConfig() };
    setCameras(cameras);
    view.camerasChanged();
    assert.equal(await view.latestJpeg('gate'), undefined);
  });

  it("shows what MQTT shows: detections through the camera filters as they are now, the reporter's counts", () => {
    const car: Detection = { label: 'car', score: 0.8, box: [0, 0, 600, 400] };
    const faint: Detection = { label: 'person', score: 0.3, box: [300, 300, 340, 400] };
    const inView: CountsInView = { labels: { person: 2, dog: 0 }, zones: { door: { person: 1 } } };
    const none: CountsInView = { labels: {}, zones: {} };
    const { view, result, setCameras } = setup(undefined, (camera) => (camera === 'gate' ? inView : none));
    const door = {
      points: [
        [0, 0],
        [64, 0],
        [64, 48],
        [0, 48],
      ],
      objects: ['person'],
    };
    setCameras({
      gate: cameraConfig({
        objects: { track: ['person', 'dog'], filters: { person: { min_score: 0.5 } } },
        zones: { door },
      }),
    });
    view.onResult({ ...result('gate'), detections: [person, car, faint] });
    const [gate] = view.cameras();
    assert.deepEqual(
      gate!.detections,
      [{ ...person, zones: ['door'] }],
      'the car is not tracked, the faint person filtered',
    );
    assert.deepEqual(gate!.counts, inView, "the reporter's counts");
    setCameras({ gate: cameraConfig({ objects: { track: ['dog'] } }) });
    assert.deepEqual(view.cameras()[0]!.detections, [], 'filters as they are now, at once after a reload');
  });

  it('counts on latest.jpg the very boxes it draws, the same as `boxes`; none while detection is off', async () => {
    const { view, result, setCameras } = setup();
    const door = {
      points: [
        [0, 30],
        [64, 30],
        [64, 48],
        [0, 48],
      ],
    };
    setCameras({ gate: cameraConfig({ zones: { door } }) });
    view.onResult({ ...result('gate'), detections: [person, { ...person, box: [40, 0, 60, 10] }] });
    const frame = await view.latestJpeg('gate');
    const boxes = { labels: named({ person: 2 }), zones: named({ door: named({ person: 1 }) }) };
    assert.deepEqual(frame!.boxes, boxes, 'one stands in the door, one above it');
    assert.equal(frame!.ts, 1000);
    assert.deepEqual(view.cameras()[0]!.boxes, boxes);
    // Detection off: the tracker ended its objects; the last frame stays, without boxes.
    setCameras({ gate: cameraConfig({ zones: { door }, detect: false }) });
    assert.deepEqual((await view.latestJpeg('gate'))!.boxes, { labels: named(), zones: named() });
    assert.deepEqual(view.cameras()[0]!.detections, []);
    assert.equal(view.cameras()[0]!.has_frame, true);
  });

  it("answers each camera's line counts (line → label → direction) and the zones' time when given", () => {
    const moving = {
      id: '1-gate-1',
      label: 'car',
      current_zones: ['road'],
      loitering_zones: [],
      speed: { current: 31.5, max: 40.2, unit: 'km/h' as const, zone: 'road' },
      stationary: false,
    };
    const stages = new FakeStages();
    const cameras = { gate: cameraConfig(), yard: cameraConfig() };
    const row = (camera: string, label: string, direction: string, count: number) => ({
      camera,
      line: 'road',
      label,
      direction,
      count,
    });
    const view = liveView(
      {
        cameras: () => cameras,
        lineCounts: () => [
          row('gate', 'person', 'in', 3),
          row('gate', 'person', 'out', 1),
          row('gate', 'car', 'in', 0),
          row('yard', 'person', 'in', 9),
        ],
        zoneDwell: (camera) => (camera === 'gate' ? named({ door: 12.5 }) : named()),
        objects: (camera) => (camera === 'gate' ? [moving] : []),
      },
      { detectPriority: 7, stages },
    );
    stages.statuses = [cameraStatus('gate', { state: 'streaming' })];
    const [gate, yard] = view.cameras();
    assert.deepEqual(
      gate!.line_counts,
      named({ road: named({ person: named({ in: 3, out: 1 }), car: named({ in: 0 }) }) }),
    );
    assert.deepEqual(yard!.line_counts, named({ road: named({ person: named({ in: 9 }) }) }));
    assert.deepEqual([gate!.zone_dwell_s, yard!.zone_dwell_s], [named({ door: 12.5 }), named()]);
    assert.deepEqual([gate!.objects, yard!.objects], [[moving], []], "each camera's objects in view");
    assert.deepEqual(
      [gate!.geometry.width, gate!.geometry.height],
      [640, 480],
      "the stream's size before any frame",
    );
    assert.equal(yard!.geometry.width, null, 'unknown before the stream says');
  });

  it('draws the latest frame for the width it is shown at, never scaled up', async () => {
    const { view, result } = setup();
    view.onResult(result('gate'));
    const meta = await sharp((await view.latestJpeg('gate', 640))!.jpeg).metadata();
    assert.deepEqual([meta.width, meta.height], [32, 24], 'the frame inside the padding is 32×24');
  });

  it('runs a posted image through the scheduler at detect_priority, on its model: boxes in its own pixels', async () => {
    const { view, submitted, stages } = setup(() => Promise.resolve([person]));
    stages.modelStats.plates = { ...stages.modelStats.default!, inputSize: 64 };
    const png = await sharp({ create: { width: 200, height: 100, channels: 3, background: 'white' } })
      .png()
      .toBuffer();
    assert.deepEqual(await view.detect(png, 'door.png', 'default'), {
      image: 'door.png',
      width: 200,
      height: 100,
      detections: [person],
    });
    assert.deepEqual([submitted[0]!.priority, submitted[0]!.model], [7, 'default']);
    assert.deepEqual(submitted[0]!.picture.geometry, letterbox(200, 100, 32), 'letterboxed to the model');
    await view.detect(png, 'door.png', 'plates');
    assert.deepEqual(submitted[1]!.model, 'plates');
    assert.deepEqual(
      submitted[1]!.picture.geometry,
      letterbox(200, 100, 64),
      "letterboxed to that model's size",
    );
    await assert.rejects(
      view.detect(png, 'door.png', 'nope'),
      (e: unknown) => e instanceof HttpError && e.status === 400 && /no model named 'nope'/.test(e.message),
    );
  });

  it('answers 400 for an image it cannot read and 503 when the picture is dropped', async () => {
    const busy = setup(() => Promise.reject(new FrameDropped('full', 'the detector is busy')));
    await assert.rejects(
      busy.view.detect(Buffer.from('not an image'), 'x.jpg', 'default'),
      (e: unknown) =>
        e instanceof HttpError && e.status === 400 && /x\.jpg: cannot read the image/.test(e.message),
    );
    const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: 'white' } })
      .png()
      .toBuffer();
    await assert.rejects(
      busy.view.detect(png, 'y.png', 'default'),
      (e: unknown) => e instanceof HttpError && e.status === 503 && /busy/.test(e.message),
    );
  });

  it('serves each model to KServe clients by name: its size, labels, readiness; pictures at detect_priority on it', async () => {
    const { view, stages, submitted } = setup(() => Promise.resolve([person]));
    const plates = localModelStats({ inputSize: 64 });
    stages.modelStats.plates = plates;
    const served = view.servedModels();
    assert.deepEqual(
      served.map((m) => [m.name, m.inputSize, m.labels, m.ready()]),
      [
        ['default', 32, ['person', 'car'], true],
        ['plates', 64, ['person', 'car'], true],
      ],
    );
    const picture: Picture = { data: Buffer.alloc(64 * 64 * 3), geometry: letterbox(64, 64, 64) };
    assert.deepEqual(await served[1]!.detect(picture), [person]);
    assert.deepEqual(submitted, [{ picture, priority: 7, model: 'plates' }]);
    plates.readyWorkers = 0;
    assert.deepEqual(
      served.map((m) => m.ready()),
      [true, false],
    );
  });
});

describe('live view: names a user chose', () => {
  it('answers health and cameras for cameras named __proto__, constructor, toString, hasOwnProperty, valueOf', () => {
    const { stages, view, result, setCameras } = setup();
    setCameras(named(SPECIAL_NAMES.map((n): [string, CameraConfig] => [n, cameraConfig()])));
    stages.statuses = SPECIAL_NAMES.map((n) => cameraStatus(n, { state: 'backoff' }));
    for (const n of SPECIAL_NAMES) view.onResult(result(n));
    const health = view.health();
    assert.deepEqual(health.cameras, named(SPECIAL_NAMES.map((n): [string, string] => [n, 'backoff'])));
    assert.deepEqual(JSON.parse(JSON.stringify(health.cameras)), plain(health.cameras), 'as JSON');
    assert.deepEqual(
      view.cameras().map((c) => [c.camera, c.state, c.has_frame]),
      SPECIAL_NAMES.map((n) => [n, 'backoff', true]),
    );
  });

  it('takes no name it was not given for a camera, also from a camera section with a prototype', async () => {
    const { view, result, setCameras } = setup();
    // As a caller may hand it (an object literal): `constructor` and `toString` are not cameras.
    setCameras({ gate: cameraConfig() });
    for (const n of ['constructor', 'toString', 'gate']) view.onResult(result(n));
    assert.equal(await view.latestJpeg('constructor'), undefined);
    assert.equal(await view.latestJpeg('toString'), undefined);
    assert.ok(await view.latestJpeg('gate'));
  });
});

describe('live view: the event history of the config’s cameras only (issue 45, item 3)', () => {
  it('lists, serves and deletes only events of cameras the running config has; the others are kept', async (t) => {
    let cameras: Record<string, CameraConfig> = { gate: cameraConfig() };
    const history = new EventStore(
      join(await tempDir(t), 'events'),
      { maxEvents: 10, maxBytes: 1 << 20 },
      silentLog,
    );
    const stored = (id: string, camera: string, start: number) => ({
      id,
      camera,
      label: 'person',
      zones: [],
      start,
      event: { id, camera },
    });
    history.add(stored('g1', 'gate', 1));
    history.add(stored('b1', 'bcam', 2)); // another config's, in a state directory they shared
    history.add(stored('g2', 'gate', 3));
    const view = liveView({ cameras: () => cameras, history }, { detectPriority: 7 });
    const ids = (q: Partial<EventQuery> = {}): unknown[] =>
      (view.events({ limit: 100, ...q }) as { id: string }[]).map((e) => e.id);
    assert.deepEqual(ids(), ['g2', 'g1']);
    assert.deepEqual(ids({ camera: 'bcam' }), [], 'not by its name either');
    assert.equal(view.hasEvent('b1'), false);
    assert.equal(view.hasEvent('g1'), true);
    assert.equal(await view.eventSnapshot('b1', 'full'), undefined);
    assert.equal(await view.eventClip('b1'), undefined);
    assert.equal(await view.deleteEvent('b1'), false, 'not deleted through this config');
    assert.equal(history.has('b1'), true, 'kept');
    assert.deepEqual(history.cameras(), ['bcam', 'gate']);
    // A config that has the camera (a reload that adds it) lists its events again.
    cameras = { gate: cameraConfig(), bcam: cameraConfig() };
    assert.deepEqual(ids(), ['g2', 'b1', 'g1']);
    assert.equal(await view.deleteEvent('b1'), true);
    await history.flush();
  });
});

describe('live view with fleet: (issue 48 item 2)', () => {
  it("lists the events this box recorded of every camera of the file, another box's now too, and serves the fleet's view", async (t) => {
    const history = new EventStore(
      join(await tempDir(t), 'events'),
      { maxEvents: 10, maxBytes: 1 << 20 },
      silentLog,
    );
    const owner = { box: 'b1', epoch: 7 };
    const stored = (id: string, camera: string, start: number) => ({
      id,
      camera,
      label: 'person',
      zones: [],
      start,
      event: { id, camera, owner },
    });
    history.add(stored('g1', 'gate', 1)); // gate: this box recorded it, b2 runs it now
    history.add(stored('y1', 'yard', 2));
    history.add(stored('o1', 'old', 3)); // a camera no longer in the file
    const fleetView = {
      box: 'b1',
      connected: true,
      members: [
        { name: 'b1', capacity: 2, labels: [], cameras: ['yard'], limit: 2 },
        { name: 'b2', capacity: 1, labels: ['gpu'], cameras: ['gate'], limit: 1 },
      ],
      owners: { gate: { box: 'b2', epoch: 9 }, yard: { box: 'b1', epoch: 7 } },
      running: ['yard'],
      unplaced: [],
    };
    const view = liveView(
      {
        cameras: () => ({ yard: cameraConfig() }),
        history,
        fleet: { view: () => fleetView, fileCameras: () => ({ gate: {}, yard: {} }) },
      },
      { detectPriority: 7 },
    );
    const listed = view.events({ limit: 100 }) as { id: string; owner: unknown }[];
    assert.deepEqual(
      listed.map((e) => e.id),
      ['y1', 'g1'],
    );
    assert.deepEqual(listed[1]!.owner, owner, 'each record names the box that made it');
    assert.equal(view.hasEvent('g1'), true);
    assert.equal(view.hasEvent('o1'), false);
    assert.deepEqual(view.fleet(), fleetView);
    await history.flush();
  });

  it('has no fleet view without fleet:', () => {
    const { view } = setup();
    assert.equal(view.fleet(), undefined);
  });
});
