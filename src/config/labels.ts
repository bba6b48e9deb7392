import type { Found, PathKey } from './issues.js';

/**
 * Labels the file names, judged where the model's own labels are not known: the 80 COCO class
 * names, those of the YOLO models Argus is run with out of the box. They never refuse a label on
 * their own (a custom model has its own); they only decide which of two disagreeing names is the
 * typo.
 */
export const COCO_LABELS: readonly string[] = [
  'person',
  'bicycle',
  'car',
  'motorcycle',
  'airplane',
  'bus',
  'train',
  'truck',
  'boat',
  'traffic light',
  'fire hydrant',
  'stop sign',
  'parking meter',
  'bench',
  'bird',
  'cat',
  'dog',
  'horse',
  'sheep',
  'cow',
  'elephant',
  'bear',
  'zebra',
  'giraffe',
  'backpack',
  'umbrella',
  'handbag',
  'tie',
  'suitcase',
  'frisbee',
  'skis',
  'snowboard',
  'sports ball',
  'kite',
  'baseball bat',
  'baseball glove',
  'skateboard',
  'surfboard',
  'tennis racket',
  'bottle',
  'wine glass',
  'cup',
  'fork',
  'knife',
  'spoon',
  'bowl',
  'banana',
  'apple',
  'sandwich',
  'orange',
  'broccoli',
  'carrot',
  'hot dog',
  'pizza',
  'donut',
  'cake',
  'chair',
  'couch',
  'potted plant',
  'bed',
  'dining table',
  'toilet',
  'tv',
  'laptop',
  'mouse',
  'remote',
  'keyboard',
  'cell phone',
  'microwave',
  'oven',
  'toaster',
  'sink',
  'refrigerator',
  'book',
  'clock',
  'vase',
  'scissors',
  'teddy bear',
  'hair drier',
  'toothbrush',
];

/** The candidate closest to `word` when it is close enough to be a typo (or differs only in case). */
export function nearest(word: string, candidates: readonly string[]): string | undefined {
  const lower = word.toLowerCase();
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of candidates) {
    const d = c.toLowerCase() === lower ? 0 : editDistance(lower, c.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [c, d];
  }
  // One edit in a short word, up to a third of a longer one.
  return bestDistance <= Math.max(1, Math.floor(word.length / 3)) ? best : undefined;
}

/** Levenshtein distance, in O(|a|·|b|) time and O(|b|) memory. */
function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++)
      row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length]!;
}

/** The labels a decision is made by: a model's, or COCO's. */
export interface LabelReference {
  labels: readonly string[];
  /** What a label outside `labels` is not, e.g. `a COCO label`, `a label of model 'default'`. */
  what: string;
}

export const COCO: LabelReference = { labels: COCO_LABELS, what: 'a COCO label' };

/** `value[key]` where value is a mapping, else undefined: the file's data may be anything. */
const get = (value: unknown, key: string): unknown =>
  value && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)[key]
    : undefined;

/** The strings of a list, each at its index (other items left out); none when it is not a list. */
const strings = (value: unknown): [string, number][] =>
  Array.isArray(value)
    ? value.flatMap((v, i) => (typeof v === 'string' ? [[v, i] as [string, number]] : []))
    : [];

/**
 * The labels a camera's zones and lines name that its `objects.track` (when set) does not list,
 * each at the line that is wrong: where a tracked label is a typo of a label of `reference` that
 * zones or lines name (`track: [persons]`, `objects: [person]`), at the tracked label, with a
 * "did you mean", and the zones and lines are not blamed; otherwise at the zone's or line's
 * label, with a "did you mean" from the tracked labels. Reads the camera as the file has it
 * (before the schema: any shape), so it runs beside the schema's own issues. Paths are the
 * camera's (`['zones', 'door', 'objects', 0]`).
 */
export function untrackedLabels(cam: unknown, reference: LabelReference): Found[] {
  const trackValue = get(get(cam, 'objects'), 'track');
  if (!Array.isArray(trackValue)) return [];
  const track = strings(trackValue);
  const tracked = track.map(([label]) => label);
  const known = (label: string): boolean => reference.labels.includes(label);
  /** Tracked labels that are a typo of a known label: index → the label meant, and who names it. */
  const typos = new Map<number, { typo: string; meant: string; namedBy: string[] }>();
  const out: Found[] = [];
  for (const kind of ['zones', 'lines'] as const) {
    const areas = get(cam, kind);
    if (!areas || typeof areas !== 'object' || Array.isArray(areas)) continue;
    for (const [name, area] of Object.entries(areas as Record<string, unknown>))
      for (const [label, i] of strings(get(area, 'objects'))) {
        if (tracked.includes(label)) continue;
        const path: PathKey[] = [kind, name, 'objects', i];
        const typo = known(label)
          ? track.find(([t]) => !known(t) && nearest(t, [label]) === label)
          : undefined;
        if (typo) {
          const entry = typos.get(typo[1]) ?? { typo: typo[0], meant: label, namedBy: [] };
          const by = `${kind}.${name}.objects`;
          if (!entry.namedBy.includes(by)) entry.namedBy.push(by);
          typos.set(typo[1], entry);
          continue;
        }
        const near = nearest(label, tracked);
        out.push({
          path,
          message:
            `'${label}' is not one of the camera's objects.track (${tracked.join(', ')})` +
            (near ? `; did you mean '${near}'?` : ''),
        });
      }
  }
  for (const [i, { typo, meant, namedBy }] of typos) {
    const names = namedBy.length === 1 ? `${namedBy[0]} names` : `${namedBy.join(' and ')} name`;
    out.push({
      path: ['objects', 'track', i],
      message: `'${typo}' is not ${reference.what}, and ${names} '${meant}' (did you mean '${meant}'?)`,
    });
  }
  return out;
}
