import type { Segment } from '../../src/record/index.js';

/**
 * A closed ring segment of 90–110 s (since the epoch) with one key frame at its start, of `codec`,
 * in `file`.
 */
export const segment = (codec: string, file = '/ring/1-0.ts'): Segment => ({
  file,
  run: 1,
  seq: 0,
  start: 90_000,
  end: 110_000,
  bytes: 1000,
  headerBytes: 376,
  keyframes: [{ offset: 376, ts: 90_000 }],
  codec,
  open: false,
});
