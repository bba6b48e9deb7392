import type { Detection, Frame } from '../core/frame.js';
import { centre, diagonal, letterbox, type Letterbox, type Point } from '../core/geometry.js';
import type { Config } from '../config/index.js';
import type { CacheAnswer, ResultCache } from '../scheduler/index.js';
import { blockDistance, blockHash, GRID, type BlockHash } from './block-hash.js';
import { cellMask, type CellMask } from './cache-mask.js';

/** A camera's `cache_mask` (polygons in source pixels), as the running configuration has it now. */
export type MaskSource = (camera: string) => readonly (readonly Point[])[] | undefined;

/** A camera's cells to ignore, and what they were computed from. */
interface MaskEntry {
  polygons: readonly (readonly Point[])[];
  grid: string;
  cells: CellMask | undefined;
}

const gridKey = (g: Letterbox): string =>
  [g.srcW, g.srcH, g.dstW, g.dstH, g.innerW, g.innerH, g.padLeft, g.padTop].join(',');

interface Reference {
  hash: BlockHash;
  /** The analysed pixels: a later frame carrying the very same buffer shows nothing new. */
  pixels: Buffer;
  /** Capture time of the analysed frame. */
  ts: number;
  detections: Detection[];
  /** Something moved between the camera's last two analysed frames (see `moved`). */
  moving: boolean;
}

export type CacheDecision =
  | {
      hit: true;
      detections: Detection[];
      distance: number;
      age: number;
      samePixels: boolean;
      /** The result is older than `max_age_s`: answered from it, the scene is to be analysed afresh. */
      refresh: boolean;
    }
  | { hit: false; reason: 'disabled' | 'empty' | 'changed' | 'older' | 'moving'; distance?: number };

/** Detections at least this confident decide whether a scene moves (flicker below it does not). */
export const MOVING_SCORE = 0.5;
/** A box whose centre moved more than this fraction of its diagonal between two analysed frames moved. */
export const MOVING_SHIFT = 0.05;

/** Whether each confident box of `a` has a box of the same label in `b` within MOVING_SHIFT of it. */
function allStill(a: readonly Detection[], b: readonly Detection[]): boolean {
  return a.every((d) => {
    if (d.score < MOVING_SCORE) return true;
    const [x, y] = centre(d.box);
    const limit = MOVING_SHIFT * diagonal(d.box);
    return b.some(
      (e) => e.label === d.label && Math.hypot(centre(e.box)[0] - x, centre(e.box)[1] - y) <= limit,
    );
  });
}

/**
 * Whether anything moved between two analysed results of a camera: a confident object that
 * appeared, left, or whose box's centre shifted by more than MOVING_SHIFT of its diagonal. The
 * same picture analysed again gives the same boxes (to a pixel or two through a camera's
 * compression noise), so a still scene reads as still.
 */
export function moved(before: readonly Detection[], after: readonly Detection[]): boolean {
  return !allStill(after, before) || !allStill(before, after);
}

/**
 * Per camera, the last frame the model analysed and its result. A new frame whose hash is
 * within `max_distance` of it reuses the result — unless the camera's last two analysed frames
 * show something moving (`moved`): then every frame is analysed until two in a row agree again.
 * Once the result is `max_age_s` old, a frame that reuses it also asks for a fresh analysis
 * (`refresh`): the scheduler queues that frame for the model once more, and the camera's frames
 * go on being answered from the old result until the fresh one is stored. So a still scene is
 * looked at again every `max_age_s`, and never goes unanswered while the detector is busy. A small or distant object moving slowly
 * changes too few cells of the hash to be seen by it, and the cache would freeze it in place;
 * the detector sees it.
 *
 * A frame whose pixels are the analysed frame's own (ingest found nothing changed in the picture
 * since: the same buffer) reuses the result whatever its age and the moving rule: the model
 * would be given the same input again.
 *
 * A frame is hashed by its thumbnail when it has one (ingest's, from ffmpeg: a pixel per cell of
 * the grid), else by its pixels; once each: a frame looked up on arrival and again when its turn
 * comes (or stored after its analysis) is not hashed twice.
 *
 * A camera's `cache_mask` leaves the cells its polygons overlap out of the distance (cellMask): a
 * swaying tree in a corner of a still scene no longer counts as a change. The masks are read
 * from `masks` (the running configuration) at each decision, and a camera's cells computed again
 * whenever its polygons (a reload, a mode) or its frames' geometry change; the stored hashes are
 * whole, so a new mask applies from the next frame on. Detections inside the mask still count
 * for the moving rule: an object moving there is analysed, as anywhere.
 */
export class FrameCache implements ResultCache {
  private refs = new Map<string, Reference>();
  private hashes = new WeakMap<Frame, BlockHash>();
  private masks = new Map<string, MaskEntry>();

  // picture_threshold is ingest's: what ffmpeg sends.
  constructor(
    private readonly cfg: Omit<Config['cache'], 'picture_threshold'>,
    private readonly maskOf: MaskSource = () => undefined,
  ) {}

  get enabled(): boolean {
    return this.cfg.enabled;
  }

  private hash(frame: Frame): BlockHash {
    let h = this.hashes.get(frame);
    if (!h) {
      h = frame.thumb ? blockHash(frame.thumb, GRID) : blockHash(frame.data, frame.geometry.dstW);
      this.hashes.set(frame, h);
    }
    return h;
  }

  /** The cells of `frame`'s hash its camera's `cache_mask` covers, if any. */
  private ignored(frame: Frame): CellMask | undefined {
    const polygons = this.maskOf(frame.camera);
    if (!polygons?.length) {
      this.masks.delete(frame.camera);
      return undefined;
    }
    // A thumbnail is letterboxed at its own size (see cellMask).
    const g = frame.thumb ? letterbox(frame.geometry.srcW, frame.geometry.srcH, GRID) : frame.geometry;
    const grid = gridKey(g);
    let m = this.masks.get(frame.camera);
    if (!m || m.polygons !== polygons || m.grid !== grid) {
      m = { polygons, grid, cells: cellMask(polygons, g) };
      this.masks.set(frame.camera, m);
    }
    return m.cells;
  }

  /** Whether `frame` may reuse its camera's last result, and why not. */
  decide(frame: Frame): CacheDecision {
    const c = this.cfg;
    if (!c.enabled) return { hit: false, reason: 'disabled' };
    const ref = this.refs.get(frame.camera);
    if (!ref) return { hit: false, reason: 'empty' };
    const age = frame.ts - ref.ts;
    if (frame.data === ref.pixels && age >= 0)
      return { hit: true, detections: ref.detections, distance: 0, age, samePixels: true, refresh: false };
    // A frame captured before the reference (a batch that finished out of order).
    if (age < 0) return { hit: false, reason: 'older' };
    if (ref.moving && c.analyse_moving) return { hit: false, reason: 'moving' };
    const distance = blockDistance(this.hash(frame), ref.hash, c.cell_threshold, this.ignored(frame));
    if (distance > c.max_distance) return { hit: false, reason: 'changed', distance };
    const refresh = age > c.max_age_s * 1000;
    return { hit: true, detections: ref.detections, distance, age, samePixels: false, refresh };
  }

  lookup(frame: Frame): CacheAnswer | undefined {
    const d = this.decide(frame);
    return d.hit ? { detections: d.detections, refresh: d.refresh } : undefined;
  }

  /** Records an analysed frame as its camera's reference (ignoring results older than it). */
  store(frame: Frame, detections: Detection[]): void {
    if (!this.cfg.enabled) return;
    const ref = this.refs.get(frame.camera);
    if (ref && ref.ts > frame.ts) return;
    const moving = ref !== undefined && moved(ref.detections, detections);
    this.refs.set(frame.camera, {
      hash: this.hash(frame),
      pixels: frame.data,
      ts: frame.ts,
      detections,
      moving,
    });
  }

  forget(camera: string): void {
    this.refs.delete(camera);
    this.masks.delete(camera);
  }
}
