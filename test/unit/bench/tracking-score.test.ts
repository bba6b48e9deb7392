import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Box } from '../../../src/core/geometry.js';
import {
  bestOffset,
  coveredShare,
  scoreLineTruth,
  scoreTracking,
  summariseSpeed,
  summariseStreet,
  type ScoredFrame,
  type SeenEvent,
  type TruthBox,
} from '../../../bench/tracking-score.js';

const OPTS = { width: 1000, height: 500 };
const A: Box = [100, 100, 150, 250];
const B: Box = [400, 100, 450, 250];
const at = (b: Box, dx: number): Box => [b[0] + dx, b[1], b[2] + dx, b[3]];
const truth = (object: string, box: Box): TruthBox => ({ object, label: 'person', box });
const seen = (box: Box, id: string | null): { label: string; box: Box; id: string | null } => ({
  label: 'person',
  box,
  id,
});
/** Frame k at k × 200 ms. */
const frame = (k: number, t: TruthBox[], s: ReturnType<typeof seen>[]): ScoredFrame => ({
  ts: k * 200,
  truth: t,
  seen: s,
});
const ev = (type: string, id: string, endTs: number | null = null): SeenEvent => ({
  type,
  id,
  label: 'person',
  box: A,
  endTs,
});

describe('bench: tracking scores (issue 42)', () => {
  it('a perfect track: IDF1 1, one id per object, no switch, early end or stray id', () => {
    const frames = [0, 1, 2, 3].map((k) =>
      frame(
        k,
        [truth('a', at(A, k * 10)), truth('b', at(B, -k * 10))],
        [seen(at(A, k * 10), 'x'), seen(at(B, -k * 10 + 2), 'y')],
      ),
    );
    const s = scoreTracking(frames, [ev('new', 'x'), ev('new', 'y'), ev('end', 'x', 600)], [], [], OPTS);
    assert.equal(s.idf1, 1);
    assert.deepEqual([s.idtp, s.idfn, s.idfp], [8, 0, 0]);
    assert.deepEqual([s.objects, s.ids_per_object, s.switches, s.early_ends], [2, 1, 0, 0]);
    assert.deepEqual([s.new_events, s.new_per_object, s.unmatched_ids], [2, 1, 0]);
  });

  it('a detection over two objects, one behind the other, shows the nearer: the hidden one does not take its id', () => {
    // b stands behind a (bottom 250 against 260: farther), 90 % covered; the one detection is a's.
    const near: Box = [100, 110, 150, 260];
    const far: Box = [102, 100, 150, 250];
    // The detection overlaps the hidden one a little more (IoU 0.92 against 0.91).
    const shown: Box = [101, 104, 150, 255];
    const frames = [0, 1, 2].map((k) => frame(k, [truth('b', far), truth('a', near)], [seen(shown, 'x')]));
    const s = scoreTracking(frames, [ev('new', 'x')], [], [], OPTS);
    const a = s.per_object.find((p) => p.object === 'a')!;
    const b = s.per_object.find((p) => p.object === 'b')!;
    assert.deepEqual([a.ids, a.switches], [['x'], 0]);
    assert.deepEqual(b.ids, []);
  });

  it('an id that changes mid-way: a switch, two ids, an early end, IDF1 by the best mapping', () => {
    const frames = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9].map((k) =>
      frame(k, [truth('a', at(A, k * 10))], [seen(at(A, k * 10), k < 4 ? 'x' : 'z')]),
    );
    // x ended at 600 ms (its last frame) while a stayed in view until 1800 ms.
    const s = scoreTracking(frames, [ev('new', 'x'), ev('end', 'x', 600), ev('new', 'z')], [], [], OPTS);
    assert.deepEqual(s.per_object[0]!.ids, ['x', 'z']);
    assert.deepEqual([s.switches, s.early_ends, s.ids_per_object, s.new_per_object], [1, 1, 2, 2]);
    // z is mapped (6 frames): IDTP 6, the 4 frames of x are both missed truth and false ids.
    assert.deepEqual([s.idtp, s.idfn, s.idfp], [6, 4, 4]);
    assert.equal(s.idf1, 6 / (6 + 2 + 2));
  });

  it('an end within earlyEndS of the object leaving is no early end', () => {
    const frames = [0, 1, 2, 3, 4].map((k) =>
      frame(k, [truth('a', at(A, k * 10))], [seen(at(A, k * 10), 'x')]),
    );
    const s = scoreTracking(frames, [ev('new', 'x'), ev('end', 'x', 400)], [], [], OPTS);
    assert.equal(s.early_ends, 0, 'last in view at 800 ms, 0.4 s after the end');
  });

  it('a hidden object is no miss; a switch across the gap still counts; an unmatched id is a stray', () => {
    const bus = truth('bus', [80, 50, 300, 300]);
    const frames = [
      frame(0, [truth('a', A)], [seen(A, 'x')]),
      // Behind the bus (drawn after it: nearer), neither seen nor owed.
      frame(1, [truth('a', A), bus], [seen(bus.box, 'v')]),
      frame(2, [truth('a', A)], [seen(A, 'w'), seen([700, 100, 750, 200], 'q')]),
    ];
    const s = scoreTracking(frames, [], [], [], OPTS);
    const a = s.per_object.find((p) => p.object === 'a')!;
    assert.deepEqual([a.frames, a.matched, a.switches], [2, 2, 1]);
    assert.equal(s.unmatched_ids, 1, 'q matched nothing');
    assert.equal(s.idfn, 1, 'a in frame 2 (w is not its mapped id); the hidden frame owes nothing');
  });

  it('a box mostly outside the picture is not owed a match', () => {
    const edge: Box = [-80, 100, 20, 250];
    const s = scoreTracking([frame(0, [truth('a', edge)], [])], [], [], [], OPTS);
    assert.deepEqual([s.idfn, s.objects], [0, 0]);
  });

  it('coveredShare: the part of a box the nearer boxes cover', () => {
    const far = truth('far', [0, 0, 100, 100]);
    assert.equal(coveredShare([far], 0), 0);
    assert.equal(coveredShare([far, truth('n', [0, 0, 50, 100])], 0), 0.5);
    assert.equal(coveredShare([far, truth('n', [0, 0, 50, 100]), truth('m', [25, 0, 100, 100])], 0), 1);
    assert.equal(coveredShare([truth('n', [0, 0, 50, 100]), far], 1), 0, 'a farther box hides nothing');
  });

  it('crossings: extra passes of an object and passes of ids of no object are wrong', () => {
    const frames = [frame(0, [truth('a', A)], [seen(A, 'x')])];
    const cross = (id: string, direction: string) => ({ id, line: 'middle', direction, ts: 0 });
    const s = scoreTracking(
      frames,
      [],
      [cross('x', 'rightward'), cross('x', 'leftward'), cross('x', 'rightward'), cross('ghost', 'rightward')],
      [{ object: 'a', line: 'middle', direction: 'rightward' }],
      OPTS,
    );
    assert.deepEqual(s.crossings, { truth: 1, published: 4, wrong: 3 });
    assert.deepEqual(s.per_object[0]!.crossings, ['middle rightward', 'middle leftward', 'middle rightward']);
  });

  it('bestOffset finds the scene time of the first frame', () => {
    // The truth moves 100 px/s; frames show it as at 1.5 s + their ts.
    const truthAt = (t: number): TruthBox[] => [truth('a', at(A, t * 100))];
    const frames = [0, 1, 2, 3, 4].map((k) => ({
      ts: 1000 + k * 200,
      seen: [seen(at(A, (1.5 + k * 0.2) * 100), null)],
    }));
    const { offset, meanIou } = bestOffset(frames, truthAt, [0, 0.5, 1, 1.5, 2]);
    assert.equal(offset, 1.5);
    assert.equal(meanIou, 1);
  });

  it('summariseSpeed: the worst `current` and the `max` against the truth', () => {
    const sp = (current: number | null, max: number) => ({ speed: { current, max, unit: 'm/s' } });
    const s = summariseSpeed([{ speed: null }, sp(1.3, 1.3), sp(1.5, 1.6), sp(null, 1.6)], 1.4, 'm/s');
    assert.equal(s.readings, 2);
    assert.deepEqual([s.current_min, s.current_max, s.max], [1.3, 1.5, 1.6]);
    assert.ok(Math.abs(s.current_error! - 0.1 / 1.4) < 1e-9);
    assert.ok(Math.abs(s.max_error! - 0.2 / 1.4) < 1e-9);
  });

  it('summariseStreet: per person, per parked vehicle, ids crossing more than once with their times', () => {
    const van: Box = [408, 28, 452, 63];
    const events: SeenEvent[] = [
      ev('new', 'p1'),
      ev('new', 'p2'),
      { type: 'new', id: 'v1', label: 'truck', box: [409, 28, 452, 64], endTs: null },
      { type: 'new', id: 'v2', label: 'car', box: [408, 29, 451, 63], endTs: null },
      { type: 'new', id: 'c9', label: 'car', box: [100, 100, 150, 150], endTs: null },
    ];
    const frames = [{ seen: [seen(A, 'p1'), seen(B, 'p2'), seen(at(B, 5), 'p3'), seen(A, null)] }];
    const c = (id: string, direction: string, ts: number) => ({
      id,
      line: 'plaza',
      direction,
      ts,
      label: 'person',
    });
    const s = summariseStreet(
      frames,
      events,
      [c('p1', 'rightward', 10_000), c('p1', 'leftward', 12_500), c('p2', 'leftward', 90_000)],
      { people: 2, loops: 2, clipS: 80, parked: [van, [459, 32, 480, 59]], t0: 0 },
    );
    assert.deepEqual([s.person_new, s.new_per_person, s.ids_per_person], [2, 0.5, 0.75]);
    assert.deepEqual(s.parked_new, [2, 0]);
    assert.deepEqual([s.line_ids, s.line_multi, s.line_multi_share], [2, 1, 0.5]);
    assert.deepEqual(s.line_multi_detail, [
      { id: 'p1', label: 'person', crossings: ['rightward loop 1 at 10.0 s', 'leftward loop 1 at 12.5 s'] },
    ]);
  });
});

describe('the line against a by-eye truth (scoreLineTruth)', () => {
  const truthLine = [
    {
      person: 'walker',
      look: '',
      crossings: [
        { t: 10, direction: 'leftward' },
        { t: 20, direction: 'rightward' },
      ],
    },
    { person: 'passer', look: '', crossings: [{ t: 30, direction: 'leftward' }] },
  ];
  const c = (id: string, s: number, direction: string) => ({
    id,
    line: 'l',
    direction,
    label: 'person',
    ts: s * 1000,
  });

  it('a person walking back is no fault; an id that crossed more often than its person, or across the cut, is', () => {
    const s = scoreLineTruth(
      [
        // The walker, to and fro in loop 1: as often as the truth says.
        c('a', 10.4, 'leftward'),
        c('a', 19.5, 'rightward'),
        // Loop 2: the passer's id also takes the walker's crossing of the next playing.
        c('b', 30.2, 'leftward'),
        c('b', 100 + 9.8 - 10, 'leftward'),
        c('b', 100 + 20.1 - 10, 'rightward'),
        // Nobody crossed at 50 s.
        c('x', 50, 'rightward'),
      ],
      truthLine,
      { t0: 0, clipS: 90 },
    );
    assert.equal(s.ids, 3);
    assert.equal(s.true_multi, 1);
    assert.equal(s.false_multi, 1, s.detail.join('\n'));
    assert.equal(s.false_across_cut, 1);
    assert.equal(s.unmatched, 1);
    assert.ok(s.false_share > 0.33 && s.false_share < 0.34);
  });
});
