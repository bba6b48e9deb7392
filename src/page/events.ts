import type { EventView } from './api.js';
import { $, el, free } from './dom.js';
import { describe, eventDetails } from './format.js';

/** An event's row in the history, with the event it shows and its thumbnail's state. */
interface Row {
  li: HTMLLIElement;
  img: HTMLImageElement;
  what: HTMLElement;
  when: HTMLElement;
  /** Its speed and loitering (eventDetails); hidden when it has neither. */
  details: HTMLElement;
  event: EventView;
  /** The snapshot time of the thumbnail shown. */
  shot: string | undefined;
  fetching: boolean;
}

const rows = new Map<string, Row>();

// The snapshot is replaced while the object stays in view: fetched again when its time changes,
// and again at the next refresh when a fetch failed.
async function thumbnail(row: Row, ev: EventView): Promise<void> {
  const shot = ev.snapshot;
  if (!shot || row.shot === shot.ts || row.fetching) return;
  row.fetching = true;
  try {
    const res = await fetch(shot.path + '?crop=1', { cache: 'no-cache' });
    if (!res.ok) throw new Error('a thumbnail answered ' + res.status);
    const url = URL.createObjectURL(await res.blob());
    if (rows.get(ev.id) !== row) return URL.revokeObjectURL(url);
    free(row.img);
    row.img.src = url;
    row.shot = shot.ts;
  } finally {
    row.fetching = false;
  }
}

function newRow(ev: EventView): Row {
  const li = el('li');
  li.dataset.event = ev.id;
  li.tabIndex = 0;
  const img = el('img');
  img.alt = '';
  const text = el('div');
  const what = el('div', 'what');
  const when = el('div', 'when');
  const details = el('div', 'details');
  text.append(what, when, details);
  li.append(img, text);
  const row: Row = { li, img, what, when, details, event: ev, shot: undefined, fetching: false };
  li.addEventListener('click', () => openSnapshot(row.event));
  li.addEventListener('keydown', (e) => {
    if (e.key === 'Enter') openSnapshot(row.event);
  });
  return row;
}

/** The history, newest first: rows kept, added, moved and removed; the thumbnails' loads. */
export function showEvents(events: EventView[]): Promise<void>[] {
  const list = $('events');
  const keep = new Set(events.map((e) => e.id));
  for (const [id, row] of rows)
    if (!keep.has(id)) {
      free(row.img);
      row.li.remove();
      rows.delete(id);
    }
  let before: HTMLLIElement | null = null;
  const loads: Promise<void>[] = [];
  for (const ev of events) {
    let row = rows.get(ev.id);
    if (!row) {
      row = newRow(ev);
      rows.set(ev.id, row);
    }
    row.event = ev;
    const d = describe(ev);
    row.what.textContent = d.what;
    row.when.textContent = d.when + (ev.clip && ev.clip.state === 'ready' ? ' · ▶ clip' : '');
    row.when.classList.toggle('open', !ev.end_ts);
    row.details.textContent = eventDetails(ev);
    row.details.hidden = row.details.textContent === '';
    // Newest first: each row goes after the one before it.
    const at: ChildNode | null = before ? before.nextSibling : list.firstChild;
    if (at !== row.li) list.insertBefore(row.li, at);
    before = row.li;
    loads.push(thumbnail(row, ev));
  }
  $('no-events').hidden = events.length > 0;
  return loads;
}

function openSnapshot(ev: EventView): void {
  const dlg = $<HTMLDialogElement>('snapshot');
  const img = dlg.querySelector('img')!;
  const d = describe(ev);
  const details = eventDetails(ev);
  const text = (more: string): void => {
    $('snapshot-text').textContent = d.what + ' · ' + d.when + (details ? ' · ' + details : '') + more;
  };
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
function showClip(ev: EventView): void {
  const video = $<HTMLVideoElement>('clip');
  const c = ev.clip;
  video.pause();
  $('snapshot').onclose = () => video.pause();
  video.removeAttribute('src');
  video.hidden = !(c && c.state === 'ready');
  let note = '';
  if (c?.state === 'recording') note = 'clip: being recorded';
  else if (c?.state === 'failed') note = 'no clip: ' + c.error;
  else if (c) {
    video.src = c.path;
    video.onerror = () => {
      video.hidden = true;
      $('clip-text').textContent = 'the clip is no longer kept';
    };
    note =
      'clip ' +
      c.duration_s +
      ' s' +
      (c.browser_plays ? '' : ' (' + c.codec + ': this browser may not play it)');
    if (c.missing)
      note +=
        ' · ' +
        (c.missing.start_s + c.missing.end_s).toFixed(1) +
        ' s missing (' +
        c.missing.reasons.join(', ') +
        ')';
  }
  $('clip-text').textContent = note;
}

/**
 * Plays `path` (an event's clip, or a stretch of a camera's recording) in the page's player, with
 * `text` under it: the timeline's stretches and marks open it so.
 */
export function playVideo(path: string, text: string): void {
  const dlg = $<HTMLDialogElement>('snapshot');
  const img = dlg.querySelector('img')!;
  img.removeAttribute('src');
  img.hidden = true;
  const video = $<HTMLVideoElement>('clip');
  video.pause();
  dlg.onclose = () => video.pause();
  video.hidden = false;
  video.onerror = () => {
    video.hidden = true;
    $('clip-text').textContent = 'this stretch is no longer kept';
  };
  video.src = path;
  $('snapshot-text').textContent = text;
  $('clip-text').textContent = '';
  if (!dlg.open) dlg.showModal();
}
