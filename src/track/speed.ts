import type { Point } from '../core/geometry.js';

/**
 * Speed on the ground from a calibrated zone (`zones.<z>.distances`, as Frigate's): the zone's
 * four points are the corners of a patch of flat ground whose sides have the given lengths in
 * metres. The patch is taken as a rectangle (width the mean of sides 1 and 3, depth the mean of
 * sides 2 and 4) and the perspective transform (a homography) from the picture's quadrilateral
 * onto it maps any point of the picture on that ground plane to metres. An object's speed is how
 * far the point it stands on (its filtered box's bottom centre) moved on the ground over the
 * last SPEED_WINDOW_MS, divided by the time.
 *
 * What limits it: the ground must be flat and the object on it (a box's bottom centre is where a
 * person's feet or a car's wheels are only roughly; a box that grows as a car turns moves its
 * foot); the four lengths must be measured (a 5 % error in them is a 5 % error in every speed);
 * far from the zone the plane's extrapolation grows wrong; and at `fps` frames a second a box
 * jitters by a few pixels, which is many centimetres far from the camera: the window trades
 * delay for steadiness. Below a second's worth of frames there is no speed yet.
 */

/** Row-major 3×3 matrix. */
export type Homography = readonly number[];

/** The homography that maps the four points `from` onto `to` (solved as 8 linear equations). */
export function homography(from: readonly Point[], to: readonly Point[]): Homography {
  if (from.length !== 4 || to.length !== 4) throw new RangeError('a homography needs four point pairs');
  // Unknowns h0..h7 (h8 = 1): x' = (h0 x + h1 y + h2) / (h6 x + h7 y + 1), likewise y'.
  const a: number[][] = [];
  for (let i = 0; i < 4; i++) {
    const [x, y] = from[i]!;
    const [u, v] = to[i]!;
    a.push([x, y, 1, 0, 0, 0, -u * x, -u * y, u]);
    a.push([0, 0, 0, x, y, 1, -v * x, -v * y, v]);
  }
  // Gaussian elimination with partial pivoting.
  for (let c = 0; c < 8; c++) {
    let pivot = c;
    for (let r = c + 1; r < 8; r++) if (Math.abs(a[r]![c]!) > Math.abs(a[pivot]![c]!)) pivot = r;
    if (Math.abs(a[pivot]![c]!) < 1e-12)
      throw new RangeError('the four points are degenerate (three on a line)');
    [a[c], a[pivot]] = [a[pivot]!, a[c]!];
    for (let r = 0; r < 8; r++) {
      if (r === c) continue;
      const f = a[r]![c]! / a[c]![c]!;
      for (let k = c; k < 9; k++) a[r]![k]! -= f * a[c]![k]!;
    }
  }
  const h = a.map((row, i) => row[8]! / row[i]!);
  return [...h, 1];
}

/** `p` through the homography. */
export function project(h: Homography, p: Point): [number, number] {
  const w = h[6]! * p[0] + h[7]! * p[1] + h[8]!;
  return [(h[0]! * p[0] + h[1]! * p[1] + h[2]!) / w, (h[3]! * p[0] + h[4]! * p[1] + h[5]!) / w];
}

/** A calibrated zone's map from picture pixels to metres on the ground. */
export function groundPlane(
  points: readonly Point[],
  distances: readonly [number, number, number, number],
): Homography {
  const width = (distances[0] + distances[2]) / 2;
  const depth = (distances[1] + distances[3]) / 2;
  return homography(points, [
    [0, 0],
    [width, 0],
    [width, depth],
    [0, depth],
  ]);
}

/** Metres per second in the unit events use. */
export const SPEED_UNITS = { 'km/h': 3.6, mph: 3600 / 1609.344, 'm/s': 1 } as const;
export type SpeedUnit = keyof typeof SPEED_UNITS;

/** The span of ground positions a speed is measured over. */
export const SPEED_WINDOW_MS = 1000;
/** The least span that gives a speed (shorter, a few pixels of jitter are the whole answer). */
export const SPEED_MIN_SPAN_MS = 600;

/** An object's recent ground positions in one calibrated zone's plane, and its speed there. */
export class GroundTrack {
  private samples: { ts: number; at: [number, number] }[] = [];
  /** Highest speed measured so far inside the zone, m/s (outside it the plane is extrapolated). */
  max = 0;
  /** Whether a speed has been measured inside the zone. */
  measured = false;

  constructor(private readonly plane: Homography) {}

  /**
   * Adds where the object stands at `ts` (picture pixels), `inside` the zone or not; returns its
   * speed in m/s, if known. Only speeds measured inside raise `max`.
   */
  add(ts: number, foot: Point, inside = true): number | undefined {
    this.samples.push({ ts, at: project(this.plane, foot) });
    while (this.samples.length > 2 && ts - this.samples[1]!.ts >= SPEED_WINDOW_MS) this.samples.shift();
    const speed = this.speed();
    if (speed !== undefined && inside) {
      this.max = Math.max(this.max, speed);
      this.measured = true;
    }
    return speed;
  }

  /** Moves the samples' times by `ms` (the clock they were taken on went back). */
  shift(ms: number): void {
    for (const s of this.samples) s.ts += ms;
  }

  /** Metres per second over the window, or undefined while the window is too short. */
  speed(): number | undefined {
    const first = this.samples[0];
    const last = this.samples.at(-1);
    if (!first || !last || last.ts - first.ts < SPEED_MIN_SPAN_MS) return undefined;
    const d = Math.hypot(last.at[0] - first.at[0], last.at[1] - first.at[1]);
    return d / ((last.ts - first.ts) / 1000);
  }
}
