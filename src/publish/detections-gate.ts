import type { Detection } from '../core/frame.js';
import { iou } from '../core/geometry.js';
import type { Config } from '../config/index.js';

/** Boxes of one object in two frames overlap at least this much when it has not moved. */
const SAME_IOU = 0.9;
/** ...and its score differs by at most this much. */
const SAME_SCORE = 0.05;

/**
 * Whether two frames' detections say the same: as many of each label, each matched to one of
 * the other frame (greedily, by overlap) whose box overlaps it by SAME_IOU and whose score is
 * within SAME_SCORE. The same picture analysed again gives boxes a pixel or two apart and scores
 * a hundredth apart; an object that moves by a tenth of its size, comes, goes or changes its
 * label is a change.
 */
export function sameDetections(a: readonly Detection[], b: readonly Detection[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  const free = [...b];
  for (const d of a) {
    let best = -1;
    let bestIou = SAME_IOU;
    free.forEach((e, i) => {
      const o = e.label === d.label ? iou(d.box, e.box) : 0;
      if (o >= bestIou && Math.abs(e.score - d.score) <= SAME_SCORE) [best, bestIou] = [i, o];
    });
    if (best < 0) return false;
    free.splice(best, 1);
  }
  return true;
}

/**
 * Which frames' detections are published, per camera: with `publish: changes`, a frame whose
 * detections differ from those last published (`sameDetections`), and otherwise one every
 * `heartbeat_s` of frame time, so a subscriber hears that the camera still sees the same; with
 * `every_frame`, every frame.
 */
export class DetectionsGate {
  private last = new Map<string, { detections: readonly Detection[]; ts: number; tracking: string }>();

  constructor(private readonly cfg: Config['mqtt']['detections']) {}

  /**
   * Whether to publish a camera's frame taken at `ts` (ms) with these detections; if so, it
   * counts as published. `tracking` says what tracking made of them (their ids): a still object
   * confirmed, or given a new id, is a change even though its box is the same.
   */
  due(camera: string, detections: readonly Detection[], ts: number, tracking = ''): boolean {
    const last = this.last.get(camera);
    const due =
      this.cfg.publish === 'every_frame' ||
      !last ||
      // A clock set back restarts the heartbeat rather than silencing the camera.
      ts < last.ts ||
      ts - last.ts >= this.cfg.heartbeat_s * 1000 ||
      tracking !== last.tracking ||
      !sameDetections(detections, last.detections);
    if (due) this.last.set(camera, { detections, ts, tracking });
    return due;
  }

  /** A camera removed: its next frame, if it comes back, is published. */
  forget(camera: string): void {
    this.last.delete(camera);
  }
}
