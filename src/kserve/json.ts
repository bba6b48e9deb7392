import type { Datatype } from './protocol.js';
import {
  elementCount,
  INT_RANGES,
  ProtocolError,
  typedArray,
  type NumericArray,
  type Tensor,
} from './tensor.js';

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

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

const isSpace = (c: number | undefined): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
const isDigit = (c: number | undefined): boolean => c !== undefined && c >= ZERO && c <= NINE;

/** Exact powers of ten (up to 1e22 a double holds them exactly). */
const POW10 = Array.from({ length: 23 }, (_, i) => 10 ** i);
const MAX_EXACT = 2 ** 53;

/** What a byte is, for an error message. */
function shown(buf: Buffer, at: number): string {
  if (at >= buf.length) return 'the end';
  return JSON.stringify(buf.toString('latin1', at, at + 1));
}

/** The value of the number scanNumber read last (its return value is where the number ends). */
const scanned = { value: 0 };

/**
 * Reads a JSON number at `at` (its grammar checked: `-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?`).
 * Returns where it ends, or -1 when it is no number; its value is left in `scanned.value`.
 * Numbers of up to 16 significant digits and exponents within ±22 are computed from their digits
 * in one correctly rounded operation (exact: the digits and the power of ten are doubles
 * exactly); the others are given to Number().
 */
function scanNumber(buf: Buffer, at: number): number {
  let i = at;
  const neg = buf[i] === MINUS;
  if (neg) i++;
  let mant = 0;
  let digits = 0;
  let exp = 0;
  let c = buf[i];
  if (c === ZERO) c = buf[++i];
  else if (isDigit(c)) {
    for (; isDigit(c); c = buf[++i]) {
      if (digits < 16) mant = mant * 10 + (c! - ZERO);
      else exp++;
      if (mant !== 0) digits++;
    }
  } else return -1;
  if (c === DOT) {
    c = buf[++i];
    if (!isDigit(c)) return -1;
    for (; isDigit(c); c = buf[++i]) {
      if (digits < 16) {
        mant = mant * 10 + (c! - ZERO);
        exp--;
      }
      if (mant !== 0) digits++;
    }
  }
  if (c === 0x65 || c === 0x45) {
    c = buf[++i];
    const sign = c === MINUS ? -1 : 1;
    if (c === MINUS || c === PLUS) c = buf[++i];
    if (!isDigit(c)) return -1;
    let x = 0;
    for (; isDigit(c); c = buf[++i]) x = Math.min(x * 10 + (c! - ZERO), 100000);
    exp += sign * x;
  }
  if (digits <= 16 && mant < MAX_EXACT && exp >= -22 && exp <= 22) {
    const v = exp >= 0 ? mant * POW10[exp]! : mant / POW10[-exp]!;
    scanned.value = neg ? -v : v;
  } else scanned.value = Number(buf.toString('latin1', at, i));
  return i;
}

/** Where a string that starts at `at` (its quote) ends, just past its closing quote; -1 if it does not. */
function stringEnd(buf: Buffer, at: number): number {
  let from = at + 1;
  for (;;) {
    const q = buf.indexOf(QUOTE, from);
    if (q < 0) return -1;
    let b = q - 1;
    while (buf[b] === BACKSLASH) b--;
    // An even run of backslashes before it: the quote is not escaped.
    if ((q - 1 - b) % 2 === 0) return q + 1;
    from = q + 1;
  }
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
 * every `data` array as a JsonData, to read with tensorFromJson. Throws ProtocolError.
 */
export function parseJson(buf: Buffer): Steps<unknown> {
  return new Reader(buf, 0).document();
}

/** Where the elements go: a typed array, or BYTES' buffers. */
type Out =
  | { kind: 'number'; data: NumericArray; big: boolean }
  | { kind: 'bool'; data: Uint8Array }
  | { kind: 'bytes'; data: Buffer[] };

function output(datatype: Datatype, count: number): Out {
  if (datatype === 'BYTES') return { kind: 'bytes', data: new Array<Buffer>(count) };
  if (datatype === 'BOOL') return { kind: 'bool', data: new Uint8Array(count) };
  // FP16 is kept as float32, as its binary form decodes to.
  const data = datatype === 'FP16' ? new Float32Array(count) : typedArray(datatype, count);
  return { kind: 'number', data, big: datatype === 'INT64' || datatype === 'UINT64' };
}

function skipSpace(buf: Buffer, i: number): number {
  while (isSpace(buf[i])) i++;
  return i;
}

/**
 * Reads one `data` array into its tensor's elements, a stretch at a time (`step`): its state
 * between stretches in fields, its work in locals. Nesting is `dims`: the shape, or `[count]` for
 * flat data; each array at depth d must have dims[d] elements (a flat one is counted to its end).
 */
class DataReader {
  private i: number;
  private depth = 1;
  /** Elements read. */
  private n = 0;
  /** Just past a `[`: an element or `]` comes next, not a comma. */
  private first = true;
  /** Elements of the array open at each depth so far. */
  private readonly counts: number[];
  private readonly range: [number, number] | undefined;

  constructor(
    private readonly what: string,
    private readonly datatype: Datatype,
    private readonly shapeText: string,
    private readonly buf: Buffer,
    start: number,
    private readonly end: number,
    private readonly nested: boolean,
    private readonly dims: readonly number[],
    private readonly out: Out,
    /** Elements kept: the shape's count, or 0 for data too short to hold them. */
    private readonly keep: number,
  ) {
    this.i = start;
    this.counts = new Array<number>(dims.length).fill(0);
    this.range = INT_RANGES[datatype];
  }

  get read(): number {
    return this.n;
  }

  private fail(at: number, why: string): never {
    throw new ProtocolError(`${this.what}: ${why} (byte ${at})`);
  }

  private notA(at: number, expected: string): never {
    const buf = this.buf;
    let stop = at;
    const most = Math.min(this.end, at + 40);
    if (buf[stop] === QUOTE) stop = Math.min(most, Math.max(stringEnd(buf, at), at + 1));
    else
      while (stop < most && buf[stop] !== COMMA && buf[stop] !== CLOSE_ARRAY && !isSpace(buf[stop])) stop++;
    const token = buf.toString('utf8', at, stop);
    return this.fail(at, `element ${this.n} (${token}) is not ${expected}`);
  }

  /** Reads up to byte `stop` (or a little past it); returns whether the array's `]` was reached. */
  step(stop: number): boolean {
    const { buf, dims, counts, nested, out, keep, range } = this;
    const rank = dims.length;
    const numbers = out.kind === 'number' && !out.big ? (out.data as Float64Array) : undefined;
    let { i, depth, n, first } = this;
    try {
      while (i < stop) {
        i = skipSpace(buf, i);
        let c = buf[i];
        const close = c === CLOSE_ARRAY;
        if (!first && !close) {
          if (c !== COMMA) this.fail(i, `${shown(buf, i)} where ',' or ']' should be`);
          i = skipSpace(buf, i + 1);
          c = buf[i];
          if (c === CLOSE_ARRAY) this.fail(i, `',' before ']'`);
        }
        first = false;
        const level = depth - 1;
        if (close) {
          if (!nested && n !== dims[0])
            throw new ProtocolError(
              `${this.what}: ${n} elements of data; shape ${this.shapeText} has ${dims[0]}`,
            );
          if (nested && counts[level] !== dims[level])
            this.fail(
              i,
              `an array at depth ${depth} of the data has ${counts[level]} elements; shape ${this.shapeText} gives it ${dims[level]}`,
            );
          i++;
          if (--depth === 0) return true;
          continue;
        }
        if (nested && counts[level]! >= dims[level]!)
          this.fail(
            i,
            `an array at depth ${depth} of the data has more than the ${dims[level]} elements shape ${this.shapeText} gives it`,
          );
        counts[level]!++;
        if (depth < rank) {
          if (c !== OPEN_ARRAY)
            this.fail(i, `the data is neither flat nor nested as its shape ${this.shapeText}`);
          i++;
          counts[depth] = 0;
          depth++;
          first = true;
          continue;
        }
        if (c === OPEN_ARRAY)
          this.fail(
            i,
            nested
              ? `the data is nested deeper than its shape ${this.shapeText}`
              : `the data is neither flat nor nested as its shape ${this.shapeText}`,
          );
        if (numbers) {
          // The common case inline: a number that fits the datatype.
          const next = c === MINUS || isDigit(c) ? scanNumber(buf, i) : -1;
          const v = scanned.value;
          if (
            next < 0 ||
            !Number.isFinite(v) ||
            (range && !(Number.isInteger(v) && v >= range[0] && v <= range[1]))
          ) {
            this.n = n;
            this.element(i, c, false); // throws, saying why
          }
          if (n < keep) numbers[n] = v;
          i = next;
        } else {
          this.n = n;
          i = this.element(i, c, n < keep);
        }
        n++;
      }
      return false;
    } finally {
      Object.assign(this, { i, depth, n, first });
    }
  }

  /** Reads the element at `at` (its first byte `c`), stored when `store`; returns where it ends. */
  private element(at: number, c: number | undefined, store: boolean): number {
    const { buf, out, n } = this;
    if (out.kind === 'number') {
      const next = c === MINUS || isDigit(c) ? scanNumber(buf, at) : -1;
      const v = scanned.value;
      if (next < 0 || !Number.isFinite(v)) this.notA(at, 'a finite number');
      const range = this.range;
      if (range && !(Number.isInteger(v) && v >= range[0] && v <= range[1]))
        this.notA(at, `a ${this.datatype} integer`);
      if (store) {
        if (out.big) (out.data as BigInt64Array)[n] = BigInt(v);
        else (out.data as Float64Array)[n] = v;
      }
      return next;
    }
    if (out.kind === 'bool') {
      const word = buf.toString('latin1', at, at + (c === 0x66 ? 5 : 4));
      if (word !== 'true' && word !== 'false') this.notA(at, 'true or false');
      if (store) out.data[n] = word === 'true' ? 1 : 0;
      return at + word.length;
    }
    const next = c === QUOTE ? stringEnd(buf, at) : -1;
    if (next < 0 || next > this.end) this.notA(at, 'a string');
    let text: string;
    try {
      text = JSON.parse(buf.toString('utf8', at, next)) as string;
    } catch {
      return this.notA(at, 'a string');
    }
    if (store) out.data[n] = Buffer.from(text, 'utf8');
    return next;
  }
}

/**
 * A tensor from its JSON `data` ("Tensor Data": row-major, flat, or nested exactly as `shape`).
 * Its elements are checked against `datatype` (ranges of integers, `true`/`false`, strings) and
 * written into an array of the shape's size, allocated only once the data is known to have room
 * for that many; nesting is checked as it is read, never deeper than the shape's rank. Pauses
 * every SLICE_BYTES. Throws ProtocolError, saying what is wrong and where.
 */
export function* tensorFromJson(
  name: string,
  datatype: Datatype,
  shape: number[],
  data: unknown,
): Steps<Tensor> {
  const what = `tensor '${name}'`;
  const shapeText = `[${shape.join(', ')}]`;
  if (!(data instanceof JsonData)) throw new ProtocolError(`${what}: "data" is not an array`);
  const count = elementCount(shape, what);
  const { buf, start, end } = data;
  // Each element takes at least a byte and a separator: data too short for the shape is only
  // counted (to say what it holds), nothing allocated for it.
  const keep = count <= (end - start - 1) / 2 ? count : 0;
  const out = output(datatype, keep);
  const first = skipSpace(buf, start + 1);
  // Nested (as the shape) or flat: the first element says which.
  const nested = buf[first] === OPEN_ARRAY;
  if (nested && shape.length < 2)
    throw new ProtocolError(`${what}: the data is nested deeper than its shape ${shapeText}`);
  const reader = new DataReader(
    what,
    datatype,
    shapeText,
    buf,
    start + 1,
    end,
    nested,
    nested ? shape : [count],
    out,
    keep,
  );
  for (let stop = start + SLICE_BYTES; !reader.step(stop); stop += SLICE_BYTES) yield;
  // Data with room for fewer elements than the shape's cannot have matched it; said plainly anyway.
  if (keep !== count)
    throw new ProtocolError(`${what}: ${reader.read} elements of data, too few for shape ${shapeText}`);
  return { name, datatype, shape, data: out.data };
}
