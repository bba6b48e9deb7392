/**
 * What an MQTT subscriber saw of one camera during the events bench, reduced to the figures of
 * issue 12: `new` events per distinct person, track life, `update` churn, the retained count
 * against what the frames held, and anything published out of order.
 */
import { median } from './common.js';

/** The messages of one run, in the order the subscriber received them. */
export type Recorded =
  | { kind: 'detections'; frame: number; cached: boolean; persons: number }
  | { kind: 'count'; value: number }
  | { kind: 'event'; type: string; id: string; label: string; startTs: number; endTs: number | null };

/** The people counted by eye in the clip (bench/events.ts says how). */
export interface PeopleCount {
  count: number;
  low: number;
  high: number;
}

export interface EventsRow {
  /** Seconds of clip played, frames per second analysed. */
  seconds: number;
  fps: number;
  people: PeopleCount;
  detections_messages: number;
  cached_messages: number;
  person_new: number;
  /** `new` person events ÷ people counted; `_range` uses the high and low count. */
  new_per_person: number;
  new_per_person_range: [number, number];
  person_ended: number;
  /** Median end_ts − start_ts of ended person events, seconds. */
  median_track_life_s: number | null;
  updates: number;
  person_updates: number;
  /** The retained person count in force when each detections message arrived. */
  count_topic_max: number;
  count_topic_mean: number;
  /** Persons with score ≥ 0.5 in each detections message. */
  frame_persons_max: number;
  frame_persons_mean: number;
  /** Detections messages whose frame number is lower than the one before. */
  frames_out_of_order: number;
  /** Events of one id out of sequence: not new → update* → end, a changed start, or end before start. */
  events_out_of_order: number;
}

const mean = (xs: number[]): number => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);

/** Counts the events whose type or times break `new` → `update`* → `end` for their id. */
function eventOrderViolations(events: Extract<Recorded, { kind: 'event' }>[]): number {
  const seen = new Map<string, { startTs: number; ended: boolean }>();
  let bad = 0;
  for (const e of events) {
    const s = seen.get(e.id);
    const wrong =
      (e.type === 'new' && s !== undefined) ||
      (e.type !== 'new' && (s === undefined || s.ended)) ||
      (s !== undefined && s.startTs !== e.startTs) ||
      (e.endTs !== null && e.endTs < e.startTs);
    if (wrong) bad++;
    seen.set(e.id, { startTs: s?.startTs ?? e.startTs, ended: (s?.ended ?? false) || e.type === 'end' });
  }
  return bad;
}

export function summariseEvents(
  msgs: readonly Recorded[],
  run: { seconds: number; fps: number; people: PeopleCount },
): EventsRow {
  const frames = msgs.filter((m) => m.kind === 'detections');
  const events = msgs.filter((m) => m.kind === 'event');
  const persons = events.filter((e) => e.label === 'person');
  const personNew = persons.filter((e) => e.type === 'new').length;
  const lives = persons
    .filter((e) => e.type === 'end' && e.endTs !== null)
    .map((e) => (e.endTs! - e.startTs) / 1000);
  // The count topic is retained and sent on change: sample the value in force at each frame.
  let count = 0;
  const counts: number[] = [];
  let lastFrame = -Infinity;
  let framesOutOfOrder = 0;
  for (const m of msgs) {
    if (m.kind === 'count') count = m.value;
    if (m.kind !== 'detections') continue;
    counts.push(count);
    if (m.frame < lastFrame) framesOutOfOrder++;
    lastFrame = m.frame;
  }
  const perFrame = frames.map((m) => m.persons);
  const { count: people, low, high } = run.people;
  return {
    seconds: run.seconds,
    fps: run.fps,
    people: run.people,
    detections_messages: frames.length,
    cached_messages: frames.filter((m) => m.cached).length,
    person_new: personNew,
    new_per_person: personNew / people,
    new_per_person_range: [personNew / high, personNew / low],
    person_ended: lives.length,
    median_track_life_s: lives.length ? median(lives) : null,
    updates: events.filter((e) => e.type === 'update').length,
    person_updates: persons.filter((e) => e.type === 'update').length,
    count_topic_max: Math.max(0, ...counts),
    count_topic_mean: mean(counts),
    frame_persons_max: Math.max(0, ...perFrame),
    frame_persons_mean: mean(perFrame),
    frames_out_of_order: framesOutOfOrder,
    events_out_of_order: eventOrderViolations(events),
  };
}
