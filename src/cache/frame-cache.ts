import type { Detection } from '../detector/results.js';
import { blockDistance, type BlockHash } from './block-hash.js';

export interface CacheSettings {
  enabled: boolean;
  /** Most cells allowed to change for a frame to count as unchanged. */
  maxDistance: number;
  /** Brightness difference (0..255) above which a cell counts as changed. */
  cellThreshold: number;
  maxAgeMs: number;
}

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
 * within `maxDistance` of it, and no older than `maxAgeMs` after it, reuses the result.
 */
export class FrameCache {
  private refs = new Map<string, Reference>();

  constructor(private readonly settings: CacheSettings) {}

  get enabled(): boolean {
    return this.settings.enabled;
  }

  lookup(camera: string, hash: BlockHash, ts: number): CacheDecision {
    const s = this.settings;
    if (!s.enabled) return { hit: false, reason: 'disabled' };
    const ref = this.refs.get(camera);
    if (!ref) return { hit: false, reason: 'empty' };
    const age = ts - ref.ts;
    // Whatever it looks like, a scene is analysed again once the result is max_age old.
    if (age > s.maxAgeMs || age < 0) return { hit: false, reason: 'expired' };
    const distance = blockDistance(hash, ref.hash, s.cellThreshold);
    if (distance > s.maxDistance) return { hit: false, reason: 'changed', distance };
    return { hit: true, detections: ref.detections, distance, age };
  }

  /** Records an analysed frame as its camera's reference (ignoring results older than it). */
  store(camera: string, hash: BlockHash, ts: number, detections: Detection[]): void {
    if (!this.settings.enabled) return;
    const ref = this.refs.get(camera);
    if (ref && ref.ts > ts) return;
    this.refs.set(camera, { hash, ts, detections });
  }

  forget(camera: string): void {
    this.refs.delete(camera);
  }
}
