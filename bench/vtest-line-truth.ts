import type { LinePerson } from './tracking-score.js';

/**
 * Who crosses the line x = 240 (y 90–330) in one playing of vtest.mp4, and when (s into the
 * clip) and which way, checked by eye (docs/performance.md, "Tracking in a real street"): our
 * own annotation of the clip, not media. The clip repeats, so one playing's truth serves every loop.
 */
export const VTEST_LINE_TRUTH: LinePerson[] = [];
