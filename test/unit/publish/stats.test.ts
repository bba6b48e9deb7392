import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { StatsPublisher } from '../../../src/publish/stats.js';
import { topics, type StatsPayload } from '../../../src/publish/topics.js';
import { FakeClock } from '../../helpers/fakes.js';
import { FakeOutput } from '../../helpers/fake-output.js';
import { cameraStats, cameraStatus, FakeStages } from '../../helpers/fake-stages.js';

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
    });
    await clock.advance(10_000);
    assert.equal(out.of('detection')[0]!.topic, 'argus/stats');
    const [first] = messages();
    assert.deepEqual(first!.cameras.gate, {
      state: 'streaming',
      fps_in: 5,
      fps_analysed: 2,
      fps_cached: 3,
      dropped: { full: 0, stale: 0, error: 0 },
      queue_depth: 1,
      frame_age_ms: 12,
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

  it('reports the detector, batch sizes, cache and MQTT from their stages', async () => {
    const { clock, stages, stats, messages } = setup();
    stages.sched = {
      ...stages.sched,
      batches: 7,
      batchSizes: [0, 3, 0, 0, 4],
      inferenceMsMean: 12.34,
      cacheHitRatio: 0.8888,
    };
    stages.det = { ...stages.det, deadlinesMissed: 1, sessionsRecreated: 1 };
    stages.out = { ...stages.out, reconnects: 3, detectionsDropped: 4, eventsDropped: 5, buffered: 6 };
    stats.start();
    await clock.advance(10_000);
    const m = messages()[0]!;
    assert.deepEqual(m.detector, {
      provider: 'cpu',
      workers: 2,
      batches: 7,
      batch_sizes: { '1': 3, '4': 4 },
      inference_ms: 12.3,
      deadlines_missed: 1,
      sessions_recreated: 1,
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
