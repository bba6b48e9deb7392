import { lineArrow, toShown } from './overlay.js';

/**
 * The page at `/`: every camera's latest annotated frame with its state (and, when it is not
 * streaming, why), fps and the objects in view, its zones, lines and masks drawn over the frame
 * (an SVG overlay: the JPEG stays as the API serves it), its lines' counts, and its runtime settings to flip (switches,
 * fps, priority, a line's reset; the mode in the header); beside them the event history, newest
 * first, with thumbnails, updated every two seconds; an event's snapshot opens on a click. It
 * reads only the routes of docs/http.md, so it shows what MQTT says: the cameras' filters have
 * applied. Text from the config or the model is set as text, never as HTML.
 */
export const LIVE_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Argus</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
  [hidden] { display: none !important; }
  body { font: 14px system-ui, sans-serif; margin: 0; background: #111; color: #eee; }
  header { display: flex; align-items: baseline; gap: 1rem; padding: .6rem 1rem; background: #1b1b1b; }
  header h1 { font-size: 1.2rem; margin: 0; }
  #updated { color: #999; font-size: .85rem; }
  #updated.stale { color: #e77; }
  .layout { display: grid; grid-template-columns: minmax(0, 1fr) 340px; gap: 1rem; padding: 1rem; }
  @media (max-width: 800px) { .layout { grid-template-columns: 1fr; } }
  #cameras { display: grid; grid-template-columns: repeat(auto-fill, minmax(320px, 1fr)); gap: 1rem; align-content: start; }
  figure { margin: 0; background: #222; padding: .5rem; border-radius: 6px; }
  figure img { display: block; width: 100%; background: #333; }
  figure .noframe { display: grid; place-items: center; aspect-ratio: 4 / 3; background: #333; color: #999; }
  figcaption { margin-top: .4rem; }
  .state { font-weight: bold; }
  .streaming { color: #7c7; } .backoff, .offline { color: #e77; } .connecting, .disabled { color: #ec5; }
  .why { color: #f99; margin: .3rem 0 0; overflow-wrap: anywhere; }
  .counts { display: flex; flex-wrap: wrap; gap: .3rem; margin: .4rem 0 0; padding: 0; list-style: none; }
  .counts li { background: #333; border-radius: 3px; padding: 0 .4rem; }
  .counts li.seen { background: #2d5a2d; }
  aside h2 { font-size: 1rem; margin: 0 0 .5rem; display: flex; justify-content: space-between; gap: .5rem; }
  #events { list-style: none; margin: 0; padding: 0; display: grid; gap: .4rem; }
  #events li { display: grid; grid-template-columns: 64px 1fr; gap: .5rem; background: #222; border-radius: 6px; padding: .3rem; cursor: pointer; }
  #events li:hover, #events li:focus { background: #2c2c2c; outline: 1px solid #555; }
  #events img { width: 64px; height: 64px; object-fit: cover; background: #333; border-radius: 3px; }
  #events .what { font-weight: bold; }
  #events .when { color: #aaa; font-size: .85rem; }
  #events .open { color: #7c7; }
  #snapshot video { display: block; max-width: min(90vw, 960px); max-height: 60vh; margin-top: .4rem; background: #000; }
  .empty { color: #999; }
  dialog { background: #1b1b1b; color: #eee; border: 1px solid #444; border-radius: 6px; max-width: 95vw; padding: .8rem; }
  dialog::backdrop { background: rgba(0, 0, 0, .7); }
  dialog img { display: block; width: min(90vw, 960px); max-height: 75vh; object-fit: contain; }
  dialog p { margin: .5rem 0 0; }
  select, button, input { background: #333; color: #eee; border: 1px solid #555; border-radius: 3px; }
  .controls { display: flex; flex-wrap: wrap; gap: .2rem .8rem; margin: .4rem 0 0; font-size: .9rem; }
  .controls input[type=number] { width: 3.5rem; }
  #control-msg { color: #e77; font-size: .85rem; }
  .frame { position: relative; }
  .overlay { position: absolute; left: 0; top: 0; width: 100%; height: 100%; pointer-events: none; overflow: visible; font: 12px system-ui, sans-serif; }
  .overlay text { fill: #fff; stroke: #000; stroke-width: 3px; paint-order: stroke; }
  .overlay [data-kind=zone] polygon { stroke: #3cf; stroke-width: 2; fill: rgba(51, 204, 255, .18); }
  .overlay [data-kind=zone].off polygon { stroke-dasharray: 5 4; fill: none; }
  .overlay [data-kind=mask] polygon { stroke: #bbb; stroke-width: 1.5; }
  .overlay [data-kind=cache_mask] polygon { stroke: #e4f; stroke-width: 2; stroke-dasharray: 2 3; fill: rgba(238, 68, 255, .1); }
  .overlay [data-kind=line] line { stroke: #fd0; stroke-width: 3; }
  .overlay [data-kind=line].off line { stroke-dasharray: 6 4; }
  .overlay [data-kind=line] polygon { fill: #fd0; }
  .counts li .tracked { color: #bbb; }
  .lines { display: flex; flex-wrap: wrap; gap: .3rem; margin: .3rem 0 0; padding: 0; list-style: none; }
  .lines li { background: #3a3420; border-radius: 3px; padding: 0 .4rem; }
</style>
</head>
<body>
<header><h1>Argus</h1><label>mode <select id="mode"></select></label><span id="updated"></span><span id="control-msg"></span></header>
<div class="layout">
  <main id="cameras"></main>
  <aside>
    <h2>Events <select id="camera-filter" aria-label="camera"><option value="">all cameras</option></select></h2>
    <ul id="events"></ul>
    <p id="no-events" class="empty">No events yet.</p>
  </aside>
</div>
<dialog id="snapshot">
  <img alt="">
  <video id="clip" controls playsinline preload="metadata" hidden></video>
  <p id="snapshot-text"></p>
  <p id="clip-text" class="when"></p>
  <form method="dialog"><button>Close</button></form>
</dialog>
<script>
const $ = (id) => document.getElementById(id);
const cards = new Map();
const rows = new Map();
const el = (tag, cls, text) => {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
};
const time = (iso) => new Date(iso).toLocaleTimeString();
const seconds = (a, b) => Math.max(0, Math.round((Date.parse(b) - Date.parse(a)) / 1000));

/** Revokes an element's blob URL (frames and thumbnails are blobs: each must be freed once). */
function free(img) {
  if (img && img.src.startsWith('blob:')) URL.revokeObjectURL(img.src);
}

/** A JSON answer, or an error saying what failed (the header shows it). */
async function json(path) {
  const res = await fetch(path);
  if (!res.ok) throw new Error(path.split('?')[0] + ' answered ' + res.status);
  return res.json();
}

const SVG = 'http://www.w3.org/2000/svg';
const has = (o, k) => o !== null && typeof o === 'object' && Object.prototype.hasOwnProperty.call(o, k);
const num = (o, k) => (has(o, k) ? o[k] : 0);
const union = (...objs) => [...new Set(objs.flatMap((o) => Object.keys(o)))];
let cardIds = 0;

function card(name) {
  let c = cards.get(name);
  if (c) return c;
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
  const lines = el('ul', 'lines');
  lines.setAttribute('aria-label', 'line counts');
  const frame = el('div', 'frame');
  frame.append(img, overlay, noframe);
  const controls = el('div', 'controls');
  controls.setAttribute('aria-label', 'settings');
  fig.append(frame, cap, why, counts, lines, controls);
  $('cameras').append(fig);
  const opt = el('option', '', name);
  opt.value = name;
  $('camera-filter').append(opt);
  c = { fig, img, overlay, noframe, cap, why, counts, lines, controls, opt, shown: '', keys: '', boxes: null, id: ++cardIds };
  cards.set(name, c);
  return c;
}

function dropCard(name) {
  const c = cards.get(name);
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
function chip(list, text, n, tracked) {
  const li = el('li', n > 0 ? 'seen' : '', text + ' ' + n);
  li.dataset.boxes = n;
  li.dataset.tracked = tracked;
  if (tracked !== n) li.append(el('span', 'tracked', ' · ' + tracked + ' tracked'));
  list.append(li);
}

function showCounts(c, cam) {
  const boxes = c.boxes || { labels: {}, zones: {} };
  const tracked = cam.counts;
  c.counts.replaceChildren();
  for (const label of union(tracked.labels, boxes.labels))
    chip(c.counts, label, num(boxes.labels, label), num(tracked.labels, label));
  for (const zone of union(tracked.zones, boxes.zones, cam.zone_dwell_s)) {
    const inBoxes = has(boxes.zones, zone) ? boxes.zones[zone] : {};
    const inTracked = has(tracked.zones, zone) ? tracked.zones[zone] : {};
    for (const label of union(inTracked, inBoxes))
      chip(c.counts, zone + ': ' + label, num(inBoxes, label), num(inTracked, label));
    // Time in zone: shown once the view's source gives it (zone_dwell_s).
    if (has(cam.zone_dwell_s, zone)) {
      const li = el('li', 'dwell', zone + ': longest ' + Math.round(cam.zone_dwell_s[zone]) + ' s');
      li.dataset.zone = zone;
      c.counts.append(li);
    }
  }
  c.lines.replaceChildren();
  for (const [name, l] of Object.entries(cam.geometry.lines)) {
    const li = el('li', '', name + ': ' + l.directions.map((d) => d + ' ' + lineTotal(cam, name, d)).join(' · '));
    li.dataset.line = name;
    c.lines.append(li);
  }
  c.lines.hidden = c.lines.children.length === 0;
}

/** A line's crossings in one direction, all labels together. */
function lineTotal(cam, line, direction) {
  const byLabel = has(cam.line_counts, line) ? cam.line_counts[line] : {};
  return Object.values(byLabel).reduce((n, byDir) => n + num(byDir, direction), 0);
}

${toShown.toString()}
${lineArrow.toString()}

function svg(tag, attrs, parent) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  parent.append(e);
  return e;
}

function svgText(parent, text, x, y, attrs) {
  svg('text', { x: x.toFixed(1), y: y.toFixed(1), ...attrs }, parent).textContent = text;
}

const pointList = (pts) => pts.map((p) => p[0].toFixed(1) + ',' + p[1].toFixed(1)).join(' ');
/** The topmost point (then leftmost): where a shape's name goes. */
const topPoint = (pts) => pts.reduce((a, b) => (b[1] < a[1] || (b[1] === a[1] && b[0] < a[0]) ? b : a));

/**
 * The camera's geometry over its frame, in pixels of the image as shown (overlay.ts): object
 * masks hatched, cache masks dotted magenta, zones cyan with a translucent fill (dashed when
 * off), lines yellow with an arrow per direction, its name and count. Redrawn at each refresh;
 * a resize in between stretches it (viewBox) until then.
 */
function drawOverlay(c, cam) {
  const geo = cam.geometry;
  const shown = { width: c.img.clientWidth, height: c.img.clientHeight };
  const o = c.overlay;
  o.replaceChildren();
  const off = !cam.has_frame || !geo.width || !geo.height || !shown.width || !shown.height;
  o.style.display = off ? 'none' : '';
  if (off) return;
  o.setAttribute('viewBox', '0 0 ' + shown.width + ' ' + shown.height);
  o.setAttribute('preserveAspectRatio', 'none');
  const map = (pts) => toShown(pts, { width: geo.width, height: geo.height }, shown);
  // A name's start, moved left when it would run past the image's right edge (12 px glyphs under 7 px wide).
  const inside = (x, text) => Math.max(2, Math.min(x, shown.width - text.length * 7 - 2));
  const hatch = 'argus-hatch-' + c.id;
  const pattern = svg('pattern', { id: hatch, width: 8, height: 8, patternUnits: 'userSpaceOnUse', patternTransform: 'rotate(45)' }, svg('defs', {}, o));
  svg('rect', { width: 8, height: 8, fill: 'rgba(0, 0, 0, .55)' }, pattern);
  svg('line', { x1: 0, y1: 0, x2: 0, y2: 8, stroke: 'rgba(220, 220, 220, .8)', 'stroke-width': 2 }, pattern);
  const shape = (kind, name, pts, attrs) => {
    const g = svg('g', { 'data-kind': kind, 'data-name': name }, o);
    const p = map(pts);
    svg('polygon', { points: pointList(p), 'data-name': name, ...attrs }, g);
    const t = topPoint(p);
    svgText(g, name, inside(t[0] + 3, name), t[1] + 14);
    return g;
  };
  const perLabel = new Map();
  for (const m of geo.masks) {
    const key = m.label === null ? '' : m.label + ' ';
    perLabel.set(key, (perLabel.get(key) || 0) + 1);
    const g = shape('mask', key + 'mask ' + perLabel.get(key), m.points, { fill: 'url(#' + hatch + ')' });
    if (m.label !== null) g.dataset.label = m.label;
  }
  geo.cache_mask.forEach((pts, i) => shape('cache_mask', 'cache mask ' + (i + 1), pts, {}));
  for (const [name, z] of Object.entries(geo.zones)) {
    const g = shape('zone', name, z.points, {});
    if (!z.enabled) g.classList.add('off');
  }
  for (const [name, l] of Object.entries(geo.lines)) {
    const g = svg('g', { 'data-kind': 'line', 'data-name': name }, o);
    if (!l.enabled) g.classList.add('off');
    const [a, b] = map(l.points);
    svg('line', { x1: a[0], y1: a[1], x2: b[0], y2: b[1], 'data-name': name }, g);
    const { mid, normal } = lineArrow(a, b);
    const along = [normal[1], -normal[0]];
    // A and B just inside the line's ends, the name a quarter of the way along, on the left side.
    const end = (p, s, text) => svgText(g, text, inside(p[0] + along[0] * 10 * s - 4 - normal[0] * 10, text), p[1] + along[1] * 10 * s - normal[1] * 10 + 4);
    end(a, 1, 'A');
    end(b, -1, 'B');
    svgText(g, name, inside((3 * a[0] + b[0]) / 4 - normal[0] * 12, name), (3 * a[1] + b[1]) / 4 - normal[1] * 12 + 4);
    // The first direction is crossing to the right of A→B (normal), the second back; each
    // arrow starts a little aside of the midpoint so the two do not overlap.
    l.directions.forEach((direction, k) => {
      const s = k === 0 ? 1 : -1;
      const n = [normal[0] * s, normal[1] * s];
      const from = [mid[0] + along[0] * 10 * s, mid[1] + along[1] * 10 * s];
      const tip = [from[0] + n[0] * 24, from[1] + n[1] * 24];
      const total = lineTotal(cam, name, direction);
      const d = svg('g', { 'data-direction': direction, 'data-count': total }, g);
      svg('line', { x1: from[0], y1: from[1], x2: tip[0] - n[0] * 6, y2: tip[1] - n[1] * 6 }, d);
      const head = [tip, [tip[0] - n[0] * 8 + n[1] * 5, tip[1] - n[1] * 8 - n[0] * 5], [tip[0] - n[0] * 8 - n[1] * 5, tip[1] - n[1] * 8 + n[0] * 5]];
      svg('polygon', { points: pointList(head) }, d);
      svgText(d, direction + ' ' + total, tip[0] + n[0] * 10, tip[1] + n[1] * 10 + 4, { 'text-anchor': 'middle' });
    });
  }
}

async function showCamera(cam) {
  const c = card(cam.camera);
  c.cap.replaceChildren(
    el('b', '', cam.camera + ' '),
    el('span', 'state ' + cam.state, cam.state),
    document.createTextNode(' · ' + cam.fps_in.toFixed(1) + ' fps in, ' + cam.fps_analysed.toFixed(1) + ' analysed'),
  );
  const err = cam.state !== 'streaming' && cam.last_error;
  c.why.hidden = !err;
  c.why.textContent = err ? err.cause + ': ' + err.message : '';
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
}

// The next frame is fetched and decoded off screen, then takes the shown one's place: no
// flicker, and a frame that fails to load leaves the last one up. A frame already shown at
// this width is not fetched again. Its answer says what boxes are drawn on it (X-Argus-Boxes):
// the count chips show those, never the boxes of another frame.
async function frame(name, c, what) {
  // Drawn for the width it is shown at, so its labels read at their size.
  const width = Math.min(1920, Math.max(64, Math.round(c.fig.clientWidth - 16)));
  const key = what + ' ' + width;
  if (c.shown === key) return;
  const res = await fetch('/api/cameras/' + encodeURIComponent(name) + '/latest.jpg?width=' + width);
  if (!res.ok) throw new Error('the frame of ' + name + ' answered ' + res.status);
  const boxes = JSON.parse(res.headers.get('X-Argus-Boxes') || '{"labels":{},"zones":{}}');
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

// The snapshot is replaced while the object stays in view: fetched again when its time changes,
// and again at the next refresh when a fetch failed.
async function thumbnail(row, ev) {
  const shot = ev.snapshot;
  if (!shot || row.shot === shot.ts || row.fetching) return;
  row.fetching = true;
  try {
    const res = await fetch(shot.path + '?crop=1', { cache: 'no-cache' });
    if (!res.ok) throw new Error('a thumbnail answered ' + res.status);
    const url = URL.createObjectURL(await res.blob());
    if (rows.get(ev.id) !== row) return URL.revokeObjectURL(url);
    const img = row.querySelector('img');
    free(img);
    img.src = url;
    row.shot = shot.ts;
  } finally {
    row.fetching = false;
  }
}

function describe(ev) {
  const zones = ev.entered_zones.length ? ' · ' + ev.entered_zones.join(', ') : '';
  const how = ev.end_ts ? seconds(ev.start_ts, ev.end_ts) + ' s' : 'in view';
  return { what: ev.label + ' on ' + ev.camera, when: time(ev.start_ts) + ' · ' + how + zones };
}

function showEvents(events) {
  const list = $('events');
  const keep = new Set(events.map((e) => e.id));
  for (const [id, row] of rows)
    if (!keep.has(id)) {
      free(row.querySelector('img'));
      row.remove();
      rows.delete(id);
    }
  let before = null;
  const loads = [];
  for (const ev of events) {
    let row = rows.get(ev.id);
    if (!row) {
      row = el('li');
      row.dataset.event = ev.id;
      row.tabIndex = 0;
      const img = el('img');
      img.alt = '';
      const text = el('div');
      text.append(el('div', 'what'), el('div', 'when'));
      row.append(img, text);
      row.addEventListener('click', () => openSnapshot(row));
      row.addEventListener('keydown', (e) => { if (e.key === 'Enter') openSnapshot(row); });
      rows.set(ev.id, row);
    }
    row.event = ev;
    const d = describe(ev);
    row.querySelector('.what').textContent = d.what;
    const when = row.querySelector('.when');
    when.textContent = d.when + (ev.clip && ev.clip.state === 'ready' ? ' · ▶ clip' : '');
    when.classList.toggle('open', !ev.end_ts);
    // Newest first: each row goes after the one before it.
    const at = before ? before.nextSibling : list.firstChild;
    if (at !== row) list.insertBefore(row, at);
    before = row;
    loads.push(thumbnail(row, ev));
  }
  $('no-events').hidden = events.length > 0;
  return loads;
}

function openSnapshot(row) {
  const ev = row.event;
  const dlg = $('snapshot');
  const img = dlg.querySelector('img');
  const d = describe(ev);
  const text = (more) => { $('snapshot-text').textContent = d.what + ' · ' + d.when + more; };
  // Cleared first: the last event's picture never stands for this one's.
  img.removeAttribute('src');
  img.hidden = !ev.snapshot;
  text(ev.snapshot ? ' · best score ' + ev.snapshot.score.toFixed(2) : ' · no snapshot');
  if (ev.snapshot) {
    img.alt = d.what;
    img.onerror = () => {
      img.hidden = true;
      text(' · the snapshot is no longer kept');
    };
    img.src = ev.snapshot.path + '?crop=0';
  }
  showClip(ev);
  if (!dlg.open) dlg.showModal();
}

/** The event's clip under its snapshot, when it has one; else why not (docs/mqtt.md, clip). */
function showClip(ev) {
  const video = $('clip');
  const c = ev.clip;
  video.pause();
  $('snapshot').onclose = () => video.pause();
  video.removeAttribute('src');
  video.hidden = !(c && c.state === 'ready');
  let note = '';
  if (!c) note = '';
  else if (c.state === 'recording') note = 'clip: being recorded';
  else if (c.state === 'failed') note = 'no clip: ' + c.error;
  else {
    video.src = c.path;
    video.onerror = () => { video.hidden = true; $('clip-text').textContent = 'the clip is no longer kept'; };
    note = 'clip ' + c.duration_s + ' s' + (c.browser_plays ? '' : ' (' + c.codec + ': this browser may not play it)');
    if (c.missing) note += ' · ' + (c.missing.start_s + c.missing.end_s).toFixed(1) + ' s missing (' + c.missing.reasons.join(', ') + ')';
  }
  $('clip-text').textContent = note;
}

/**
 * A change of a runtime setting (PUT /api/control/...): the answer is the settings as they are
 * now. A 403 that a token would mend asks for it once (kept for the tab, in sessionStorage) and
 * tries again; a refused token is forgotten, so the next change asks again.
 */
async function change(path, value) {
  const send = () => {
    const headers = { 'Content-Type': 'application/json' };
    const token = sessionStorage.getItem('argus-token');
    if (token) headers.Authorization = 'Bearer ' + token;
    return fetch('/api/control' + path, { method: 'PUT', headers, body: JSON.stringify(value) });
  };
  let res = await send();
  if (res.status === 403 && res.headers.has('WWW-Authenticate')) {
    const token = prompt('Changing settings from here takes the token (http.token):');
    if (token) {
      sessionStorage.setItem('argus-token', token.trim());
      res = await send();
      if (res.status === 403) sessionStorage.removeItem('argus-token');
    }
  }
  const body = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(body.error || path + ' answered ' + res.status);
  return body;
}

/** Runs a change from an input: the input waits for its answer; a refusal is said and undone. */
async function changeFrom(input, path, value) {
  input.disabled = true;
  input.pending = true;
  try {
    showControl(await change(path, value));
    $('control-msg').textContent = '';
  } catch (e) {
    $('control-msg').textContent = e.message;
  } finally {
    input.pending = false;
    input.disabled = !lastControl.enabled;
    showControl(lastControl);
  }
}

const keyName = (key) => key.replace(/^zones\\.(.*)\\.enabled$/, 'zone $1').replace(/^lines\\.(.*)\\.enabled$/, 'line $1');
const camPath = (name, rest) => '/cameras/' + encodeURIComponent(name) + '/' + rest;

/** A camera's settings as inputs: built when its keys change, else only their values set. */
function controlsOf(name, c, settings) {
  const keys = JSON.stringify(Object.keys(settings));
  if (c.keys !== keys) {
    c.keys = keys;
    c.inputs = new Map();
    c.controls.replaceChildren();
    for (const [key, v] of Object.entries(settings)) {
      const label = el('label', '', keyName(key) + ' ');
      const input = el('input');
      input.dataset.key = key;
      input.type = typeof v === 'boolean' ? 'checkbox' : 'number';
      const path = camPath(name, encodeURIComponent(key));
      if (input.type === 'checkbox') input.addEventListener('change', () => changeFrom(input, path, input.checked));
      else input.addEventListener('change', () => changeFrom(input, path, Number(input.value)));
      label.append(input);
      c.controls.append(label);
      c.inputs.set(key, input);
      const line = /^lines\\.(.*)\\.enabled$/.exec(key);
      if (line) {
        const reset = el('button', '', 'reset');
        reset.title = 'set the counts of line ' + line[1] + ' back to 0';
        reset.addEventListener('click', () => changeFrom(reset, camPath(name, 'lines/' + encodeURIComponent(line[1]) + '/reset'), true));
        label.append(' ', reset);
      }
    }
  }
  for (const [key, v] of Object.entries(settings)) {
    const input = c.inputs.get(key);
    // Not under the person's hands: a change on its way, a number being typed.
    if (input.pending || document.activeElement === input) continue;
    input.disabled = !lastControl.enabled;
    if (input.type === 'checkbox') input.checked = v;
    else input.value = String(v);
  }
}

let lastControl = { enabled: false };
function showControl(view) {
  lastControl = view;
  const mode = $('mode');
  if (JSON.stringify([...mode.options].map((o) => o.value)) !== JSON.stringify(view.modes))
    mode.replaceChildren(...view.modes.map((m) => { const o = el('option', '', m); o.value = m; return o; }));
  if (!mode.pending) mode.value = view.mode;
  mode.disabled = !view.enabled || mode.pending;
  for (const [name, settings] of Object.entries(view.cameras)) {
    const c = cards.get(name);
    if (c) controlsOf(name, c, settings);
  }
}
$('mode').addEventListener('change', () => changeFrom($('mode'), '/mode', $('mode').value));

/**
 * One refresh: cameras, then events. Each refresh is a generation; one started since (a change
 * of the camera filter) makes this one's answers stale, and they are dropped.
 */
let generation = 0;
async function refresh(mine) {
  try {
    const [cams, control] = await Promise.all([json('/api/cameras'), json('/api/control')]);
    if (mine !== generation) return;
    const names = new Set(cams.map((c) => c.camera));
    for (const name of cards.keys()) if (!names.has(name)) dropCard(name);
    const loads = cams.map(showCamera);
    showControl(control);
    const camera = $('camera-filter').value;
    const events = await json('/api/events?limit=50' + (camera ? '&camera=' + encodeURIComponent(camera) : ''));
    if (mine !== generation) return;
    loads.push(...showEvents(events));
    const failed = (await Promise.allSettled(loads)).find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
    $('updated').textContent = 'updated ' + new Date().toLocaleTimeString();
    $('updated').className = '';
  } catch (e) {
    if (mine !== generation) return;
    $('updated').textContent = (e instanceof TypeError ? 'cannot reach Argus' : e.message) + '; retrying';
    $('updated').className = 'stale';
  }
}

// Refreshes never pile up: the next starts 2 s after the last ended, or at once on a new filter.
let timer;
async function loop() {
  const mine = ++generation;
  clearTimeout(timer);
  await refresh(mine);
  if (mine === generation) timer = setTimeout(loop, 2000);
}
$('camera-filter').addEventListener('change', loop);
loop();
</script>
</body>
</html>
`;
