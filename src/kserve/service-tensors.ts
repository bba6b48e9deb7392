import type { Detection } from '../core/frame.js';
import type { Tensor } from './tensor.js';

/**
 * The tensors of Argus' inference service, to and from what the scheduler takes and gives: FP32
 * NCHW pictures to RGB24, each picture's detections to the `detections` and `num_detections`
 * outputs.
 */

/** The outputs a served model gives. */
export const OUTPUTS = ['detections', 'num_detections'] as const;

/** FP32 RGB in 0..1, channels first, to the RGB24 picture the scheduler takes. */
export function nchwToRgb(data: Float32Array, item: number, size: number): Buffer {
  const plane = size * size;
  const base = item * 3 * plane;
  const out = Buffer.alloc(3 * plane);
  // A clamped array clamps to 0..255 and rounds half to even; NaN becomes 0.
  const clamped = new Uint8ClampedArray(out.buffer, out.byteOffset, out.length);
  for (let c = 0; c < 3; c++) {
    const from = base + c * plane;
    for (let i = 0, j = c; i < plane; i++, j += 3) clamped[j] = data[from + i]! * 255;
  }
  return out;
}

/** Each item's detections as rows of [x1, y1, x2, y2, score, class], K rows per item, and counts. */
export function detectionTensors(
  answers: readonly Detection[][],
  labels: readonly string[],
): Record<(typeof OUTPUTS)[number], Tensor> {
  const b = answers.length;
  const k = Math.max(0, ...answers.map((a) => a.length));
  const rows = new Float32Array(b * k * 6);
  const counts = new Int32Array(b);
  const index = new Map<string, number>();
  labels.forEach((l, i) => index.has(l) || index.set(l, i));
  answers.forEach((dets, i) => {
    counts[i] = dets.length;
    dets.forEach((d, r) => rows.set([...d.box, d.score, index.get(d.label) ?? -1], (i * k + r) * 6));
  });
  return {
    detections: { name: 'detections', datatype: 'FP32', shape: [b, k, 6], data: rows },
    num_detections: { name: 'num_detections', datatype: 'INT32', shape: [b], data: counts },
  };
}
