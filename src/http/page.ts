/**
 * The page at `/`: every camera's latest annotated frame with its state (and, when it is not
 * streaming, why), fps and the objects in view, and its runtime settings to flip (switches,
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
  .empty { color: #999; }
  dialog { background: #1b1b1b; color: #eee; border: 1px solid #444; border-radius: 6px; max-width: 95vw; padding: .8rem; }
  dialog::backdrop { background: rgba(0, 0, 0, .7); }
  dialog img { display: block; width: min(90vw, 960px); max-height: 75vh; object-fit: contain; }
  dialog p { margin: .5rem 0 0; }
  select, button, input { background: #333; color: #eee; border: 1px solid #555; border-radius: 3px; }
  .controls { display: flex; flex-wrap: wrap; gap: .2rem .8rem; margin: .4rem 0 0; font-size: .9rem; }
  .controls input[type=number] { width: 3.5rem; }
  #control-msg { color: #e77; font-size: .85rem; }
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
  <p id="snapshot-text"></p>
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

function card(name) {
  let c = cards.get(name);
  if (c) return c;
  const fig = el('figure');
  fig.dataset.camera = name;
  const img = el('img');
  img.alt = name + ', latest frame';
  img.hidden = true;
  const noframe = el('div', 'noframe', 'no frame yet');
  const cap = el('figcaption');
  const why = el('p', 'why');
  const counts = el('ul', 'counts');
  counts.setAttribute('aria-label', 'objects in view');
  const frame = el('div', 'frame');
  frame.append(img, noframe);
  const controls = el('div', 'controls');
  controls.setAttribute('aria-label', 'settings');
  fig.append(frame, cap, why, counts, controls);
  $('cameras').append(fig);
  const opt = el('option', '', name);
  opt.value = name;
  $('camera-filter').append(opt);
  c = { fig, img, noframe, cap, why, counts, controls, opt, shown: '', keys: '' };
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

function chip(list, text, n) {
  list.append(el('li', n > 0 ? 'seen' : '', text + ' ' + n));
}

function showCamera(cam) {
  const c = card(cam.camera);
  c.cap.replaceChildren(
    el('b', '', cam.camera + ' '),
    el('span', 'state ' + cam.state, cam.state),
    document.createTextNode(' · ' + cam.fps_in.toFixed(1) + ' fps in, ' + cam.fps_analysed.toFixed(1) + ' analysed'),
  );
  const err = cam.state !== 'streaming' && cam.last_error;
  c.why.hidden = !err;
  c.why.textContent = err ? err.cause + ': ' + err.message : '';
  c.counts.replaceChildren();
  for (const [label, n] of Object.entries(cam.counts.labels)) chip(c.counts, label, n);
  for (const [zone, labels] of Object.entries(cam.counts.zones))
    for (const [label, n] of Object.entries(labels)) chip(c.counts, zone + ': ' + label, n);
  c.img.hidden = !cam.has_frame;
  c.noframe.hidden = cam.has_frame;
  if (cam.has_frame) return frame(cam.camera, c, cam.last_frame_ts);
}

// The next frame is fetched and decoded off screen, then takes the shown one's place: no
// flicker, and a frame that fails to load leaves the last one up. A frame already shown at
// this width is not fetched again.
async function frame(name, c, ts) {
  // Drawn for the width it is shown at, so its labels read at their size.
  const width = Math.min(1920, Math.max(64, Math.round(c.fig.clientWidth - 16)));
  const key = ts + ' ' + width;
  if (c.shown === key) return;
  const res = await fetch('/api/cameras/' + encodeURIComponent(name) + '/latest.jpg?width=' + width);
  if (!res.ok) throw new Error('the frame of ' + name + ' answered ' + res.status);
  const next = el('img');
  next.alt = c.img.alt;
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
    when.textContent = d.when;
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
  if (!dlg.open) dlg.showModal();
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
