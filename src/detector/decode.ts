import { fromCentre, iou, type Box } from '../core/geometry.js';

/** A detection in model-input pixels, before mapping to the source image. */
export interface RawDetection {
  classId: number;
  score: number;
  box: Box;
}

export interface OutputLayout {
  /** `channels-first` = [B, 4+C, N] (YOLOv8/YOLO11 as exported); `transposed` = [B, N, 4+C]. */
  kind: 'channels-first' | 'transposed';
  classes: number;
  anchors: number;
}

export class LayoutError extends Error {}

/**
 * Works out how to read a YOLO output of shape `dims`. `classes` is the number of labels when
 * known (from the model's metadata or a labels file); without it the smaller non-batch axis
 * is taken as 4 + C, since anchors far outnumber classes.
 */
export function resolveLayout(dims: readonly (number | string | null)[], classes?: number): OutputLayout {
  const shown = `[${dims.map((d) => d ?? '?').join(', ')}]`;
  if (dims.length !== 3) {
    throw new LayoutError(
      `output shape ${shown} is not a YOLO detection output ([batch, 4+classes, anchors] or [batch, anchors, 4+classes])`,
    );
  }
  const a = dims[1];
  const b = dims[2];
  if (typeof a !== 'number' || typeof b !== 'number') {
    throw new LayoutError(`output shape ${shown} has a symbolic box or anchor axis; cannot tell its layout`);
  }
  if (classes !== undefined) {
    if (a === 4 + classes) return { kind: 'channels-first', classes, anchors: b };
    if (b === 4 + classes) return { kind: 'transposed', classes, anchors: a };
    throw new LayoutError(
      `output shape ${shown} does not fit ${classes} classes: expected an axis of 4+${classes}=${4 + classes} (YOLOv8/YOLO11 layout; models with an objectness column, such as YOLOX or YOLOv5, are not supported)`,
    );
  }
  if (a < b && a > 4) return { kind: 'channels-first', classes: a - 4, anchors: b };
  if (b < a && b > 4) return { kind: 'transposed', classes: b - 4, anchors: a };
  throw new LayoutError(`output shape ${shown} is not a YOLO detection output`);
}

/**
 * Greedy class-aware non-maximum suppression: a box is dropped when a higher-scoring box of
 * the same class overlaps it by more than `iouThreshold`. Returns at most `maxDet`, best first.
 */
export function nms(dets: RawDetection[], iouThreshold: number, maxDet = 300): RawDetection[] {
  const sorted = [...dets].sort((x, y) => y.score - x.score);
  const kept: RawDetection[] = [];
  for (const d of sorted) {
    if (kept.length >= maxDet) break;
    let suppressed = false;
    for (const k of kept) {
      if (k.classId === d.classId && iou(k.box, d.box) > iouThreshold) {
        suppressed = true;
        break;
      }
    }
    if (!suppressed) kept.push(d);
  }
  return kept;
}

export interface DecodeOptions {
  conf: number;
  iou: number;
  maxDet?: number;
}

/**
 * Decodes batch item `item` of a YOLOv8-style output tensor: each anchor's best class, kept when
 * its score reaches `conf`, boxes turned from centre/size to corners, then class-aware NMS.
 */
export function decodeYolo(
  data: Float32Array,
  layout: OutputLayout,
  item: number,
  opts: DecodeOptions,
): RawDetection[] {
  const { classes: c, anchors: n } = layout;
  const rows = 4 + c;
  const base = item * rows * n;
  // Stride between consecutive rows of one anchor, and between anchors.
  const rowStep = layout.kind === 'channels-first' ? n : 1;
  const anchorStep = layout.kind === 'channels-first' ? 1 : rows;
  const candidates: RawDetection[] = [];
  for (let i = 0; i < n; i++) {
    const at = base + i * anchorStep;
    let best = -1;
    let bestScore = -Infinity;
    for (let k = 0; k < c; k++) {
      const s = data[at + (4 + k) * rowStep]!;
      if (s > bestScore) {
        bestScore = s;
        best = k;
      }
    }
    if (bestScore < opts.conf) continue;
    candidates.push({
      classId: best,
      score: bestScore,
      box: fromCentre(data[at]!, data[at + rowStep]!, data[at + 2 * rowStep]!, data[at + 3 * rowStep]!),
    });
  }
  return nms(candidates, opts.iou, opts.maxDet ?? 300);
}
