/**
 * A bounded per-camera frame queue. `push` never blocks and never fails: when the queue is
 * full the oldest frame is dropped (a live camera's newest frame is worth the most), and every
 * drop is counted by reason.
 */
export type DropReason = 'full' | 'stale';

export interface Timestamped {
  ts: number;
}

export class FrameQueue<T extends Timestamped> {
  private items: (T | undefined)[];
  private head = 0;
  private size = 0;
  pushed = 0;

  /**
   * `uncounted`: items whose drop is not a frame lost (the scheduler's cache refreshes);
   * `dropped`: where drops are counted (a camera's, kept across the queues it has over time).
   */
  constructor(
    readonly capacity: number,
    private readonly uncounted: (item: T) => boolean = () => false,
    readonly dropped: Record<DropReason, number> = { full: 0, stale: 0 },
  ) {
    if (!Number.isInteger(capacity) || capacity < 1)
      throw new RangeError(`queue capacity must be a positive integer, got ${capacity}`);
    this.items = new Array<T | undefined>(capacity);
  }

  get length(): number {
    return this.size;
  }

  /** Adds a frame; returns the frame it dropped to make room, if any. */
  push(item: T): T | undefined {
    this.pushed++;
    let evicted: T | undefined;
    if (this.size === this.capacity) {
      evicted = this.shift()!;
      if (!this.uncounted(evicted)) this.dropped.full++;
    }
    this.items[(this.head + this.size) % this.capacity] = item;
    this.size++;
    return evicted;
  }

  /** The oldest frame, or undefined. */
  peek(): T | undefined {
    return this.size ? this.items[this.head] : undefined;
  }

  shift(): T | undefined {
    if (!this.size) return undefined;
    const item = this.items[this.head];
    this.items[this.head] = undefined;
    this.head = (this.head + 1) % this.capacity;
    this.size--;
    return item;
  }

  /** Drops frames captured before `cutoff`; returns how many. */
  dropOlderThan(cutoff: number, onDrop?: (item: T) => void): number {
    let n = 0;
    while (this.size && this.items[this.head]!.ts < cutoff) {
      const item = this.shift()!;
      if (!this.uncounted(item)) this.dropped.stale++;
      n++;
      onDrop?.(item);
    }
    return n;
  }

  /** Empties the queue (e.g. the camera was removed); these are not counted as drops. */
  clear(): void {
    while (this.size) this.shift();
  }
}
