import { join } from 'node:path';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { Clock } from '../core/clock.js';
import type { CameraConfig } from '../config/index.js';
import { JsonFile } from '../state/index.js';

/** camera → line → label → direction → crossings. */
type Counts = Record<string, Record<string, Record<string, Record<string, number>>>>;

const level = z.record(z.string(), z.int().min(0));
const fileSchema = z.object({
  version: z.literal(1),
  counts: z.record(z.string(), z.record(z.string(), z.record(z.string(), level))),
});
type CountsFile = z.infer<typeof fileSchema>;

/** The file's name in the state directory. */
export const LINE_COUNTS_FILE = 'line-counts.json';
/** Far above what the lines of a fleet's cameras hold (a few dozen bytes per line, label and direction). */
const MAX_BYTES = 1 << 20;
/** A crash loses at most the crossings of the last second. */
const SAVE_DELAY_MS = 1000;

export interface LineCount {
  camera: string;
  line: string;
  label: string;
  direction: string;
  count: number;
}

/**
 * Cumulative line-crossing counts per camera, line, label and direction, kept across restarts in
 * the state directory (state/json-file.ts writes them crash-safely). A reload that removes a line
 * (or its camera, or renames a direction, or drops a label from the line's `objects`) forgets
 * those counts. At start-up nothing is forgotten: counts of lines this config does not have stay
 * in the file (another config may share the state directory, or a camera may be back later).
 */
export class LineCounts {
  private counts: Counts = {};
  private readonly file: JsonFile<CountsFile> | undefined;

  /** Without a state directory (tools, tests) counts live in memory only. */
  constructor(stateDir: string | undefined, deps: { clock: Clock; log: Logger }) {
    this.file =
      stateDir === undefined
        ? undefined
        : new JsonFile(join(stateDir, LINE_COUNTS_FILE), {
            parse: (data) => fileSchema.parse(data),
            maxBytes: MAX_BYTES,
            delayMs: SAVE_DELAY_MS,
            ...deps,
          });
  }

  /** Reads the saved counts. */
  async load(): Promise<void> {
    this.counts = (await this.file?.load())?.counts ?? {};
  }

  /** Counts one crossing; returns the new total. */
  add(camera: string, line: string, label: string, direction: string): number {
    const byDir = (((this.counts[camera] ??= {})[line] ??= {})[label] ??= {});
    const n = (byDir[direction] ?? 0) + 1;
    byDir[direction] = n;
    this.file?.save({ version: 1, counts: this.counts });
    return n;
  }

  /**
   * Every count of `cameras`' lines: those recorded, and zero for each direction of the labels a
   * line lists in `objects`, so that a subscriber sees every count before the first crossing.
   */
  all(cameras: Record<string, CameraConfig>): LineCount[] {
    const out: LineCount[] = [];
    for (const [camera, cam] of Object.entries(cameras))
      for (const [line, l] of Object.entries(cam.lines)) {
        const labels = new Set([...(l.objects ?? []), ...Object.keys(this.counts[camera]?.[line] ?? {})]);
        for (const label of labels)
          for (const direction of l.directions)
            out.push({
              camera,
              line,
              label,
              direction,
              count: this.counts[camera]?.[line]?.[label]?.[direction] ?? 0,
            });
      }
    return out;
  }

  /** Forgets what `cameras` no longer configures; returns whether anything was forgotten. */
  prune(cameras: Record<string, CameraConfig>): boolean {
    const kept: Counts = {};
    let dropped = false;
    for (const [camera, lines] of Object.entries(this.counts))
      for (const [line, labels] of Object.entries(lines))
        for (const [label, dirs] of Object.entries(labels))
          for (const [direction, n] of Object.entries(dirs)) {
            const l = cameras[camera]?.lines[line];
            if (l && l.directions.includes(direction) && (!l.objects || l.objects.includes(label)))
              (((kept[camera] ??= {})[line] ??= {})[label] ??= {})[direction] = n;
            else dropped = true;
          }
    this.counts = kept;
    if (dropped) this.file?.save({ version: 1, counts: kept });
    return dropped;
  }

  /** Writes what is pending (at stop). */
  flush(): Promise<void> {
    return this.file?.flush() ?? Promise.resolve();
  }
}
