/**
 * The page's pure helpers: what it writes from the API's answers, with no DOM, so the unit tests
 * test what the browser runs (test/unit/page).
 */
import type { CameraView, EventView, FleetView, LiveObject, Point, Speed } from './api.js';

/** Whether `o` has its own key `k` (names a user chose may be `constructor` or `__proto__`). */
export const has = (o: unknown, k: string): boolean =>
  o !== null && typeof o === 'object' && Object.prototype.hasOwnProperty.call(o, k);

/** `o[k]`, or 0 where `o` has no such key of its own. */
export const num = (o: Record<string, number>, k: string): number => (has(o, k) ? o[k]! : 0);

/** The keys of all the objects, each once, in the order first seen. */
export const union = (...objs: object[]): string[] => [...new Set(objs.flatMap((o) => Object.keys(o)))];

/** Whole seconds from `a` to `b` (ISO times), never below 0. */
export const seconds = (a: string, b: string): number =>
  Math.max(0, Math.round((Date.parse(b) - Date.parse(a)) / 1000));

/** A line's crossings in one direction, all labels together. */
export function lineTotal(cam: Pick<CameraView, 'line_counts'>, line: string, direction: string): number {
  const byLabel = has(cam.line_counts, line) ? cam.line_counts[line]! : {};
  return Object.values(byLabel).reduce((n, byDir) => n + num(byDir, direction), 0);
}

/** An event in two lines: what (label, camera) and when (start, how long, the zones it entered). */
export function describe(
  ev: Pick<EventView, 'label' | 'camera' | 'start_ts' | 'end_ts' | 'entered_zones'>,
  time: (iso: string) => string = (iso) => new Date(iso).toLocaleTimeString(),
): { what: string; when: string } {
  const zones = ev.entered_zones.length ? ' · ' + ev.entered_zones.join(', ') : '';
  const how = ev.end_ts ? seconds(ev.start_ts, ev.end_ts) + ' s' : 'in view';
  return { what: ev.label + ' on ' + ev.camera, when: time(ev.start_ts) + ' · ' + how + zones };
}

/** A speed as the payload gives it: `7.2 km/h`. */
const speedValue = (v: number, unit: string): string => v + ' ' + unit;

/**
 * An event's speed and loitering, as its payload gives them (`max 7.6 km/h in road · now 7.2
 * km/h`, `loitering in door`); '' when it has neither.
 */
export function eventDetails(ev: Pick<EventView, 'speed' | 'loitering_zones'>): string {
  const parts: string[] = [];
  const s: Speed | null | undefined = ev.speed;
  if (s)
    parts.push(
      'max ' +
        speedValue(s.max, s.unit) +
        ' in ' +
        s.zone +
        (s.current === null ? '' : ' · now ' + speedValue(s.current, s.unit)),
    );
  if (ev.loitering_zones?.length) parts.push('loitering in ' + ev.loitering_zones.join(', '));
  return parts.join(' · ');
}

/**
 * An object in view as the live card lists it, when it has something to say beyond its count:
 * its speed now (`bright 7.2 km/h in road`) and where it loiters; undefined when it has neither.
 */
export function objectLine(o: LiveObject): string | undefined {
  const parts: string[] = [];
  if (o.speed && o.speed.current !== null)
    parts.push(speedValue(o.speed.current, o.speed.unit) + ' in ' + o.speed.zone);
  if (o.loitering_zones.length) parts.push('loitering in ' + o.loitering_zones.join(', '));
  return parts.length ? o.label + ' ' + parts.join(' · ') : undefined;
}

/** A setting's key as its switch is labelled: `zones.door.enabled` is `zone door`. */
export const keyName = (key: string): string =>
  key.replace(/^zones\.(.*)\.enabled$/, 'zone $1').replace(/^lines\.(.*)\.enabled$/, 'line $1');

/** The line whose `enabled` a key is (it gets a reset button beside it); undefined for other keys. */
export const lineOfKey = (key: string): string | undefined => /^lines\.(.*)\.enabled$/.exec(key)?.[1];

/** The path under /api/control of a camera's setting (or line reset) `rest`. */
export const camPath = (name: string, rest: string): string =>
  '/cameras/' + encodeURIComponent(name) + '/' + rest;

/** Points as an SVG `points` attribute, to 0.1 px. */
export const pointList = (pts: readonly Point[]): string =>
  pts.map((p) => p[0].toFixed(1) + ',' + p[1].toFixed(1)).join(' ');

/** The topmost point (then leftmost): where a shape's name goes. */
export const topPoint = (pts: readonly Point[]): Point =>
  pts.reduce((a, b) => (b[1] < a[1] || (b[1] === a[1] && b[0] < a[0]) ? b : a));

/** A box of the fleet as the page's fleet table lists it. */
export interface FleetRow {
  box: string;
  labels: string;
  capacity: number | null;
  /** Cameras run ÷ capacity, as `2/4 · 50 %`; empty for a box no longer alive. */
  load: string;
  /** Whether etcd holds its lease (a member); a box only named as an owner is not. */
  alive: boolean;
  /** This box (the one whose page this is). */
  here: boolean;
  cameras: string[];
}

/**
 * The fleet's boxes, from `/api/fleet`: each member (name order) with its load, then any box that
 * still holds an owner key but is no member (its lease gone, its keys about to go).
 */
export function fleetRows(view: FleetView): FleetRow[] {
  const rows: FleetRow[] = [...view.members]
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((m) => ({
      box: m.name,
      labels: m.labels.join(', '),
      capacity: m.capacity,
      load:
        m.cameras.length +
        '/' +
        m.capacity +
        ' · ' +
        Math.round((100 * m.cameras.length) / m.capacity) +
        ' %',
      alive: true,
      here: m.name === view.box,
      cameras: [...m.cameras].sort(),
    }));
  const gone = new Map<string, string[]>();
  for (const [camera, o] of Object.entries(view.owners))
    if (!view.members.some((m) => m.name === o.box)) gone.set(o.box, [...(gone.get(o.box) ?? []), camera]);
  for (const [box, cameras] of [...gone].sort())
    rows.push({
      box,
      labels: '',
      capacity: null,
      load: '',
      alive: false,
      here: box === view.box,
      cameras: cameras.sort(),
    });
  return rows;
}

/** The longest stretch recording.mp4 serves at once (ms): an hour. */
export const MAX_PLAY_MS = 3600_000;

/**
 * Where `start`–`end` (ms; `end` null while it goes on: now) lies on a timeline of `from`–`to`,
 * as percentages of its width (`left`, `width`), cut to the timeline; undefined when it lies
 * outside it.
 */
export function span(
  start: number,
  end: number | null,
  from: number,
  to: number,
): { left: number; width: number } | undefined {
  const a = Math.max(start, from);
  const b = Math.min(end ?? to, to);
  if (b < a || to <= from) return undefined;
  return { left: (100 * (a - from)) / (to - from), width: (100 * (b - a)) / (to - from) };
}

/**
 * The recording.mp4 path that plays `start`–`end` (ms) of a camera's recording as a timeline of
 * `from`–`to` shows it: from where it enters the timeline, an hour at most.
 */
export function stretchPath(camera: string, start: number, end: number, from: number, to: number): string {
  const a = Math.max(start, from);
  const b = Math.min(end, to, a + MAX_PLAY_MS);
  return (
    '/api/cameras/' +
    encodeURIComponent(camera) +
    '/recording.mp4?start=' +
    new Date(a).toISOString() +
    '&end=' +
    new Date(Math.max(b, a + 1000)).toISOString()
  );
}

/**
 * Where a timeline ending at `to` (ms) starts: at its oldest stretch or event, but `maxMs` before
 * `to` at most and `minMs` at least (a camera recording for a minute gets a readable scale).
 */
export function timelineStart(
  view: { ranges: { start: string }[]; events: { start: string }[] },
  to: number,
  maxMs: number,
  minMs: number,
): number {
  const oldest = Math.min(...[...view.ranges, ...view.events].map((r) => Date.parse(r.start)));
  return Math.max(to - maxMs, Math.min(oldest, to - minMs));
}
