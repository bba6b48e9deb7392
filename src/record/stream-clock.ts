/** A jump of the stream's timestamps against the wall clock beyond this (ms) starts another epoch. */
const JUMP_MS = 10_000;
/** The offset is the least delay seen over the last one or two windows of this long (ms). */
const WINDOW_MS = 10_000;
/**
 * When the camera sent each frame, from its timestamps. Frames reach the ring late by a varying
 * delay, and in bursts: at a connection ffmpeg holds the first seconds of the stream while it
 * works out the stream and its filters, then writes them at once. A frame's decode time on the
 * stream's clock plus an offset is its wall time; the offset is the least (arrival − decode time)
 * over the last 10–20 s (the frame that came with the least delay; a window, so a camera's clock
 * running slower or faster than this machine's is followed). A jump in the stream's timestamps
 * (another clock after a camera's restart within one connection) starts another epoch.
 */
export class StreamClock {
  private cur = Infinity;
  private prev = Infinity;
  private since = -Infinity;
  epoch = 0;

  get offset(): number {
    return Math.min(this.cur, this.prev);
  }

  /** A frame of decode time `dts` (stream ms) arrived at `now`; whether the offset went down. */
  see(dts: number, now: number): boolean {
    const d = now - dts;
    const before = this.offset;
    if (Number.isFinite(before) && Math.abs(d - before) > JUMP_MS) {
      this.epoch++;
      this.cur = this.prev = d;
      this.since = now;
      return false;
    }
    if (now - this.since >= WINDOW_MS) {
      this.prev = this.cur;
      this.cur = d;
      this.since = now;
    } else this.cur = Math.min(this.cur, d);
    return this.offset < before;
  }
}
