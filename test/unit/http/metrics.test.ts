import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Histogram } from '../../../src/core/histogram.js';
import { createMetrics } from '../../../src/http/metrics.js';
import { REFUSALS } from '../../../src/broker/broker-policy.js';
import type { BrokerStats } from '../../../src/broker/index.js';
import {
  emptyHistogram,
  cameraStats,
  cameraStatus,
  FakeStages,
  localModelStats,
  remoteModelStats,
} from '../../helpers/fake-stages.js';
import { flush } from '../../helpers/fakes.js';

/**
 * The samples of a Prometheus text exposition, keyed `name{label="value",...}` with the labels
 * sorted (so the key does not depend on the order prom-client prints them in).
 */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^(\w+)(?:\{(.*)\})? (\S+)$/.exec(line);
    assert.ok(m, `unparsable line: ${line}`);
    const labels = m[2]
      ? m[2]
          .split(/,(?=\w+=")/)
          .sort()
          .join(',')
      : '';
    out.set(labels ? `${m[1]}{${labels}}` : m[1]!, Number(m[3]));
  }
  return out;
}

/** The samples of one metric, by their label part (`camera="gate"` or '' for a scalar). */
function series(all: Map<string, number>, name: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [key, v] of all) {
    if (key === name) out[''] = v;
    else if (key.startsWith(`${name}{`)) out[key.slice(name.length + 1, -1)] = v;
  }
  return out;
}

/** Two cameras: `gate` streaming and analysed, `yard` in backoff and not yet queued. */
function setup() {
  const stages = new FakeStages();
  stages.statuses = [
    cameraStatus('gate', { framesReceived: 120, bytesReceived: 110_592_000, restarts: 2 }),
    cameraStatus('yard', { state: 'backoff', restarts: 5 }),
  ];
  stages.cams.gate = cameraStats({
    analysed: 40,
    cached: 70,
    dropped: { full: 3, stale: 1, error: 0 },
    queueDepth: 2,
    frameAgeMsMean: 250,
    lagMs: 12_500,
    lagging: true,
  });
  const registry = createMetrics(stages);
  const scrape = async (): Promise<Map<string, number>> => samples(await registry.metrics());
  return { stages, registry, scrape };
}

describe('metrics', () => {
  it('exports inference, queue wait and capture-to-publish as histograms, with cumulative buckets', async () => {
    const { stages, registry } = setup();
    const h = new Histogram([0.1, 1]);
    for (const v of [0.05, 0.2, 0.3, 4]) h.observe(v);
    stages.cams.gate = cameraStats({ queueWait: h.snapshot() });
    stages.sched.models = {
      default: {
        batches: 4,
        batchSizes: [0, 4],
        frames: 4,
        inferenceMsMean: 0,
        inference: h.snapshot(),
        inFlight: 0,
      },
    };
    Object.assign(stages, { latency: { latency: () => new Map([['gate', h.snapshot()]]) } });
    const m = samples(await createMetrics(stages).metrics());
    for (const [name, label] of [
      ['argus_detector_inference_duration_seconds', 'model="default"'],
      ['argus_camera_queue_wait_seconds', 'camera="gate"'],
      ['argus_camera_capture_to_publish_seconds', 'camera="gate"'],
    ] as const) {
      assert.deepEqual(
        series(m, `${name}_bucket`),
        Object.fromEntries(
          [
            ['0.1', 1],
            ['1', 3],
            ['+Inf', 4],
          ].map(([le, n]) => [[label, `le="${le}"`].sort().join(','), n]),
        ),
        name,
      );
      assert.deepEqual(series(m, `${name}_count`), { [label]: 4 }, name);
      assert.ok(Math.abs(series(m, `${name}_sum`)[label]! - 4.55) < 1e-9, name);
    }
    const text = await registry.metrics();
    assert.match(text, /# TYPE argus_camera_queue_wait_seconds histogram/);
  });

  it('counts frames, bytes and restarts per camera from the ingest statuses', async () => {
    const m = await setup().scrape();
    assert.deepEqual(series(m, 'argus_camera_frames_received_total'), {
      'camera="gate"': 120,
      'camera="yard"': 0,
    });
    assert.deepEqual(series(m, 'argus_camera_bytes_received_total'), {
      'camera="gate"': 110_592_000,
      'camera="yard"': 0,
    });
    assert.deepEqual(series(m, 'argus_camera_restarts_total'), { 'camera="gate"': 2, 'camera="yard"': 5 });
  });

  it("exports each clip-keeping camera's ring: bytes held, written, segments lost", async () => {
    const { stages, scrape } = setup();
    stages.rings.gate = {
      segments: 6,
      bytes: 3_145_728,
      bytesWritten: 52_428_800,
      segmentsWritten: 100,
      segmentsLost: 3,
      bytesDropped: 1_048_576,
    };
    const all = await scrape();
    assert.deepEqual(series(all, 'argus_clip_ring_bytes'), { 'camera="gate"': 3_145_728 });
    assert.deepEqual(series(all, 'argus_clip_ring_written_bytes_total'), { 'camera="gate"': 52_428_800 });
    assert.deepEqual(series(all, 'argus_clip_ring_lost_segments_total'), { 'camera="gate"': 3 });
  });

  it("exports each camera's recording bytes by why they are kept: event, recent, always, retired", async () => {
    const { stages, scrape } = setup();
    const ring = { segments: 6, bytesWritten: 0, segmentsWritten: 0, segmentsLost: 0, bytesDropped: 0 };
    stages.rings.gate = { ...ring, bytes: 600, eventBytes: 100, recentBytes: 200, alwaysBytes: 300 };
    stages.rings.old = { ...ring, bytes: 50, retiredBytes: 50 };
    assert.deepEqual(series(await scrape(), 'argus_recording_bytes'), {
      'camera="gate",reason="event"': 100,
      'camera="gate",reason="recent"': 200,
      'camera="gate",reason="always"': 300,
      'camera="old",reason="retired"': 50,
    });
  });

  it("exports a recording's bytes kept for a snapshot's rescue as reason snapshot", async () => {
    const { stages, scrape } = setup();
    const ring = { segments: 2, bytesWritten: 0, segmentsWritten: 0, segmentsLost: 0, bytesDropped: 0 };
    stages.rings.gate = {
      ...ring,
      bytes: 30,
      eventBytes: 0,
      snapshotBytes: 10,
      recentBytes: 20,
      alwaysBytes: 0,
    };
    assert.equal(series(await scrape(), 'argus_recording_bytes')['camera="gate",reason="snapshot"'], 10);
  });

  it("counts recording cameras' snapshots drawn, cached, rescued, put off and lost; none without them", async () => {
    const { stages } = setup();
    assert.equal(
      series(samples(await createMetrics(stages).metrics()), 'argus_snapshot_frames_total')['result="drawn"'],
      undefined,
    );
    const counts = { drawn: 3, hits: 5, rescued: 7, gone: 1, rescuing: 2, deferred: 4 };
    const registry = createMetrics({ ...stages, snapshotFrames: { counts } });
    const m = samples(await registry.metrics());
    assert.deepEqual(series(m, 'argus_snapshot_frames_total'), {
      'result="drawn"': 3,
      'result="cached"': 5,
      'result="rescued"': 7,
      'result="deferred"': 4,
      'result="lost"': 1,
    });
    await flush(); // a snapshot lasts the turn it was taken in
    counts.rescued = 8;
    assert.equal(
      series(samples(await registry.metrics()), 'argus_snapshot_frames_total')['result="rescued"'],
      8,
    );
  });

  it('sets the state gauge to 1 for the current state and 0 for the others', async () => {
    const m = await setup().scrape();
    const yard = Object.entries(series(m, 'argus_camera_state')).filter(([k]) =>
      k.startsWith('camera="yard"'),
    );
    assert.deepEqual(Object.fromEntries(yard), {
      'camera="yard",state="connecting"': 0,
      'camera="yard",state="streaming"': 0,
      'camera="yard",state="backoff"': 1,
      'camera="yard",state="offline"': 0,
      'camera="yard",state="disabled"': 0,
      'camera="yard",state="stopped"': 0,
    });
    assert.equal(m.get('argus_camera_state{camera="gate",state="streaming"}'), 1);
    assert.equal(m.get('argus_camera_state{camera="gate",state="backoff"}'), 0);
  });

  it('reads the queue counters per camera from the scheduler, drops by reason', async () => {
    const m = await setup().scrape();
    // yard has no queue yet: it has no scheduler series.
    assert.deepEqual(series(m, 'argus_camera_frames_analysed_total'), { 'camera="gate"': 40 });
    assert.deepEqual(series(m, 'argus_camera_frames_cached_total'), { 'camera="gate"': 70 });
    assert.deepEqual(series(m, 'argus_camera_frames_dropped_total'), {
      'camera="gate",reason="full"': 3,
      'camera="gate",reason="stale"': 1,
      'camera="gate",reason="error"': 0,
    });
    assert.deepEqual(series(m, 'argus_camera_queue_depth'), { 'camera="gate"': 2 });
    assert.deepEqual(series(m, 'argus_camera_frame_age_seconds'), { 'camera="gate"': 0.25 });
    assert.deepEqual(series(m, 'argus_camera_model'), { 'camera="gate",model="default"': 1 });
    assert.deepEqual(series(m, 'argus_camera_lag_seconds'), { 'camera="gate"': 12.5 });
    assert.deepEqual(series(m, 'argus_camera_lagging'), { 'camera="gate"': 1 });
  });

  it('counts batches per model by size, leaving out size 0, and each model’s frames', async () => {
    const { stages, scrape } = setup();
    const batches = {
      batches: 16,
      batchSizes: [9, 12, 0, 4],
      frames: 24,
      inferenceMsMean: 0,
      inference: emptyHistogram(),
      inFlight: 0,
    };
    stages.sched.models = { default: batches, plates: { ...batches, batchSizes: [0, 2], frames: 2 } };
    stages.modelStats.plates = remoteModelStats();
    const m = await scrape();
    assert.deepEqual(series(m, 'argus_detector_batches_total'), {
      'model="default",size="1"': 12,
      'model="default",size="2"': 0,
      'model="default",size="3"': 4,
      'model="plates",size="1"': 2,
    });
    assert.deepEqual(series(m, 'argus_detector_frames_total'), {
      'model="default"': 24,
      'model="plates"': 2,
    });
  });

  it('exports each model’s numbers, and the cache and MQTT scalars', async () => {
    const { stages, scrape } = setup();
    Object.assign(stages.sched, { cacheHitRatio: 0.625 });
    stages.sched.models = {
      default: {
        batches: 1,
        batchSizes: [0, 1],
        frames: 1,
        inferenceMsMean: 42,
        inference: emptyHistogram(),
        inFlight: 1,
      },
    };
    Object.assign(stages.modelStats.default!, { deadlinesMissed: 3, sessionsRecreated: 1, readyWorkers: 1 });
    // A model without batches yet still has its numbers.
    stages.modelStats.plates = localModelStats({ sessionsRecreated: 1, readyWorkers: 2, deadlinesMissed: 0 });
    stages.out = {
      ...stages.out,
      connected: false,
      reconnects: 4,
      detectionsDropped: 7,
      eventsDropped: 2,
      failures: { auth: 3, refused: 0, unreachable: 1, tls: 0, error: 0 },
    };
    const m = await scrape();
    const perModel = (model: string): Record<string, number> =>
      Object.fromEntries(
        [...m].filter(([k]) => k.endsWith(`{model="${model}"}`)).map(([k, v]) => [k.split('{')[0]!, v]),
      );
    assert.deepEqual(perModel('default'), {
      argus_detector_frames_total: 1,
      argus_detector_inference_seconds: 0.042,
      // Its histogram (buckets have an `le` label too): nothing observed in this fake.
      argus_detector_inference_duration_seconds_sum: 0,
      argus_detector_inference_duration_seconds_count: 0,
      argus_detector_batches_in_flight: 1,
      argus_detector_deadlines_missed_total: 3,
      argus_detector_sessions_recreated_total: 1,
      argus_detector_ready_workers: 1,
    });
    assert.deepEqual(perModel('plates'), {
      argus_detector_frames_total: 0,
      argus_detector_inference_seconds: 0,
      argus_detector_batches_in_flight: 0,
      argus_detector_deadlines_missed_total: 0,
      argus_detector_sessions_recreated_total: 1,
      argus_detector_ready_workers: 2,
    });
    const scalars = Object.fromEntries([...m].filter(([k]) => !k.includes('{')));
    assert.deepEqual(scalars, {
      argus_cache_hit_ratio: 0.625,
      argus_mqtt_connected: 0,
      argus_mqtt_reconnects_total: 4,
      argus_mqtt_detections_dropped_total: 7,
      argus_mqtt_events_dropped_total: 2,
    });
    assert.equal(m.get('argus_mqtt_connect_failures_total{cause="auth"}'), 3);
    assert.equal(m.get('argus_mqtt_connect_failures_total{cause="unreachable"}'), 1);
  });

  it('exports a remote model’s server state, requests, retries, errors by kind and bytes; none for local ones', async () => {
    const { stages, scrape } = setup();
    const remote = {
      model: 'big',
      server: 'https://gpu-box:8000',
      remoteModel: 'yolov8x',
      state: 'down' as const,
      since: 0,
      lastError: 'ECONNREFUSED',
      input: 'UINT8' as const,
      output: 'detections' as const,
      requests: 12,
      retries: 3,
      failures: { connect: 2, timeout: 1, unavailable: 0, rejected: 0, protocol: 0 },
      frames: 36,
      bytesSent: 11_059_200,
      bytesReceived: 7200,
      inFlight: 0,
    };
    stages.modelStats.big = remoteModelStats(remote);
    const m = await scrape();
    assert.deepEqual(series(m, 'argus_remote_model_up'), { 'model="big"': 0 });
    assert.deepEqual(series(m, 'argus_remote_requests_total'), { 'model="big"': 12 });
    assert.deepEqual(series(m, 'argus_remote_retries_total'), { 'model="big"': 3 });
    assert.deepEqual(series(m, 'argus_remote_request_errors_total'), {
      'kind="connect",model="big"': 2,
      'kind="timeout",model="big"': 1,
      'kind="unavailable",model="big"': 0,
      'kind="rejected",model="big"': 0,
      'kind="protocol",model="big"': 0,
    });
    assert.deepEqual(series(m, 'argus_remote_bytes_total'), {
      'direction="sent",model="big"': 11_059_200,
      'direction="received",model="big"': 7200,
    });
    stages.modelStats.big = remoteModelStats({ ...remote, state: 'up' });
    await flush();
    assert.deepEqual(series(await scrape(), 'argus_remote_model_up'), { 'model="big"': 1 });
  });

  it("exports the embedded broker's refusals and other clients' retained messages, only when it runs", async () => {
    const { stages, scrape } = setup();
    const none = Object.fromEntries(REFUSALS.map((r) => [r, 0])) as BrokerStats['refusals'];
    assert.deepEqual(
      [...(await scrape()).keys()].filter((k) => k.startsWith('argus_mqtt_broker')),
      [],
      'no embedded broker (mqtt.url is set): no series',
    );
    const refusals = { ...none, login: 3, oversize: 1, base_topic: 2 };
    const broker = { stats: (): BrokerStats => ({ refusals, retained: { messages: 4, bytes: 900 } }) };
    const m = samples(await createMetrics({ ...stages, broker }).metrics());
    const refused = series(m, 'argus_mqtt_broker_refusals_total');
    assert.deepEqual(
      [refused['reason="login"'], refused['reason="oversize"'], refused['reason="base_topic"']],
      [3, 1, 2],
    );
    assert.equal(Object.keys(refused).length, REFUSALS.length, 'every reason, 0 included');
    assert.equal(m.get('argus_mqtt_broker_retained_messages'), 4);
    assert.equal(m.get('argus_mqtt_broker_retained_bytes'), 900);
  });

  it('re-reads every value on the next scrape: counters are replaced, never added up', async () => {
    const { stages, scrape } = setup();
    assert.equal((await scrape()).get('argus_camera_frames_received_total{camera="gate"}'), 120);
    // A snapshot lasts the event-loop turn it was taken in; HTTP scrapes arrive in later turns.
    await flush();
    stages.statuses = [cameraStatus('gate', { framesReceived: 150, restarts: 2 })];
    stages.cams.gate = cameraStats({ analysed: 55, dropped: { full: 4, stale: 1, error: 0 } });
    stages.modelStats.default = localModelStats({ deadlinesMissed: 1 });
    stages.out = { ...stages.out, connected: false, reconnects: 1 };
    const m = await scrape();
    assert.deepEqual(series(m, 'argus_camera_frames_received_total'), { 'camera="gate"': 150 });
    assert.equal(m.get('argus_camera_frames_analysed_total{camera="gate"}'), 55);
    assert.equal(m.get('argus_camera_frames_dropped_total{camera="gate",reason="full"}'), 4);
    assert.equal(m.get('argus_detector_deadlines_missed_total{model="default"}'), 1);
    assert.equal(m.get('argus_mqtt_connected'), 0);
    assert.equal(m.get('argus_mqtt_reconnects_total'), 1);
    // yard is gone from ingest: its series are gone too.
    assert.deepEqual(
      [...m.keys()].filter((k) => k.includes('yard')),
      [],
    );
  });

  it('reads each source once per scrape: every metric of a scrape sees one snapshot', async () => {
    const { stages, registry } = setup();
    const calls = { scheduler: 0, ingest: 0, models: 0, output: 0 };
    const count =
      <T>(name: keyof typeof calls, read: () => T) =>
      (): T => {
        calls[name]++;
        return read();
      };
    stages.scheduler.stats = count('scheduler', stages.scheduler.stats);
    stages.ingest.statuses = count('ingest', stages.ingest.statuses);
    stages.models.stats = count('models', stages.models.stats);
    stages.output.stats = count('output', stages.output.stats);
    await registry.metrics();
    assert.deepEqual(calls, { scheduler: 1, ingest: 1, models: 1, output: 1 });
    await flush();
    await registry.metrics();
    assert.deepEqual(calls, { scheduler: 2, ingest: 2, models: 2, output: 2 });
  });
});
