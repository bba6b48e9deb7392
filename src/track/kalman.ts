import { centre, fromCentre, type Box } from '../core/geometry.js';

/**
 * A constant-velocity Kalman filter in box space, as SORT and ByteTrack track boxes, predicting
 * by elapsed time rather than by frame (Argus' frames come 2–10 times a second, unevenly).
 *
 * State: the box's centre x, y, width w and height h, and the velocity of each, in source pixels
 * and pixels per second (BoT-SORT's xywh; ByteTrack's xyah keeps an aspect ratio instead). The
 * motion model moves each of the four on its own (x' = x + v·dt) and the noises below are
 * diagonal, so the 8×8 covariance of ByteTrack's filter stays four independent 2×2 blocks
 * (a component and its velocity): this module keeps just those blocks. The result is the same.
 *
 * Noises scale with the box, as ByteTrack's `std_weight_position` (1/20) and
 * `std_weight_velocity` (1/160) do, per axis: x and w by the width, y and h by the height.
 * ByteTrack's are per frame at 30 fps; these are per second, so that a prediction over dt s
 * grows its uncertainty by dt whatever the frame rate:
 * - measurement: std `MEASURE` × size (a detector's box wobbles by about 1/20 of its size);
 * - process, per second: std `PROCESS_POSITION` × size × √dt on the position and
 *   `PROCESS_VELOCITY` × size × √dt on the velocity: a walker may change speed by about half
 *   its width per second in a second;
 * - a new track starts with the position's std 2 × `MEASURE` × size and the velocity's std
 *   `INITIAL_VELOCITY` × size per second: an object first seen may be moving up to a few of its
 *   widths per second (a car crossing a 1280-px view in 1.5 s moves 4 of its 200-px widths a
 *   second), so its second detection is still found at 2 fps.
 */
export const MEASURE = 1 / 20;
export const PROCESS_POSITION = 1 / 20;
export const PROCESS_VELOCITY = 1 / 2;
export const INITIAL_VELOCITY = 4;

/** One component and its velocity: mean, and covariance [pp, pv, vv]. */
interface Axis {
  x: number;
  v: number;
  pp: number;
  pv: number;
  vv: number;
}

export interface KalmanState {
  /** Centre x, centre y, width, height. */
  cx: Axis;
  cy: Axis;
  w: Axis;
  h: Axis;
}

const MIN_SIZE = 1;

const axis = (x: number, size: number): Axis => ({
  x,
  v: 0,
  pp: (2 * MEASURE * size) ** 2,
  pv: 0,
  vv: (INITIAL_VELOCITY * size) ** 2,
});

/** A new track's state from its first box. */
export function initiate(box: Readonly<Box>): KalmanState {
  const w = Math.max(MIN_SIZE, box[2] - box[0]);
  const h = Math.max(MIN_SIZE, box[3] - box[1]);
  const [cx, cy] = centre(box);
  return {
    cx: axis(cx, w),
    cy: axis(cy, h),
    w: axis(w, w),
    h: axis(h, h),
  };
}

const predictAxis = (a: Axis, dt: number, size: number): Axis => ({
  x: a.x + a.v * dt,
  v: a.v,
  pp: a.pp + 2 * dt * a.pv + dt * dt * a.vv + (PROCESS_POSITION * size) ** 2 * dt,
  pv: a.pv + dt * a.vv,
  vv: a.vv + (PROCESS_VELOCITY * size) ** 2 * dt,
});

const sizes = (s: KalmanState): [w: number, h: number] => [
  Math.max(MIN_SIZE, s.w.x),
  Math.max(MIN_SIZE, s.h.x),
];

/**
 * How far a prediction may change a box's size: within [1 / SIZE_SPAN, SIZE_SPAN] of it. A size's
 * velocity is learnt from boxes that grow and shrink for other reasons than distance (a walker
 * coming out from behind another grows by half a box a frame), and extrapolated over a second
 * or two it would make the box vanish or fill the view; nothing real halves or doubles in size
 * between two frames a detector answers.
 */
export const SIZE_SPAN = 1.5;

/** The state `dt` seconds later (a negative dt counts as 0). The box never shrinks below 1 px. */
export function predict(s: KalmanState, dt: number): KalmanState {
  const t = Math.max(0, dt);
  const [w, h] = sizes(s);
  const next = {
    cx: predictAxis(s.cx, t, w),
    cy: predictAxis(s.cy, t, h),
    w: predictAxis(s.w, t, w),
    h: predictAxis(s.h, t, h),
  };
  next.w.x = Math.max(MIN_SIZE, Math.min(w * SIZE_SPAN, Math.max(w / SIZE_SPAN, next.w.x)));
  next.h.x = Math.max(MIN_SIZE, Math.min(h * SIZE_SPAN, Math.max(h / SIZE_SPAN, next.h.x)));
  return next;
}

const updateAxis = (a: Axis, z: number, size: number): Axis => {
  const s = a.pp + (MEASURE * size) ** 2;
  const kp = a.pp / s;
  const kv = a.pv / s;
  const y = z - a.x;
  return {
    x: a.x + kp * y,
    v: a.v + kv * y,
    pp: (1 - kp) * a.pp,
    pv: (1 - kp) * a.pv,
    vv: a.vv - kv * a.pv,
  };
};

/** The state corrected by a measured box (usually on a predicted state). */
export function update(s: KalmanState, box: Readonly<Box>): KalmanState {
  const [w, h] = sizes(s);
  const [cx, cy] = centre(box);
  return {
    cx: updateAxis(s.cx, cx, w),
    cy: updateAxis(s.cy, cy, h),
    w: updateAxis(s.w, Math.max(MIN_SIZE, box[2] - box[0]), w),
    h: updateAxis(s.h, Math.max(MIN_SIZE, box[3] - box[1]), h),
  };
}

/** The state's box. */
export function toBox(s: KalmanState): Box {
  const [w, h] = sizes(s);
  return fromCentre(s.cx.x, s.cy.x, w, h);
}

/**
 * The squared Mahalanobis distance of a box's centre from the state's: the centre distance
 * normalised, per axis, by the uncertainty of the prediction plus the measurement noise. Both
 * scale with the box's size, and the prediction's grows with the time since the last
 * measurement, so it reads "how many box-sized, time-allowed steps away". Chi-square with two
 * degrees of freedom: 9.21 holds 99 % of true matches.
 */
export function centreDistance2(s: KalmanState, box: Readonly<Box>): number {
  const [w, h] = sizes(s);
  const [cx, cy] = centre(box);
  const dx = cx - s.cx.x;
  const dy = cy - s.cy.x;
  return (dx * dx) / (s.cx.pp + (MEASURE * w) ** 2) + (dy * dy) / (s.cy.pp + (MEASURE * h) ** 2);
}

/** Chi-square 0.99 quantile with two degrees of freedom: the gate on `centreDistance2`. */
export const GATE_99 = 9.2103;

/** The state of an object known to stand still: its velocity set to 0 (its uncertainty kept). */
export function halt(s: KalmanState): KalmanState {
  const still = (a: Axis): Axis => ({ ...a, v: 0 });
  return { cx: still(s.cx), cy: still(s.cy), w: still(s.w), h: still(s.h) };
}
