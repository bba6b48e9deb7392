import { join } from 'node:path';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { Clock } from '../core/clock.js';
import { namedRecord, own } from '../core/names.js';
import type { CameraConfig } from '../config/index.js';
import { areaLabels } from '../publish/index.js';
import { JsonFile, LINE_COUNTS_FILE } from '../state/index.js';

/** camera → line → label → direction → crossings. */
type Counts = Map<string, Map<string, Map<string, Map<string, number>>>>;

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * One level of the file's counts, read by its own keys: a name such as `__proto__` (which
 * JSON.parse keeps as an own key) stays a name. zod's record would drop it, and copying it
 * into `{}` would set the prototype instead.
 */
function level<T>(v: unknown, path: string, inner: (v: unknown, path: string) => T): Map<string, T> {
  if (!isObject(v)) throw new Error(`${path}: expected an object`);
  return new Map(Object.entries(v).map(([k, x]) => [k, inner(x, `${path}.${k}`)]));
}

function crossingsAt(v: unknown, path: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0)
    throw new Error(`${path}: expected a whole number of crossings`);
  return v;
}

const fileSchema = z.object({ version: z.literal(1), counts: z.unknown() });

/** What the file holds, checked: throws (naming the key) when it is not a line counts file. */
function parseCounts(data: unknown): Counts {
  const { counts } = fileSchema.parse(data);
  return level(counts, 'counts', (lines, p) =>
    level(lines, p, (labels, p) => level(labels, p, (dirs, p) => level(dirs, p, crossingsAt))),
  );
}

/** A map as an object without a prototype (core/names.ts), each value made by `f`. */
function record<V, T>(m: ReadonlyMap<string, V>, f: (v: V) => T): Record<string, T> {
  const out = namedRecord<T>();
  for (const [k, v] of m) out[k] = f(v);
  return out;
}

/** The file's document: `{ version: 1, counts: { camera: { line: { label: { direction: n } } } } }`. */
const toFile = (counts: Counts): unknown => ({
  version: 1,
  counts: record(counts, (lines) =>
    record(lines, (labels) => record(labels, (dirs) => record(dirs, (n) => n))),
  ),
});

/** `m.get(key)`, a new map set first when there is none. */
function child<V>(m: Map<string, Map<string, V>>, key: string): Map<string, V> {
  let c = m.get(key);
  if (!c) m.set(key, (c = new Map<string, V>()));
  return c;
}

/** The file's name in the state directory (state/layout.ts). */
export { LINE_COUNTS_FILE };
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
  private counts: Counts = new Map();
  private readonly file: JsonFile<Counts> | undefined;
  private readonly defaultLabels: () => readonly string[];
  private readonly onChange: (camera: string) => void;

  /**
   * Without a state directory (tools, tests) counts live in memory only. `defaultLabels`: the
   * labels Home Assistant has entities for (`default_labels`), a line's labels on a camera that
   * tracks every label.
   */
  constructor(
    stateDir: string | undefined,
    {
      defaultLabels,
      onChange,
      ...deps
    }: {
      clock: Clock;
      log: Logger;
      defaultLabels?: () => readonly string[];
      /** A camera's counts changed (a crossing, a reset): with `fleet:`, written to etcd. */
      onChange?: (camera: string) => void;
    },
  ) {
    this.defaultLabels = defaultLabels ?? (() => []);
    this.onChange = onChange ?? (() => undefined);
    this.file =
      stateDir === undefined
        ? undefined
        : new JsonFile(join(stateDir, LINE_COUNTS_FILE), {
            parse: parseCounts,
            serialize: toFile,
            maxBytes: MAX_BYTES,
            delayMs: SAVE_DELAY_MS,
            ...deps,
          });
  }

  /** Reads the saved counts. */
  async load(): Promise<void> {
    const none: Counts = new Map();
    this.counts = (await this.file?.load()) ?? none;
  }

  /** The cameras the counts are of (those of other configs and removed cameras too, until a reload prunes them). */
  cameras(): string[] {
    return [...this.counts.keys()].sort();
  }

  /** Counts one crossing; returns the new total. */
  add(camera: string, line: string, label: string, direction: string): number {
    const byDir = child(child(child(this.counts, camera), line), label);
    const n = (byDir.get(direction) ?? 0) + 1;
    byDir.set(direction, n);
    this.file?.save(this.counts);
    this.onChange(camera);
    return n;
  }

  /**
   * Every count of `cameras`' lines: those recorded, and zero for each direction of the line's
   * labels not counted yet (its `objects`, or without them the labels the camera tracks, or on a
   * camera that tracks every label `defaultLabels`: those Home Assistant has count sensors for),
   * so that a subscriber sees every count before the first crossing. A count recorded (restored
   * from the state directory) is never given as 0.
   */
  all(cameras: Record<string, CameraConfig>): LineCount[] {
    const out: LineCount[] = [];
    const defaults = this.defaultLabels();
    for (const [camera, cam] of Object.entries(cameras))
      for (const [line, l] of Object.entries(cam.lines)) {
        const counted = this.counts.get(camera)?.get(line);
        const labels = new Set([
          ...(l.objects ?? []),
          ...areaLabels(l.objects, cam, defaults),
          ...(counted?.keys() ?? []),
        ]);
        for (const label of labels)
          for (const direction of l.directions)
            out.push({ camera, line, label, direction, count: counted?.get(label)?.get(direction) ?? 0 });
      }
    return out;
  }

  /** Forgets what `cameras` no longer configures; returns whether anything was forgotten. */
  prune(cameras: Record<string, CameraConfig>): boolean {
    const kept: Counts = new Map();
    let dropped = false;
    for (const [camera, lines] of this.counts)
      for (const [line, labels] of lines)
        for (const [label, dirs] of labels)
          for (const [direction, n] of dirs) {
            const l = own(own(cameras, camera)?.lines, line);
            if (l && l.directions.includes(direction) && (!l.objects || l.objects.includes(label)))
              child(child(child(kept, camera), line), label).set(direction, n);
            else dropped = true;
          }
    this.counts = kept;
    if (dropped) this.file?.save(kept);
    return dropped;
  }

  /** Sets every count of a line back to 0 (a reset asked for at run time); returns them. */
  reset(camera: string, line: string, cam: CameraConfig): LineCount[] {
    // Every count the line had goes to 0, also those of labels the line does not list.
    const zeros = this.all({ [camera]: { ...cam, lines: { [line]: cam.lines[line]! } } });
    this.counts.get(camera)?.delete(line);
    this.file?.save(this.counts);
    this.onChange(camera);
    return zeros.map((c) => ({ ...c, count: 0 }));
  }

  /** One camera's counts as JSON, `{ line: { label: { direction: n } } }` (what a fleet keeps in etcd). */
  cameraCounts(camera: string): string {
    const lines = this.counts.get(camera) ?? new Map<string, Map<string, Map<string, number>>>();
    return JSON.stringify(record(lines, (labels) => record(labels, (dirs) => record(dirs, (n) => n))));
  }

  /**
   * Replaces one camera's counts with those of `cameraCounts` (another box's, taken over with the
   * camera); throws, naming the key, on a document that is no camera's counts.
   */
  adopt(camera: string, json: string): void {
    const lines = level(JSON.parse(json), camera, (labels, p) =>
      level(labels, p, (dirs, p) => level(dirs, p, crossingsAt)),
    );
    if (lines.size) this.counts.set(camera, lines);
    else this.counts.delete(camera);
    this.file?.save(this.counts);
  }

  /** Writes what is pending (at stop). */
  flush(): Promise<void> {
    return this.file?.flush() ?? Promise.resolve();
  }
}
