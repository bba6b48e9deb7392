import type { Datatype } from './protocol.js';
import {
  CLOSE_ARRAY,
  COMMA,
  isDigit,
  isSpace,
  MINUS,
  OPEN_ARRAY,
  QUOTE,
  scanNumber,
  scanned,
  shown,
  skipSpace,
  stringEnd,
} from './json-scan.js';
import { JsonData, SLICE_BYTES, type Steps } from './json.js';
import {
  elementCount,
  INT_RANGES,
  ProtocolError,
  typedArray,
  type NumericArray,
  type Tensor,
} from './tensor.js';

/**
 * A tensor's JSON `data`, located by parseJson (json.ts), read into its elements: checked against
 * its datatype and nested as its shape, a stretch at a time.
 */

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
