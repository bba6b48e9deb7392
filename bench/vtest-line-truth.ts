import type { LinePerson } from './tracking-score.js';

/**
 * Who crosses the line x = 240 (y 90–330) in one playing of vtest.mp4, when (s into the clip)
 * and which way: our own annotation of the clip, not media. Made from a replay of the real
 * run's detections (bench/tracking-replay.ts, main at 9bdb334): every id that crossed more than
 * once in loop 1 was followed on sheets of crops around its box every 0.6–4 s (the image
 * viewer), and each was one person walking back across (the woman in red too, whose two
 * crossings two ids shared until the tracker kept her id at the left edge); crossings of the clip's first 6.6 s
 * (not analysed in loop 1, the detector warming up) are taken from loops 2–4. The clip repeats,
 * so one playing's truth serves every loop. Times are those of the crossings published for that
 * person (± 0.5 s between loops); the scorer allows 2 s.
 */
export const VTEST_LINE_TRUTH: LinePerson[] = [
  { person: 'A', look: 'dark coat, jeans; walks left past the sign and back', crossings: L(6.2, 11.0) },
  {
    person: 'D',
    look: 'dark jacket; stands just right of the line by the lamp post, walks off right at 15 s',
    crossings: [{ t: 3.3, direction: 'rightward' }],
  },
  {
    person: 'W',
    look: 'white jacket; walks left behind the lamp post past D at 15 s',
    crossings: [{ t: 15.9, direction: 'leftward' }],
  },
  { person: 'P18', look: 'walks left at 18 s', crossings: [{ t: 18.3, direction: 'leftward' }] },
  { person: 'B', look: 'dark jacket; walks left, back right at 33 s', crossings: L(22.2, 33.4) },
  {
    person: 'C',
    look: 'dark jacket, jeans, arm out at 37 s; twice to and fro',
    crossings: L(25.8, 31.4, 36.5, 46.6),
  },
  { person: 'E', look: 'black coat, white bag; walks beside F', crossings: L(28.1, 35.5) },
  {
    person: 'F',
    look: 'black coat; walks beside E, stands by the road, comes back at 77 s',
    crossings: L(29.2, 35.5, 77.4),
  },
  {
    person: 'R',
    look: 'woman in red; walks left to the left edge, stands there half out of view, walks back right',
    crossings: L(49.3, 68.0),
  },
  {
    person: 'G',
    look: 'red and navy jacket, carries a paper; twice to and fro',
    crossings: L(53.7, 59.4, 70.8, 78.6),
  },
  { person: 'H', look: 'dark jacket; walks left, back right at 70 s', crossings: L(56.6, 70.4) },
  { person: 'I', look: 'dark jacket, jeans; walks left, back right at 75 s', crossings: L(64.3, 75.1) },
  { person: 'P69', look: 'walks left at 69 s', crossings: [{ t: 69.0, direction: 'leftward' }] },
  { person: 'P75', look: 'walks left at 75 s', crossings: [{ t: 75.3, direction: 'leftward' }] },
  {
    person: 'P79',
    look: 'walks right at the end of the clip',
    crossings: [{ t: 79.2, direction: 'rightward' }],
  },
];

/** Crossings at `ts`, leftward first, then alternating. */
function L(...ts: number[]): { t: number; direction: string }[] {
  return ts.map((t, i) => ({ t, direction: i % 2 === 0 ? 'leftward' : 'rightward' }));
}
