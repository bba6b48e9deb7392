/**
 * Scores what an MQTT subscriber saw of a camera against known truth (issue 42, item 6): the
 * per-frame ids on `…/detections` matched to the truth boxes of the same moment, the object
 * events and the line crossings. Pure: bench/tracking.ts and test/integration/tracking.test.ts
 * gather the inputs.
 *
 * Per frame, truth and detections that carry an id (confirmed tracks) are matched greedily by
 * IoU (≥ `iou`), labels aside: identity is what is scored. A truth object counts in a frame
 * when at least half its box is in the picture and nearer objects (later in drawing order)
 * cover less than `hiddenCover` of it; one that does not count is still matched when a
 * detection finds it, but is no miss when none does.
 */
import { area, iou, type Box } from '../src/core/geometry.js';

/** One truth object in a frame; a frame's list is in drawing order (farther first). */
export interface TruthBox {
  object: string;
  label: string;
  box: Box;
}

/** A published detection: `id` is the object's event id once its track is confirmed. */
export interface SeenBox {
  label: string;
  /** Its score, where the recording kept it (replays). */
  score?: number;
  box: Box;
  id: string | null;
}

export interface ScoredFrame {
  /** The frame's time (ms, the detections message's `ts`). */
  ts: number;
  truth: TruthBox[];
  seen: SeenBox[];
}

export interface SeenEvent {
  type: string;
  id: string;
  label: string;
  box: Box;
  /** `end_ts`: when the object was last seen (ms); null before its end. */
  endTs: number | null;
}

export interface SeenCrossing {
  id: string;
  line: string;
  direction: string;
  ts: number;
}

export interface TruthCrossing {
  object: string;
  line: string;
  direction: string;
}

export interface ScoreOptions {
  width: number;
  height: number;
  iou?: number;
  hiddenCover?: number;
  /** A track's `end` this long (s) before its object was last in view is an early end. */
  earlyEndS?: number;
}

export interface ObjectScore {
  object: string;
  label: string;
  /** Frames it counted in (in view, not hidden), and frames an id matched it. */
  frames: number;
  matched: number;
  ids: string[];
  switches: number;
  /** Ids of it whose `end` came while it was still in view more than `earlyEndS` later. */
  early_ends: number;
  /** Crossings published for its ids, per line and direction. */
  crossings: string[];
}

export interface TrackingScore {
  frames: number;
  objects: number;
  idf1: number;
  idtp: number;
  idfn: number;
  idfp: number;
  switches: number;
  /** Distinct ids matched to an object, mean over the objects that counted in some frame. */
  ids_per_object: number;
  early_ends: number;
  new_events: number;
  new_per_object: number;
  /** Ids on detections never matched to a truth object (false or badly placed tracks). */
  unmatched_ids: number;
  crossings: { truth: number; published: number; wrong: number };
  per_object: ObjectScore[];
}

/** `b` cut to the picture. */
const clip = (b: Box, w: number, h: number): Box => [
  Math.max(0, b[0]),
  Math.max(0, b[1]),
  Math.min(w, b[2]),
  Math.min(h, b[3]),
];

/** The share of `truth[i]`'s box that the boxes after it (nearer) cover, sampled on a 24×24 grid. */
export function coveredShare(truth: readonly TruthBox[], i: number): number {
  const [x1, y1, x2, y2] = truth[i]!.box;
  const nearer = truth.slice(i + 1).map((t) => t.box);
  if (!nearer.length) return 0;
  const n = 24;
  let covered = 0;
  for (let a = 0; a < n; a++) {
    for (let b = 0; b < n; b++) {
      const x = x1 + ((a + 0.5) * (x2 - x1)) / n;
      const y = y1 + ((b + 0.5) * (y2 - y1)) / n;
      if (nearer.some((q) => x >= q[0] && x < q[2] && y >= q[1] && y < q[3])) covered++;
    }
  }
  return covered / (n * n);
}

/** Pairs of (truth index, seen index) with IoU ≥ `min`, greedily by IoU, one-to-one. */
export function greedyMatch(truth: readonly Box[], seen: readonly Box[], min: number): [number, number][] {
  const pairs: [number, number, number][] = [];
  truth.forEach((t, i) =>
    seen.forEach((s, j) => {
      const v = iou(t, s);
      if (v >= min) pairs.push([v, i, j]);
    }),
  );
  pairs.sort((a, b) => b[0] - a[0]);
  const usedT = new Set<number>();
  const usedS = new Set<number>();
  const out: [number, number][] = [];
  for (const [, i, j] of pairs) {
    if (usedT.has(i) || usedS.has(j)) continue;
    usedT.add(i);
    usedS.add(j);
    out.push([i, j]);
  }
  return out;
}

/** Whether a truth box counts in its frame: half of it in the picture, and not hidden. */
function counts(truth: readonly TruthBox[], i: number, o: Required<ScoreOptions>): boolean {
  const b = truth[i]!.box;
  const inside = area(clip(b, o.width, o.height)) / Math.max(1, area(b));
  return inside >= 0.5 && coveredShare(truth, i) < o.hiddenCover;
}

export function scoreTracking(
  frames: readonly ScoredFrame[],
  events: readonly SeenEvent[],
  crossings: readonly SeenCrossing[],
  truthCrossings: readonly TruthCrossing[],
  opts: ScoreOptions,
): TrackingScore {
  const o: Required<ScoreOptions> = { iou: 0.5, hiddenCover: 0.8, earlyEndS: 1, ...opts };
  const objects = new Map<string, { label: string; frames: number; seq: string[]; lastInView: number }>();
  const together = new Map<string, number>();
  const idCounts = new Map<string, number>();
  let truthTotal = 0;
  let seenTotal = 0;
  for (const f of frames) {
    const withId = f.seen.filter((s): s is SeenBox & { id: string } => s.id !== null);
    seenTotal += withId.length;
    for (const s of withId) idCounts.set(s.id, idCounts.get(s.id) ?? 0);
    // Visible truth first: a detection shows the nearer of two objects over each other (the
    // hidden one gets what is left), or a hidden walker would take the id of the one in front.
    const visible = f.truth.map((_, i) => i).filter((i) => counts(f.truth, i, o));
    const rest = f.truth.map((_, i) => i).filter((i) => !visible.includes(i));
    const matches = new Map<number, number>();
    for (const group of [visible, rest]) {
      const free = withId.map((_, j) => j).filter((j) => ![...matches.values()].includes(j));
      for (const [a, b] of greedyMatch(
        group.map((i) => clip(f.truth[i]!.box, o.width, o.height)),
        free.map((j) => withId[j]!.box),
        o.iou,
      ))
        matches.set(group[a]!, free[b]!);
    }
    f.truth.forEach((t, i) => {
      const rec = objects.get(t.object) ?? { label: t.label, frames: 0, seq: [], lastInView: -Infinity };
      objects.set(t.object, rec);
      const inView = area(clip(t.box, o.width, o.height)) / Math.max(1, area(t.box)) >= 0.5;
      if (inView) rec.lastInView = Math.max(rec.lastInView, f.ts);
      const counted = counts(f.truth, i, o);
      const j = matches.get(i);
      if (counted) rec.frames++;
      // A truth box is owed a match when it counts; one that does not is scored only when matched.
      if (counted || j !== undefined) truthTotal++;
      if (j === undefined) return;
      const id = withId[j]!.id;
      rec.seq.push(id);
      together.set(`${t.object}\n${id}`, (together.get(`${t.object}\n${id}`) ?? 0) + 1);
      idCounts.set(id, idCounts.get(id)! + 1);
    });
  }
  // IDF1: the one-to-one object ↔ id mapping with the most frames together, greedily.
  const pairs = [...together].map(([k, n]) => [...k.split('\n'), n] as [string, string, number]);
  pairs.sort((a, b) => b[2] - a[2]);
  const mappedO = new Set<string>();
  const mappedH = new Set<string>();
  let idtp = 0;
  for (const [ob, h, n] of pairs) {
    if (mappedO.has(ob) || mappedH.has(h)) continue;
    mappedO.add(ob);
    mappedH.add(h);
    idtp += n;
  }
  // Each id belongs to the object it was matched to most (for its crossings).
  const ownerOf = new Map<string, string>();
  for (const [ob, h] of pairs) if (!ownerOf.has(h)) ownerOf.set(h, ob);
  const ends = new Map(events.filter((e) => e.type === 'end').map((e) => [e.id, e.endTs]));
  const perObject: ObjectScore[] = [...objects].map(([object, rec]) => {
    let switches = 0;
    rec.seq.forEach((id, k) => k > 0 && id !== rec.seq[k - 1] && switches++);
    const ids = [...new Set(rec.seq)];
    const early = ids.filter((id) => {
      const end = ends.get(id);
      return end !== undefined && end !== null && rec.lastInView > end + o.earlyEndS * 1000;
    }).length;
    return {
      object,
      label: rec.label,
      frames: rec.frames,
      matched: rec.seq.length,
      ids,
      switches,
      early_ends: early,
      crossings: crossings.filter((c) => ownerOf.get(c.id) === object).map((c) => `${c.line} ${c.direction}`),
    };
  });
  const scored = perObject.filter((p) => p.frames > 0);
  const newEvents = events.filter((e) => e.type === 'new').length;
  const sum = (pick: (p: ObjectScore) => number): number => perObject.reduce((a, p) => a + pick(p), 0);
  // A crossing is wrong when its id belongs to no object, or its object crossed that way fewer times.
  const owed = new Map<string, number>();
  for (const c of truthCrossings) {
    const k = `${c.object} ${c.line} ${c.direction}`;
    owed.set(k, (owed.get(k) ?? 0) + 1);
  }
  let wrong = 0;
  for (const c of crossings) {
    const k = `${ownerOf.get(c.id) ?? '?'} ${c.line} ${c.direction}`;
    const left = owed.get(k) ?? 0;
    if (left > 0) owed.set(k, left - 1);
    else wrong++;
  }
  const idfn = truthTotal - idtp;
  const idfp = seenTotal - idtp;
  return {
    frames: frames.length,
    objects: scored.length,
    idf1: idtp + idfn + idfp > 0 ? idtp / (idtp + 0.5 * idfn + 0.5 * idfp) : 1,
    idtp,
    idfn,
    idfp,
    switches: sum((p) => p.switches),
    ids_per_object: scored.length ? scored.reduce((a, p) => a + p.ids.length, 0) / scored.length : 0,
    early_ends: sum((p) => p.early_ends),
    new_events: newEvents,
    new_per_object: scored.length ? newEvents / scored.length : 0,
    unmatched_ids: [...idCounts.values()].filter((n) => n === 0).length,
    crossings: { truth: truthCrossings.length, published: crossings.length, wrong },
    per_object: perObject,
  };
}

/**
 * The scene time of the first scored frame (s): the offset, among `candidates`, at which the
 * detections (all of them, ids or not) overlap the truth most (sum of matched IoU). Frames are
 * placed at `offset + (ts − first ts)`.
 */
export function bestOffset(
  frames: readonly { ts: number; seen: readonly SeenBox[] }[],
  truthAt: (t: number) => TruthBox[],
  candidates: readonly number[],
  min = 0.5,
): { offset: number; meanIou: number } {
  const t0 = frames[0]?.ts ?? 0;
  let best = { offset: candidates[0] ?? 0, meanIou: -1 };
  for (const offset of candidates) {
    let total = 0;
    let n = 0;
    for (const f of frames) {
      const truth = truthAt(offset + (f.ts - t0) / 1000).map((t) => t.box);
      const seen = f.seen.map((s) => s.box);
      for (const [i, j] of greedyMatch(truth, seen, min)) total += iou(truth[i]!, seen[j]!);
      n += Math.max(truth.length, seen.length);
    }
    const meanIou = n ? total / n : 0;
    if (meanIou > best.meanIou) best = { offset, meanIou };
  }
  return best;
}

export interface SpeedSummary {
  truth: number;
  unit: string;
  /** Events that carried a `speed.current`. */
  readings: number;
  current_min: number | null;
  current_max: number | null;
  max: number | null;
  /** The largest |reading − truth| ÷ truth among the `current` readings, and of `max`. */
  current_error: number | null;
  max_error: number | null;
}

/** Speeds in events (`speed: {current, max, unit}`) against the known `truth` (in `unit`). */
export function summariseSpeed(
  events: readonly { speed: { current: number | null; max: number; unit: string } | null }[],
  truth: number,
  unit: string,
): SpeedSummary {
  const speeds = events.flatMap((e) => (e.speed ? [e.speed] : []));
  const currents = speeds.flatMap((s) => (s.current === null ? [] : [s.current]));
  const max = speeds.length ? Math.max(...speeds.map((s) => s.max)) : null;
  const err = (x: number): number => Math.abs(x - truth) / truth;
  return {
    truth,
    unit,
    readings: currents.length,
    current_min: currents.length ? Math.min(...currents) : null,
    current_max: currents.length ? Math.max(...currents) : null,
    max,
    current_error: currents.length ? Math.max(...currents.map(err)) : null,
    max_error: max === null ? null : err(max),
  };
}

export interface StreetOptions {
  /** People counted by eye in one playing of the clip, and how many times it played. */
  people: number;
  loops: number;
  /** The clip's length (s): crossing times are given as loop and second into it. */
  clipS: number;
  /** Boxes of the vehicles parked through the whole clip. */
  parked: Box[];
  /** The first frame's ts (ms): the clip's start. */
  t0: number;
}

export interface StreetSummary {
  person_new: number;
  /** `new` person events ÷ (people × loops). */
  new_per_person: number;
  /** Distinct ids on person detections ÷ (people × loops). */
  ids_per_person: number;
  /** `new` events of car, truck or bus whose box overlaps each parked vehicle's (IoU ≥ 0.5). */
  parked_new: number[];
  /** Ids that crossed the line, those that crossed it more than once, their share. */
  line_ids: number;
  line_multi: number;
  line_multi_share: number;
  /** Each id that crossed more than once: its label, and each crossing's direction and time. */
  line_multi_detail: { id: string; label: string; crossings: string[] }[];
}

const VEHICLES = new Set(['car', 'truck', 'bus']);

export function summariseStreet(
  frames: readonly { seen: readonly SeenBox[] }[],
  events: readonly SeenEvent[],
  crossings: readonly (SeenCrossing & { label: string })[],
  opts: StreetOptions,
): StreetSummary {
  const visits = opts.people * opts.loops;
  const personNew = events.filter((e) => e.type === 'new' && e.label === 'person').length;
  const personIds = new Set(
    frames.flatMap((f) => f.seen.filter((s) => s.label === 'person' && s.id !== null).map((s) => s.id)),
  );
  const parkedNew = opts.parked.map(
    (p) => events.filter((e) => e.type === 'new' && VEHICLES.has(e.label) && iou(e.box, p) >= 0.5).length,
  );
  const byId = new Map<string, (SeenCrossing & { label: string })[]>();
  for (const c of crossings) byId.set(c.id, [...(byId.get(c.id) ?? []), c]);
  const when = (ts: number): string => {
    const s = (ts - opts.t0) / 1000;
    const loop = Math.floor(s / opts.clipS);
    return `loop ${loop + 1} at ${(s - loop * opts.clipS).toFixed(1)} s`;
  };
  const multi = [...byId].filter(([, cs]) => cs.length > 1);
  return {
    person_new: personNew,
    new_per_person: personNew / visits,
    ids_per_person: personIds.size / visits,
    parked_new: parkedNew,
    line_ids: byId.size,
    line_multi: multi.length,
    line_multi_share: byId.size ? multi.length / byId.size : 0,
    line_multi_detail: multi.map(([id, cs]) => ({
      id,
      label: cs[0]!.label,
      crossings: cs.map((c) => `${c.direction} ${when(c.ts)}`),
    })),
  };
}

/** A person's true crossings of a line in one playing of a clip (by eye): when (s into the clip) and which way. */
export interface LinePerson {
  person: string;
  /** How to tell them (what the by-eye check saw). */
  look: string;
  crossings: { t: number; direction: string }[];
}

export interface LineTruthScore {
  /** Ids that crossed the line, and those whose crossings exceed their person's true crossings. */
  ids: number;
  false_multi: number;
  false_share: number;
  /**
   * Of the false ones, ids that crossed in more than one playing: carried across the clip's cut
   * back to its start, where the picture jumps (someone near the line at its end becomes whoever
   * stands there at its start), which a live camera never shows.
   */
  false_across_cut: number;
  /** Ids crossing more than once whose person did cross as often (a person walking back). */
  true_multi: number;
  /** Ids whose crossings matched no person's (within `tolS`, same direction). */
  unmatched: number;
  /** A line per id crossing more than once, or matched to no person. */
  detail: string[];
}

/**
 * The line scored against a by-eye truth of one playing of a looped clip: each published
 * crossing is placed in its loop (s since `t0`, modulo `clipS`); each id is given the person
 * whose true crossings match most of its own (same direction, within `tolS` s); an id is a
 * false multi-crossing when it crossed more often than its person did (an identity switch, or
 * jitter), and one matched to no person counts as false when it crossed more than once.
 */
export function scoreLineTruth(
  crossings: readonly (SeenCrossing & { label: string })[],
  truth: readonly LinePerson[],
  opts: { t0: number; clipS: number; tolS?: number },
): LineTruthScore {
  const tol = opts.tolS ?? 2;
  const byId = new Map<string, { t: number; loop: number; direction: string }[]>();
  for (const c of crossings) {
    const s = (c.ts - opts.t0) / 1000;
    const loop = Math.floor(s / opts.clipS);
    byId.set(c.id, [...(byId.get(c.id) ?? []), { t: s - loop * opts.clipS, loop, direction: c.direction }]);
  }
  const matchCount = (cs: { t: number; direction: string }[], p: LinePerson): number => {
    const used = new Set<number>();
    let n = 0;
    for (const c of cs) {
      const k = p.crossings.findIndex(
        (q, i) => !used.has(i) && q.direction === c.direction && Math.abs(q.t - c.t) <= tol,
      );
      if (k >= 0) {
        used.add(k);
        n++;
      }
    }
    return n;
  };
  let falseMulti = 0;
  let acrossCut = 0;
  let trueMulti = 0;
  let unmatched = 0;
  const detail: string[] = [];
  for (const [id, cs] of byId) {
    let best: LinePerson | undefined;
    let bestN = 0;
    for (const p of truth) {
      const n = matchCount(cs, p);
      if (n > bestN) {
        best = p;
        bestN = n;
      }
    }
    const said = cs.map((c) => `${c.direction} loop ${c.loop + 1} ${c.t.toFixed(1)} s`).join(', ');
    if (!best) {
      unmatched++;
      if (cs.length > 1) falseMulti++;
      if (cs.length > 1 && new Set(cs.map((c) => c.loop)).size > 1) acrossCut++;
      detail.push(`${id}: ${said} — no person crossed so${cs.length > 1 ? ' (false)' : ''}`);
      continue;
    }
    if (cs.length > best.crossings.length) {
      falseMulti++;
      if (new Set(cs.map((c) => c.loop)).size > 1) acrossCut++;
      detail.push(`${id}: ${said} — ${best.person} crossed ${best.crossings.length} times (false)`);
    } else if (cs.length > 1) {
      trueMulti++;
      detail.push(`${id}: ${said} — ${best.person} crossed ${best.crossings.length} times`);
    }
  }
  return {
    ids: byId.size,
    false_multi: falseMulti,
    false_share: byId.size ? falseMulti / byId.size : 0,
    false_across_cut: acrossCut,
    true_multi: trueMulti,
    unmatched,
    detail,
  };
}
