import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Box } from '../../../src/core/geometry.js';
import {
  centreDistance2,
  GATE_99,
  initiate,
  predict,
  SIZE_SPAN,
  toBox,
  update,
  type KalmanState,
} from '../../../src/track/kalman.js';

const near = (a: number, b: number, tol: number, what: string): void =>
  assert.ok(Math.abs(a - b) <= tol, `${what}: ${a} is not within ${tol} of ${b}`);

/** A 60×160 box whose left edge is at x. */
const person = (x: number, y = 300): Box => [x, y, x + 60, y + 160];

/** Tracks boxes measured at the given times (ms); returns the state at the last one. */
function follow(times: number[], boxAt: (ts: number) => Box): KalmanState {
  let s = initiate(boxAt(times[0]!));
  for (let i = 1; i < times.length; i++)
    s = update(predict(s, (times[i]! - times[i - 1]!) / 1000), boxAt(times[i]!));
  return s;
}

describe('kalman', () => {
  it('starts at the box, still, and returns it', () => {
    const s = initiate([10, 20, 70, 180]);
    assert.deepEqual(toBox(s), [10, 20, 70, 180]);
    assert.deepEqual([s.cx.v, s.cy.v, s.w.v, s.h.v], [0, 0, 0, 0]);
    assert.deepEqual(toBox(predict(s, 2)), [10, 20, 70, 180], 'a still object stays');
  });

  it('learns a constant velocity from frames at uneven intervals and predicts by time', () => {
    const times = [0, 130, 500, 560, 900, 1400, 1500, 2000];
    const speed = 200; // px/s
    const s = follow(times, (ts) => person((speed * ts) / 1000, 300 + (50 * ts) / 1000));
    near(s.cx.v, speed, 10, 'vx');
    near(s.cy.v, 50, 10, 'vy');
    near(s.w.v, 0, 5, 'vw');
    const ahead = toBox(predict(s, 0.5));
    near(ahead[0], speed * 2.5, 6, 'x 0.5 s ahead');
    near(ahead[1], 300 + 50 * 2.5, 6, 'y 0.5 s ahead');
  });

  it('predicts over a time span in one step as in several', () => {
    const s = follow([0, 200, 400], (ts) => person(ts / 2));
    const once = predict(s, 0.6);
    const thrice = predict(predict(predict(s, 0.2), 0.2), 0.2);
    near(once.cx.x, thrice.cx.x, 1e-9, 'mean');
    near(once.cx.v, thrice.cx.v, 1e-9, 'velocity');
    assert.deepEqual(predict(s, -1), predict(s, 0), 'time never runs back');
  });

  it('grows uncertainty with time, shrinks it with measurements, in proportion to the box size', () => {
    const s = follow([0, 200, 400, 600], () => person(100));
    assert.ok(predict(s, 1).cx.pp > predict(s, 0.2).cx.pp);
    assert.ok(update(predict(s, 0.2), person(100)).cx.pp < predict(s, 0.2).cx.pp);
    const big = follow([0, 200, 400, 600], () => [200, 600, 320, 920]);
    near(big.cx.pp / s.cx.pp, 4, 1e-9, 'x variance of a box twice as wide');
    near(big.cy.pp / s.cy.pp, 4, 1e-9, 'y variance of a box twice as high');
  });

  it('gates by centre distance normalised by size and time', () => {
    const s = follow([0, 200, 400, 600, 800], (ts) => person(ts / 5)); // 200 px/s
    const p = predict(s, 0.2);
    assert.ok(centreDistance2(p, person(200)) < 1, 'where it was predicted');
    assert.ok(centreDistance2(p, person(260)) > GATE_99, 'a box width past the prediction, 0.2 s on');
    assert.ok(centreDistance2(predict(s, 3), person(760)) < GATE_99, 'the same miss after 3 s unseen');
  });

  it('lets a new track find its second detection at 2 fps, even for a fast car', () => {
    const car: Box = [0, 500, 200, 600];
    const half = predict(initiate(car), 0.5);
    assert.ok(centreDistance2(half, [360, 500, 560, 600]) < GATE_99, '720 px/s, 1.8 widths on');
    assert.ok(
      centreDistance2(half, [1400, 500, 1600, 600]) > GATE_99,
      '2800 px/s (14 widths a second) is not',
    );
    const walker = predict(initiate(person(0)), 0.5);
    assert.ok(centreDistance2(walker, person(102)) < GATE_99, 'walker 1.7 widths on');
  });
});

describe('kalman: a size learnt from a box being covered is not extrapolated away', () => {
  it('a box that shrank for a few frames is predicted at most SIZE_SPAN smaller, however long ahead', () => {
    let s = initiate([100, 100, 260, 540]);
    for (const w of [150, 130, 110, 90]) s = update(predict(s, 0.2), [100, 100, 100 + w, 540]);
    const w0 = toBox(s)[2] - toBox(s)[0];
    const later = toBox(predict(s, 5));
    assert.ok(later[2] - later[0] >= w0 / SIZE_SPAN - 1e-9, `${later[2] - later[0]} px against ${w0}`);
    assert.ok(later[2] - later[0] <= w0 * SIZE_SPAN + 1e-9);
  });
});
