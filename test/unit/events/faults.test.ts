import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Detection } from '../../../src/core/frame.js';
import { letterbox } from '../../../src/core/geometry.js';
import { parseConfig } from '../../../src/config/index.js';
import type { EventStore } from '../../../src/events/index.js';
import { Parts, reportingParts } from '../../../src/root/index.js';
import {
  topics,
  type CameraStatusPayload,
  type CrossingPayload,
  type EventPayload,
} from '../../../src/publish/topics.js';
import { FakeClock, recordingLog } from '../../helpers/fakes.js';
import { FakeMqtt } from '../../helpers/fake-output.js';
import { cameraStatus } from '../../helpers/fake-stages.js';
import { createMetrics } from '../../../src/http/metrics.js';

/** Two cameras alike: a calibrated zone over the whole picture, and a line across it. */
const config = (): ReturnType<typeof parseConfig>['config'] => {
  const camera = (name: string): string[] => [
    `  ${name}:`,
    '    url: rtsp://h/s',
    '    zones:',
    '      road:',
    '        points: [[0, 0], [640, 0], [640, 480], [0, 480]]',
    '        distances: [20, 15, 20, 15]',
    '        inertia: 1',
    '    lines:',
    '      kerb:',
    '        points: [[320, 0], [320, 480]]',
  ];
  const text = ['model:', '  path: m.onnx', 'cameras:', ...camera('gate'), ...camera('yard'), ''].join('\n');
  return parseConfig(text, 'c.yaml', {}).config;
};

/** A history that fails for one camera's events, on every one of them. */
function failingHistory(camera: string): EventStore {
  const fail = (e: { camera: string }): void => {
    if (e.camera === camera) throw new Error('disk says no');
  };
  return {
    add: fail,
    update: fail,
    load: async () => {},
    expire: () => {},
    flush: async () => {},
  } as unknown as EventStore;
}

function setup(cfg: ReturnType<typeof config>, history?: EventStore) {
  const out = new FakeMqtt();
  const clock = new FakeClock();
  const { log, lines } = recordingLog();
  const t = topics('argus');
  const reporting = reportingParts(
    { ...cfg, state_dir: undefined },
    {
      cameras: () => cfg.cameras,
      out,
      topics: t,
      clock,
      log,
      history,
      cameraStatus: (camera) => cameraStatus(camera),
      onTracked: (tracked) => parts.tell('onTracked', tracked),
      onFault: (camera) => reporting.statuses.faultsChanged(camera),
    },
  );
  const { discovery, detections, events, statuses, latency } = reporting;
  const parts = new Parts([discovery, events, detections, statuses, latency], log, clock);
  const geometry = letterbox(640, 480, 320);
  const det = (x: number): Detection => ({ label: 'car', score: 0.9, box: [x, 200, x + 60, 260] });
  /** One frame of each camera: a car driving right, 40 px a frame, 200 ms apart. */
  const frame = (seq: number): void => {
    for (const camera of ['gate', 'yard'])
      parts.tell('onResult', {
        camera,
        seq,
        ts: 1_000_000 + seq * 200,
        geometry,
        cached: false,
        detections: [det(100 + seq * 40)],
        data: Buffer.alloc(0),
      });
  };
  const eventsOf = (camera: string): EventPayload[] =>
    out
      .of('event')
      .filter((m) => m.topic === 'argus/events')
      .map((m) => JSON.parse(m.payload) as EventPayload)
      .filter((e) => e.camera === camera);
  const crossingsOf = (camera: string): CrossingPayload[] =>
    out
      .of('event')
      .filter((m) => m.topic === 'argus/crossings')
      .map((m) => JSON.parse(m.payload) as CrossingPayload)
      .filter((e) => e.camera === camera);
  const lastStatus = (camera: string): CameraStatusPayload | undefined => {
    const s = out.of('state').filter((m) => m.topic === `argus/cameras/${camera}/status`);
    return s.length ? (JSON.parse(s.at(-1)!.payload) as CameraStatusPayload) : undefined;
  };
  return { out, events, statuses, frame, eventsOf, crossingsOf, lastStatus, lines };
}

describe('event faults', () => {
  it("a part that throws on every frame for one camera leaves that camera's other parts, and the other camera, publishing; the fault is counted, logged once and shown", async () => {
    const { events, frame, eventsOf, crossingsOf, lastStatus, lines } = setup(
      config(),
      failingHistory('gate'),
    );
    for (let seq = 1; seq <= 12; seq++) frame(seq);
    for (const camera of ['gate', 'yard']) {
      const evs = eventsOf(camera);
      assert.equal(evs[0]?.type, 'new', `${camera} publishes its new event`);
      assert.ok(
        evs.some((e) => e.entered_zones.includes('road') && e.speed !== null),
        `${camera}'s events say the zone and a speed`,
      );
      assert.equal(crossingsOf(camera).length, 1, `${camera}'s crossing is published`);
      assert.equal(crossingsOf(camera)[0]!.count, 1, `${camera}'s line is counted`);
    }
    const gateEvents = eventsOf('gate').length;
    assert.ok(gateEvents >= 2, 'the history failed at every one of them');
    assert.deepEqual(
      events.faultsOf('gate').map((f) => [f.part, f.count, f.message]),
      [['history', gateEvents, 'disk says no']],
    );
    assert.deepEqual(events.faultsOf('yard'), []);
    assert.deepEqual(
      lastStatus('gate')!.event_faults.map((f) => [f.part, f.message]),
      [['history', 'disk says no']],
      "gate's retained status names the failing part",
    );
    assert.deepEqual(lastStatus('yard')?.event_faults ?? [], []);
    const logged = lines.filter((l) => l.msg.includes('history failed'));
    assert.equal(logged.length, 1, 'logged once, not at every frame');
    assert.match(logged[0]!.msg, /camera gate; its other parts go on/);
    const metrics = createMetrics({
      scheduler: { stats: () => ({ cameras: {} }) as never },
      ingest: { statuses: () => [] },
      models: { stats: () => ({}) },
      output: { stats: () => ({}) as never },
      eventFaults: events.faults,
    });
    const { values } = await metrics.getSingleMetric('argus_event_faults_total')!.get();
    assert.deepEqual(
      values.map((v) => [v.labels, v.value]),
      [[{ camera: 'gate', part: 'history' }, gateEvents]],
    );
  });

  it('a calibration that cannot be used (slipped past validation) costs the zone its speed, not the camera its events', () => {
    const cfg = config();
    // What `validate` now refuses, put straight into the running configuration.
    cfg.cameras.gate!.zones.road!.distances = [1e-300, 1e-300, 1e-300, 1e-300];
    const { events, frame, eventsOf, crossingsOf, lastStatus } = setup(cfg);
    for (let seq = 1; seq <= 12; seq++) frame(seq);
    const gate = eventsOf('gate');
    assert.equal(gate[0]?.type, 'new');
    assert.ok(
      gate.some((e) => e.entered_zones.includes('road')),
      'the zone is still entered',
    );
    assert.ok(
      gate.every((e) => e.speed === null),
      'no speed from a plane that cannot be used',
    );
    assert.ok(
      eventsOf('yard').some((e) => e.speed !== null),
      'the other camera measures speeds',
    );
    assert.equal(crossingsOf('gate').length, 1);
    const [fault] = events.faultsOf('gate');
    assert.equal(fault?.part, 'speed');
    assert.match(fault.message, /^zone road's calibration cannot be used \(/);
    assert.equal(lastStatus('gate')!.event_faults[0]?.part, 'speed');
  });
});
