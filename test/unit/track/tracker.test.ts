import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Box } from '../../../src/core/geometry.js';
import { sectionConfig } from '../../../src/config/index.js';
import type { ZonedDetection } from '../../../src/track/filters.js';
import { initiate, predict, update } from '../../../src/track/kalman.js';
import type { LineConfig } from '../../../src/track/lines.js';
import { wholeObject } from '../../../src/track/cover.js';
import type { LineCrossing, ObjectEvent, TrackerEvent } from '../../../src/track/events.js';
import { GATE_FLOOR, matchCost, REACH_PER_S } from '../../../src/track/match.js';
import { END_AFTER_MISSES } from '../../../src/track/track.js';
import { Tracker } from '../../../src/track/tracker.js';
import { groundPlane } from '../../../src/track/speed.js';
import { named, plain, SPECIAL_NAMES } from '../../helpers/names.js';
import { seededRandom } from '../../helpers/random.js';

const zd = (label: string, score: number, box: Box, zones: string[] = []): ZonedDetection => ({
  label,
  score,
  box,
  zones,
});

/** The defaults, and end_after_s 3, high_score 0.5, stationary_after_s 10, update_move 1. */
const settings = sectionConfig('events', {});

/** The whole 640×480 frame as 32 m × 24 m of flat ground seen from above: 20 px a metre. */
const flatGround = (): ReturnType<typeof groundPlane> =>
  groundPlane(
    [
      [0, 0],
      [640, 0],
      [640, 480],
      [0, 480],
    ],
    [32, 24, 32, 24],
  );

interface Mover {
  label: string;
  /** Top-left corner at time 0 (ms), and velocity in px/s. */
  x: number;
  y: number;
  vx: number;
  vy: number;
  w: number;
  h: number;
  /** Time span (ms) the object is in view. */
  from: number;
  to: number;
  score?: (ts: number) => number;
  zones?: (box: Box) => string[];
}

/** A 1280-px view crossed left to right in 6 s by a 60×160 person. */
const walker = (over: Partial<Mover> = {}): Mover => ({
  label: 'person',
  x: 0,
  y: 300,
  vx: (1280 - 60) / 6,
  vy: 0,
  w: 60,
  h: 160,
  from: 0,
  to: 6000,
  ...over,
});

/** A 200×100 car crossing the view in 1.5 s. */
const vehicle = (over: Partial<Mover> = {}): Mover => ({
  label: 'car',
  x: 0,
  y: 500,
  vx: (1280 - 200) / 1.5,
  vy: 0,
  w: 200,
  h: 100,
  from: 0,
  to: 1500,
  ...over,
});

const evenly = (fps: number, from: number, to: number): number[] => {
  const out: number[] = [];
  for (let ts = from; ts <= to + 1e-6; ts += 1000 / fps) out.push(Math.round(ts));
  return out;
};

/** Detections of the movers at each time, boxes wobbling by up to ±`jitter` px per edge. */
function scene(
  movers: Mover[],
  times: number[],
  jitter = 3,
  seed = 1,
): { ts: number; dets: ZonedDetection[] }[] {
  const rnd = seededRandom(seed);
  const j = (): number => (rnd() * 2 - 1) * jitter;
  return times.map((ts) => ({
    ts,
    dets: movers
      .filter((m) => ts >= m.from && ts <= m.to)
      .map((m) => {
        const x = m.x + (m.vx * ts) / 1000;
        const y = m.y + (m.vy * ts) / 1000;
        const box: Box = [x + j(), y + j(), x + m.w + j(), y + m.h + j()];
        return zd(m.label, m.score?.(ts) ?? 0.8, box, m.zones?.(box) ?? []);
      }),
  }));
}

const isCrossing = (e: TrackerEvent): e is LineCrossing => e.type === 'crossing';

/** Feeds one frame; returns the object events (crossings are tested on their own below). */
const step = (t: Tracker, dets: ZonedDetection[], ts: number): ObjectEvent[] =>
  t.update(dets, ts).filter((e): e is ObjectEvent => !isCrossing(e));

/**
 * Answered frames showing nothing, at `at` (END_AFTER_MISSES of them, a millisecond apart): the
 * evidence that ends every object unseen since `at - end_after_s`. Returns every event.
 */
const lapse = (t: Tracker, at: number): TrackerEvent[] =>
  Array.from({ length: END_AFTER_MISSES }, (_, i) => t.update([], at + i)).flat();

/** Feeds frames, then frames showing nothing so lost tracks end; returns every object event. */
function run(t: Tracker, frames: { ts: number; dets: ZonedDetection[] }[], tail = 5000): ObjectEvent[] {
  const events = frames.flatMap((f) => step(t, f.dets, f.ts));
  const last = frames.at(-1)?.ts ?? 0;
  return [...events, ...lapse(t, last + tail).filter((e): e is ObjectEvent => !isCrossing(e))];
}

const ofType = (events: ObjectEvent[], type: ObjectEvent['type']): ObjectEvent[] =>
  events.filter((e) => e.type === type);
const ids = (events: ObjectEvent[]): string[] => [...new Set(events.map((e) => e.id))];

describe('tracker: one id per object', () => {
  for (const fps of [2, 5, 10]) {
    it(`a walker (1280 px in 6 s) and a fast car (1280 px in 1.5 s) at ${fps} fps`, () => {
      for (const mover of [walker(), vehicle(), walker({ x: 1220, vx: -(1280 - 60) / 6 })]) {
        const events = run(new Tracker('cam', settings), scene([mover], evenly(fps, mover.from, mover.to)));
        assert.equal(ofType(events, 'new').length, 1, `${mover.label}: one new`);
        assert.equal(ofType(events, 'end').length, 1, `${mover.label}: one end`);
        assert.equal(ids(events).length, 1, `${mover.label}: one id`);
      }
    });
  }

  it('uneven frame intervals (50–600 ms) keep one id', () => {
    for (const seed of [1, 2, 3]) {
      const rnd = seededRandom(seed);
      const times: number[] = [];
      for (let ts = 0; ts <= 6000; ts += 50 + Math.round(rnd() * 550)) times.push(ts);
      const events = run(
        new Tracker('cam', settings),
        scene([walker(), vehicle({ to: 1500 })], times, 3, seed),
      );
      assert.deepEqual(
        ofType(events, 'new').map((e) => e.label),
        ['person', 'car'].slice(0, ofType(events, 'new').length),
      );
      assert.equal(ids(events).length, ofType(events, 'new').length);
      assert.ok(ofType(events, 'new').some((e) => e.label === 'person'));
    }
  });

  it('two walkers passing each other in opposite directions keep their ids', () => {
    for (const fps of [2, 5, 10]) {
      const a = walker({ y: 300 });
      const b = walker({ x: 1220, y: 320, vx: -(1280 - 60) / 6 });
      const t = new Tracker('cam', { ...settings, update_move: 0.01 });
      const events = run(t, scene([a, b], evenly(fps, 0, 6000)));
      assert.equal(ofType(events, 'new').length, 2, `${fps} fps: two objects`);
      for (const id of ids(events)) {
        const xs = events
          .filter((e) => e.id === id && e.type !== 'end')
          .map((e) => (e.box[0] + e.box[2]) / 2);
        const steps = xs.slice(1).map((x, i) => x - xs[i]!);
        const dir = Math.sign(steps[0]!);
        assert.ok(
          steps.every((s) => Math.sign(s) === dir),
          `${fps} fps: track ${id} changed direction (a swap): ${xs.map(Math.round).join(' ')}`,
        );
      }
    }
  });

  for (const gap of [1, 2, 3]) {
    it(`a dropout of ${gap} frame(s) keeps the id, at 2, 5 and 10 fps`, () => {
      for (const fps of [2, 5, 10]) {
        for (const mover of [walker(), vehicle()]) {
          const frames = scene([mover], evenly(fps, mover.from, mover.to));
          // After the two frames that confirm it, mid-way, and with a frame after the gap.
          const from = Math.max(2, Math.floor((frames.length - gap) / 2));
          if (from + gap >= frames.length) continue;
          for (let i = from; i < from + gap; i++) frames[i]!.dets = [];
          const events = run(new Tracker('cam', settings), frames);
          assert.equal(ofType(events, 'new').length, 1, `${mover.label} at ${fps} fps`);
          assert.equal(ids(events).length, 1, `${mover.label} at ${fps} fps`);
          assert.equal(ofType(events, 'end').length, 1, `${mover.label} at ${fps} fps`);
        }
      }
    });
  }

  it('a score dipping below high_score for a few frames keeps the track, matched and counted', () => {
    // Ten frames at 0.3 (above model.conf, below high_score): longer than end_after_s here.
    const dip = (ts: number): number => (ts >= 2000 && ts < 4000 ? 0.3 : 0.8);
    const t = new Tracker('cam', { ...settings, end_after_s: 1 });
    const frames = scene([walker({ score: dip })], evenly(5, 0, 6000));
    const events: ObjectEvent[] = [];
    for (const f of frames) {
      events.push(...step(t, f.dets, f.ts));
      if (f.ts >= 200) assert.equal(t.counts().labels.get('person')?.inView, 1, `in view at ${f.ts}`);
    }
    events.push(...(lapse(t, 10_000) as ObjectEvent[]));
    assert.equal(ofType(events, 'new').length, 1);
    assert.equal(ids(events).length, 1);
    assert.equal(ofType(events, 'end')[0]!.endTs, 6000, 'matched to the end');
  });

  it('low-scored detections alone start no track', () => {
    const events = run(
      new Tracker('cam', settings),
      scene([walker({ score: () => 0.3 })], evenly(5, 0, 6000)),
    );
    assert.deepEqual(events, []);
  });

  it('matches per label: a person and a dog in one box are two objects', () => {
    const t = new Tracker('gate', settings);
    step(t, [zd('person', 0.9, [0, 0, 10, 10]), zd('dog', 0.9, [0, 0, 10, 10])], 0);
    const events = step(t, [zd('person', 0.9, [0, 0, 10, 10]), zd('dog', 0.9, [0, 0, 10, 10])], 100);
    assert.deepEqual(events.map((e) => [e.type, e.label]).sort(), [
      ['new', 'dog'],
      ['new', 'person'],
    ]);
  });
});

describe('tracker: matchCost', () => {
  // A walker tracked at 200 px/s for 1 s, predicted 0.5 s on: its box is at x 300–360.
  let s = initiate([0, 300, 60, 460]);
  for (let ts = 200; ts <= 1000; ts += 200) s = update(predict(s, 0.2), [ts / 5, 300, ts / 5 + 60, 460]);
  const p = predict(s, 0.5);
  const at = (x: number): number => matchCost(p, [x, 300, x + 60, 460]);

  it('is lowest on the prediction and grows with distance, also where boxes no longer overlap', () => {
    assert.ok(at(300) < 0.05, `${at(300)}`);
    assert.ok(at(300) < at(320) && at(320) < at(350));
    assert.ok(at(370) < at(380), 'no overlap with either: the nearer is cheaper');
  });

  it('is Infinity outside the gate, and not within GATE_FLOOR diagonals', () => {
    const floor = GATE_FLOOR * Math.hypot(60, 160);
    assert.ok(Number.isFinite(at(300 + floor - 1)));
    assert.equal(at(300 + floor + 20), Infinity);
    assert.equal(at(100), Infinity, 'behind it');
  });

  it('with a reach, also within REACH_PER_S diagonals a second of where it was last matched', () => {
    // Last matched at x 200–260 (centre 230, 380), 3 s ago: it may be 1.5 × 171 × 3 = 769 px away.
    const reach = { centre: [230, 380] as const, radius: REACH_PER_S * Math.hypot(60, 160) * 3 };
    const back = (x: number): number => matchCost(p, [x, 300, x + 60, 460], reach);
    assert.equal(at(-300), Infinity, 'turned back: far behind the prediction');
    assert.ok(Number.isFinite(back(-300)), 'but within its reach');
    assert.ok(back(-300) > back(250), 'and dearer than a detection nearer the prediction');
    assert.equal(back(-600), Infinity, 'beyond its reach');
  });
});

describe('tracker: events', () => {
  it('announces after min_frames with the fields subscribers read; a one-frame blip makes no event', () => {
    const t = new Tracker('gate', settings);
    assert.deepEqual(
      step(t, [zd('person', 0.6, [0, 0, 10, 20], ['drive'])], 0),
      [],
      'tentative after one frame',
    );
    const [n] = step(t, [zd('person', 0.7, [1, 0, 11, 20], ['drive'])], 200);
    assert.deepEqual(n, {
      type: 'new',
      id: '0-gate-1',
      camera: 'gate',
      label: 'person',
      score: 0.7,
      box: [1, 0, 11, 20],
      startTs: 0,
      endTs: null,
      zones: ['drive'],
      currentZones: ['drive'],
      enteredZones: ['drive'],
      loiteringZones: [],
      zoneTimes: named({ drive: 0.2 }),
      speed: null,
      stationary: false,
    });
    step(t, [zd('person', 0.6, [1, 0, 11, 20]), zd('cat', 0.9, [50, 50, 60, 60])], 400);
    const later = lapse(t, 3401) as ObjectEvent[];
    assert.deepEqual(
      later.map((e) => [e.type, e.label, e.endTs]),
      [['end', 'person', 400]],
      'the cat seen once vanishes silently; the end time is when it was last seen',
    );
  });

  it('says which objects the latest frame showed, tentative ones included, with their detections', () => {
    const t = new Tracker('gate', settings);
    const walker = zd('person', 0.6, [0, 0, 10, 20]);
    t.update([walker, zd('person', 0.3, [50, 0, 60, 20])], 0);
    assert.deepEqual(
      t.sightings(),
      [{ id: '0-gate-1', label: 'person', detection: walker }],
      'a low score starts nothing',
    );
    assert.ok(t.has('0-gate-1'));
    const moved = zd('person', 0.3, [1, 0, 11, 20]);
    const cat = zd('cat', 0.9, [50, 50, 60, 60]);
    t.update([moved, cat], 200);
    assert.deepEqual(
      t.sightings().map((s) => [s.id, s.detection]),
      [['200-gate-2', cat]],
      'a tentative track missed once is dropped; a low score does not confirm it',
    );
    assert.equal(t.has('0-gate-1'), false);
    t.update([], 400);
    assert.deepEqual(t.sightings(), []);
  });

  it('says once that an object has stayed in a zone for its loiter_s; leaving restarts the clock', () => {
    const t = new Tracker('gate', settings, { loiterS: { door: 5 } });
    const at = (x: number, y: number, zones: string[]) => [zd('person', 0.9, [x, y, x + 60, y + 160], zones)];
    const events: ObjectEvent[] = [];
    // Standing at the door for 8 s, stepping into the yard (not a loiter zone), back for 6 s.
    for (let ts = 0; ts <= 8000; ts += 200) events.push(...step(t, at(100, 100, ['door']), ts));
    for (let ts = 8200; ts <= 9000; ts += 200) events.push(...step(t, at(400, 100, ['yard']), ts));
    for (let ts = 9200; ts <= 15_400; ts += 200) events.push(...step(t, at(100, 100, ['door']), ts));
    const loitering = events
      .filter((e) => e.type === 'update' && e.loiteringZones.length > 0)
      .map((e) => [e.loiteringZones, e.currentZones]);
    assert.deepEqual(loitering, [
      [['door'], ['door']], // at 5 s
      [['door'], ['door']], // 5 s after coming back (at 14.2 s), not at once
    ]);
  });

  it('a walker sends a handful of updates, not one per frame', () => {
    const events = run(new Tracker('cam', settings), scene([walker()], evenly(5, 0, 6000)));
    const updates = ofType(events, 'update').length;
    // At most one per box diagonal (171 px) of 1220 px, in whole frames (43 px): 5 or 6, not 30.
    assert.ok(updates >= 4 && updates <= 8, `${updates} updates`);
  });

  it('updates on a zone change and a clear score gain; entered_zones keeps every zone in order', () => {
    const zones = (b: Box): string[] => {
      const x = (b[0] + b[2]) / 2;
      return x < 400 ? ['a'] : x < 800 ? ['a', 'b'] : ['c'];
    };
    const t = new Tracker('cam', { ...settings, update_move: 100 });
    const score = (ts: number): number => (ts < 3000 ? 0.6 : 0.75);
    const events = run(t, scene([walker({ zones, score })], evenly(5, 0, 6000)));
    const updates = ofType(events, 'update');
    assert.deepEqual(
      updates.map((e) => [e.currentZones, e.score]),
      [
        [['a', 'b'], 0.6],
        [['a', 'b'], 0.75],
        [['c'], 0.75],
      ],
    );
    assert.deepEqual(ofType(events, 'end')[0]!.enteredZones, ['a', 'b', 'c']);
    assert.deepEqual(ofType(events, 'end')[0]!.zones, ['c']);
  });

  it('ends everything on shutdown', () => {
    const t = new Tracker('gate', { ...settings, min_frames: 1 });
    step(t, [zd('person', 0.9, [0, 0, 10, 10])], 0);
    assert.deepEqual(
      t.endAll().map((e) => e.type),
      ['end'],
    );
    assert.deepEqual(plain(t.counts()), { labels: {}, zones: {} });
  });
});

describe('tracker: stationary objects and counts', () => {
  it('a standing person with ±3 px jitter turns stationary once, then stays silent and in view', () => {
    const t = new Tracker('cam', settings);
    const still = walker({ x: 600, vx: 0, to: 60_000, zones: () => ['door'] });
    const events = scene([still], evenly(5, 0, 60_000)).map((f) => ({
      ts: f.ts,
      ev: step(t, f.dets, f.ts),
    }));
    assert.deepEqual(
      events.flatMap(({ ts, ev }) => ev.map((e) => [ts, e.type, e.stationary])),
      [
        [200, 'new', false],
        // Confirmed at 200 ms; stationary_after_s (10 s) later.
        [10_200, 'update', true],
      ],
    );
    assert.deepEqual(plain(t.counts()), {
      labels: { person: { inView: 1, active: 0 } },
      zones: { door: { person: { inView: 1, active: 0, dwellS: 60 } } },
    });
    // It walks off at 200 px/s: active again, once, then updates as a walker, same id.
    const off = walker({ x: 600 - 200 * 60, vx: 200, from: 60_200, to: 63_000, zones: () => ['door'] });
    const moving = scene([off], evenly(5, 60_200, 63_000)).flatMap((f) => step(t, f.dets, f.ts));
    assert.deepEqual(
      moving.map((e) => [e.type, e.stationary, e.id]),
      [
        ['update', false, '0-cam-1'],
        ['update', false, '0-cam-1'],
        ['update', false, '0-cam-1'],
      ],
    );
    assert.deepEqual(plain(t.counts().labels), { person: { inView: 1, active: 1 } });
  });

  it('a stationary object sends nothing more even when update_move is below its jitter', () => {
    const t = new Tracker('cam', { ...settings, update_move: 0.01 });
    const events = run(t, scene([walker({ x: 600, vx: 0, to: 30_000 })], evenly(5, 0, 30_000)), 0);
    const turned = events.findIndex((e) => e.stationary);
    assert.ok(turned > 0 && ofType(events.slice(0, turned), 'update').length > 0, 'jitter updates before');
    assert.deepEqual(events.slice(turned + 1), []);
  });

  it('a slow drift (5 px/s) never turns stationary; standing still does after stationary_after_s', () => {
    const drift = new Tracker('cam', { ...settings, stationary_after_s: 5 });
    const drifting = run(drift, scene([walker({ x: 600, vx: 5, to: 30_000 })], evenly(5, 0, 30_000)));
    assert.ok(
      drifting.every((e) => !e.stationary),
      'moves its 17-px threshold every 3.4 s',
    );
    const t = new Tracker('cam', { ...settings, stationary_after_s: 20 });
    const frames = scene([walker({ x: 600, vx: 0, to: 30_000 })], evenly(2, 0, 30_000));
    const at = frames.find((f) => step(t, f.dets, f.ts).some((e) => e.stationary))?.ts;
    assert.equal(at, 20_500, 'confirmed at 500 ms, stationary 20 s later');
  });

  it('counts drop to zero within a second of the object leaving, while its track is still kept', () => {
    const t = new Tracker('cam', settings);
    const frames = scene([walker({ to: 3000, zones: () => ['path'] })], evenly(5, 0, 6000));
    const seen: [number, number][] = [];
    const events: ObjectEvent[] = [];
    for (const f of frames) {
      events.push(...step(t, f.dets, f.ts));
      seen.push([f.ts, t.counts().labels.get('person')?.inView ?? 0]);
    }
    assert.deepEqual(
      seen.filter(([ts]) => ts >= 2800 && ts <= 4400),
      [
        [2800, 1],
        [3000, 1],
        [3200, 1],
        [3400, 1],
        [3600, 1],
        [3800, 1],
        [4000, 1],
        [4200, 0],
        [4400, 0],
      ],
    );
    assert.deepEqual(ofType(events, 'end'), [], 'still in the lost buffer at 6 s');
    assert.deepEqual(plain(t.counts()), { labels: {}, zones: {} });
    assert.equal(
      lapse(t, 6001).length,
      1,
      'ends once answered frames have not shown it for end_after_s (3 s)',
    );
  });

  it('counts an object missed in the latest frame for up to a second, and only confirmed ones', () => {
    const t = new Tracker('cam', settings);
    step(t, [zd('car', 0.9, [0, 0, 100, 50])], 0);
    assert.deepEqual(plain(t.counts().labels), {}, 'tentative');
    step(t, [zd('car', 0.9, [0, 0, 100, 50])], 500);
    assert.deepEqual(plain(t.counts().labels), { car: { inView: 1, active: 1 } });
    step(t, [], 1000);
    assert.deepEqual(plain(t.counts().labels), { car: { inView: 1, active: 1 } }, 'missed in one frame');
    step(t, [], 1500);
    assert.deepEqual(plain(t.counts().labels), { car: { inView: 1, active: 1 } }, 'missed for a second');
    step(t, [], 1501);
    assert.deepEqual(plain(t.counts().labels), {});
  });

  it('with sparse answers, an object missed in one answered frame still counts; in two, not', () => {
    const t = new Tracker('cam', settings);
    step(t, [zd('car', 0.9, [0, 0, 100, 50])], 0);
    step(t, [zd('car', 0.9, [0, 0, 100, 50])], 3000);
    step(t, [], 6000);
    assert.deepEqual(plain(t.counts().labels), { car: { inView: 1, active: 1 } }, '3 s unseen, one frame');
    assert.deepEqual(
      step(t, [], 9000).map((e) => e.type),
      ['end'],
      'two frames, 6 s > end_after_s',
    );
    assert.deepEqual(plain(t.counts().labels), {});
  });

  it('time without answered frames ends nothing and changes no count; the first frames do', () => {
    const t = new Tracker('cam', settings);
    step(t, [zd('car', 0.9, [0, 0, 100, 50])], 0);
    step(t, [zd('car', 0.9, [0, 0, 100, 50])], 200);
    // A minute with no answer (the detector cannot keep up): nothing happens until frames come.
    const back = step(t, [zd('car', 0.9, [2, 0, 102, 50])], 60_000);
    assert.deepEqual(
      back.map((e) => [e.type, e.id, e.stationary]),
      [['update', '0-cam-1', true]],
      'the same object (stationary now): no end, no new',
    );
    assert.deepEqual(plain(t.counts().labels), { car: { inView: 1, active: 0 } });
    // Answered frames without it, a millisecond apart: not yet end_after_s of them.
    assert.deepEqual(lapse(t, 60_001), []);
    assert.deepEqual(plain(t.counts().labels), { car: { inView: 1, active: 0 } }, 'within COUNT_HOLD_MS');
    const gone = lapse(t, 63_001);
    assert.deepEqual(
      gone.map((e) => [e.type, (e as ObjectEvent).endTs]),
      [['end', 60_000]],
      'end_after_s of answered frames without it: ends, at its last sighting',
    );
  });
});

describe('tracker: sparse answers (a detector that serves a camera 0.3–1 frames a second)', () => {
  /** Answer times at about `fps`, each gap 0.5–1.5 of the mean (a shared detector answers unevenly). */
  const uneven = (fps: number, to: number, seed: number): number[] => {
    const rnd = seededRandom(seed);
    const out = [0];
    while (out.at(-1)! < to) out.push(Math.round(out.at(-1)! + (1000 / fps) * (0.5 + rnd())));
    return out;
  };
  /** A 60×160 person walking at `v` px/s from x = 100, turning back at `turnAt` ms if given. */
  const path = (v: number, standS = 0, turnAt?: number) => ({
    label: 'person',
    at(ts: number): number {
      const walked = Math.max(0, ts - standS * 1000);
      if (turnAt === undefined || walked <= turnAt) return 100 + (v * walked) / 1000;
      return 100 + (v * turnAt) / 1000 - (v * (walked - turnAt)) / 1000;
    },
  });

  it('a walker keeps one id at 0.3, 0.5 and 1 answers a second: steady, starting off, turning back, missed now and then', () => {
    for (const fps of [0.3, 0.5, 1])
      for (const v of [30, 60, 100])
        for (const [kind, p] of [
          ['steady', path(v)],
          ['stands 10 s, then walks', path(v, 10)],
          ['turns back after 10 s', path(v, 0, 10_000)],
        ] as const)
          for (const seed of [1, 2, 3]) {
            const rnd = seededRandom(seed * 7);
            const j = (): number => (rnd() * 2 - 1) * 4;
            const t = new Tracker('cam', settings);
            // The detector misses the walker in every fifth answer (3.3–5 s unseen at 0.3 a second).
            const frames = uneven(fps, 30_000, seed).map((ts, i) => {
              const x = p.at(ts);
              const box: Box = [x + j(), 300 + j(), x + 60 + j(), 460 + j()];
              return { ts, dets: i % 5 === 4 ? [] : [zd('person', 0.8, box)] };
            });
            const events = run(t, frames);
            assert.equal(
              ofType(events, 'new').length,
              1,
              `${fps} answers/s, ${v} px/s, ${kind}, seed ${seed}: ${events.map((e) => `${e.type}@${e.box[0] | 0}`).join(' ')}`,
            );
          }
  });

  it('after a minute without answers, a person coming in elsewhere does not take the id of one who stood there', () => {
    const t = new Tracker('cam', settings);
    // Standing for 30 s, seen every 3 s.
    for (let ts = 0; ts <= 30_000; ts += 3000) step(t, [zd('person', 0.9, [100, 300, 160, 460])], ts);
    // No answer for a minute (lagging); the first frames show someone else, 900 px away.
    const events = [
      ...step(t, [zd('person', 0.9, [1000, 300, 1060, 460])], 90_000),
      ...step(t, [zd('person', 0.9, [1001, 300, 1061, 460])], 93_000),
      ...step(t, [zd('person', 0.9, [1002, 300, 1062, 460])], 96_000),
    ];
    assert.deepEqual(
      events.map((e) => [e.type, e.id]),
      [
        ['new', '90000-cam-2'],
        ['end', '0-cam-1'],
      ],
    );
  });

  it('two walkers passing each other in parallel lanes keep their ids at 0.5 answers a second', () => {
    for (const seed of [1, 2, 3, 4]) {
      const t = new Tracker('cam', settings);
      const frames = uneven(0.5, 30_000, seed).map((ts) => {
        const a = 100 + (60 * ts) / 1000;
        const b = 1900 - (60 * ts) / 1000;
        return {
          ts,
          dets: [zd('person', 0.8, [a, 300, a + 60, 460]), zd('person', 0.8, [b, 340, b + 60, 500])],
        };
      });
      const events = run(t, frames);
      const news = ofType(events, 'new');
      assert.equal(
        news.length,
        2,
        `seed ${seed}: ${events.map((e) => `${e.type}@${e.box[0] | 0}`).join(' ')}`,
      );
      // Each id's boxes move one way: ids did not swap where they passed.
      for (const n of news) {
        const xs = events.filter((e) => e.id === n.id).map((e) => e.box[0]);
        const rising = xs.every((x, i) => i === 0 || x >= xs[i - 1]! - 10);
        const falling = xs.every((x, i) => i === 0 || x <= xs[i - 1]! + 10);
        assert.ok(
          rising || falling,
          `seed ${seed}: ${n.id} went both ways: ${xs.map((x) => x | 0).join(' ')}`,
        );
      }
    }
  });
});

describe('tracker: line crossings', () => {
  /** A vertical line at x = 640 from top to bottom: left to right of A→B is right to left on the picture. */
  const line = (over: Partial<LineConfig> = {}): Record<string, LineConfig> => ({
    door: {
      points: [
        [640, 0],
        [640, 720],
      ],
      directions: ['in', 'out'],
      anchor: 'center',
      ...over,
    },
  });
  const crossingsOf = (t: Tracker, frames: { ts: number; dets: ZonedDetection[] }[]): LineCrossing[] =>
    [...frames.flatMap((f) => t.update(f.dets, f.ts)), ...lapse(t, 1e12)].filter(isCrossing);

  for (const fps of [2, 5, 10]) {
    it(`a walker and a car crossing once give one crossing each, in their direction, at ${fps} fps`, () => {
      const movers = [walker(), vehicle(), walker({ x: 1220, vx: -(1280 - 60) / 6, y: 100 })];
      for (const m of movers) {
        const t = new Tracker('cam', settings, { lines: line() });
        const crossed = crossingsOf(t, scene([m], evenly(fps, m.from, m.to)));
        // Going right (x grows) on a line drawn downwards is from its right to its left: `out`.
        const direction = m.vx > 0 ? 'out' : 'in';
        assert.deepEqual(
          crossed.map((c) => [c.line, c.direction, c.label]),
          [['door', direction, m.label]],
          `${m.label} at ${fps} fps`,
        );
      }
    });
  }

  it('the crossing carries the object id and the time of the first frame beyond the line', () => {
    const t = new Tracker('cam', settings, { lines: line() });
    const frames = scene([walker()], evenly(5, 0, 6000), 0);
    const events = frames.flatMap((f) => t.update(f.dets, f.ts));
    const [crossing] = events.filter(isCrossing);
    const id = events.find((e) => e.type === 'new')!.id;
    assert.equal(crossing!.id, id);
    // The centre is at x = 30 + 203.3·t; beyond 640 + 43 (the margin) from t = 3.21 s: the frame at 3.4 s.
    assert.equal(crossing!.ts, 3400);
  });

  it('an object wandering on the line (within the margin) is not counted, however often it wobbles', () => {
    const t = new Tracker('cam', settings, { lines: line() });
    const frames = evenly(5, 0, 20_000).map((ts, i) => {
      const x = 640 - 30 + (i % 2 ? 12 : -12); // the centre 12 px either side of the line
      return { ts, dets: [zd('person', 0.9, [x, 300, x + 60, 460])] };
    });
    assert.deepEqual(crossingsOf(t, frames), []);
  });

  it('back and forth across the line counts each real crossing once, in its direction', () => {
    const t = new Tracker('cam', settings, { lines: line() });
    // The centre walks 540 → 740 → 540 → 740 at 200 px/s, waiting a second at each end.
    const centreAt = (ts: number): number => {
      const phase = ts % 4000;
      const leg = phase < 1000 ? phase : phase < 2000 ? 1000 : phase < 3000 ? 3000 - phase : 0;
      return 540 + leg / 5;
    };
    const frames = evenly(5, 0, 5000).map((ts) => {
      const x = centreAt(ts) - 30;
      return { ts, dets: [zd('person', 0.9, [x, 300, x + 60, 460])] };
    });
    assert.deepEqual(
      crossingsOf(t, frames).map((c) => c.direction),
      ['out', 'in', 'out'],
    );
  });

  it('a crossing during a dropout is counted when the object is seen again beyond the line', () => {
    const frames = scene([walker()], evenly(5, 0, 6000));
    for (const f of frames) if (f.ts >= 2600 && f.ts <= 3400) f.dets = [];
    const t = new Tracker('cam', settings, { lines: line() });
    assert.equal(crossingsOf(t, frames).length, 1);
  });

  it('passing beyond the end of the line is no crossing; a line from A to B counts only between them', () => {
    const short = line({
      points: [
        [640, 0],
        [640, 200],
      ],
    }); // the walker's centre is at y = 380
    assert.deepEqual(
      crossingsOf(new Tracker('cam', settings, { lines: short }), scene([walker()], evenly(5, 0, 6000))),
      [],
    );
  });

  it('a crossing seen before the object is confirmed comes right after its new event', () => {
    const t = new Tracker('cam', { ...settings, min_frames: 5 });
    t.setAreas({ lines: line() });
    // Centres 550, 590 (left), 670 (on the line: within a quarter of the diagonal, 43 px), 730
    // (right: crossed while tentative), 770 (confirmed).
    const events = [520, 560, 640, 700, 740].flatMap((x, i) =>
      t.update([zd('person', 0.9, [x, 300, x + 60, 460])], i * 200),
    );
    assert.deepEqual(
      events.map((e) => e.type),
      ['new', 'crossing'],
    );
  });

  it('a line moved at a reload starts its sides afresh; one unchanged keeps them', () => {
    const t = new Tracker('cam', settings, { lines: line() });
    const frames = scene([walker()], evenly(5, 0, 6000), 0);
    const events = frames.flatMap((f) => {
      // At 2 s (the walker at x ≈ 440) the line moves from x = 640 to x = 300, behind it.
      if (f.ts === 2000)
        t.setAreas({
          lines: line({
            points: [
              [300, 0],
              [300, 720],
            ],
          }),
        });
      return t.update(f.dets, f.ts);
    });
    assert.deepEqual(
      events.filter(isCrossing),
      [],
      'the walker is never seen on both sides of the moved line',
    );
    const kept = new Tracker('cam', settings, { lines: line() });
    const crossed = frames.flatMap((f) => {
      if (f.ts === 2000) kept.setAreas({ lines: line() });
      return kept.update(f.dets, f.ts).filter(isCrossing);
    });
    assert.equal(crossed.length, 1);
  });

  it('a line counts only its objects; bottom_center uses where the object stands', () => {
    const people = line({ objects: ['person'] });
    const t = new Tracker('cam', settings, { lines: people });
    assert.deepEqual(
      crossingsOf(t, scene([vehicle()], evenly(5, 0, 1500))),
      [],
      'a car crossing a person line',
    );
    // A horizontal line at y = 430: the walker's centre (380) stays above, its feet (460) below.
    const floor = {
      points: [
        [0, 430],
        [1280, 430],
      ] as [[number, number], [number, number]],
    };
    const rising = walker({ x: 600, vx: 0, y: 500, vy: -60, to: 4000 }); // walks up the picture
    const byCentre = new Tracker('cam', settings, { lines: line({ ...floor, anchor: 'center' }) });
    const byFeet = new Tracker('cam', settings, { lines: line({ ...floor, anchor: 'bottom_center' }) });
    const frames = scene([rising], evenly(5, 0, 4000), 0);
    // Centre from y = 580 to 340: crosses 430. Feet from 660 to 420: within the margin of 430, no.
    assert.equal(crossingsOf(byCentre, frames).length, 1);
    assert.equal(crossingsOf(byFeet, frames).length, 0);
  });
});

describe('tracker: occlusion', () => {
  it('feeds the filter the whole object when a detection shows part of it', () => {
    const predicted: Box = [100, 100, 160, 320];
    assert.deepEqual(
      wholeObject([102, 98, 158, 170], predicted),
      [102, 98, 158, 318],
      'the head: kept from the top',
    );
    assert.deepEqual(
      wholeObject([100, 250, 160, 322], predicted),
      [100, 102, 160, 322],
      'the feet: kept from the bottom',
    );
    assert.deepEqual(wholeObject([130, 100, 160, 320], predicted), [100, 100, 160, 320], 'the right half');
    assert.deepEqual(
      wholeObject([104, 110, 158, 300], predicted),
      [104, 110, 158, 300],
      'whole enough: as detected',
    );
  });

  /**
   * A walker (220 px tall, feet at y = 560) passing behind a car from 2 s: first all but its top
   * 65 px hidden for `headS`, then all of it for `hiddenS`. The car is detected throughout;
   * `others` says whether it reaches the tracker only as an untracked detection.
   */
  function behindCar(fps: number, headS: number, hiddenS: number) {
    const frames = scene([walker({ y: 340, h: 220 })], evenly(fps, 0, 6000));
    const [from, to] = [2000 + headS * 1000, 2000 + (headS + hiddenS) * 1000];
    return frames.map((f) => {
      const [x1, y1, x2] = f.dets[0]?.box ?? [0, 0, 0];
      const car = zd('car', 0.9, [x1 - 100, y1 + 65, x2 + 100, y1 + 300]);
      if (f.ts >= 2000 && f.ts < from) return { ...f, dets: [zd('person', 0.8, [x1, y1, x2, y1 + 65])], car };
      if (f.ts >= from && f.ts < to)
        return { ...f, dets: [], car: { ...car, box: [x1 - 100, y1 - 10, x2 + 100, y1 + 300] as Box } };
      return { ...f, car: null };
    });
  }

  it('a walker passing behind a car (first only its head shows, then nothing) keeps its id', () => {
    for (const fps of [2, 5, 10])
      for (const headS of [0.2, 0.6, 1.5, 3])
        for (const hiddenS of [0.2, 0.6, 1.0])
          for (const carTracked of [true, false]) {
            const t = new Tracker('cam', settings);
            const events = behindCar(fps, headS, hiddenS).flatMap((f) => {
              const all = f.car ? [...f.dets, f.car] : f.dets;
              return carTracked
                ? step(t, all, f.ts)
                : t.update(f.dets, f.ts, { others: all }).filter((e): e is ObjectEvent => !isCrossing(e));
            });
            const people = [...events, ...(lapse(t, 20_000) as ObjectEvent[])].filter(
              (e) => e.label === 'person',
            );
            assert.equal(
              ofType(people, 'new').length,
              1,
              `${fps} fps, head ${headS} s, hidden ${hiddenS} s, car ${carTracked ? 'tracked' : 'filtered out'}: ${people.map((e) => `${e.type}@${e.box[0] | 0}`).join(' ')}`,
            );
          }
  });

  it('no line crossing from the part that shows: a walker below a line, behind a car', () => {
    // The line is at y = 500, the walker's feet at 560: only its head (y 340–405) shows for 1 s.
    for (const anchor of ['bottom_center', 'center'] as const) {
      const t = new Tracker('cam', settings, {
        lines: {
          kerb: {
            points: [
              [0, 500],
              [1280, 500],
            ],
            directions: ['in', 'out'],
            anchor,
          },
        },
      });
      const crossed = behindCar(5, 1, 0.4).flatMap((f) =>
        t.update(f.dets, f.ts, { others: f.car ? [...f.dets, f.car] : f.dets }).filter(isCrossing),
      );
      assert.deepEqual(crossed, [], anchor);
    }
  });
});

describe('tracker: names a user chose', () => {
  it('counts labels and zones named __proto__, constructor, toString, hasOwnProperty, valueOf as any other', () => {
    const t = new Tracker('cam', { ...settings, min_frames: 1 });
    const dets = SPECIAL_NAMES.map((n, i) => zd(n, 0.9, [i * 100, 0, i * 100 + 50, 100], [n, 'yard']));
    const events = step(t, dets, 0);
    assert.deepEqual(
      events.map((e) => [e.label, e.zones]),
      SPECIAL_NAMES.map((n) => [n, [n, 'yard']]),
    );
    const one = { inView: 1, active: 1 };
    const inZone = { ...one, dwellS: 0 };
    assert.deepEqual(plain(t.counts()), {
      labels: Object.fromEntries(SPECIAL_NAMES.map((n) => [n, one])),
      zones: {
        ...Object.fromEntries(SPECIAL_NAMES.map((n) => [n, Object.fromEntries([[n, inZone]])])),
        yard: Object.fromEntries(SPECIAL_NAMES.map((n) => [n, inZone])),
      },
    });
    assert.equal(Object.hasOwn(Object.prototype, 'inView'), false, 'nothing was set on every object');
  });
});

describe('tracker: zones with inertia, time in zone, speed, what each detection is', () => {
  const door = (inertia: number, extra: Record<string, unknown> = {}) => ({
    zones: { door: { inertia, ...extra } },
  });
  const at = (x: number, zones: string[]) => [zd('person', 0.9, [x, 100, x + 60, 260], zones)];

  it('an object jittering at a zone’s edge enters once after inertia frames, and events carry seconds per zone', () => {
    const t = new Tracker('gate', settings, door(3));
    const events: ObjectEvent[] = [];
    // At the edge: in, out, in, out... then firmly in from 1.6 s to 4 s, then out for good.
    const edge = [true, false, true, false, true, false, true, false];
    edge.forEach((inside, i) => events.push(...step(t, at(100, inside ? ['door'] : []), i * 200)));
    for (let ts = 1600; ts <= 4000; ts += 200) events.push(...step(t, at(100, ['door']), ts));
    for (let ts = 4200; ts <= 5000; ts += 200) events.push(...step(t, at(100, []), ts));
    const changes = events.filter((e) => e.type !== 'end').map((e) => [e.type, e.currentZones.join()]);
    assert.deepEqual(changes, [
      ['new', ''],
      ['update', 'door'], // at 2 s: the third frame in a row inside
      ['update', ''], // at 4.6 s: the third frame in a row outside
    ]);
    const entered = events[1]!;
    assert.deepEqual(plain(entered.zoneTimes), { door: 0.4 }, 'from 1.6 s, the first frame of the streak');
    const left = events[2]!;
    assert.deepEqual(plain(left.zoneTimes), { door: 2.4 }, 'its stay: 1.6 s to 4 s');
    const [end] = lapse(t, 9000) as ObjectEvent[];
    assert.equal(end!.type, 'end');
    assert.deepEqual(plain(end!.zoneTimes), { door: 2.4 });
  });

  it('loitering is on the same clock as time in zone: loiter_s after the first frame inside', () => {
    const t = new Tracker('gate', settings, door(3, { loiterS: 2 }));
    const events: ObjectEvent[] = [];
    for (let ts = 0; ts <= 3000; ts += 200) events.push(...step(t, at(100, ['door']), ts));
    const loiter = events.find((e) => e.loiteringZones.length > 0)!;
    assert.equal(loiter.endTs, null);
    assert.deepEqual(plain(loiter.zoneTimes), { door: 2 }, 'at 2 s, not 2 s after entering at 0.4 s');
  });

  it('counts the whole seconds the longest present object has been in a zone', () => {
    const t = new Tracker('gate', { ...settings, min_frames: 1 }, door(1));
    step(t, at(100, ['door']), 0);
    step(t, [...at(100, ['door']), zd('person', 0.9, [600, 100, 660, 260], ['door'])], 1500);
    step(t, [...at(100, ['door']), zd('person', 0.9, [600, 100, 660, 260], ['door'])], 2700);
    assert.deepEqual(plain(t.counts().zones), { door: { person: { inView: 2, active: 2, dwellS: 2 } } });
  });

  it('measures speed on a calibrated zone, reports it in events.speed_unit, and enters by speed_threshold', () => {
    // 640 px = 32 m: 20 px a metre. A car at 10 m/s moves 40 px a frame at 5 fps.
    const ground = flatGround();
    const road = { zones: { road: { inertia: 1, ground, speedThreshold: 30 / 3.6 } } };
    const t = new Tracker('gate', { ...settings, min_frames: 1, speed_unit: 'km/h' }, road);
    const events: ObjectEvent[] = [];
    for (let i = 0; i <= 12; i++)
      events.push(...step(t, [zd('car', 0.9, [40 * i, 200, 40 * i + 80, 260], ['road'])], i * 200));
    const entered = events.find((e) => e.currentZones.includes('road'))!;
    assert.ok(entered, 'it entered');
    assert.ok(entered.startTs < (entered.endTs ?? Infinity));
    const last = events.at(-1)!;
    assert.equal(last.speed?.unit, 'km/h');
    assert.equal(last.speed?.zone, 'road');
    assert.ok(Math.abs(last.speed.max - 36) <= 3.6, `max ${last.speed.max} km/h, truth 36`);
    const [end] = lapse(t, 9000) as ObjectEvent[];
    assert.ok(Math.abs(end!.speed!.max - 36) <= 3.6);

    // The same zone with a threshold of 50 km/h: the car never enters it.
    const slow = new Tracker(
      'gate',
      { ...settings, min_frames: 1 },
      { zones: { road: { ...road.zones.road, speedThreshold: 50 / 3.6 } } },
    );
    const seen: ObjectEvent[] = [];
    for (let i = 0; i <= 12; i++)
      seen.push(...step(slow, [zd('car', 0.9, [40 * i, 200, 40 * i + 80, 260], ['road'])], i * 200));
    assert.deepEqual(
      seen.flatMap((e) => e.enteredZones),
      [],
    );
    assert.equal(seen.at(-1)!.speed, null, 'no speed without a calibrated zone entered');
  });

  it("measures speed over the frames' steady times: a connection's squeezed first stamps do not make it fast (issue 42 item 5)", () => {
    const ground = flatGround();
    const road = { zones: { road: { inertia: 1, ground } } };
    const run = (steady: boolean): number => {
      const t = new Tracker('gate', { ...settings, min_frames: 1, speed_unit: 'km/h' }, road);
      for (let i = 0; i < 25; i++) {
        // 5 m/s: 20 px every 200 ms of the stream; ffmpeg wrote the first 3 s at once, 50 ms apart.
        const ts = i < 15 ? 1000 + i * 50 : 1700 + (i - 14) * 200;
        const dets = [zd('car', 0.9, [20 * i, 200, 20 * i + 80, 260], ['road'])];
        t.update(dets, ts, steady ? { steady: i * 200 } : {});
      }
      const ends = lapse(t, 20_000).filter((e): e is ObjectEvent => !isCrossing(e) && e.type === 'end');
      return Math.max(...ends.map((e) => e.speed?.max ?? 0));
    };
    assert.ok(run(false) > 18 * 1.5, `on the squeezed stamps alone it reads fast: ${run(false)} km/h`);
    assert.ok(Math.abs(run(true) - 18) <= 1.8, `on the steady times: ${run(true)} km/h, truth 18`);
  });

  it('a steady clock that goes back (a camera object made anew) keeps the object and its speed', () => {
    const ground = flatGround();
    const road = { zones: { road: { inertia: 1, ground } } };
    const t = new Tracker('gate', { ...settings, min_frames: 1, speed_unit: 'km/h' }, road);
    const events: TrackerEvent[] = [];
    for (let i = 0; i < 25; i++) {
      // 5 m/s: 20 px every 200 ms; from frame 10 the steady clock starts again 5 s behind.
      const steady = i < 10 ? 10_000 + i * 200 : 5_000 + i * 200;
      const dets = [zd('car', 0.9, [20 * i, 200, 20 * i + 80, 260], ['road'])];
      events.push(...t.update(dets, 1000 + i * 200, { steady }));
    }
    events.push(...lapse(t, 20_000));
    const own = events.filter((e): e is ObjectEvent => !isCrossing(e));
    assert.deepEqual(
      own.filter((e) => e.type === 'new' || e.type === 'end').map((e) => e.type),
      ['new', 'end'],
      'one object',
    );
    const max = own.at(-1)!.speed!.max;
    assert.ok(Math.abs(max - 18) <= 1.8, `max ${max} km/h, truth 18`);
  });

  it('says of each detection whether it is a confirmed object (its event id), tentative, or nothing', () => {
    const t = new Tracker('gate', settings);
    const first = [zd('person', 0.9, [0, 0, 60, 160]), zd('person', 0.3, [500, 0, 560, 160])];
    t.update(first, 0);
    assert.deepEqual(t.identify(first), [
      { id: null, track: 'tentative' },
      { id: null, track: 'none' },
    ]);
    const second = [zd('person', 0.9, [5, 0, 65, 160])];
    const [n] = step(t, second, 200);
    assert.deepEqual(t.identify(second), [{ id: n!.id, track: 'confirmed' }]);
  });
});
