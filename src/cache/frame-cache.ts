import type { Detection, Frame } from '../core/frame.js';
import type { Config } from '../config/index.js';
import type { ResultCache } from '../scheduler/index.js';
import { blockDistance, blockHash, type BlockHash } from './block-hash.js';

interface Reference {
  hash: BlockHash;
  /** Capture time of the analysed frame. */
  ts: number;
  detections: Detection[];
}

export type CacheDecision =
  | { hit: true; detections: Detection[]; distance: number; age: number }
  | { hit: false; reason: 'disabled' | 'empty' | 'changed' | 'expired'; distance?: number };

/**
 * Per camera, the last frame the model analysed and its result. A new frame whose hash is
 * within `max_distance` of it, and no older than `max_age_s` after it, reuses the result.
 * Frames are hashed here, once each: a frame looked up on arrival and again when its turn comes
 * (or stored after its analysis) is not hashed twice.
 */
export class FrameCache implements ResultCache {
  private refs = new Map<string, Reference>();
  private hashes = new WeakMap<Frame, BlockHash>();

  constructor(private readonly cfg: Config['cache']) {}

  get enabled(): boolean {
    return this.cfg.enabled;
  }

  private hash(frame: Frame): BlockHash {
    let h = this.hashes.get(frame);
    if (!h) {
      h = blockHash(frame.data, frame.geometry.dstW);
      this.hashes.set(frame, h);
    }
    return h;
  }

  /** Whether `frame` may reuse its camera's last result, and why not. */
  decide(frame: Frame): CacheDecision {
    const c = this.cfg;
    if (!c.enabled) return { hit: false, reason: 'disabled' };
    const ref = this.refs.get(frame.camera);
    if (!ref) return { hit: false, reason: 'empty' };
    const age = frame.ts - ref.ts;
    // Whatever it looks like, a scene is analysed again once the result is max_age old.
    if (age > c.max_age_s * 1000 || age < 0) return { hit: false, reason: 'expired' };
    const distance = blockDistance(this.hash(frame), ref.hash, c.cell_threshold);
    if (distance > c.max_distance) return { hit: false, reason: 'changed', distance };
    return { hit: true, detections: ref.detections, distance, age };
  }

  lookup(frame: Frame): Detection[] | undefined {
    const d = this.decide(frame);
    return d.hit ? d.detections : undefined;
  }

  /** Records an analysed frame as its camera's reference (ignoring results older than it). */
  store(frame: Frame, detections: Detection[]): void {
    if (!this.cfg.enabled) return;
    const ref = this.refs.get(frame.camera);
    if (ref && ref.ts > frame.ts) return;
    this.refs.set(frame.camera, { hash: this.hash(frame), ts: frame.ts, detections });
  }

  forget(camera: string): void {
    this.refs.delete(camera);
  }
}
