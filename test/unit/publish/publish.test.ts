import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseConfig } from '../../../src/config/load.js';
import { letterbox } from '../../../src/detector/letterbox.js';
import type { Detection } from '../../../src/detector/results.js';
import type { CameraStatus } from '../../../src/ingest/camera.js';
import { applyCameraFilters, insidePolygon, type ZonedDetection } from '../../../src/publish/filters.js';
import type { Output } from '../../../src/publish/mqtt-output.js';
import { Reporter } from '../../../src/publish/reporter.js';
import {
  topics,
  type CameraStatusPayload,
  type DetectionsPayload,
  type EventPayload,
} from '../../../src/publish/topics.js';
import { Tracker } from '../../../src/publish/tracker.js';

const cameraConfig = (yaml: string) =>
  parseConfig(`model:\n  path: m.onnx\ncameras:\n  gate:\n    url: rtsp://h/s\n${yaml}`, 'c.yaml', {}).config;

const parse = <T>(s: string): T => JSON.parse(s) as T;
const det = (label: string, score: number, box: [number, number, number, number]): Detection => ({
  label,
  score,
  box,
});
const zd = (
  label: string,
  score: number,
  box: [number, number, number, number],
  zones: string[] = [],
): ZonedDetection => ({ label, score, box, zones });

describe('camera filters', () => {
  it('point in polygon', () => {
    const square: [number, number][] = [
      [0, 0],
      [10, 0],
      [10, 10],
      [0, 10],
    ];
    assert.equal(insidePolygon([5, 5], square), true);
    assert.equal(insidePolygon([15, 5], square), false);
    const l: [number, number][] = [
      [0, 0],
      [10, 0],
      [10, 4],
      [4, 4],
      [4, 10],
      [0, 10],
    ];
    assert.equal(insidePolygon([7, 7], l), false, 'outside the concave corner');
    assert.equal(insidePolygon([2, 7], l), true);
  });

  it('keeps tracked labels only, applies per-label min_score and min_area, and names zones by the foot of the box', () => {
    const cfg = cameraConfig(
      [
        '    objects:',
        '      track: [person, car]',
        '      filters:',
        '        person: { min_score: 0.5, min_area: 100 }',
        '    zones:',
        '      porch:',
        '        points: [[0, 50], [100, 50], [100, 100], [0, 100]]',
        '      drive:',
        '        points: [[0, 0], [100, 0], [100, 100], [0, 100]]',
        '        objects: [car]',
      ].join('\n'),
    );
    const out = applyCameraFilters(
      [
        det('person', 0.9, [10, 10, 30, 60]), // foot (20, 60): porch
        det('person', 0.4, [10, 10, 30, 60]), // score too low
        det('person', 0.9, [10, 10, 15, 15]), // area 25 too small
        det('dog', 0.99, [10, 10, 30, 60]), // not tracked
        det('car', 0.3, [50, 0, 90, 40]), // foot (70, 40): drive only
      ],
      cfg.cameras.gate!,
    );
    assert.deepEqual(out, [
      zd('person', 0.9, [10, 10, 30, 60], ['porch']),
      zd('car', 0.3, [50, 0, 90, 40], ['drive']),
    ]);
  });
});

describe('tracker', () => {
  const settings = { minFrames: 2, endAfterMs: 1000, matchIou: 0.3, updateIou: 0.7, updateScore: 0.1 };

  it('announces an object after min_frames, keeps its id, and ends it when unseen', () => {
    const t = new Tracker('gate', settings);
    assert.deepEqual(t.update([zd('person', 0.6, [0, 0, 10, 20])], 0), [], 'tentative after one frame');
    const [n] = t.update([zd('person', 0.7, [1, 0, 11, 20])], 200);
    assert.equal(n!.type, 'new');
    assert.equal(n!.start_ts, 0);
    assert.equal(n!.score, 0.7);
    assert.deepEqual(t.counts(), { person: 1 });
    assert.deepEqual(t.update([], 900), []);
    const [end] = t.update([], 1200);
    assert.deepEqual([end!.type, end!.id, end!.end_ts], ['end', n!.id, 200]);
    assert.deepEqual(t.counts(), {});
  });

  it('sends update on a material move, a zone change, or a clear score gain; not for jitter', () => {
    const t = new Tracker('gate', settings);
    t.update([zd('car', 0.5, [0, 0, 100, 50])], 0);
    t.update([zd('car', 0.5, [0, 0, 100, 50])], 100);
    assert.deepEqual(t.update([zd('car', 0.55, [2, 0, 102, 50])], 200), [], 'jitter');
    const [moved] = t.update([zd('car', 0.55, [30, 0, 130, 50])], 300);
    assert.equal(moved!.type, 'update');
    const [zone] = t.update([zd('car', 0.55, [30, 0, 130, 50], ['drive'])], 400);
    assert.deepEqual(zone!.zones, ['drive']);
    const [better] = t.update([zd('car', 0.7, [30, 0, 130, 50], ['drive'])], 500);
    assert.equal(better!.score, 0.7);
  });

  it('matches by label and best overlap; a one-frame blip makes no event', () => {
    const t = new Tracker('gate', settings);
    t.update([zd('person', 0.9, [0, 0, 10, 10]), zd('dog', 0.9, [0, 0, 10, 10])], 0);
    const events = t.update([zd('person', 0.9, [0, 0, 10, 10]), zd('dog', 0.9, [0, 0, 10, 10])], 100);
    assert.deepEqual(events.map((e) => e.label).sort(), ['dog', 'person']);
    t.update([zd('cat', 0.9, [50, 50, 60, 60])], 200);
    const later = t.update([], 2000);
    assert.deepEqual(
      later.map((e) => [e.type, e.label]).sort(),
      [
        ['end', 'dog'],
        ['end', 'person'],
      ],
      'the cat seen once vanishes silently',
    );
  });

  it('ends everything on shutdown', () => {
    const t = new Tracker('gate', { ...settings, minFrames: 1 });
    t.update([zd('person', 0.9, [0, 0, 10, 10])], 0);
    assert.deepEqual(
      t.endAll().map((e) => e.type),
      ['end'],
    );
    assert.deepEqual(t.counts(), {});
  });
});

class FakeOutput implements Output {
  sent: { kind: string; topic: string; payload: string }[] = [];
  detection(topic: string, payload: string): void {
    this.sent.push({ kind: 'detection', topic, payload });
  }
  event(topic: string, payload: string): void {
    this.sent.push({ kind: 'event', topic, payload });
  }
  state(topic: string, payload: string): void {
    this.sent.push({ kind: 'state', topic, payload });
  }
  of(kind: string) {
    return this.sent.filter((s) => s.kind === kind);
  }
}

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
    const r = new Reporter(
      cfg.cameras,
      { ...cfg.events, min_frames: 2, end_after_s: 1 },
      topics('argus'),
      out,
    );
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
      [e.type, e.label, e.camera, e.start_ts, e.end_ts],
      ['new', 'person', 'gate', new Date(1000).toISOString(), null],
    );
    assert.deepEqual(
      out.of('state').map((s) => [s.topic, s.payload]),
      [['argus/cameras/gate/person', '1']],
    );
    r.tick(2500);
    assert.equal(parse<EventPayload>(out.of('event')[1]!.payload).type, 'end');
    assert.deepEqual(out.of('state').at(-1), {
      kind: 'state',
      topic: 'argus/cameras/gate/person',
      payload: '0',
    });
  });

  it('publishes retained camera statuses with detector errors until the next analysed frame', () => {
    const out = new FakeOutput();
    const r = new Reporter(cfg.cameras, cfg.events, topics('site/argus'), out);
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
    r.onCameraStatus({ ...status, state: 'streaming', lastError: null });
    r.onDetectorError('gate', 'inference missed its 1000 ms deadline', 50);
    const withErr = parse<CameraStatusPayload>(out.of('state').at(-1)!.payload);
    assert.deepEqual([withErr.state, withErr.last_error?.cause], ['streaming', 'detector']);
    r.onResult(result(1, 100, []));
    assert.equal(parse<CameraStatusPayload>(out.of('state').at(-1)!.payload).last_error, null);
  });
});
