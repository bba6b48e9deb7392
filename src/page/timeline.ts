/**
 * A camera's timeline under its card: the last hour of its recording (since its oldest stretch or
 * event when more recent, 5 minutes at least), the stretches kept drawn on
 * one bar (coloured by why: an event's footage, the recent margin, continuous recording, a
 * retired camera's) and its events as marks above it, from `GET /api/cameras/<camera>/recording`.
 * A click (or Enter) on a stretch plays it through recording.mp4, on an event its clip (or its
 * time of the recording), in the page's player.
 */
import { json, type RecordingView } from './api.js';
import { el } from './dom.js';
import { playVideo } from './events.js';
import { span, stretchPath, timelineStart } from './format.js';

/** How much the timeline shows at most: the last hour. */
export const TIMELINE_MS = 3600_000;
/** How much it shows at least: 5 minutes (since the oldest stretch or event, when more recent). */
export const TIMELINE_MIN_MS = 300_000;

/** A camera's timeline: its elements, and the marks and stretches drawn, by key. */
export interface Timeline {
  root: HTMLElement;
  marks: HTMLElement;
  bar: HTMLElement;
  from: HTMLElement;
  note: HTMLElement;
  drawn: Map<string, HTMLButtonElement>;
}

/** A new, empty timeline (the card appends `root`). */
export function newTimeline(camera: string): Timeline {
  const root = el('div', 'timeline');
  root.setAttribute('aria-label', camera + ': the last hour of its recording and its events');
  const marks = el('div', 'marks');
  const bar = el('div', 'bar');
  const axis = el('div', 'axis');
  const from = el('span');
  axis.append(from, el('span', '', 'now'));
  const note = el('p', 'note');
  note.hidden = true;
  root.append(marks, bar, axis, note);
  root.hidden = true;
  return { root, marks, bar, from, note, drawn: new Map() };
}

const time = (ms: number): string => new Date(ms).toLocaleTimeString();

/**
 * A button at `start`–`end` on a lane, made once per key and moved after: a click is never lost
 * to a refresh that redraws the timeline.
 */
function place(
  t: Timeline,
  lane: HTMLElement,
  key: string,
  where: { left: number; width: number },
  cls: string,
  title: string,
  play: () => void,
): HTMLButtonElement {
  let b = t.drawn.get(key);
  if (!b) {
    b = el('button', cls);
    b.type = 'button';
    t.drawn.set(key, b);
    lane.append(b);
  }
  b.className = cls;
  b.title = title;
  b.setAttribute('aria-label', title);
  b.style.left = where.left.toFixed(3) + '%';
  b.style.width = where.width.toFixed(3) + '%';
  b.onclick = play;
  return b;
}

/** The camera's timeline as its recording's index says, for the hour up to now. */
export async function showTimeline(camera: string, t: Timeline): Promise<void> {
  const to = Date.now();
  const view = await json<RecordingView>(
    '/api/cameras/' + encodeURIComponent(camera) + '/recording?start=' + (to - TIMELINE_MS),
  );
  const from = timelineStart(view, to, TIMELINE_MS, TIMELINE_MIN_MS);
  t.root.hidden = !view.recording && view.events.length === 0;
  t.root.dataset.from = String(from);
  t.root.dataset.to = String(to);
  t.from.textContent = time(from);
  t.note.hidden = view.recording;
  t.note.textContent = view.recording
    ? ''
    : 'no recording kept (its clips are off, or its source is generated)';
  const keep = new Set<string>();
  for (const r of view.ranges) {
    const start = Date.parse(r.start);
    const end = Date.parse(r.end);
    const where = span(start, end, from, to);
    if (!where) continue;
    const key = 'range ' + r.start;
    keep.add(key);
    const why = r.why.length ? r.why.join(', ') : 'about to be freed';
    const b = place(
      t,
      t.bar,
      key,
      where,
      'range why-' + (r.why[0] ?? 'none'),
      time(start) + '–' + time(end) + ' (' + r.duration_s + ' s) kept: ' + why,
      () =>
        playVideo(stretchPath(camera, start, end, from, to), camera + ' · ' + time(start) + '–' + time(end)),
    );
    b.dataset.start = r.start;
    b.dataset.end = r.end;
    b.dataset.why = r.why.join(' ');
  }
  for (const e of view.events) {
    const start = Date.parse(e.start);
    const end = e.end === null ? null : Date.parse(e.end);
    const where = span(start, end, from, to);
    if (!where) continue;
    const key = 'event ' + e.id;
    keep.add(key);
    const title = e.label + ' · ' + time(start) + (end === null ? ' · in view' : '–' + time(end));
    const path = e.clip ?? stretchPath(camera, start, end ?? to, from, to);
    const b = place(t, t.marks, key, where, 'mark' + (e.end === null ? ' open' : ''), title, () =>
      playVideo(path, e.label + ' on ' + camera + ' · ' + title.slice(e.label.length + 3)),
    );
    b.dataset.event = e.id;
    b.dataset.start = e.start;
  }
  for (const [key, b] of t.drawn)
    if (!keep.has(key)) {
      b.remove();
      t.drawn.delete(key);
    }
}
