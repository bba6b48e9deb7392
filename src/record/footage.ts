/**
 * What each camera's recording must keep: the time ranges of events' footage, by event id
 * (pure). Events set and release them; each camera's ring asks for its own when it evicts, so
 * footage is written once and kept while any event needs it, and freed when none does.
 */
import type { Segment, TimeRange } from './ring-index.js';

/**
 * Segments of a camera's recording are about to be removed: what must first be kept of them
 * (an event's snapshot frame, issue 47), as a promise the removal waits for, which resolves with
 * those of them that must stay (what they hold could not be kept yet); undefined: nothing.
 * `final`: they go whatever the rescue says (a segment short of its bytes): none can stay, so
 * what cannot be kept now is lost, not held or put off.
 */
export type Rescue = (
  camera: string,
  segments: readonly Segment[],
  final?: boolean,
) => Promise<readonly Segment[] | void> | undefined;

export class FootageRanges {
  private byCamera = new Map<string, Map<string, TimeRange>>();
  private cameraOf = new Map<string, string>();
  /** What the events keep of segments before they go (set by the events; absent: nothing). */
  rescue: Rescue | undefined;
  /**
   * The cameras the events' history holds events of (set by the events; absent: none): at start,
   * those no longer configured whose recording an earlier run left have it retired.
   */
  cameras: (() => Iterable<string>) | undefined;

  /** Event `id` of `camera` needs `from`–`to` (ms since the epoch; `to` Infinity while it goes on). */
  set(camera: string, id: string, from: number, to: number): void {
    const was = this.cameraOf.get(id);
    if (was !== undefined && was !== camera) this.byCamera.get(was)?.delete(id);
    let ranges = this.byCamera.get(camera);
    if (!ranges) this.byCamera.set(camera, (ranges = new Map<string, TimeRange>()));
    ranges.set(id, [from, to]);
    this.cameraOf.set(id, camera);
  }

  /** Event `id` needs no footage any more (deleted, evicted from the history, past retention). */
  release(id: string): void {
    const camera = this.cameraOf.get(id);
    if (camera === undefined) return;
    this.cameraOf.delete(id);
    const ranges = this.byCamera.get(camera);
    ranges?.delete(id);
    if (ranges?.size === 0) this.byCamera.delete(camera);
  }

  /** The ranges a camera's recording must keep. */
  of(camera: string): Iterable<TimeRange> {
    return this.byCamera.get(camera)?.values() ?? [];
  }

  /** Every event holding footage, with its camera and range. */
  *entries(): Iterable<{ id: string; camera: string; range: TimeRange }> {
    for (const [camera, ranges] of this.byCamera)
      for (const [id, range] of ranges) yield { id, camera, range };
  }

  /** How many events hold footage. */
  get size(): number {
    return this.cameraOf.size;
  }
}
