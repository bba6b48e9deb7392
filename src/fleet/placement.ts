import { createHash } from 'node:crypto';

/**
 * Which box runs which camera: weighted rendezvous hashing with bounded load, a pure function of
 * the cameras and the live members, so every box computes the same answer from what etcd lists.
 *
 * Each camera ranks the boxes that have every label it requires by `capacity / -ln(h)`, h the
 * hash of (box, camera) in (0, 1) (rendezvous hashing weighted by capacity: a box is first for a
 * share of the cameras in proportion to its capacity, and a box joining or leaving reorders only
 * the cameras it is first or was first for). Cameras are placed one after another, the most
 * constrained first, each on its first-ranked box that is below its limit: `⌊slack × fair⌋`, fair
 * being the box's share of the cameras by capacity, or `⌈fair⌉` where that is more (a count of
 * cameras is whole). A camera whose eligible boxes are all at their limit goes to the one least
 * loaded for its capacity (`overflow`); one no live box can run is `unplaced`.
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

const eligible = (m: Member, requires: readonly string[] | undefined): boolean =>
  !requires || requires.every((l) => m.labels.includes(l));

export function place(
  cameras: Readonly<Record<string, PlacedCamera>>,
  members: readonly Member[],
  slack: number = DEFAULT_SLACK,
): Placement {
  const boxes = [...members].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const total = boxes.reduce((s, m) => s + m.capacity, 0);
  const names = Object.keys(cameras);
  const limits = new Map(boxes.map((m) => [m.name, limitOf((names.length * m.capacity) / total, slack)]));
  const load = new Map(boxes.map((m) => [m.name, 0]));
  const owners = new Map<string, string>();
  const overflow: string[] = [];
  const unplaced: string[] = [];
  // Every (camera, eligible box) pair with the box's rank for the camera: the cameras that require
  // labels first (fewer boxes can run them), then every camera's first choice, best score first,
  // then the second choices of those left, and so on. A box fills with the cameras that rank it
  // first before any that ranks it second, so a box leaving or joining moves little more than
  // the cameras it had or takes.
  const pairs: { c: string; m: Member; s: number; n: number; rank: number }[] = [];
  for (const c of names) {
    const fit = boxes
      .filter((m) => eligible(m, cameras[c]!.requires))
      .map((m) => ({ m, s: score(m, c) }))
      .sort((a, b) => b.s - a.s || (a.m.name < b.m.name ? -1 : 1));
    if (fit.length === 0) unplaced.push(c);
    fit.forEach(({ m, s }, rank) => pairs.push({ c, m, s, n: fit.length, rank }));
  }
  pairs.sort(
    (a, b) =>
      (a.n < boxes.length ? 0 : 1) - (b.n < boxes.length ? 0 : 1) ||
      a.rank - b.rank ||
      b.s - a.s ||
      (a.c < b.c ? -1 : a.c > b.c ? 1 : a.m.name < b.m.name ? -1 : 1),
  );
  const left = new Map<string, Member[]>();
  for (const { c, m } of pairs) {
    if (owners.has(c)) continue;
    if (load.get(m.name)! < limits.get(m.name)!) {
      owners.set(c, m.name);
      load.set(m.name, load.get(m.name)! + 1);
    } else left.set(c, [...(left.get(c) ?? []), m]);
  }
  for (const [c, fit] of [...left].sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (owners.has(c)) continue;
    const ratio = (m: Member): number => (load.get(m.name)! + 1) / m.capacity;
    const chosen = fit.reduce((best, m) => (ratio(m) < ratio(best) ? m : best));
    owners.set(c, chosen.name);
    load.set(chosen.name, load.get(chosen.name)! + 1);
    overflow.push(c);
  }
  return { owners, overflow: overflow.sort(), unplaced: unplaced.sort(), limits };
}

/** How many cameras have another box in `b` than in `a` (those only in one count too). */
export function moved(a: ReadonlyMap<string, string>, b: ReadonlyMap<string, string>): number {
  let n = 0;
  for (const [c, box] of a) if (b.get(c) !== box) n++;
  for (const c of b.keys()) if (!a.has(c)) n++;
  return n;
}

/**
 * Cameras moved per membership change ÷ cameras ÷ boxes, over boxes of equal capacity (2–16 of
 * them, 5–40 cameras a box), each box removed in turn and one added: the mean and the worst.
 */
export function movement(): { mean: number; worst: number; changes: number } {
  let worst = 0;
  let sum = 0;
  let changes = 0;
  for (let k = 2; k <= 16; k++)
    for (const per of [5, 8, 10, 20, 40]) {
      const n = k * per + (3 % k);
      const cams = Object.fromEntries(Array.from({ length: n }, (_, i) => [`cam${i}`, {}]));
      const members = (m: number): Member[] =>
        Array.from({ length: m }, (_, i) => ({ name: `box${i}`, capacity: 10, labels: [] }));
      const before = place(cams, members(k)).owners;
      const after = [
        place(cams, members(k + 1)).owners,
        ...Array.from(
          { length: k },
          (_, r) =>
            place(
              cams,
              members(k).filter((_, i) => i !== r),
            ).owners,
        ),
      ];
      for (const a of after) {
        const ratio = moved(before, a) / (n / k);
        worst = Math.max(worst, ratio);
        sum += ratio;
        changes++;
      }
    }
  return { mean: sum / changes, worst, changes };
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
