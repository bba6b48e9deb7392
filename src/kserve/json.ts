import {
  CLOSE_ARRAY,
  CLOSE_OBJECT,
  COLON,
  COMMA,
  isSpace,
  OPEN_ARRAY,
  OPEN_OBJECT,
  QUOTE,
  scanNumber,
  scanned,
  shown,
  stringEnd,
} from './json-scan.js';
import { ProtocolError } from './tensor.js';

/**
 * The JSON of an inference body, read within bounds. `JSON.parse` would make a JS value of every
 * element of a tensor's `data` (measured: a 9.3 MiB body of pixels grew the server's RSS by
 * 174 MB and held its event loop for 0.67 s; eight at once, 690 MB and 1.6 s), and data nested
 * 100,000 deep overflowed the stack when flattened. Here the JSON
 * around the tensors (at most MAX_SKELETON bytes, MAX_DEPTH deep) is read into values, and each
 * `data` array is only located (a JsonData); it is read later, once its tensor's datatype and
 * shape are known and accepted, straight into a typed array of exactly the shape's size, its
 * nesting checked against the shape as it goes. So a body costs its bytes plus its tensors' own
 * size, never more. Reading is in steps (generators): run at once (runSteps), or with the event
 * loop let in every SLICE_BYTES bytes (runStepsYielding).
 */

/** A reading that may pause: each `yield` is a point where the event loop may run. */
export type Steps<T> = Generator<void, T, void>;

/** Bytes read between two pauses: about 2 ms of work (7–9 ms a MiB on a 2-core VM). */
export const SLICE_BYTES = 256 * 1024;
/** Nesting of the JSON around the tensors' data. */
export const MAX_DEPTH = 32;
/** Bytes of the JSON apart from its tensors' data: an inference request needs a few hundred. */
export const MAX_SKELETON = 64 * 1024;

/** Runs steps to their end at once. */
export function runSteps<T>(steps: Steps<T>): T {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/** Runs steps, letting the event loop run (timers, I/O, other requests) at every pause. */
export async function runStepsYielding<T>(steps: Steps<T>): Promise<T> {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** A tensor's `data` array, not read yet: where it lies in the body. */
export class JsonData {
  constructor(
    readonly buf: Buffer,
    /** Its `[`. */
    readonly start: number,
    /** Just past its `]`. */
    readonly end: number,
  ) {}
}

class Reader {
  pos: number;
  /** Bytes of the data arrays skipped so far (not counted against MAX_SKELETON). */
  private dataBytes = 0;
  private pauseAt: number;

  constructor(
    readonly buf: Buffer,
    private readonly start: number,
  ) {
    this.pos = start;
    this.pauseAt = start + SLICE_BYTES;
  }

  fail(why: string): never {
    throw new ProtocolError(`the body's JSON does not parse: ${why} at byte ${this.pos}`);
  }

  private get skeletonLeft(): number {
    return MAX_SKELETON - (this.pos - this.start - this.dataBytes);
  }

  private checkSize(): void {
    if (this.skeletonLeft < 0)
      throw new ProtocolError(
        `the body's JSON is over ${MAX_SKELETON} bytes apart from its tensors' "data"; send large tensors as binary data`,
      );
  }

  private space(): void {
    const stop = Math.min(this.buf.length, this.pos + Math.max(0, this.skeletonLeft) + 1);
    while (this.pos < stop && isSpace(this.buf[this.pos])) this.pos++;
    this.checkSize();
  }

  /** The whole text: one value, nothing but spaces after it. */
  *document(): Steps<unknown> {
    const v = yield* this.value(0, undefined);
    this.space();
    if (this.pos < this.buf.length) this.fail(`${shown(this.buf, this.pos)} after the value`);
    return v;
  }

  private *value(depth: number, key: string | undefined): Steps<unknown> {
    this.space();
    const c = this.buf[this.pos];
    if (c === OPEN_ARRAY && key === 'data') return yield* this.skipData();
    if ((c === OPEN_ARRAY || c === OPEN_OBJECT) && depth >= MAX_DEPTH)
      throw new ProtocolError(
        `the body's JSON is nested deeper than ${MAX_DEPTH} levels (tensor data aside)`,
      );
    if (c === OPEN_OBJECT) return yield* this.object(depth + 1);
    if (c === OPEN_ARRAY) return yield* this.array(depth + 1);
    if (c === QUOTE) return this.string();
    if (c === 0x74) return this.literal('true', true);
    if (c === 0x66) return this.literal('false', false);
    if (c === 0x6e) return this.literal('null', null);
    const end = scanNumber(this.buf, this.pos);
    if (end < 0) this.fail(`unexpected ${shown(this.buf, this.pos)}`);
    this.pos = end;
    this.checkSize();
    return scanned.value;
  }

  private literal<T>(word: string, v: T): T {
    if (this.buf.toString('latin1', this.pos, this.pos + word.length) !== word)
      this.fail(`unexpected ${shown(this.buf, this.pos)}`);
    this.pos += word.length;
    return v;
  }

  private string(): string {
    const end = stringEnd(this.buf, this.pos);
    if (end < 0) this.fail('a string with no end');
    const at = this.pos;
    this.pos = end;
    this.checkSize();
    try {
      return JSON.parse(this.buf.toString('utf8', at, end)) as string;
    } catch {
      this.pos = at;
      return this.fail('a string with a bad escape or a control character');
    }
  }

  private *object(depth: number): Steps<Record<string, unknown>> {
    const o: Record<string, unknown> = {};
    this.pos++;
    this.space();
    if (this.buf[this.pos] === CLOSE_OBJECT) {
      this.pos++;
      return o;
    }
    for (;;) {
      this.space();
      if (this.buf[this.pos] !== QUOTE) this.fail(`${shown(this.buf, this.pos)} where a key should be`);
      const key = this.string();
      this.space();
      if (this.buf[this.pos] !== COLON) this.fail(`${shown(this.buf, this.pos)} where ':' should be`);
      this.pos++;
      const v = yield* this.value(depth, key);
      // As JSON.parse does: a key such as "__proto__" is a key like any other.
      Object.defineProperty(o, key, { value: v, writable: true, enumerable: true, configurable: true });
      this.space();
      const c = this.buf[this.pos++];
      if (c === CLOSE_OBJECT) return o;
      if (c !== COMMA) this.fail(`${shown(this.buf, --this.pos)} where ',' or '}' should be`);
    }
  }

  private *array(depth: number): Steps<unknown[]> {
    const a: unknown[] = [];
    this.pos++;
    this.space();
    if (this.buf[this.pos] === CLOSE_ARRAY) {
      this.pos++;
      return a;
    }
    for (;;) {
      a.push(yield* this.value(depth, undefined));
      this.space();
      const c = this.buf[this.pos++];
      if (c === CLOSE_ARRAY) return a;
      if (c !== COMMA) this.fail(`${shown(this.buf, --this.pos)} where ',' or ']' should be`);
    }
  }

  /** Finds where a `data` array ends (strings skipped whole), pausing every SLICE_BYTES. */
  private *skipData(): Steps<JsonData> {
    const start = this.pos;
    const at = { i: start, depth: 0 };
    for (;;) {
      const stop = Math.max(this.pauseAt, at.i + 1);
      if (skipArray(this.buf, at, stop)) break;
      if (at.i < 0 || at.i >= this.buf.length) {
        this.pos = this.buf.length;
        this.fail('an array with no end');
      }
      yield;
      this.pauseAt = at.i + SLICE_BYTES;
    }
    this.pos = at.i;
    this.dataBytes += at.i - start;
    return new JsonData(this.buf, start, at.i);
  }
}

/**
 * Scans an array from `at.i` (at bracket depth `at.depth`) up to `stop`, strings skipped whole;
 * returns whether its `]` was reached (`at.i` then just past it). `at.i` is -1 for a string with
 * no end.
 */
function skipArray(buf: Buffer, at: { i: number; depth: number }, stop: number): boolean {
  let { i, depth } = at;
  const end = Math.min(stop, buf.length);
  while (i < end) {
    const c = buf[i];
    if (c === QUOTE) {
      i = stringEnd(buf, i);
      if (i < 0) break;
    } else {
      i++;
      if (c === OPEN_ARRAY) depth++;
      else if (c === CLOSE_ARRAY && --depth === 0) {
        at.i = i;
        return true;
      }
    }
  }
  at.i = i;
  at.depth = depth;
  return false;
}

/**
 * Reads the JSON in `buf` (all of it): objects, arrays and scalars as JSON.parse makes them, but
 * every `data` array as a JsonData, to read with tensorFromJson (json-data.ts). Throws ProtocolError.
 */
export function parseJson(buf: Buffer): Steps<unknown> {
  return new Reader(buf, 0).document();
}
