import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { FrameCache } from '../../../src/cache/frame-cache.js';
import type { Detection, Frame, Picture, Result } from '../../../src/core/frame.js';
import { letterbox } from '../../../src/core/geometry.js';
import { sectionConfig, type Config } from '../../../src/config/index.js';
import { FrameDropped } from '../../../src/scheduler/jobs.js';
import { Scheduler } from '../../../src/scheduler/scheduler.js';
import { cameraConfig } from '../../helpers/config.js';
import { FakeDetector } from '../../helpers/fake-detector.js';
import { FakeClock, flush, FrameSequence, silentLog } from '../../helpers/fakes.js';
import { named, SPECIAL_NAMES } from '../../helpers/names.js';

const SIZE = 32;
const person = (score = 0.9): Detection => ({ label: 'person', score, box: [1, 2, 3, 4] });

/**
 * A scheduler with fake detectors by model name (`default` unless told), which a test may swap
 * or remove as a reload would.
 */
function setup(
  over: Partial<Config['scheduler']> = {},
  cache = false,
  detectors: Record<string, FakeDetector> = { default: new FakeDetector() },
) {
  const clock = new FakeClock();
  const detector = detectors.default!;
  const results: Result[] = [];
  const errors: [string, string][] = [];
  const sched = new Scheduler(
    sectionConfig('scheduler', {
      max_batch: 4,
      max_wait_ms: 50,
      // Most tests here look at batch forming itself; the idle-detector rule has its own tests.
      fill_when_idle: true,
      max_in_flight: 1,
      max_frame_age_ms: 5000,
      queue_size: 8,
      ...over,
    }),
    {},
    {
      models: { detector: (name) => detectors[name] },
      cache: new FrameCache(sectionConfig('cache', { enabled: cache, max_distance: 2, max_age_s: 10 })),
      clock,
      log: silentLog,
      onResult: (r) => results.push(r),
      onDetectorError: (c, m) => errors.push([c, m]),
    },
  );
  /**
   * Starts the scheduler, then adds cameras of these names (priority 5 and model `default` unless
   * told), as a reload would.
   */
  const cameras = (...names: (string | [string, number] | [string, number, string])[]): void => {
    const list = names.map((n): [string, number, string?] => (typeof n === 'string' ? [n, 5] : n));
    sched.start();
    sched.setCameras(
      Object.fromEntries(list.map(([n, priority, model]) => [n, cameraConfig({ priority, model })])),
      { added: list.map(([n]) => n), removed: [], changed: [], unchanged: [] },
    );
  };
  const frames = new FrameSequence(clock, SIZE, (seq) => (seq * 37) & 255);
  /** A frame from `camera`; `fill` sets every pixel byte (distinct fills are distinct scenes). */
  const frame = (camera: string, fill?: number): Frame => frames.next(camera, fill);
  const picture = (fill = 9): Picture => ({
    data: Buffer.alloc(SIZE * SIZE * 3, fill),
    geometry: letterbox(64, 48, SIZE),
  });
  return { clock, detector, detectors, results, errors, sched, frame, picture, cameras };
}

describe('scheduler: forming batches', () => {
  it('sends a batch as soon as max_batch frames wait', () => {
    const { sched, detector, frame, cameras } = setup();
    cameras('a');
    for (let i = 0; i < 3; i++) sched.push(frame('a'));
    assert.equal(detector.calls.length, 0);
    sched.push(frame('a'));
    assert.equal(detector.calls.length, 1);
    assert.equal(detector.calls[0]!.count, 4);
  });

  it('sends a partial batch when the oldest frame has waited max_wait_ms', async () => {
    const { sched, detector, frame, clock, cameras } = setup();
    cameras('a');
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
    const { sched, detector, frame, clock, cameras } = setup({ fill_when_idle: false });
    cameras('a', 'b');
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
    const { sched, detector, frame, clock, cameras } = setup({ fill_when_idle: false, max_in_flight: 2 });
    cameras('a');
    sched.push(frame('a'));
    assert.equal(detector.calls.length, 1);
    sched.push(frame('a'));
    await clock.advance(49);
    assert.equal(detector.calls.length, 1, 'the second slot waits to fill');
    await clock.advance(1);
    assert.equal(detector.calls.length, 2);
  });

  it('max_in_flight 0 runs as many batches as the detector has sessions', () => {
    const { sched, detector, frame, cameras } = setup({ max_batch: 1, max_in_flight: 0 });
    (detector as { concurrency: number }).concurrency = 3;
    cameras('a');
    for (let i = 0; i < 5; i++) sched.push(frame('a'));
    assert.equal(detector.calls.length, 3);
  });

  it('hands the frames themselves to the detector, in pick order', () => {
    const { sched, detector, frame, cameras } = setup({ max_batch: 2 });
    cameras('a', 'b');
    const fa = frame('a');
    const fb = frame('b');
    sched.push(fa);
    sched.push(fb);
    assert.deepEqual(detector.calls[0]!.pictures, [fa, fb]);
  });

  it('gives each frame its own detections, with batch size and queue time', async () => {
    const { sched, detector, frame, results, clock, cameras } = setup({ max_batch: 2 });
    cameras('a', 'b');
    sched.push(frame('a'));
    await clock.advance(10);
    sched.push(frame('b'));
    detector.calls[0]!.resolve([[person()], []], 42);
    await flush();
    const st = sched.stats();
    assert.deepEqual(
      results.map((r) => [
        r.camera,
        r.seq,
        r.cached,
        r.detections.length,
        detector.calls[0]!.pictures.length,
        st.cameras[r.camera]!.frameAgeMsMean,
        st.inferenceMsMean,
      ]),
      [
        ['a', 1, false, 1, 2, 10, 42],
        ['b', 1, false, 0, 2, 0, 42],
      ],
    );
    assert.deepEqual(results[0]!.detections[0], person());
  });

  it('keeps at most max_in_flight batches running, and fills the next meanwhile', async () => {
    const { sched, detector, frame, cameras } = setup({ max_batch: 1, max_in_flight: 2 });
    cameras('a');
    for (let i = 0; i < 5; i++) sched.push(frame('a'));
    assert.equal(detector.calls.length, 2);
    assert.equal(sched.stats().cameras.a!.queueDepth, 3);
    detector.calls[0]!.resolve();
    await flush();
    assert.equal(detector.calls.length, 3);
    assert.equal(sched.stats().inFlight, 2);
  });

  it('drops frames that got too old while waiting, counted as stale', async () => {
    const { sched, detector, frame, clock, results, cameras } = setup({
      max_batch: 1,
      max_frame_age_ms: 500,
    });
    cameras('a');
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
    const { sched, detector, frame, cameras } = setup({ max_batch: 1, queue_size: 2 });
    cameras('a');
    for (let i = 0; i < 6; i++) sched.push(frame('a'));
    // One went to the detector, two wait, three were pushed out.
    assert.equal(detector.calls.length, 1);
    const s = sched.stats().cameras.a!;
    assert.deepEqual([s.framesIn, s.queueDepth, s.dropped.full], [6, 2, 3]);
  });

  it('ignores frames of unknown and disabled cameras, and frames before start', () => {
    const { sched, detector, frame } = setup({ max_batch: 1 });
    sched.push(frame('a'));
    sched.start();
    sched.setCameras(
      { a: cameraConfig(), off: cameraConfig({ enabled: false }) },
      { added: ['a', 'off'], removed: [], changed: [], unchanged: [] },
    );
    sched.push(frame('off'));
    sched.push(frame('ghost'));
    assert.equal(detector.calls.length, 0);
    assert.deepEqual(Object.keys(sched.stats().cameras), ['a']);
  });
});

describe('scheduler: settings changed while streaming (retuned cameras)', () => {
  const none = { added: [], removed: [], changed: [], unchanged: [] };

  it('takes no frame from a camera whose detection is off, and takes them again once it is on', async () => {
    const { sched, detector, frame, results } = setup({ max_batch: 1 });
    sched.start();
    sched.setCameras({ a: cameraConfig({ detect: false }) }, { ...none, added: ['a'] });
    sched.push(frame('a'));
    assert.equal(detector.calls.length, 0);
    // It still streams: its frame is counted in (its fps_in), and waits for nothing.
    const off = sched.stats().cameras.a!;
    assert.deepEqual([off.framesIn, off.analysed, off.queueDepth, off.lagMs], [1, 0, 0, null]);
    sched.setCameras({ a: cameraConfig() }, { ...none, retuned: ['a'] });
    sched.push(frame('a'));
    detector.calls[0]!.resolve();
    await flush();
    assert.equal(results.length, 1);
    // Off again while a frame waits: the frame goes with the lane, nothing more is analysed.
    sched.push(frame('a'));
    sched.setCameras({ a: cameraConfig({ detect: false }) }, { ...none, retuned: ['a'] });
    sched.push(frame('a'));
    assert.equal(detector.calls.length, 2, 'the frame pushed before was already sent');
    detector.calls[1]!.resolve();
    await flush();
    assert.equal(detector.calls.length, 2);
  });

  it('a priority changed while the camera streams takes its share from then on, its queue kept', async () => {
    const { sched, detector, frame, clock, results, cameras } = setup({
      max_batch: 1,
      max_in_flight: 1,
      queue_size: 3,
      max_frame_age_ms: 2000,
    });
    cameras(['a', 5], ['b', 5]);
    const run = async (seconds: number): Promise<{ a: number; b: number }> => {
      const from = results.length;
      for (let t = 0; t < seconds * 1000; t += 10) {
        // Both offer 20 frames/s to a detector that takes 10.
        if (t % 50 === 0) {
          sched.push(frame('a'));
          sched.push(frame('b'));
        }
        const call = detector.pending[0];
        if (call && t % 100 === 90) call.resolve();
        await clock.advance(10);
      }
      const got = results.slice(from);
      return { a: got.filter((r) => r.camera === 'a').length, b: got.filter((r) => r.camera === 'b').length };
    };
    const even = await run(20);
    assert.ok(
      Math.abs(even.a - even.b) <= 0.1 * even.a,
      `equal priorities share evenly: ${JSON.stringify(even)}`,
    );
    const framesIn = sched.stats().cameras.a!.framesIn;
    sched.setCameras(
      { a: cameraConfig({ priority: 10 }), b: cameraConfig({ priority: 1 }) },
      {
        ...none,
        retuned: ['a', 'b'],
      },
    );
    assert.ok(sched.stats().cameras.a!.framesIn >= framesIn, 'its counters are kept: no restart');
    const after = await run(30);
    const ratio = after.a / after.b;
    assert.ok(ratio >= 8 && ratio <= 12, `10 : 1 from the change on: ${JSON.stringify(after)}`);
  });
});

describe('scheduler: priority and fairness', () => {
  it('round-robins cameras of equal priority', async () => {
    const { sched, detector, frame, results, cameras } = setup({ max_batch: 3, max_in_flight: 1 });
    cameras('a', 'b', 'c');
    // Keep the detector busy while a queues three frames and b and c one each.
    for (let i = 0; i < 6; i++) sched.push(frame('a'));
    sched.push(frame('b'));
    sched.push(frame('c'));
    detector.calls[0]!.resolve();
    await flush();
    detector.calls[1]!.resolve();
    await flush();
    const second = results.slice(3).map((r) => r.camera);
    assert.deepEqual([...second].sort(), ['a', 'b', 'c'], 'one frame of each, not three of a');
  });

  it('under overload, shares the detector by priority and starves no one', async () => {
    // Detector: 100 ms per single-frame batch, i.e. 10 frames/s. Demand: 37 frames/s.
    const { sched, detector, frame, clock, results, cameras } = setup({
      max_batch: 1,
      max_in_flight: 1,
      max_frame_age_ms: 2000,
      queue_size: 3,
    });
    const cams = [
      { name: 'busy', priority: 5, fps: 30 },
      { name: 'door', priority: 5, fps: 2 },
      { name: 'yard', priority: 1, fps: 5 },
    ];
    cameras(...cams.map((c): [string, number] => [c.name, c.priority]));
    const seconds = 60;
    for (let t = 0; t < seconds * 1000; t += 10) {
      for (const c of cams) if (t % (1000 / c.fps) < 10) sched.push(frame(c.name));
      const call = detector.pending[0];
      if (call && t % 100 === 90) call.resolve();
      await clock.advance(10);
    }
    const analysed = (name: string) => results.filter((r) => r.camera === name).length;
    const pushed = (name: string) => sched.stats().cameras[name]!.framesIn;
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

describe('scheduler: weighted fair share with live cameras', () => {
  /**
   * 14 cameras at priority 1 and 2 at priority 10, 5 frames/s each, `queue_size: 1` (each holds
   * its newest frame only, as a live camera's queue does), for 60 s against a detector taking
   * `msPerFrame` a frame; returns each priority's analysed frames/s per camera, and the total.
   */
  async function live(maxBatch: number, msPerFrame: number) {
    const { sched, detector, frame, clock, results, cameras } = setup({
      max_batch: maxBatch,
      max_in_flight: 1,
      queue_size: 1,
      max_frame_age_ms: 2000,
    });
    const cams = [
      ...Array.from({ length: 14 }, (_, i): [string, number] => [`low${i}`, 1]),
      ['high0', 10] as [string, number],
      ['high1', 10] as [string, number],
    ];
    cameras(...cams);
    const seconds = 60;
    let busyUntil = 0;
    for (let t = 0; t < seconds * 1000; t += 10) {
      // Each camera's frames come every 200 ms, the cameras out of step with each other.
      cams.forEach(([name], i) => {
        if ((t + ((i * 37) % 20) * 10) % 200 === 0) sched.push(frame(name));
      });
      const call = detector.pending[0];
      if (call && busyUntil === 0) busyUntil = t + call.count * msPerFrame;
      if (call && t >= busyUntil) {
        call.resolve();
        busyUntil = 0;
      }
      await clock.advance(10);
    }
    const rate = (prefix: string): number =>
      results.filter((r) => r.camera.startsWith(prefix)).length / (prefix === 'low' ? 14 : 2) / seconds;
    return { high: rate('high'), low: rate('low'), total: results.length / seconds };
  }

  it('priority 10 : 1 gets 10 : 1 of the detector (within 10 %) when neither can have more', async () => {
    // One frame a batch, 10 frames/s: the weighted share of a priority 10 is 10/34 of it
    // (2.9 frames/s), under the 5 it offers; of a priority 1, 0.29.
    const { high, low, total } = await live(1, 100);
    const share = (w: number): number => (w / 34) * total;
    const within = (x: number, want: number): boolean => Math.abs(x - want) <= 0.1 * want;
    assert.ok(within(high, share(10)) && within(low, share(1)), `high ${high}, low ${low}, total ${total}`);
  });

  it('a priority-10 camera that can give only one frame a batch gets one into every batch; the rest share what is left', async () => {
    // Batches of 4 every 400 ms: its share (1.18 frames a batch) is more than the one frame it
    // holds, so it gets every batch (2.5 frames/s), and the fourteen share the other half.
    const { high, low, total } = await live(4, 100);
    const batches = total / 4;
    assert.ok(high >= 0.95 * batches, `high ${high} of ${batches} batches/s`);
    const rest = (total - 2 * high) / 14;
    assert.ok(Math.abs(low - rest) <= 0.1 * rest && low > 0, `low ${low}, ${rest} due`);
  });
});

describe('scheduler: lag', () => {
  it("a camera's lag is its newest answer's age; lagging once it is lagging_after_s behind its frames", async () => {
    const { sched, detector, frame, clock, cameras } = setup({
      max_batch: 1,
      queue_size: 1,
      max_frame_age_ms: 60_000,
      lagging_after_s: 10,
    });
    cameras('a');
    assert.deepEqual(sched.lag('a'), { lagMs: null, lagging: false }, 'no frame yet');
    assert.equal(sched.lag('nope'), undefined);
    sched.push(frame('a'));
    await clock.advance(500);
    assert.deepEqual(sched.lag('a'), { lagMs: 500, lagging: false }, 'from its first frame');
    detector.calls[0]!.resolve();
    await flush();
    // The detector takes the next frame and does not answer: frames keep coming for 11 s.
    for (let t = 0; t < 11_000; t += 200) {
      await clock.advance(200);
      sched.push(frame('a'));
    }
    const lag = sched.lag('a')!;
    assert.deepEqual([lag.lagMs, lag.lagging], [11_500, true]);
    assert.deepEqual(
      [sched.stats().cameras.a!.lagMs, sched.stats().cameras.a!.lagging],
      [11_500, true],
      'the same in its stats',
    );
    detector.calls[1]!.resolve();
    await flush();
    detector.calls[2]!.resolve();
    await flush();
    assert.deepEqual(sched.lag('a'), { lagMs: 0, lagging: false }, 'its newest frame answered');
    // The camera is away for a minute, then streams again: not lagging for the outage.
    await clock.advance(60_000);
    sched.push(frame('a'));
    await clock.advance(200);
    sched.push(frame('a'));
    assert.deepEqual(sched.lag('a'), { lagMs: 60_200, lagging: false });
    // A detector that fails (a remote server away) is not one that cannot keep up.
    for (let t = 0; t < 11_000; t += 200) {
      detector.pending[0]?.reject(new Error('model plates is unavailable'));
      await flush();
      await clock.advance(200);
      sched.push(frame('a'));
    }
    assert.equal(sched.lag('a')!.lagging, false, 'its batches failed: not lagging');
  });
});

describe('scheduler: submitted pictures', () => {
  it('answers a picture with its own detections, sharing a batch with the cameras', async () => {
    const { sched, detector, frame, picture, results, cameras } = setup({ max_batch: 2 });
    cameras('a');
    const p = picture();
    const answer = sched.submit(p, 5);
    sched.push(frame('a'));
    assert.equal(detector.calls.length, 1);
    assert.equal(detector.calls[0]!.count, 2);
    const slot = detector.calls[0]!.pictures.indexOf(p);
    const dets: Detection[][] = [[], []];
    dets[slot] = [person(0.7)];
    detector.calls[0]!.resolve(dets);
    assert.deepEqual(await answer, [person(0.7)]);
    await flush();
    assert.deepEqual(
      results.map((r) => [r.camera, r.detections]),
      [['a', []]],
      'the camera gets its own answer; the picture is no camera',
    );
    assert.deepEqual(sched.stats().submitted, { answered: 1, dropped: 0 });
    assert.deepEqual(Object.keys(sched.stats().cameras), ['a']);
  });

  it('takes its turn by priority among the cameras', () => {
    const { sched, detector, frame, picture, cameras } = setup({ max_batch: 1, fill_when_idle: false });
    cameras(['low', 1]);
    sched.push(frame('low'));
    // The detector is busy; a low-priority frame and a high-priority picture wait.
    sched.push(frame('low'));
    const p = picture();
    void sched.submit(p, 10);
    detector.calls[0]!.resolve();
    return flush().then(() => {
      assert.equal(detector.calls[1]!.pictures[0], p, 'priority 10 goes before priority 1');
    });
  });

  it('is never answered from the cache', async () => {
    const { sched, detector, picture, cameras } = setup({ max_batch: 1 }, true);
    cameras('a');
    const first = sched.submit(picture(), 5);
    detector.calls[0]!.resolve();
    await first;
    const second = sched.submit(picture(), 5);
    assert.equal(detector.calls.length, 2);
    detector.calls[1]!.resolve();
    await second;
  });

  it('refuses a picture of another size alone, before it can spoil a batch', async () => {
    const { sched, detector, frame, cameras } = setup({ max_batch: 2, fill_when_idle: false });
    cameras('a');
    const wrong: Picture = { data: Buffer.alloc(64 * 64 * 3), geometry: letterbox(64, 64, 64) };
    await assert.rejects(sched.submit(wrong, 5), /picture is 64x64 .*the model takes 32x32/);
    sched.push(frame('a'));
    assert.equal(detector.calls[0]!.count, 1, 'the camera frame goes out alone');
  });

  it('rejects with FrameDropped when its batch fails, it goes stale, its queue overflows, or on stop', async () => {
    const { sched, detector, picture, clock, cameras } = setup({ max_batch: 1, max_frame_age_ms: 500 });
    cameras('a');
    const failed = sched.submit(picture(), 5);
    detector.calls[0]!.reject(new Error('inference failed: boom'));
    await assert.rejects(
      failed,
      (e: unknown) => e instanceof FrameDropped && e.reason === 'error' && /boom/.test(e.message),
    );
    // One runs, the next waits until it is stale.
    const running = sched.submit(picture(), 5);
    const stale = sched.submit(picture(), 5);
    await clock.advance(600);
    detector.calls[1]!.resolve();
    await running;
    await assert.rejects(stale, (e: unknown) => e instanceof FrameDropped && e.reason === 'stale');
    // Sixteen wait at one priority; the seventeenth pushes the oldest out.
    const busy = sched.submit(picture(), 5);
    const waiting = Array.from({ length: 17 }, () => sched.submit(picture(), 5));
    await assert.rejects(waiting[0]!, (e: unknown) => e instanceof FrameDropped && e.reason === 'full');
    const stopping = sched.stop();
    for (const w of waiting.slice(1))
      await assert.rejects(w, (e: unknown) => e instanceof FrameDropped && e.reason === 'stopped');
    detector.calls[2]!.resolve();
    await busy;
    await stopping;
    await assert.rejects(sched.submit(picture(), 5), FrameDropped);
    assert.deepEqual(sched.stats().submitted, { answered: 2, dropped: 2 + 1 + 16 });
  });
});

describe('scheduler: errors, reloads and stopping', () => {
  it('a failed batch is reported for its cameras, and work continues', async () => {
    const { sched, detector, frame, errors, cameras } = setup({ max_batch: 2 });
    cameras('a', 'b');
    sched.push(frame('a'));
    sched.push(frame('b'));
    detector.calls[0]!.reject(new Error('inference missed its 1000 ms deadline'));
    await flush();
    assert.deepEqual(errors.sort(), [
      ['a', 'inference missed its 1000 ms deadline'],
      ['b', 'inference missed its 1000 ms deadline'],
    ]);
    const st = sched.stats();
    assert.equal(st.cameras.a!.dropped.error, 1);
    sched.push(frame('a'));
    sched.push(frame('a'));
    assert.equal(detector.calls.length, 2, 'the next batch goes out');
  });

  it('a reload removes, restarts and adds cameras; an answer for a removed camera is not reported', async () => {
    const { sched, detector, frame, results, cameras } = setup({ max_batch: 1 });
    cameras('a', 'b');
    sched.push(frame('a'));
    sched.setCameras(
      { b: cameraConfig({ priority: 9 }), c: cameraConfig() },
      { added: ['c'], removed: ['a'], changed: ['b'], unchanged: [] },
    );
    detector.calls[0]!.resolve();
    await flush();
    assert.deepEqual(results, []);
    assert.deepEqual(Object.keys(sched.stats().cameras).sort(), ['b', 'c']);
    sched.push(frame('c'));
    assert.equal(detector.calls.length, 2);
  });

  it('a camera restarted mid-batch: its old answer is neither reported nor cached', async () => {
    const { sched, detector, frame, results, cameras } = setup({ max_batch: 1 }, true);
    cameras('a');
    sched.push(frame('a', 100));
    sched.setCameras(
      { a: cameraConfig({ url: 'rtsp://h/new' }) },
      { added: [], removed: [], changed: ['a'], unchanged: [] },
    );
    detector.calls[0]!.resolve([[person()]]);
    await flush();
    assert.deepEqual(results, []);
    sched.push(frame('a', 100));
    assert.equal(detector.calls.length, 2, 'the new stream is analysed, not compared with the old one');
  });

  it('stop waits for batches in flight', async () => {
    const { sched, detector, frame, cameras } = setup({ max_batch: 1 });
    cameras('a');
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
    const { sched, detector, frame, results, clock, cameras } = setup({ max_batch: 1 }, true);
    cameras('a');
    sched.push(frame('a', 100));
    detector.calls[0]!.resolve([[person(0.8)]]);
    await flush();
    await clock.advance(200);
    sched.push(frame('a', 102)); // within cell_threshold
    assert.equal(detector.calls.length, 1);
    assert.equal(results.length, 2);
    assert.equal(results[1]!.cached, true);
    assert.deepEqual(results[1]!.detections, results[0]!.detections);
    assert.equal(sched.stats().cacheHitRatio, 0.5);
  });

  it('analyses a changed frame at once', async () => {
    const { sched, detector, frame, cameras } = setup({ max_batch: 1 }, true);
    cameras('a');
    sched.push(frame('a', 100));
    detector.calls[0]!.resolve();
    await flush();
    sched.push(frame('a', 160));
    assert.equal(detector.calls.length, 2);
  });

  it('past max_age_s a still camera is answered from its old result while a refresh waits for the busy detector', async () => {
    const { sched, detector, frame, results, clock, cameras } = setup(
      { max_batch: 1, max_in_flight: 1, queue_size: 1 },
      true,
    );
    cameras('still', 'busy');
    sched.push(frame('still', 100));
    detector.calls[0]!.resolve([[person(0.9)]]);
    await flush();
    // The busy camera's frame takes the detector; nothing comes back for 15 s (max_age_s is 10).
    sched.push(frame('busy', 1));
    let pushed = 1;
    for (let t = 200; t <= 15_000; t += 200) {
      await clock.advance(200);
      sched.push(frame('still', 100));
      pushed++;
    }
    const still = (): Result[] => results.filter((r) => r.camera === 'still');
    assert.equal(still().length, pushed, 'every frame of the still camera answered meanwhile');
    assert.ok(
      still()
        .slice(1)
        .every((r) => r.cached && r.detections[0]!.score === 0.9),
    );
    assert.equal(detector.calls.length, 2, 'one refresh waits in its queue, not one per frame');
    detector.calls[1]!.resolve();
    await flush();
    assert.equal(detector.calls.length, 3, 'the refresh goes next');
    assert.equal(detector.calls[2]!.pictures[0]!.data[0], 100);
    const before = still().length;
    detector.calls[2]!.resolve([[person(0.7)]]);
    await flush();
    assert.equal(still().length, before, "the refresh's own answer is not handed on a second time");
    await clock.advance(200);
    sched.push(frame('still', 100));
    assert.deepEqual(
      [still().at(-1)!.cached, still().at(-1)!.detections[0]!.score],
      [true, 0.7],
      'the next frame reuses the fresh result',
    );
    const seqs = still().map((r) => r.seq);
    assert.deepEqual(
      seqs,
      [...seqs].sort((a, b) => a - b),
      'in capture order, each once',
    );
    assert.equal(new Set(seqs).size, seqs.length);
    assert.equal(sched.stats().cameras.still!.analysed, 2, 'the first frame and the refresh');
  });

  it('a still camera alone on an idle detector is analysed afresh past max_age_s; a refresh dropped is no frame lost', async () => {
    const { sched, detector, frame, clock, cameras } = setup({ max_batch: 1, queue_size: 1 }, true);
    cameras('still');
    sched.push(frame('still', 100));
    detector.calls[0]!.resolve([[person(0.9)]]);
    await flush();
    for (let t = 200; t <= 10_200; t += 200) {
      await clock.advance(200);
      sched.push(frame('still', 100));
    }
    assert.equal(detector.calls.length, 2, 'the refresh is sent at once: nothing else would send it');
    detector.calls[1]!.resolve([[person(0.8)]]);
    await flush();
    assert.deepEqual(sched.stats().cameras.still!.dropped, { full: 0, stale: 0, error: 0 });
  });

  it('re-checks queued frames against a result that arrived meanwhile', async () => {
    const { sched, detector, frame, results, cameras } = setup({ max_batch: 1 }, true);
    cameras('a');
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

describe('scheduler: capture order per camera', () => {
  it("holds an answer that comes back before an earlier frame's, then sends both in order", async () => {
    const { sched, detector, frame, results, cameras } = setup({ max_batch: 1, max_in_flight: 2 });
    cameras('a');
    sched.push(frame('a'));
    sched.push(frame('a'));
    assert.equal(detector.calls.length, 2, 'two sessions, one frame each');
    detector.calls[1]!.resolve();
    await flush();
    assert.equal(results.length, 0, 'frame 2 waits for frame 1');
    detector.calls[0]!.resolve();
    await flush();
    assert.deepEqual(
      results.map((r) => r.seq),
      [1, 2],
    );
    assert.equal(sched.stats().cameras.a!.resequenced, 1);
  });

  it('a cache answer waits for the analysis of an earlier frame still in its batch', async () => {
    const { sched, detector, frame, results, cameras } = setup({ max_batch: 1, max_in_flight: 2 }, true);
    cameras('a');
    sched.push(frame('a', 100));
    detector.calls[0]!.resolve();
    await flush();
    sched.push(frame('a', 200)); // a change: analysed
    sched.push(frame('a', 100)); // looks like frame 1, the last analysed: a cache hit
    assert.deepEqual(
      results.map((r) => r.seq),
      [1],
    );
    detector.calls[1]!.resolve([[person()]]);
    await flush();
    assert.deepEqual(
      results.map((r) => [r.seq, r.cached]),
      [
        [1, false],
        [2, false],
        [3, true],
      ],
    );
  });

  it('a frame that gets no answer releases the answers after it', async () => {
    const { sched, detector, frame, results, cameras } = setup({ max_batch: 1, max_in_flight: 2 });
    cameras('a');
    sched.push(frame('a'));
    sched.push(frame('a'));
    detector.calls[1]!.resolve();
    await flush();
    detector.calls[0]!.reject(new Error('boom'));
    await flush();
    assert.deepEqual(
      results.map((r) => r.seq),
      [2],
    );
  });

  it("whatever order batches finish in, each camera's answers leave in capture order (property)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(fc.constant('a'), fc.constant('b'), fc.nat(7), fc.constant('fail')), {
          maxLength: 60,
        }),
        async (ops) => {
          const { sched, detector, frame, results, cameras } = setup({
            max_batch: 2,
            max_in_flight: 3,
            queue_size: 2,
            fill_when_idle: false,
          });
          cameras('a', 'b');
          for (const op of ops) {
            if (op === 'a' || op === 'b') sched.push(frame(op));
            else {
              const open = detector.pending;
              const call = open[(op === 'fail' ? 0 : op) % Math.max(1, open.length)];
              if (op === 'fail') call?.reject(new Error('boom'));
              else call?.resolve();
            }
            await flush();
          }
          while (detector.pending.length) {
            detector.pending[0]!.resolve();
            await flush();
          }
          for (const cam of ['a', 'b']) {
            const seqs = results.filter((r) => r.camera === cam).map((r) => r.seq);
            assert.deepEqual(
              seqs,
              [...seqs].sort((x, y) => x - y),
              `${cam}: ${seqs.join(',')}`,
            );
            const st = sched.stats().cameras[cam]!;
            const dropped = st.dropped.full + st.dropped.stale + st.dropped.error;
            assert.equal(seqs.length + dropped, st.framesIn, `${cam}: every frame answered or dropped`);
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe('scheduler: several models', () => {
  const two = (over: Partial<Config['scheduler']> = {}, cache = false) =>
    setup({ max_batch: 4, ...over }, cache, { default: new FakeDetector(1), plates: new FakeDetector(2) });

  it("sends each camera's frames to its model's detector; a batch never mixes models", () => {
    const { sched, detectors, frame, cameras } = two({ max_in_flight: 0, fill_when_idle: false });
    cameras('a', 'b', ['gate', 5, 'plates']);
    const sent = new Map<string, string>();
    for (let i = 0; i < 6; i++)
      for (const cam of ['a', 'gate', 'b']) {
        const f = frame(cam);
        sent.set(`${cam}:${f.seq}`, cam === 'gate' ? 'plates' : 'default');
        sched.push(f);
      }
    for (const [model, d] of Object.entries(detectors))
      for (const call of d.calls)
        for (const p of call.pictures) {
          const f = p as Frame;
          assert.equal(
            sent.get(`${f.camera}:${f.seq}`),
            model,
            `${f.camera} frame ${f.seq} went to ${model}`,
          );
        }
    assert.ok(detectors.plates!.calls.length > 0 && detectors.default!.calls.length > 0);
    assert.deepEqual(
      Object.fromEntries(Object.entries(sched.stats().cameras).map(([n, c]) => [n, c.model])),
      { a: 'default', b: 'default', gate: 'plates' },
    );
  });

  it('gives each model its own in-flight limit: its sessions, or max_in_flight each', () => {
    for (const [maxInFlight, expected] of [
      [0, [1, 2]],
      [3, [3, 3]],
    ] as const) {
      const { sched, detectors, frame, cameras } = two({
        max_batch: 1,
        max_in_flight: maxInFlight,
        queue_size: 8,
      });
      cameras('a', ['gate', 5, 'plates']);
      for (let i = 0; i < 6; i++) {
        sched.push(frame('a'));
        sched.push(frame('gate'));
      }
      assert.deepEqual(
        [detectors.default!.pending.length, detectors.plates!.pending.length],
        expected,
        `max_in_flight ${maxInFlight}`,
      );
      const st = sched.stats();
      assert.deepEqual(
        [st.models.default!.inFlight, st.models.plates!.inFlight, st.inFlight],
        [...expected, expected[0] + expected[1]],
      );
    }
  });

  it('a busy model takes nothing from another: its cameras are served in full, and priorities hold within each', async () => {
    // default: 10 frames/s of capacity (one 100 ms batch of 1), asked for 37; plates: idle capacity.
    const { sched, detectors, frame, clock, results, cameras } = two({
      max_batch: 1,
      max_in_flight: 1,
      max_frame_age_ms: 2000,
      queue_size: 3,
    });
    cameras(['busy', 5], ['low', 1], ['gate', 1, 'plates'], ['door', 10, 'plates']);
    const fps: Record<string, number> = { busy: 30, low: 7, gate: 5, door: 2 };
    for (let t = 0; t < 30_000; t += 10) {
      for (const [cam, f] of Object.entries(fps)) if (t % (1000 / f) < 10) sched.push(frame(cam));
      if (t % 100 === 90) detectors.default!.pending[0]?.resolve();
      detectors.plates!.pending[0]?.resolve();
      await clock.advance(10);
    }
    for (const d of Object.values(detectors))
      while (d.pending.length) {
        d.pending[0]!.resolve();
        await flush();
      }
    for (const d of Object.values(detectors))
      while (d.pending.length) {
        d.pending[0]!.resolve();
        await flush();
      }
    const analysed = (name: string) => results.filter((r) => r.camera === name).length;
    const pushed = (name: string) => sched.stats().cameras[name]!.framesIn;
    for (const cam of ['gate', 'door'])
      assert.equal(analysed(cam), pushed(cam), `${cam}: every frame of the idle model's cameras analysed`);
    assert.ok(
      analysed('busy') > 3 * analysed('low'),
      `priority within default: ${analysed('busy')} vs ${analysed('low')}`,
    );
    assert.ok(analysed('low') >= 0.8 * 30, `low (priority 1) still served: ${analysed('low')}`);
    const st = sched.stats();
    assert.equal(st.models.plates!.frames, analysed('gate') + analysed('door'));
    assert.equal(st.models.default!.frames, analysed('busy') + analysed('low'));
  });

  it('submits a picture to the model it names; an unknown name is refused', async () => {
    const { sched, detectors, picture, cameras } = two({ max_batch: 1 });
    cameras('a');
    await assert.rejects(sched.submit(picture(), 5, 'nope'), /there is no model named 'nope'/);
    const answer = sched.submit(picture(), 5, 'plates');
    assert.equal(detectors.plates!.calls.length, 1);
    assert.equal(detectors.default!.calls.length, 0);
    detectors.plates!.calls[0]!.resolve([[person(0.6)]]);
    assert.deepEqual(await answer, [person(0.6)]);
  });

  it("moves a camera to another model without a restart: queued frames follow, answers stay in order, the old model's answer is not cached", async () => {
    const { sched, detectors, frame, results, cameras } = two(
      { max_batch: 1, max_in_flight: 1, queue_size: 4 },
      true,
    );
    cameras('a');
    sched.push(frame('a', 100)); // in the default model's batch
    sched.push(frame('a', 100)); // queued (the same scene: the cache has no answer yet)
    sched.moveCameras({ a: cameraConfig({ model: 'plates' }) }, ['a']);
    assert.equal(detectors.plates!.calls.length, 1, 'the queued frame goes to the new model at once');
    assert.equal((detectors.plates!.calls[0]!.pictures[0] as Frame).seq, 2);
    detectors.plates!.calls[0]!.resolve([[{ ...person(), label: 'plate' }]]);
    await flush();
    assert.equal(results.length, 0, 'frame 2 waits for frame 1, still with the old model');
    detectors.default!.calls[0]!.resolve([[person()]]);
    await flush();
    assert.deepEqual(
      results.map((r) => [r.seq, r.detections[0]?.label]),
      [
        [1, 'person'],
        [2, 'plate'],
      ],
    );
    // Frame 1's answer (the old model's) was not cached; frame 2's was.
    sched.push(frame('a', 100));
    assert.deepEqual(results.at(-1)!.detections[0]?.label, 'plate');
    assert.equal(results.at(-1)!.cached, true);
    const st = sched.stats().cameras.a!;
    assert.deepEqual([st.model, st.framesIn, st.analysed, st.cached], ['plates', 3, 2, 1]);
  });

  it('after a swap, the next batches go to the new detector while the old one finishes; cameras forget its answers', async () => {
    const { sched, detectors, frame, results, cameras } = two(
      { max_batch: 1, max_in_flight: 1, queue_size: 4 },
      true,
    );
    cameras('a');
    const old = detectors.default!;
    sched.push(frame('a', 100));
    sched.push(frame('a', 200));
    detectors.default = new FakeDetector(1);
    sched.modelsChanged(['default']);
    assert.equal(
      detectors.default.calls.length,
      0,
      "the old detector's batch still counts against the model's limit",
    );
    old.calls[0]!.resolve([[person()]]);
    await flush();
    assert.equal(old.calls.length, 1, 'nothing more goes to the old detector');
    assert.equal(detectors.default.calls.length, 1);
    detectors.default.calls[0]!.resolve([[{ ...person(), label: 'new' }]]);
    await flush();
    sched.push(frame('a', 100)); // looks like frame 1, answered by the old model: not from the cache
    assert.equal(detectors.default.calls.length, 2);
    assert.deepEqual(
      results.map((r) => [r.seq, r.cached, r.detections[0]?.label]),
      [
        [1, false, 'person'],
        [2, false, 'new'],
      ],
    );
  });

  it('drops frames queued for a model that now takes another size (their camera restarts), and pictures for a removed model', async () => {
    const { sched, detectors, frame, picture, cameras } = two({
      max_batch: 1,
      max_in_flight: 1,
      queue_size: 4,
    });
    cameras('a');
    sched.push(frame('a'));
    sched.push(frame('a'));
    const running = sched.submit(picture(), 5, 'plates');
    const waiting = sched.submit(picture(), 5, 'plates');
    const old = detectors.default!;
    const removed = detectors.plates!;
    detectors.default = new FakeDetector(1, 64);
    delete detectors.plates;
    sched.modelsChanged(['default', 'plates']);
    await assert.rejects(
      waiting,
      (e: unknown) => e instanceof FrameDropped && /its model was removed/.test(e.message),
    );
    removed.calls[0]!.resolve();
    await running;
    old.calls[0]!.resolve();
    await flush();
    assert.equal(detectors.default.calls.length, 0, 'a 32x32 frame never reaches a 64x64 model');
    assert.equal(sched.stats().cameras.a!.dropped.error, 1);
  });
});

describe('scheduler: names a user chose', () => {
  it('keeps the stats of cameras and models named __proto__, constructor, toString, hasOwnProperty, valueOf', () => {
    const detectors = named(SPECIAL_NAMES.map((n): [string, FakeDetector] => [n, new FakeDetector()]));
    const { sched, frame, cameras } = setup({ max_batch: 1 }, false, detectors);
    cameras(...SPECIAL_NAMES.map((n): [string, number, string] => [n, 5, n]));
    for (const n of SPECIAL_NAMES) sched.push(frame(n));
    const s = sched.stats();
    assert.deepEqual(Object.keys(s.cameras), [...SPECIAL_NAMES]);
    assert.deepEqual(Object.keys(s.models), [...SPECIAL_NAMES]);
    for (const n of SPECIAL_NAMES) {
      assert.deepEqual([s.cameras[n]!.model, s.cameras[n]!.framesIn, s.models[n]!.batches], [n, 1, 1], n);
      assert.equal(detectors[n]!.calls.length, 1, n);
    }
    assert.equal(s.batches, 5);
  });
});

describe('scheduler: counters that never go down (issue 44)', () => {
  const none = { added: [], removed: [], changed: [], unchanged: [] };

  it("a camera's counters go on across detection off and on, a restart, a new priority, and its removal and return", async () => {
    const { sched, detector, frame, clock } = setup({ max_batch: 1, queue_size: 2 }, true);
    sched.start();
    sched.setCameras({ a: cameraConfig() }, { ...none, added: ['a'] });
    const counts = () => {
      const c = sched.stats().cameras.a;
      return c && [c.framesIn, c.analysed, c.cached, c.dropped.full, c.dropped.error, c.queueWait.count];
    };
    /**
     * Frames analysed, one from the cache, a failed batch and a frame dropped from a full queue.
     * Levels 60 apart are different scenes to the cache; the same level is the same scene.
     */
    const round = async (b: number): Promise<void> => {
      const level = (k: number) => b + 60 * k;
      sched.push(frame('a', level(0)));
      await clock.advance(5);
      detector.pending[0]!.resolve([[person()]]);
      await flush();
      sched.push(frame('a', level(0)));
      sched.push(frame('a', level(1)));
      detector.pending[0]!.reject(new Error('inference missed its deadline'));
      await flush();
      // One in the batch, two wait, the third pushes the first waiting one out.
      for (const k of [2, 1, 3, 1]) sched.push(frame('a', level(k)));
      while (detector.pending.length) {
        // The same object each time: the cache does not take the scene for a moving one.
        detector.pending[0]!.resolve([[person()]]);
        await flush();
      }
    };
    await round(10);
    const seen = [counts()!];
    assert.ok(
      seen[0]!.every((v) => v > 0),
      `frames in, analysed, cached, dropped (full, error), waits: ${seen[0]!.join(',')}`,
    );
    const after = async (what: string, change: () => void, b: number): Promise<void> => {
      change();
      const now = counts();
      if (now) assert.deepEqual(now, seen.at(-1), `${what}: nothing lost at the change`);
      await round(b);
      const next = counts()!;
      const last = seen.at(-1)!;
      next.forEach((v, i) => assert.ok(v > last[i]!, `${what}: ${next.join(',')} after ${last.join(',')}`));
      seen.push(next);
    };
    await after(
      'detection off and on',
      () => {
        sched.setCameras({ a: cameraConfig({ detect: false }) }, { ...none, retuned: ['a'] });
        sched.setCameras({ a: cameraConfig() }, { ...none, retuned: ['a'] });
      },
      20,
    );
    await after(
      'a new fps (its stream restarts)',
      () => {
        sched.setCameras({ a: cameraConfig({ fps: 3 }) }, { ...none, changed: ['a'] });
      },
      30,
    );
    await after(
      'a new priority',
      () => {
        sched.setCameras({ a: cameraConfig({ fps: 3, priority: 9 }) }, { ...none, retuned: ['a'] });
      },
      40,
    );
    await after(
      'removed and added again',
      () => {
        sched.setCameras({}, { ...none, removed: ['a'] });
        assert.deepEqual(Object.keys(sched.stats().cameras), [], 'a removed camera is not listed');
        sched.setCameras({ a: cameraConfig() }, { ...none, added: ['a'] });
      },
      50,
    );
  });

  it('counts the frames of a camera whose detection is off, not those of a disabled or removed one', () => {
    const { sched, frame, detector } = setup();
    sched.start();
    sched.setCameras(
      { off: cameraConfig({ detect: false }), gone: cameraConfig({ enabled: false }) },
      { ...none, added: ['off', 'gone'] },
    );
    for (let i = 0; i < 3; i++) {
      sched.push(frame('off'));
      sched.push(frame('gone'));
    }
    assert.equal(detector.calls.length, 0);
    assert.deepEqual(Object.keys(sched.stats().cameras), ['off']);
    assert.equal(sched.stats().cameras.off!.framesIn, 3);
    assert.equal(sched.lag('off'), undefined, 'no lane: nothing is behind');
  });
});
