import type { Detection } from '../core/frame.js';
import { toSource, type Letterbox } from '../core/geometry.js';
import type { RawDetection } from './decode.js';

const round = (v: number, places: number): number => {
  const f = 10 ** places;
  return Math.round(v * f) / f;
};

/** Maps raw detections to labelled boxes in source pixels (clipped), dropping empty boxes. */
export function toDetections(
  raw: readonly RawDetection[],
  g: Letterbox,
  labels: readonly string[],
): Detection[] {
  const out: Detection[] = [];
  for (const d of raw) {
    const b = toSource(g, d.box);
    if (b[2] - b[0] <= 0 || b[3] - b[1] <= 0) continue;
    out.push({
      label: labels[d.classId] ?? `class${d.classId}`,
      score: round(d.score, 4),
      box: [round(b[0], 1), round(b[1], 1), round(b[2], 1), round(b[3], 1)],
    });
  }
  return out;
}
