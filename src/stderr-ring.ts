import { scrub } from './redact.js';

/**
 * The last lines of a child process's stderr (a camera's ffmpeg, a clip's remux), passwords
 * scrubbed as they come in. A line `tap` takes (returns true for: the frame-time probes, several
 * a frame) is neither kept nor returned.
 */
export class StderrRing {
  private lines: string[] = [];
  private carry = '';

  constructor(
    private readonly capacity = 100,
    private readonly secrets: readonly string[] = [],
    private readonly tap?: (line: string) => boolean,
  ) {}

  /** Feeds raw stderr text; returns the complete lines it contained (scrubbed), but those tapped. */
  push(text: string): string[] {
    const parts = (this.carry + text).split(/\r?\n|\r/);
    this.carry = parts.pop() ?? '';
    if (this.carry.length > 4096) {
      parts.push(this.carry);
      this.carry = '';
    }
    const out: string[] = [];
    for (const raw of parts) {
      if (!raw.trim() || this.tap?.(raw)) continue;
      const line = scrub(raw, this.secrets);
      out.push(line);
      this.lines.push(line);
    }
    if (this.lines.length > this.capacity) this.lines.splice(0, this.lines.length - this.capacity);
    return out;
  }

  get(): string[] {
    return this.carry.trim() ? [...this.lines, scrub(this.carry, this.secrets)] : [...this.lines];
  }
}
