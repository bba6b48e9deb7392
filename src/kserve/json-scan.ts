/**
 * The bytes of JSON, read where they lie in a buffer: its punctuation, numbers (scanNumber, its
 * grammar checked, its value exact where the digits allow) and strings (where one ends). What the
 * JSON around tensors (json.ts) and their data arrays (json-data.ts) are both read with.
 */

export const QUOTE = 0x22;
const BACKSLASH = 0x5c;
export const COMMA = 0x2c;
export const COLON = 0x3a;
export const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;
export const OPEN_ARRAY = 0x5b;
export const CLOSE_ARRAY = 0x5d;
export const OPEN_OBJECT = 0x7b;
export const CLOSE_OBJECT = 0x7d;

export const isSpace = (c: number | undefined): boolean =>
  c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
export const isDigit = (c: number | undefined): boolean => c !== undefined && c >= ZERO && c <= NINE;

/** Exact powers of ten (up to 1e22 a double holds them exactly). */
const POW10 = Array.from({ length: 23 }, (_, i) => 10 ** i);
const MAX_EXACT = 2 ** 53;

/** What a byte is, for an error message. */
export function shown(buf: Buffer, at: number): string {
  if (at >= buf.length) return 'the end';
  return JSON.stringify(buf.toString('latin1', at, at + 1));
}

/** The value of the number scanNumber read last (its return value is where the number ends). */
export const scanned = { value: 0 };

/**
 * Reads a JSON number at `at` (its grammar checked: `-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?`).
 * Returns where it ends, or -1 when it is no number; its value is left in `scanned.value`.
 * Numbers of up to 16 significant digits and exponents within ±22 are computed from their digits
 * in one correctly rounded operation (exact: the digits and the power of ten are doubles
 * exactly); the others are given to Number().
 */
export function scanNumber(buf: Buffer, at: number): number {
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
export function stringEnd(buf: Buffer, at: number): number {
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

export function skipSpace(buf: Buffer, i: number): number {
  while (isSpace(buf[i])) i++;
  return i;
}
