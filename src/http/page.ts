/**
 * The page at `/`: every camera's latest annotated frame with its state (and, when it is not
 * streaming, why), fps and the objects in view; beside them the event history, newest first,
 * with thumbnails, updated every two seconds; an event's snapshot opens on a click. It reads
 * only the JSON and JPEG routes of docs/http.md, so it shows what MQTT says: the cameras'
 * filters have applied. Text from the config or the model is set as text, never as HTML.
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
  select, button { background: #333; color: #eee; border: 1px solid #555; border-radius: 3px; }
</style>
</head>
<body>
<header><h1>Argus</h1><span id="updated"></span></header>
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
  fig.append(frame, cap, why, counts);
  $('cameras').append(fig);
  c = { fig, img, noframe, cap, why, counts };
  cards.set(name, c);
  const opt = el('option', '', name);
  opt.value = name;
  $('camera-filter').append(opt);
  return c;
}

function chip(list, text, n) {
  const li = el('li', n > 0 ? 'seen' : '', text + ' ' + n);
  list.append(li);
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
  if (cam.has_frame) frame(cam.camera, c).catch(() => undefined);
}

// The next frame is fetched and decoded off screen, then takes the shown one's place: no
// flicker, and a frame that fails to load leaves the last one up.
async function frame(name, c) {
  if (c.loading) return;
  c.loading = true;
  try {
    // Drawn at the width it is shown at, so its labels read at their size.
    const width = Math.min(1920, Math.max(64, Math.round(c.fig.clientWidth - 16)));
    const res = await fetch('/api/cameras/' + encodeURIComponent(name) + '/latest.jpg?width=' + width);
    if (!res.ok) return;
    const next = el('img');
    next.alt = c.img.alt;
    next.src = URL.createObjectURL(await res.blob());
    await next.decode();
    if (c.img.src.startsWith('blob:')) URL.revokeObjectURL(c.img.src);
    c.img.replaceWith(next);
    c.img = next;
  } finally {
    c.loading = false;
  }
}

async function thumbnail(row, ev) {
  const shot = ev.snapshot;
  if (!shot || row.dataset.shot === shot.ts) return;
  row.dataset.shot = shot.ts;
  // The snapshot is replaced while the object stays in view: fetched again when its time changes.
  const res = await fetch(shot.path + '?crop=1', { cache: 'no-cache' });
  if (!res.ok) return;
  const url = URL.createObjectURL(await res.blob());
  const img = row.querySelector('img');
  if (img.src.startsWith('blob:')) URL.revokeObjectURL(img.src);
  img.src = url;
}

function describe(ev) {
  const zones = ev.entered_zones.length ? ' · ' + ev.entered_zones.join(', ') : '';
  const how = ev.end_ts ? seconds(ev.start_ts, ev.end_ts) + ' s' : 'in view';
  return { what: ev.label + ' on ' + ev.camera, when: time(ev.start_ts) + ' · ' + how + zones };
}

function showEvents(events) {
  const list = $('events');
  const keep = new Set(events.map((e) => e.id));
  for (const [id, row] of rows) if (!keep.has(id)) { row.remove(); rows.delete(id); }
  let before = null;
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
    if (before ? before.nextSibling !== row : list.firstChild !== row) list.insertBefore(row, before ? before.nextSibling : list.firstChild);
    before = row;
    thumbnail(row, ev).catch(() => undefined);
  }
  $('no-events').hidden = events.length > 0;
}

function openSnapshot(row) {
  const ev = row.event;
  const dlg = $('snapshot');
  const img = dlg.querySelector('img');
  img.hidden = !ev.snapshot;
  if (ev.snapshot) {
    img.src = ev.snapshot.path + '?crop=0';
    img.alt = ev.label + ' on ' + ev.camera;
  }
  const d = describe(ev);
  const score = ev.snapshot ? ' · best score ' + ev.snapshot.score.toFixed(2) : ' · no snapshot';
  $('snapshot-text').textContent = d.what + ' · ' + d.when + score;
  dlg.dataset.event = ev.id;
  if (!dlg.open) dlg.showModal();
}

async function refresh() {
  try {
    const cams = await (await fetch('/api/cameras')).json();
    const names = new Set(cams.map((c) => c.camera));
    for (const [name, c] of cards)
      if (!names.has(name)) {
        c.fig.remove();
        cards.delete(name);
        $('camera-filter').querySelector('option[value="' + CSS.escape(name) + '"]')?.remove();
      }
    for (const cam of cams) showCamera(cam);
    const camera = $('camera-filter').value;
    const q = 'limit=50' + (camera ? '&camera=' + encodeURIComponent(camera) : '');
    showEvents(await (await fetch('/api/events?' + q)).json());
    $('updated').textContent = 'updated ' + new Date().toLocaleTimeString();
    $('updated').className = '';
  } catch (e) {
    $('updated').textContent = 'cannot reach Argus; retrying';
    $('updated').className = 'stale';
  }
}
$('camera-filter').addEventListener('change', refresh);
refresh();
setInterval(refresh, 2000);
</script>
</body>
</html>
`;
