import type { Track } from './track.js';

/**
 * A detection of the same label group whose box overlaps one matched in the same frame this
 * much (IoU) is the same object under another label (the detector's `car` box inside the van's
 * `truck` box): it votes for that object's label and starts nothing.
 */
export const DUPLICATE_IOU = 0.6;

/**
 * The label vote's lead (`relabel`): a confirmed object's label changes only when another
 * label's vote (the sum of its detections' scores) exceeds its label's by 10 % of it plus 1 (two
 * confident detections).
 */
export const LABEL_LEAD = 0.1;
export const LABEL_MARGIN = 1;

/** Each grouped label's group (`events.label_groups`): the detections that may be one object. */
export class LabelGroups {
  private readonly groups = new Map<string, string>();

  constructor(labelGroups: readonly (readonly string[])[]) {
    labelGroups.forEach((labels, i) => {
      for (const l of labels) this.groups.set(l, `group ${i}`);
    });
  }

  /** A label's group (a label alone is its own). */
  of(label: string): string {
    return this.groups.get(label) ?? `label ${label}`;
  }
}

/** A detection labelled `label`, scoring `score`, votes for that label of `t`. */
export function vote(t: Track, label: string, score: number): void {
  t.votes.set(label, (t.votes.get(label) ?? 0) + score);
}

/**
 * Its label: the one with the highest vote. Once announced, another label takes over only when
 * its vote exceeds the current one's by LABEL_LEAD (a fraction of it, plus a margin): labels
 * that alternate evenly do not flip it back and forth.
 */
export function relabel(t: Track): void {
  const current = t.votes.get(t.label) ?? 0;
  let best = t.label;
  let top = t.confirmed ? current * (1 + LABEL_LEAD) + LABEL_MARGIN : current;
  for (const [label, v] of t.votes)
    if (v > top) {
      best = label;
      top = v;
    }
  t.label = best;
}
