import type { BoxCounts, CameraView } from './api.js';
import { $, el, free, SVG } from './dom.js';
import { drawOverlay } from './draw.js';
import { has, lineTotal, num, objectLine, union } from './format.js';
import { newTimeline, showTimeline, type Timeline } from './timeline.js';

/** A camera's card: its figure and what it shows, and what was last fetched for it. */
export interface Card {
  fig: HTMLElement;
  img: HTMLImageElement;
  overlay: SVGSVGElement;
  noframe: HTMLElement;
  cap: HTMLElement;
  why: HTMLElement;
  counts: HTMLUListElement;
  /** The objects in view moving on calibrated ground (their speed) or loitering. */
  objects: HTMLUListElement;
  lines: HTMLUListElement;
  controls: HTMLElement;
  /** Its recording's last hour, and its events (timeline.ts). */
  timeline: Timeline;
  /** Its entry in the events' camera filter. */
  opt: HTMLOptionElement;
  /** The frame shown (its time, what it shows, the width asked for): not fetched again. */
  shown: string;
  /** The settings' keys the inputs were built for. */
  keys: string;
  inputs: Map<string, HTMLInputElement>;
  /** The boxes drawn on the frame shown (X-Argus-Boxes); null without one. */
  boxes: BoxCounts | null;
  /** Unique on the page (the overlay's pattern ids). */
  id: number;
}

/** The cards shown, by camera. */
export const cards = new Map<string, Card>();
let cardIds = 0;

/** The camera's card, made (and added to the camera filter) when it has none. */
export function card(name: string): Card {
  const had = cards.get(name);
  if (had) return had;
  const fig = el('figure');
  fig.dataset.camera = name;
  const img = el('img');
  img.alt = name + ', latest frame';
  img.hidden = true;
  const noframe = el('div', 'noframe', 'no frame yet');
  const overlay = document.createElementNS(SVG, 'svg');
  overlay.setAttribute('class', 'overlay');
  overlay.setAttribute('aria-label', 'zones, lines and masks');
  const cap = el('figcaption');
  const why = el('p', 'why');
  const counts = el('ul', 'counts');
  counts.setAttribute('aria-label', 'objects in the frame shown');
  const objects = el('ul', 'objects');
  objects.setAttribute('aria-label', 'speeds and loitering of the objects in view');
  objects.hidden = true;
  const lines = el('ul', 'lines');
  lines.setAttribute('aria-label', 'line counts');
  const frame = el('div', 'frame');
  frame.append(img, overlay, noframe);
  const controls = el('div', 'controls');
  controls.setAttribute('aria-label', 'settings');
  const timeline = newTimeline(name);
  fig.append(frame, cap, why, counts, objects, lines, timeline.root, controls);
  $('cameras').append(fig);
  const opt = el('option', '', name);
  opt.value = name;
  $('camera-filter').append(opt);
  const c: Card = {
    fig,
    img,
    overlay,
    noframe,
    cap,
    why,
    counts,
    objects,
    lines,
    controls,
    timeline,
    opt,
    shown: '',
    keys: '',
    inputs: new Map(),
    boxes: null,
    id: ++cardIds,
  };
  cards.set(name, c);
  return c;
}

/** Removes a camera's card (it is no longer configured). */
export function dropCard(name: string): void {
  const c = cards.get(name);
  if (!c) return;
  free(c.img);
  c.fig.remove();
  c.opt.remove();
  cards.delete(name);
}

/**
 * A count chip: the boxes of this label in the frame shown (so it agrees with what the eye
 * counts), and the tracker's count (the count topic's) beside it when that differs: an object
 * counts there once confirmed (min_frames), and for a moment after it was last seen.
 */
function chip(list: HTMLUListElement, text: string, n: number, tracked: number): void {
  const li = el('li', n > 0 ? 'seen' : '', text + ' ' + n);
  li.dataset.boxes = String(n);
  li.dataset.tracked = String(tracked);
  if (tracked !== n) li.append(el('span', 'tracked', ' · ' + tracked + ' tracked'));
  list.append(li);
}

function showCounts(c: Card, cam: CameraView): void {
  const boxes = c.boxes ?? { labels: {}, zones: {} };
  const tracked = cam.counts;
  c.counts.replaceChildren();
  for (const label of union(tracked.labels, boxes.labels))
    chip(c.counts, label, num(boxes.labels, label), num(tracked.labels, label));
  for (const zone of union(tracked.zones, boxes.zones, cam.zone_dwell_s)) {
    const inBoxes = has(boxes.zones, zone) ? boxes.zones[zone]! : {};
    const inTracked = has(tracked.zones, zone) ? tracked.zones[zone]! : {};
    for (const label of union(inTracked, inBoxes))
      chip(c.counts, zone + ': ' + label, num(inBoxes, label), num(inTracked, label));
    // Time in zone: shown once the view's source gives it (zone_dwell_s).
    if (has(cam.zone_dwell_s, zone)) {
      const li = el('li', 'dwell', zone + ': longest ' + Math.round(cam.zone_dwell_s[zone]!) + ' s');
      li.dataset.zone = zone;
      c.counts.append(li);
    }
  }
  c.objects.replaceChildren();
  for (const o of cam.objects ?? []) {
    const text = objectLine(o);
    if (text === undefined) continue;
    const li = el('li', o.loitering_zones.length ? 'loitering' : 'moving', text);
    li.dataset.object = o.id;
    c.objects.append(li);
  }
  c.objects.hidden = c.objects.children.length === 0;
  c.lines.replaceChildren();
  for (const [name, l] of Object.entries(cam.geometry.lines)) {
    const li = el(
      'li',
      '',
      name + ': ' + l.directions.map((d) => d + ' ' + lineTotal(cam, name, d)).join(' · '),
    );
    li.dataset.line = name;
    c.lines.append(li);
  }
  c.lines.hidden = c.lines.children.length === 0;
}

/**
 * The health badge: the fault a camera's picture shows (covered, defocused, moved, blackout,
 * frozen), with since when; `learning` while its reference is learnt; nothing when ok.
 */
function healthBadge(cam: CameraView): Node[] {
  const h = cam.health;
  if (!h || (h.state === 'ok' && !h.learning)) return [];
  if (h.state === 'ok') return [document.createTextNode(' '), el('span', 'health learning', 'learning')];
  const badge = el('span', 'health fault', h.state);
  badge.title =
    'camera health: ' +
    h.state +
    ' since ' +
    h.since +
    (h.measure === undefined ? '' : ' (' + h.measure + ')');
  return [document.createTextNode(' '), badge];
}

/** A camera's card as `GET /api/cameras` says: state, fps, why not streaming, frame, counts, overlay. */
export async function showCamera(cam: CameraView): Promise<void> {
  const c = card(cam.camera);
  c.cap.replaceChildren(
    el('b', '', cam.camera + ' '),
    el('span', 'state ' + cam.state, cam.state),
    ...healthBadge(cam),
    document.createTextNode(
      ' · ' + cam.fps_in.toFixed(1) + ' fps in, ' + cam.fps_analysed.toFixed(1) + ' analysed',
    ),
  );
  const err = cam.state !== 'streaming' && cam.last_error;
  c.why.hidden = !err;
  c.why.textContent = err ? err.cause + ': ' + err.message : '';
  const timeline = showTimeline(cam.camera, c.timeline);
  // Awaited at the end; a frame that fails first is the failure the header shows.
  timeline.catch(() => undefined);
  c.img.hidden = !cam.has_frame;
  c.noframe.hidden = cam.has_frame;
  if (!cam.has_frame) c.boxes = null;
  try {
    // Fetched again when the frame or what it shows (the filters, detection off) changed.
    if (cam.has_frame) await frame(cam.camera, c, cam.last_frame_ts + ' ' + JSON.stringify(cam.detections));
  } finally {
    // The chips count the boxes of the frame shown, even when a newer one failed to load.
    if (cards.get(cam.camera) === c) {
      showCounts(c, cam);
      drawOverlay(c, cam);
    }
  }
  await timeline;
}

// The next frame is fetched and decoded off screen, then takes the shown one's place: no
// flicker, and a frame that fails to load leaves the last one up. A frame already shown at
// this width is not fetched again. Its answer says what boxes are drawn on it (X-Argus-Boxes):
// the count chips show those, never the boxes of another frame.
async function frame(name: string, c: Card, what: string): Promise<void> {
  // Drawn for the width it is shown at, so its labels read at their size.
  const width = Math.min(1920, Math.max(64, Math.round(c.fig.clientWidth - 16)));
  const key = what + ' ' + width;
  if (c.shown === key) return;
  const res = await fetch('/api/cameras/' + encodeURIComponent(name) + '/latest.jpg?width=' + width);
  if (!res.ok) throw new Error('the frame of ' + name + ' answered ' + res.status);
  const boxes = JSON.parse(res.headers.get('X-Argus-Boxes') || '{"labels":{},"zones":{}}') as BoxCounts;
  const next = el('img');
  next.alt = c.img.alt;
  next.dataset.ts = res.headers.get('X-Argus-Frame-Ts') || '';
  next.src = URL.createObjectURL(await res.blob());
  try {
    await next.decode();
  } catch (e) {
    free(next);
    throw e;
  }
  if (cards.get(name) !== c) return free(next);
  free(c.img);
  c.img.replaceWith(next);
  c.img = next;
  c.shown = key;
  c.boxes = boxes;
}
