import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { NamedModelStats } from '../../../src/models/index.js';
import { StatsPublisher } from '../../../src/publish/stats.js';
import type { CameraStats, ModelBatchStats } from '../../../src/scheduler/index.js';
import { topics, type StatsPayload } from '../../../src/publish/topics.js';
import { FakeClock } from '../../helpers/fakes.js';
import { FakeOutput } from '../../helpers/fake-output.js';
import {
  emptyHistogram,
  cameraStats,
  cameraStatus,
  FakeStages,
  localModelStats,
  remoteModelStats,
} from '../../helpers/fake-stages.js';
import { named, SPECIAL_NAMES } from '../../helpers/names.js';

function setup() {
  const clock = new FakeClock();
  const out = new FakeOutput();
  const stages = new FakeStages();
  const stats = new StatsPublisher({ mqtt: { stats_interval_s: 10 }, cache: { enabled: true } }, stages, {
    out,
    topics: topics('argus'),
    clock,
  });
  const messages = () => out.of('detection').map((m) => JSON.parse(m.payload) as StatsPayload);
  return { clock, out, stages, stats, messages };
}

describe('stats publisher', () => {
  it('publishes every stats_interval_s on <base>/stats, with rates over the interval', async () => {
    const { clock, out, stages, stats, messages } = setup();
    stages.cams.gate = cameraStats();
    stages.statuses = [cameraStatus('gate', { restarts: 2 })];
    stats.start();
    stages.cams.gate = cameraStats({
      framesIn: 50,
      analysed: 20,
      cached: 30,
      queueDepth: 1,
      frameAgeMsMean: 12.4,
      lagMs: 260,
    });
    await clock.advance(10_000);
    assert.equal(out.of('detection')[0]!.topic, 'argus/stats');
    const [first] = messages();
    assert.deepEqual(first!.cameras.gate, {
      model: 'default',
      state: 'streaming',
      fps_in: 5,
      fps_analysed: 2,
      fps_cached: 3,
      dropped: { full: 0, stale: 0, error: 0 },
      queue_depth: 1,
      frame_age_ms: 12,
      lag_s: 0.3,
      lagging: false,
      restarts: 2,
    });
    assert.equal(first!.uptime_s, 10);
    // The next window counts only what came since: 10 more frames in 10 s.
    stages.cams.gate = cameraStats({ framesIn: 60, analysed: 20, cached: 40 });
    await clock.advance(10_000);
    assert.equal(messages()[1]!.cameras.gate!.fps_in, 1);
    assert.equal(messages()[1]!.cameras.gate!.fps_cached, 1);
    stats.stop();
    await clock.advance(60_000);
    assert.equal(messages().length, 2, 'no message after stop');
  });

  it('reports the detector (all models, and each on its own), batch sizes, cache and MQTT from their stages', async () => {
    const { clock, stages, stats, messages } = setup();
    stages.sched = {
      ...stages.sched,
      batches: 7,
      batchSizes: [0, 3, 0, 0, 4],
      inferenceMsMean: 12.34,
      cacheHitRatio: 0.8888,
      models: {
        default: {
          batches: 6,
          batchSizes: [0, 2, 0, 0, 4],
          frames: 18,
          inferenceMsMean: 12.06,
          inference: emptyHistogram(),
          inFlight: 1,
        },
        plates: {
          batches: 1,
          batchSizes: [0, 1, 0, 0, 0],
          frames: 1,
          inferenceMsMean: 14,
          inference: emptyHistogram(),
          inFlight: 0,
        },
      },
    };
    stages.modelStats.default = localModelStats({ deadlinesMissed: 1, sessionsRecreated: 1 });
    stages.modelStats.plates = remoteModelStats({ connections: 2, inputSize: 640 });
    stages.out = { ...stages.out, reconnects: 3, detectionsDropped: 4, eventsDropped: 5, buffered: 6 };
    stats.start();
    await clock.advance(10_000);
    const m = messages()[0]!;
    assert.deepEqual(m.detector, {
      provider: 'cpu,kserve',
      workers: 4,
      batches: 7,
      batch_sizes: { '1': 3, '4': 4 },
      inference_ms: 12.3,
      deadlines_missed: 1,
      sessions_recreated: 1,
    });
    assert.deepEqual(m.models, {
      default: {
        kind: 'local',
        provider: 'cpu',
        workers: 2,
        ready_workers: 2,
        input_size: 32,
        batches: 6,
        batch_sizes: { '1': 2, '4': 4 },
        frames: 18,
        inference_ms: 12.1,
        in_flight: 1,
        deadlines_missed: 1,
        sessions_recreated: 1,
      },
      plates: {
        kind: 'remote',
        provider: 'kserve',
        workers: 2,
        ready_workers: 2,
        input_size: 640,
        batches: 1,
        batch_sizes: { '1': 1 },
        frames: 1,
        inference_ms: 14,
        in_flight: 0,
        deadlines_missed: 0,
        sessions_recreated: 0,
      },
    });
    assert.deepEqual(m.cache, { enabled: true, hit_ratio: 0.889 });
    assert.deepEqual(m.mqtt, { reconnects: 3, detections_dropped: 4, events_dropped: 5, buffered: 6 });
  });

  it('serves rates between messages over the last complete window', async () => {
    const { clock, stages, stats } = setup();
    stages.cams.gate = cameraStats();
    stats.start();
    await clock.advance(5000);
    stages.cams.gate = cameraStats({ framesIn: 25, analysed: 5 });
    assert.deepEqual(
      stats.rates().gate,
      { fpsIn: 5, fpsAnalysed: 1, fpsCached: 0 },
      'since start, before any message',
    );
    await clock.advance(5000);
    // The first message at 10 s: the window is still "since start".
    assert.deepEqual(stats.rates().gate, { fpsIn: 2.5, fpsAnalysed: 0.5, fpsCached: 0 });
    stages.cams.gate = cameraStats({ framesIn: 45, analysed: 5 });
    await clock.advance(10_000);
    // The second at 20 s: from the first message on.
    assert.deepEqual(stats.rates().gate, { fpsIn: 2, fpsAnalysed: 0, fpsCached: 0 });
  });
});

describe('stats publisher: rates across runtime changes (issue 44)', () => {
  it('a camera away for a window (disabled) and back is measured from its last counts, not from 0', async () => {
    const { clock, stages, stats, messages } = setup();
    stages.cams.lot = cameraStats({ framesIn: 100, analysed: 40 });
    stats.start();
    await clock.advance(10_000);
    delete stages.cams.lot;
    await clock.advance(10_000);
    assert.equal(messages()[1]!.cameras.lot, undefined, 'not listed while away');
    // Back: its counters went on from their totals, 20 more frames in this window.
    stages.cams.lot = cameraStats({ framesIn: 120, analysed: 45 });
    await clock.advance(10_000);
    assert.deepEqual(
      [messages()[2]!.cameras.lot!.fps_in, messages()[2]!.cameras.lot!.fps_analysed],
      [2, 0.5],
    );
  });

  it('no rate is ever below 0, not even from a stage whose counter went down', async () => {
    const { clock, stages, stats, messages } = setup();
    stages.cams.lot = cameraStats({ framesIn: 39, analysed: 13, cached: 20 });
    stats.start();
    await clock.advance(10_000);
    stages.cams.lot = cameraStats({ framesIn: 9, analysed: 1, cached: 2 });
    await clock.advance(10_000);
    const lot = messages()[1]!.cameras.lot!;
    assert.deepEqual([lot.fps_in, lot.fps_analysed, lot.fps_cached], [0, 0, 0]);
    assert.deepEqual(stats.rates().lot, { fpsIn: 0, fpsAnalysed: 0, fpsCached: 0 });
  });
});

describe('stats publisher: names a user chose', () => {
  it('reports cameras and models named __proto__, constructor, toString, hasOwnProperty, valueOf', async () => {
    const { clock, stages, stats, messages } = setup();
    const frames = (framesIn: number) =>
      named(SPECIAL_NAMES.map((n): [string, CameraStats] => [n, cameraStats({ model: n, framesIn })]));
    stages.cams = frames(0);
    stages.modelStats = named(
      SPECIAL_NAMES.map((n): [string, NamedModelStats] => [n, { ...stages.modelStats.default! }]),
    );
    stages.sched.models = named(
      SPECIAL_NAMES.map((n): [string, ModelBatchStats] => [
        n,
        {
          batches: 3,
          batchSizes: [0, 3],
          frames: 3,
          inferenceMsMean: 5,
          inference: emptyHistogram(),
          inFlight: 0,
        },
      ]),
    );
    stages.statuses = SPECIAL_NAMES.map((n) => cameraStatus(n, { restarts: 1 }));
    stats.start();
    stages.cams = frames(50);
    await clock.advance(10_000);
    // The next window's rates are measured from this one's counts, camera by camera.
    stages.cams = frames(60);
    await clock.advance(10_000);
    for (const m of messages()) {
      assert.deepEqual(Object.keys(m.cameras), [...SPECIAL_NAMES]);
      assert.deepEqual(Object.keys(m.models), [...SPECIAL_NAMES]);
    }
    const [one, two] = messages();
    for (const n of SPECIAL_NAMES) {
      assert.deepEqual(
        [one!.cameras[n]!.model, one!.cameras[n]!.restarts, one!.cameras[n]!.fps_in],
        [n, 1, 5],
        n,
      );
      assert.equal(two!.cameras[n]!.fps_in, 1, n);
      assert.deepEqual([one!.models[n]!.batches, one!.models[n]!.batch_sizes], [3, { 1: 3 }], n);
    }
    assert.deepEqual(Object.keys(stats.rates()), [...SPECIAL_NAMES]);
    stats.stop();
  });
});
