import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { FrameCache } from '../../../src/cache/frame-cache.js';
import { DeadlineError } from '../../../src/detector/detector.js';
import { letterbox } from '../../../src/detector/letterbox.js';
import type { Frame } from '../../../src/ingest/frames.js';
import { FrameQueue } from '../../../src/queue/frame-queue.js';
import { FairShare } from '../../../src/scheduler/fair-share.js';
import { Scheduler, type Result, type SchedulerSettings } from '../../../src/scheduler/scheduler.js';
import { FakeDetector } from '../../helpers/fake-detector.js';
import { FakeClock, flush, silentLog } from '../../helpers/fakes.js';

const SIZE = 32;

function setup(over: Partial<SchedulerSettings> = {}, cache = false) {
  const clock = new FakeClock();
  const detector = new FakeDetector(SIZE);
  const results: Result[] = [];
  const errors: [string, string][] = [];
  let allocations = 0;
  const sched = new Scheduler(
    {
      maxBatch: 4,
      maxWaitMs: 50,
      // Most tests here look at batch forming itself; the idle-detector rule has its own tests.
      fillWhenIdle: true,
      maxInFlight: 1,
      maxFrameAgeMs: 5000,
      inferenceTimeoutMs: 1000,
      ...over,
    },
    {
      detector,
      cache: new FrameCache({ enabled: cache, maxDistance: 2, cellThreshold: 10, maxAgeMs: 10_000 }),
      clock,
      log: silentLog,
      onResult: (r) => results.push(r),
      onDetectorError: (c, m) => errors.push([c, m]),
      allocate: (n) => {
        allocations++;
        return new Float32Array(n);
      },
    },
  );
  const seqs = new Map<string, number>();
  /** A frame from `camera`; `fill` sets every pixel byte (distinct fills are distinct scenes). */
  const frame = (camera: string, fill?: number): Frame => {
    const seq = (seqs.get(camera) ?? 0) + 1;
    seqs.set(camera, seq);
    return {
      camera,
      seq,
      ts: clock.now(),
      data: Buffer.alloc(SIZE * SIZE * 3, fill ?? (seq * 37) & 255),
      geometry: letterbox(SIZE, SIZE, SIZE),
    };
  };
  return { clock, detector, results, errors, sched, frame, allocations: () => allocations };
}

describe('scheduler: forming batches', () => {
  it('sends a batch as soon as max_batch frames wait', () => {
    const { sched, detector, frame } = setup();
    sched.addCamera({ name: 'a', priority: 5, queueSize: 8 });
    for (let i = 0; i < 3; i++) sched.push(frame('a'));
    assert.equal(detector.calls.length, 0);
    sched.push(frame('a'));
    assert.equal(detector.calls.length, 1);
    assert.equal(detector.calls[0]!.count, 4);
    assert.equal(detector.calls[0]!.timeoutMs, 1000, 'every inference has a deadline');
  });

  it('sends a partial batch when the oldest frame has waited max_wait_ms', async () => {
    const { sched, detector, frame, clock } = setup();
    sched.addCamera({ name: 'a', priority: 5, queueSize: 8 });
    sched.push(frame('a'));
    await clock.advance(20);
    sched.push(frame('a'));
    await clock.advance(29);
    assert.equal(detector.calls.length, 0);
    await clock.advance(1);
    assert.equal(detector.calls.length, 1);
    assert.equal(detector.calls[0]!.count, 2);
  });

  it('an idle detector takes a partial batch at once; under load batches form while one runs', async () => {
    const { sched, detector, frame, clock } = setup({ fillWhenIdle: false });
    sched.addCamera({ name: 'a', priority: 5, queueSize: 8 });
    sched.addCamera({ name: 'b', priority: 5, queueSize: 8 });
    sched.push(frame('a'));
    assert.equal(detector.calls.length, 1, 'no max_wait_ms when nothing is running');
    assert.equal(detector.calls[0]!.count, 1);
    // While that batch runs, frames wait: no second batch is sent, however long they wait.
    sched.push(frame('b'));
    await clock.advance(10);
    sched.push(frame('a'));
    await clock.advance(100);
    assert.equal(detector.calls.length, 1);
    // It returns: the waiting frames leave together at once.
    detector.calls[0]!.resolve([[]], 20);
    await flush();
    assert.equal(detector.calls.length, 2);
    assert.equal(detector.calls[1]!.count, 2);
  });

  it('with a second batch slot, a partial batch waits max_wait_ms while the first runs', async () => {
    const { sched, detector, frame, clock } = setup({ fillWhenIdle: false, maxInFlight: 2 });
    sched.addCamera({ name: 'a', priority: 5, queueSize: 8 });
    sched.push(frame('a'));
    assert.equal(detector.calls.length, 1);
    sched.push(frame('a'));
    await clock.advance(49);
    assert.equal(detector.calls.length, 1, 'the second slot waits to fill');
    await clock.advance(1);
    assert.equal(detector.calls.length, 2);
  });

  it('writes each frame into its slot of the batch buffer as float NCHW', () => {
    const { sched, detector, frame } = setup({ maxBatch: 2 });
    sched.addCamera({ name: 'a', priority: 5, queueSize: 8 });
    sched.push(frame('a', 255));
    sched.push(frame('a', 51));
    const input = detector.calls[0]!.input;
    const plane = detector.frameFloats;
    assert.equal(input[0], 1);
    assert.equal(input[plane], Math.fround(51 / 255));
    assert.equal(input[2 * plane - 1], Math.fround(51 / 255));
  });

  it('maps results back to each frame and reports batch size and queue time', async () => {
    const { sched, detector, frame, results, clock } = setup({ maxBatch: 2 });
    sched.addCamera({ name: 'a', priority: 5, queueSize: 8 });
    sched.addCamera({ name: 'b', priority: 5, queueSize: 8 });
    sched.push(frame('a'));
    await clock.advance(10);
    sched.push(frame('b'));
    detector.calls[0]!.resolve([[{ classId: 0, score: 0.9, box: [1, 2, 3, 4] }], []], 42);
    await flush();
    assert.deepEqual(
      results.map((r) => [r.camera, r.cached, r.detections.length, r.batchSize, r.queuedMs, r.inferMs]),
      [
        ['a', false, 1, 2, 10, 42],
        ['b', false, 0, 2, 0, 42],
      ],
    );
    assert.deepEqual(results[0]!.detections[0], { label: 'thing', score: 0.9, box: [1, 2, 3, 4] });
  });

  it('keeps at most max_in_flight batches running, and fills the next meanwhile', async () => {
    const { sched, detector, frame } = setup({ maxBatch: 1, maxInFlight: 2 });
    sched.addCamera({ name: 'a', priority: 5, queueSize: 8 });
    for (let i = 0; i < 5; i++) sched.push(frame('a'));
    assert.equal(detector.calls.length, 2);
    assert.equal(sched.stats().cameras.a!.queue_depth, 3);
    detector.calls[0]!.resolve();
    await flush();
    assert.equal(detector.calls.length, 3);
    assert.equal(sched.inFlightBatches, 2);
  });

  it('reuses batch buffers instead of allocating per batch', async () => {
    const { sched, detector, frame, allocations } = setup({ maxBatch: 2, maxInFlight: 1 });
    sched.addCamera({ name: 'a', priority: 5, queueSize: 4 });
    for (let i = 0; i < 50; i++) {
      sched.push(frame('a'));
      sched.push(frame('a'));
      detector.pending[0]?.resolve();
      await flush();
    }
    assert.equal(detector.calls.length, 50);
    assert.equal(allocations(), 1);
    assert.equal(new Set(detector.calls.map((c) => c.input)).size, 1, 'the same buffer every time');
  });

  it('drops frames that got too old while waiting, counted as stale', async () => {
    const { sched, detector, frame, clock, results } = setup({ maxBatch: 1, maxFrameAgeMs: 500 });
    sched.addCamera({ name: 'a', priority: 5, queueSize: 4 });
    sched.push(frame('a'));
    sched.push(frame('a'));
    await clock.advance(600);
    detector.calls[0]!.resolve();
    await flush();
    assert.equal(detector.calls.length, 1, 'the stale frame never reached the detector');
    const s = sched.stats().cameras.a!;
    assert.equal(s.dropped.stale, 1);
    assert.equal(results.length, 1);
  });

  it('drops the oldest frame when a camera queue is full, counted as full', () => {
    const { sched, detector, frame } = setup({ maxBatch: 1 });
    sched.addCamera({ name: 'a', priority: 5, queueSize: 2 });
    for (let i = 0; i < 6; i++) sched.push(frame('a'));
    // One went to the detector, two wait, three were pushed out.
    assert.equal(detector.calls.length, 1);
    const s = sched.stats().cameras.a!;
    assert.deepEqual([s.frames_in, s.queue_depth, s.dropped.full], [6, 2, 3]);
  });
});

describe('scheduler: priority and fairness', () => {
  it('round-robins cameras of equal priority', async () => {
    const { sched, detector, frame, results } = setup({ maxBatch: 3, maxInFlight: 1 });
    for (const c of ['a', 'b', 'c']) sched.addCamera({ name: c, priority: 5, queueSize: 8 });
    // Keep the detector busy while a queues three frames and b and c one each.
    for (let i = 0; i < 3; i++) sched.push(frame('a'));
    sched.push(frame('a'));
    sched.push(frame('a'));
    sched.push(frame('a'));
    sched.push(frame('b'));
    sched.push(frame('c'));
    detector.calls[0]!.resolve();
    await flush();
    detector.calls[1]!.resolve();
    await flush();
    const second = results.slice(3).map((r) => r.camera);
    assert.deepEqual([...second].sort(), ['a', 'b', 'c'], 'one frame of each, not three of a');
    const fair = new FairShare();
    const picks = fair.pick(
      ['a', 'b', 'c'].map((camera) => ({ camera, priority: 5, waiting: 10 })),
      9,
    );
    assert.deepEqual(picks, ['a', 'b', 'c', 'a', 'b', 'c', 'a', 'b', 'c']);
  });

  it('serves a higher priority first, and still serves the lower', () => {
    const fair = new FairShare();
    const picks = fair.pick(
      [
        { camera: 'low', priority: 1, waiting: 100 },
        { camera: 'high', priority: 10, waiting: 100 },
      ],
      22,
    );
    assert.equal(picks[0], 'high');
    const low = picks.filter((p) => p === 'low').length;
    assert.equal(low, 2, `priority 10 vs 1 gets 10:1, got ${JSON.stringify(picks)}`);
  });

  it('does not let an idle camera bank credit', () => {
    const fair = new FairShare();
    fair.pick([{ camera: 'busy', priority: 5, waiting: 1000 }], 500);
    const picks = fair.pick(
      [
        { camera: 'busy', priority: 5, waiting: 10 },
        { camera: 'quiet', priority: 5, waiting: 10 },
      ],
      10,
    );
    assert.deepEqual(picks.filter((p) => p === 'quiet').length, 5, JSON.stringify(picks));
  });

  it('under overload, shares the detector by priority and starves no one', async () => {
    // Detector: 100 ms per single-frame batch, i.e. 10 frames/s. Demand: 37 frames/s.
    const { sched, detector, frame, clock, results } = setup({
      maxBatch: 1,
      maxInFlight: 1,
      maxFrameAgeMs: 2000,
    });
    const cams = [
      { name: 'busy', priority: 5, fps: 30 },
      { name: 'door', priority: 5, fps: 2 },
      { name: 'yard', priority: 1, fps: 5 },
    ];
    for (const c of cams) sched.addCamera({ name: c.name, priority: c.priority, queueSize: 3 });
    const seconds = 60;
    for (let t = 0; t < seconds * 1000; t += 10) {
      for (const c of cams) if (t % (1000 / c.fps) < 10) sched.push(frame(c.name));
      const call = detector.pending[0];
      if (call && t % 100 === 90) call.resolve();
      await clock.advance(10);
    }
    const analysed = (name: string) => results.filter((r) => r.camera === name).length;
    const pushed = (name: string) => sched.stats().cameras[name]!.frames_in;
    // door asks for less than its share: it gets nearly everything.
    assert.ok(analysed('door') >= 0.9 * pushed('door'), `door ${analysed('door')}/${pushed('door')}`);
    // yard (priority 1) still gets served: its share of what door leaves is 1/6 of ≈ 8 frames/s.
    assert.ok(analysed('yard') >= 0.8 * seconds, `yard ${analysed('yard')}`);
    // busy takes the rest but not everything.
    assert.ok(
      analysed('busy') < 0.3 * pushed('busy') && analysed('busy') > 4 * analysed('yard'),
      `busy ${analysed('busy')}`,
    );
    const total = analysed('busy') + analysed('door') + analysed('yard');
    assert.ok(total >= 0.95 * seconds * 10, `detector kept busy: ${total}`);
    const s = sched.stats().cameras.busy!;
    assert.ok(s.dropped.full > 0, 'the busy camera drops its oldest frames');
  });
});

describe('scheduler: deadlines and errors', () => {
  it('a batch that misses its deadline is reported for its cameras, and work continues', async () => {
    const { sched, detector, frame, errors } = setup({ maxBatch: 2 });
    sched.addCamera({ name: 'a', priority: 5, queueSize: 8 });
    sched.addCamera({ name: 'b', priority: 5, queueSize: 8 });
    sched.push(frame('a'));
    sched.push(frame('b'));
    detector.calls[0]!.reject(new DeadlineError('inference missed its 1000 ms deadline'));
    await flush();
    assert.deepEqual(errors.map((e) => e[0]).sort(), ['a', 'b']);
    const st = sched.stats();
    assert.equal(st.deadlines_missed, 1);
    assert.equal(st.cameras.a!.dropped.error, 1);
    assert.match(st.cameras.a!.last_detector_error!.message, /deadline/);
    sched.push(frame('a'));
    sched.push(frame('a'));
    assert.equal(detector.calls.length, 2, 'the next batch goes out');
  });

  it('stop waits for batches in flight', async () => {
    const { sched, detector, frame } = setup({ maxBatch: 1 });
    sched.addCamera({ name: 'a', priority: 5, queueSize: 8 });
    sched.push(frame('a'));
    let stopped = false;
    const stopping = sched.stop().then(() => (stopped = true));
    await flush();
    assert.equal(stopped, false);
    detector.calls[0]!.resolve();
    await stopping;
    sched.push(frame('a'));
    assert.equal(detector.calls.length, 1, 'no new work after stop');
  });
});

describe('scheduler with the frame cache', () => {
  it('answers an unchanged frame from the cache without queueing it', async () => {
    const { sched, detector, frame, results, clock } = setup({ maxBatch: 1 }, true);
    sched.addCamera({ name: 'a', priority: 5, queueSize: 4 });
    sched.push(frame('a', 100));
    detector.calls[0]!.resolve([[{ classId: 0, score: 0.8, box: [0, 0, 10, 10] }]]);
    await flush();
    await clock.advance(200);
    sched.push(frame('a', 102)); // within cell_threshold
    assert.equal(detector.calls.length, 1);
    assert.equal(results.length, 2);
    assert.equal(results[1]!.cached, true);
    assert.deepEqual(results[1]!.detections, results[0]!.detections);
    assert.equal(sched.stats().cache_hit_ratio, 0.5);
  });

  it('analyses a changed frame at once', async () => {
    const { sched, detector, frame } = setup({ maxBatch: 1 }, true);
    sched.addCamera({ name: 'a', priority: 5, queueSize: 4 });
    sched.push(frame('a', 100));
    detector.calls[0]!.resolve();
    await flush();
    sched.push(frame('a', 160));
    assert.equal(detector.calls.length, 2);
  });

  it('re-checks queued frames against a result that arrived meanwhile', async () => {
    const { sched, detector, frame, results } = setup({ maxBatch: 1 }, true);
    sched.addCamera({ name: 'a', priority: 5, queueSize: 4 });
    sched.push(frame('a', 100));
    sched.push(frame('a', 100)); // queued: no reference yet
    detector.calls[0]!.resolve();
    await flush();
    assert.equal(detector.calls.length, 1);
    assert.deepEqual(
      results.map((r) => r.cached),
      [false, true],
    );
  });
});

describe('frame cache', () => {
  const hash = (v: number) => new Uint8Array(1024).fill(v);
  it('hits within the distance and age, misses outside, and is per camera', () => {
    const cache = new FrameCache({ enabled: true, maxDistance: 2, cellThreshold: 10, maxAgeMs: 1000 });
    assert.deepEqual(cache.lookup('a', hash(50), 0), { hit: false, reason: 'empty' });
    cache.store('a', hash(50), 0, []);
    assert.equal(cache.lookup('a', hash(55), 500).hit, true);
    const changed = hash(50);
    changed.fill(90, 0, 3);
    assert.deepEqual(cache.lookup('a', changed, 500), { hit: false, reason: 'changed', distance: 3 });
    changed.fill(50, 0, 1);
    assert.equal(cache.lookup('a', changed, 500).hit, true, 'two changed cells are within max_distance 2');
    assert.deepEqual(cache.lookup('a', hash(50), 1001), { hit: false, reason: 'expired' });
    assert.deepEqual(cache.lookup('b', hash(50), 10), { hit: false, reason: 'empty' });
  });
  it('a whole-scene change (lights) is never a hit', () => {
    const cache = new FrameCache({ enabled: true, maxDistance: 20, cellThreshold: 10, maxAgeMs: 60_000 });
    cache.store('a', hash(40), 0, []);
    assert.equal(cache.lookup('a', hash(120), 10).hit, false);
  });
  it('ignores results older than the current reference', () => {
    const cache = new FrameCache({ enabled: true, maxDistance: 0, cellThreshold: 10, maxAgeMs: 60_000 });
    cache.store('a', hash(40), 100, []);
    cache.store('a', hash(200), 50, []);
    assert.equal(cache.lookup('a', hash(40), 150).hit, true);
  });
});

describe('frame queue (property)', () => {
  it('stays bounded, keeps order, drops the oldest, and accounts for every frame', () => {
    type Op = { op: 'push'; ts: number } | { op: 'shift' } | { op: 'stale'; cutoff: number };
    const ops = fc.array(
      fc.oneof(
        fc.record({ op: fc.constant('push' as const), ts: fc.integer({ min: 0, max: 1000 }) }),
        fc.record({ op: fc.constant('shift' as const) }),
        fc.record({ op: fc.constant('stale' as const), cutoff: fc.integer({ min: 0, max: 1000 }) }),
      ),
      { maxLength: 200 },
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 6 }), ops, (cap, list: Op[]) => {
        const q = new FrameQueue<{ ts: number; id: number }>(cap);
        const model: { ts: number; id: number }[] = [];
        let id = 0;
        let shifted = 0;
        let clock = 0;
        for (const o of list) {
          if (o.op === 'push') {
            // Frames arrive in time order.
            clock = Math.max(clock, o.ts);
            const item = { ts: clock, id: id++ };
            const evicted = q.push(item);
            model.push(item);
            if (model.length > cap) assert.equal(evicted, model.shift(), 'the oldest is dropped');
            else assert.equal(evicted, undefined);
          } else if (o.op === 'shift') {
            const got = q.shift();
            assert.equal(got, model.shift());
            if (got) shifted++;
          } else {
            q.dropOlderThan(o.cutoff);
            while (model.length && model[0]!.ts < o.cutoff) model.shift();
          }
          assert.ok(q.length <= cap);
          assert.equal(q.length, model.length);
          assert.equal(q.peek(), model[0]);
          assert.equal(q.pushed, q.length + shifted + q.dropped.full + q.dropped.stale);
        }
      }),
    );
  });
});
