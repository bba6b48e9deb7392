import { createHash } from 'node:crypto';

/**
 * Which box runs which camera: weighted rendezvous hashing with bounded load, sticky to the
 * current owners. A pure function of the cameras, the live members and the owners etcd lists, so
 * every box computes the same answer from what it sees there.
 *
 * Each camera ranks the boxes that have every label it requires by `capacity / -ln(h)`, h the
 * hash of (box, camera) in (0, 1) (rendezvous hashing weighted by capacity: a box is first for a
 * share of the cameras in proportion to its capacity). Each box has a limit: `⌊slack × fair⌋`,
 * fair being its share of the cameras by capacity, or `⌈fair⌉` where that is more (a count of
 * cameras is whole). Then:
 *
 * - a camera stays with its live owner while that owner is within its limit (above it, the owner
 *   keeps those it scores best), so a box that leaves moves only its own cameras;
 * - a box below its share (⌊fair⌋: one that joined) takes the cameras it ranks first for from
 *   boxes above theirs, up to its share, then, while still short, the cameras it scores best on
 *   boxes above their fair share: a box that joins takes its share and little more;
 * - the cameras without a live owner are placed one after another, the most constrained first,
 *   each on its best-ranked box below its share, then below its limit. One whose eligible boxes
 *   are all at their limit stays with its owner or goes to the box least loaded for its capacity
 *   (`overflow`); one no live box can run is `unplaced`.
 *
 * Placing again with the result as the owners gives the same result (where nothing overflows),
 * so the boxes' own moves do not make the placement change again.
 */

export interface Member {
  name: string;
  /** The box's weight: cameras it can analyse. */
  capacity: number;
  labels: readonly string[];
}

export interface PlacedCamera {
  /** Labels a box must have to run it. */
  requires?: readonly string[] | undefined;
}

export interface Placement {
  /** camera → box */
  owners: Map<string, string>;
  /** Cameras placed above their box's limit: every box that could run them was full. */
  overflow: string[];
  /** Cameras no live box can run (no member has the labels they require). */
  unplaced: string[];
  /** box → the most cameras the bound lets it have. */
  limits: Map<string, number>;
}

/** Loads may reach 1.1 × a box's fair share by capacity. */
export const DEFAULT_SLACK = 1.1;

/** A hash of the text in (0, 1), the same on every box and every run. */
export function unitHash(text: string): number {
  const d = createHash('sha256').update(text).digest();
  // 48 bits: (n + 0.5) / 2^48 is never 0 or 1.
  return (d.readUIntBE(0, 6) + 0.5) / 2 ** 48;
}

/** A box's weighted rendezvous score for a camera: higher ranks first. */
export function score(member: Member, camera: string): number {
  return member.capacity / -Math.log(unitHash(`${member.name}\n${camera}`));
}

/** The most cameras a box may have: ⌊slack × fair⌋, or ⌈fair⌉ where that is more. */
export function limitOf(fair: number, slack: number = DEFAULT_SLACK): number {
  // A hair below the whole number: 1.1 × 10 is 11.000000000000002 in floating point.
  return Math.max(Math.ceil(fair - 1e-9), Math.floor(slack * fair + 1e-9));
}

const byName = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

const eligible = (m: Member, requires: readonly string[] | undefined): boolean =>
  !requires || requires.every((l) => m.labels.includes(l));

export function place(
  cameras: Readonly<Record<string, PlacedCamera>>,
  members: readonly Member[],
  current: ReadonlyMap<string, string> = new Map(),
  slack: number = DEFAULT_SLACK,
): Placement {
  const boxes = [...members].sort((a, b) => byName(a.name, b.name));
  const byBox = new Map(boxes.map((m) => [m.name, m]));
  const total = boxes.reduce((s, m) => s + m.capacity, 0);
  const names = Object.keys(cameras).sort(byName);
  const fair = new Map(boxes.map((m) => [m.name, (names.length * m.capacity) / total]));
  const limits = new Map(boxes.map((m) => [m.name, limitOf(fair.get(m.name)!, slack)]));
  const load = new Map(boxes.map((m) => [m.name, 0]));
  const owners = new Map<string, string>();
  const give = (c: string, box: string): void => {
    owners.set(c, box);
    load.set(box, load.get(box)! + 1);
  };
  /** A box's share in whole cameras: ⌊fair⌋. */
  const share = (box: string): number => Math.floor(fair.get(box)! + 1e-9);
  const unplaced: string[] = [];
  // Each camera's eligible boxes, best score first.
  const ranked = new Map<string, { m: Member; s: number }[]>();
  for (const c of names) {
    const fit = boxes
      .filter((m) => eligible(m, cameras[c]!.requires))
      .map((m) => ({ m, s: score(m, c) }))
      .sort((a, b) => b.s - a.s || byName(a.m.name, b.m.name));
    if (fit.length === 0) unplaced.push(c);
    else ranked.set(c, fit);
  }

  // A box below its share (⌊fair⌋: one that joined) takes the cameras it ranks first for from
  // boxes above their fair share, best score first. Takers only gain and stay at or below their
  // share, givers only lose and stay at or above theirs: one pass leaves no such pair.
  const steal = (skip: ReadonlySet<string>): void => {
    const candidates = [...owners]
      .map(([c, box]) => ({ c, box, top: ranked.get(c)![0]! }))
      .filter(({ c, box, top }) => top.m.name !== box && !skip.has(c))
      .sort((a, b) => b.top.s - a.top.s || byName(a.c, b.c));
    for (const { c, box, top } of candidates) {
      const to = top.m.name;
      if (load.get(to)! >= share(to) || load.get(box)! <= fair.get(box)! + 1e-9) continue;
      load.set(box, load.get(box)! - 1);
      give(c, to);
    }
  };

  const fill = (skip: ReadonlySet<string>): void => {
    for (const taker of boxes) {
      while (load.get(taker.name)! < share(taker.name)) {
        let best: { c: string; box: string; s: number } | undefined;
        for (const [c, box] of owners) {
          if (box === taker.name || skip.has(c) || load.get(box)! <= fair.get(box)! + 1e-9) continue;
          if (!ranked.get(c)!.some((x) => x.m.name === taker.name)) continue;
          const s = score(taker, c);
          if (!best || s > best.s || (s === best.s && byName(c, best.c) < 0)) best = { c, box, s };
        }
        if (!best) break;
        load.set(best.box, load.get(best.box)! - 1);
        give(best.c, taker.name);
      }
    }
  };

  // 1. A camera stays with its live owner (one with the labels it requires) while that owner is
  //    within its limit; above it (its share shrank: a box joined), the owner keeps those it
  //    scores best.
  for (const [c, fit] of ranked) {
    const f = fit.find((x) => x.m.name === current.get(c));
    if (f) give(c, f.m.name);
  }
  const held = new Map<string, { c: string; s: number }[]>();
  for (const [c, box] of owners)
    held.set(box, [...(held.get(box) ?? []), { c, s: score(byBox.get(box)!, c) }]);
  for (const [box, list] of held) {
    list.sort((a, b) => b.s - a.s || byName(a.c, b.c));
    for (const { c } of list.slice(limits.get(box))) owners.delete(c);
    load.set(box, Math.min(list.length, limits.get(box)!));
  }

  // 2. The others (no owner, a dead one, or trimmed in 1): the cameras that require labels first
  //    (fewer boxes can run them), then every camera's first choice, best score first, then the
  //    second choices of those left, and so on, each on a box below its limit.
  const pairs: { c: string; m: Member; s: number; n: number; rank: number }[] = [];
  for (const [c, fit] of ranked)
    if (!owners.has(c)) fit.forEach(({ m, s }, rank) => pairs.push({ c, m, s, n: fit.length, rank }));
  pairs.sort(
    (a, b) =>
      (a.n < boxes.length ? 0 : 1) - (b.n < boxes.length ? 0 : 1) ||
      a.rank - b.rank ||
      b.s - a.s ||
      byName(a.c, b.c) ||
      byName(a.m.name, b.m.name),
  );
  //    First up to each box's share (⌊fair⌋), then up to its limit: the boxes many cameras rank
  //    first do not all fill to their limit while others stay below their share.
  const left = new Set<string>();
  for (const cap of [share, (box: string) => limits.get(box)!])
    for (const { c, m } of pairs) {
      if (owners.has(c)) continue;
      if (load.get(m.name)! < cap(m.name)) {
        give(c, m.name);
        left.delete(c);
      } else left.add(c);
    }
  //    Every box that could run it is full: its live owner keeps it, or the least loaded for its
  //    capacity takes it.
  const overflow = [...left].sort(byName);
  for (const c of overflow) {
    const fit = ranked.get(c)!.map((x) => x.m);
    const ratio = (m: Member): number => (load.get(m.name)! + 1) / m.capacity;
    const owner = fit.find((m) => m.name === current.get(c));
    give(c, (owner ?? fit.reduce((best, m) => (ratio(m) < ratio(best) ? m : best))).name);
  }

  // 3. The boxes below their share take the cameras they rank first for. No taker and giver pair
  //    is left, and every box is within its limit, so placing again from this result (the boxes'
  //    owner keys once they have moved) gives this result.
  steal(new Set(overflow));
  // 4. A box still below its share (no camera ranks it first on a box above its fair share) takes,
  //    from the boxes above theirs, the cameras it scores best, until it has its share: a box that
  //    joins holds its share from the start, so no later change pays for its shortfall (a fleet
  //    whose joiners stayed short moved each one's missing cameras at the next join as well).
  fill(new Set(overflow));
  return { owners, overflow, unplaced, limits };
}

/** How many cameras have another box in `b` than in `a` (those only in one count too). */
export function moved(a: ReadonlyMap<string, string>, b: ReadonlyMap<string, string>): number {
  let n = 0;
  for (const [c, box] of a) if (b.get(c) !== box) n++;
  for (const c of b.keys()) if (!a.has(c)) n++;
  return n;
}

/**
 * Cameras moved per membership change ÷ (cameras ÷ boxes), over boxes of equal capacity (2–16 of
 * them, 5–40 cameras a box): from the placement of k boxes, one added, and each removed in turn
 * and then back (placed from the owners of the step before, as a fleet does): the mean and the
 * worst.
 */
export function movement(): { mean: number; worst: number; changes: number } {
  let worst = 0;
  let sum = 0;
  let changes = 0;
  const count = (a: ReadonlyMap<string, string>, b: ReadonlyMap<string, string>, per: number): void => {
    const ratio = moved(a, b) / per;
    worst = Math.max(worst, ratio);
    sum += ratio;
    changes++;
  };
  for (let k = 2; k <= 16; k++)
    for (const per of [5, 8, 10, 20, 40]) {
      const n = k * per + (3 % k);
      const cams = Object.fromEntries(Array.from({ length: n }, (_, i) => [`cam${i}`, {}]));
      const members = (m: number): Member[] =>
        Array.from({ length: m }, (_, i) => ({ name: `box${i}`, capacity: 10, labels: [] }));
      const before = place(cams, members(k)).owners;
      count(before, place(cams, members(k + 1), before).owners, n / k);
      for (let r = 0; r < k; r++) {
        const without = place(
          cams,
          members(k).filter((_, i) => i !== r),
          before,
        ).owners;
        count(before, without, n / k);
        count(without, place(cams, members(k), without).owners, n / k);
      }
    }
  return { mean: sum / changes, worst, changes };
}

/**
 * Cameras moved per membership change ÷ (cameras ÷ boxes) along 300 walks of 20 changes each
 * (a random box removed or one added, 2–17 boxes of equal capacity, 5–40 cameras a box at the
 * start), each placed from the owners of the step before: the worst and the mean, by the fair
 * share (cameras ÷ boxes) before the change: 10 or more, 5 to 10, below 5.
 */
export function walks(): Record<
  'from10' | 'from5' | 'below5',
  { worst: number; mean: number; changes: number }
> {
  let seed = 7;
  const rnd = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const int = (lo: number, hi: number): number => lo + Math.floor(rnd() * (hi - lo + 1));
  const out = {
    from10: { worst: 0, mean: 0, changes: 0 },
    from5: { worst: 0, mean: 0, changes: 0 },
    below5: { worst: 0, mean: 0, changes: 0 },
  };
  for (let w = 0; w < 300; w++) {
    const per = [5, 8, 10, 20, 40][int(0, 4)]!;
    const live = new Set(Array.from({ length: int(2, 12) }, (_, i) => i));
    let next = live.size;
    const n = live.size * per + int(0, 5);
    const cams = Object.fromEntries(Array.from({ length: n }, (_, i) => [`cam${i}`, {}]));
    const members = (): Member[] => [...live].map((i) => ({ name: `box${i}`, capacity: 10, labels: [] }));
    let owners = place(cams, members()).owners;
    for (let step = 0; step < 20; step++) {
      const k = live.size;
      if ((rnd() < 0.5 && k > 2) || k > 16) live.delete([...live][int(0, k - 1)]!);
      else live.add(next++);
      const after = place(cams, members(), owners).owners;
      const ratio = moved(owners, after) / (n / k);
      const o = out[n / k >= 10 ? 'from10' : n / k >= 5 ? 'from5' : 'below5'];
      o.worst = Math.max(o.worst, ratio);
      o.mean += ratio;
      o.changes++;
      owners = after;
    }
  }
  for (const o of Object.values(out)) o.mean /= o.changes || 1;
  return out;
}

/**
 * The placement's balance: the most loaded box's cameras ÷ capacity, over the fleet's mean
 * (all cameras ÷ all capacity); 1 is perfect. 0 with no camera placed.
 */
export function loadRatio(owners: ReadonlyMap<string, string>, members: readonly Member[]): number {
  const total = members.reduce((s, m) => s + m.capacity, 0);
  if (owners.size === 0 || total === 0) return 0;
  const count = new Map<string, number>();
  for (const box of owners.values()) count.set(box, (count.get(box) ?? 0) + 1);
  const max = Math.max(...members.map((m) => (count.get(m.name) ?? 0) / m.capacity));
  return max / (owners.size / total);
}

/** Capacities of the fleets `balance` places on: equal, two kinds, and a spread. */
const MIXES: readonly (readonly number[])[] = [[10], [10, 20], [4, 8, 16, 32], [1, 3, 10]];

/**
 * Max ÷ mean load by capacity (`loadRatio`) over fleets of 2–16 boxes whose capacities cycle
 * through each of `MIXES`, with 5–40 cameras per box of the mean capacity: the mean and the worst
 * placement, and the worst where the fair shares are 10 cameras or more (where rounding to whole
 * cameras weighs less).
 */
export function balance(): { mean: number; worst: number; worstFrom10: number; placements: number } {
  let worst = 0;
  let worstFrom10 = 0;
  let sum = 0;
  let placements = 0;
  for (const mix of MIXES)
    for (let k = 2; k <= 16; k++)
      for (const per of [5, 8, 10, 20, 40]) {
        const n = k * per + (3 % k);
        const cams = Object.fromEntries(Array.from({ length: n }, (_, i) => [`cam${i}`, {}]));
        const members = Array.from({ length: k }, (_, i) => ({
          name: `box${i}`,
          capacity: mix[i % mix.length]!,
          labels: [],
        }));
        const ratio = loadRatio(place(cams, members).owners, members);
        const total = members.reduce((s, m) => s + m.capacity, 0);
        const leastFair = Math.min(...members.map((m) => (n * m.capacity) / total));
        worst = Math.max(worst, ratio);
        if (leastFair >= 10) worstFrom10 = Math.max(worstFrom10, ratio);
        sum += ratio;
        placements++;
      }
  return { mean: sum / placements, worst, worstFrom10, placements };
}
