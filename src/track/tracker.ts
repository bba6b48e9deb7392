import { centre, iou } from '../core/geometry.js';
import type { Detection } from '../core/frame.js';
import type { Config } from '../config/index.js';
import { blend, colourHistogram, type Pixels } from './appearance.js';
import { CameraAreas, type TrackerAreas } from './areas.js';
import { countTracks, inView, type TrackCounts } from './counts.js';
import { cutOf } from './cut.js';
import { hidden, merged, wholeObject } from './cover.js';
import type { LineCrossing, ObjectEvent, TrackerEvent } from './events.js';
import type { ZonedDetection } from './filters.js';
import { comeOutCost, holds, notePlace, settle } from './hold.js';
import { halt, predict, toBox, update, type KalmanState } from './kalman.js';
import { DUPLICATE_IOU, LabelGroups, relabel, vote } from './labels.js';
import { comeBackCost, gone, LOOK_RATE, matchPool, motionCost, partners } from './match.js';
import { crossingEvents, due, objectEvent, report } from './report.js';
import { END_AFTER_MISSES, HORIZON_S, newTrack, since, type Track } from './track.js';

/** An object matched (or first seen) in the latest frame, tentative or confirmed, and its detection there. */
export interface Sighting {
  id: string;
  label: string;
  detection: ZonedDetection;
}

/** A detection's place in tracking (Tracker.identify): `id` is its object's event id once confirmed. */
export type DetectionTrack = { id: string; track: 'confirmed' } | { id: null; track: 'tentative' | 'none' };

/** One frame's update, as its stages share it. */
interface Step {
  ts: number;
  /** The frame's time for speeds (`TrackFrame.steady`, else `ts`). */
  steady: number;
  others: readonly Detection[];
  fresh: boolean;
  pixels: Pixels | undefined;
  /** Each detection's colour histogram, when pixels came and appearance is on. */
  looks: Map<ZonedDetection, Float32Array>;
  events: TrackerEvent[];
}

/** What `Tracker.update` may know of a frame besides its detections. */
export interface TrackFrame {
  /** Every detection of the frame, also those the camera's filters dropped (what may stand in front). */
  others?: readonly Detection[];
  /**
   * Answered from the cache: the detections are the last analysed frame's, repeated. They keep
   * their objects seen, but teach neither the filters nor speeds nor lines anything: an old box
   * at a new time would read as a halt, then a jump.
   */
  cached?: boolean;
  /** The picture the model saw, for appearance and for whether a still object's place changed. */
  pixels?: Pixels;
  /**
   * The frame's time for intervals (`Frame.steady`: the stream's own intervals, unbent by the
   * delays frames came with); speeds are measured on it. Absent, `ts` serves.
   */
  steady?: number;
}

/**
 * A per-camera multi-object tracker of the ByteTrack family; pure, time passed in (ms). It
 * coordinates the stages, each in its own file: the track record (track.ts), matching
 * (match.ts), covered detections (cover.ts), held still and hidden objects (hold.ts), label
 * groups and the vote (labels.ts), zones, loitering and lines (areas.ts), events (report.ts),
 * counts in view (counts.ts).
 *
 * Each track carries a constant-velocity Kalman filter in box space (kalman.ts), predicted to
 * the frame's time. Per label, detections are assigned to the predicted boxes by least total
 * cost (assign.ts; match.ts `matchCost`), which adds the squared Mahalanobis distance of the centres d²
 * (centre distance normalised by box size and by the time since the track was last seen) and
 * 1 − IoU. A pair is made only within the gate: d² ≤ 9.21 (the 99 % ellipse, which grows with
 * the time since the last match), a centre distance of at most GATE_FLOOR box diagonals from the
 * prediction, or REACH_PER_S box diagonals a second from where it was last matched (sparse
 * answers). IoU alone fails at low fps: a walker at 2 fps moves more than its width between
 * frames.
 *
 * As ByteTrack: (1) detections scoring at least `high_score` against confirmed tracks, lost or
 * not; (2) the lower-scored ones (down to `model.conf` and the camera's filters) against the
 * confirmed tracks still unmatched, so an object whose score dips keeps its track; (3) the
 * high-scored ones left against tentative tracks. High-scored detections left over start
 * tentative tracks; a tentative track missed once is dropped, and one matched in `min_frames`
 * frames is confirmed (`new`). A confirmed track not matched is lost: kept and predicted on, so
 * it keeps its id through a dropout, and ended (`end`, end time = last seen) once its camera's
 * answered frames have not shown it for more than `end_after_s` (and END_AFTER_MISSES of them in
 * a row). Time alone ends nothing: a camera whose frames get no answer (the detector cannot keep
 * up, its server is away, the camera is offline) keeps its objects, and their counts, until
 * frames are answered again; the prediction still runs on real time, so a walker seen again
 * after a gap is looked for where it has walked meanwhile.
 *
 * A detection showing part of a confirmed object while another detection covers it (cover.ts
 * PARTIAL, HIDDEN) updates the filter, and line crossings, as the whole object: a walker passing behind
 * another, or behind a car, keeps its id and crosses no line with its head alone.
 *
 * A confirmed object whose filtered centre stays within STATIONARY_MOVE (hold.ts) of its box diagonal for
 * `stationary_after_s` becomes stationary (one `update`); moving beyond it makes it active
 * again (one `update`). Otherwise an `update` is sent when its zones change, its best score rose
 * by `update_score` since the last report, or (while active) its centre moved more than
 * `update_move` box diagonals from the last reported box.
 */
export class Tracker {
  private tracks: Track[] = [];
  private counter = 0;
  private seen: Sighting[] = [];
  /** The latest answered frame's time. */
  private lastFrame = -Infinity;
  /** `lastFrame`'s steady time (`TrackFrame.steady`): the filters' clock. */
  private lastSteady = -Infinity;
  private readonly areas = new CameraAreas();
  private readonly groups: LabelGroups;

  constructor(
    readonly camera: string,
    private readonly cfg: Config['events'],
    areas: TrackerAreas = {},
  ) {
    this.setAreas(areas);
    this.groups = new LabelGroups(cfg.label_groups ?? []);
  }

  /**
   * New zones and lines (a reload): objects keep their ids; a line changed or removed starts its
   * sides afresh, and forgets the crossings tentative objects made of it.
   */
  setAreas(areas: TrackerAreas): void {
    this.areas.set(areas, this.tracks);
  }

  private event(type: ObjectEvent['type'], t: Track): ObjectEvent {
    return objectEvent(type, t, this.camera, this.cfg.speed_unit);
  }

  private report(type: 'new' | 'update', t: Track): ObjectEvent {
    return report(type, t, this.camera, this.cfg.speed_unit);
  }

  /**
   * Feeds one frame's detections (time `ts`); returns the events and line crossings it causes.
   * `others`: every detection of the frame, also those the camera's filters dropped (what may
   * stand in front of a tracked object).
   */
  update(dets: readonly ZonedDetection[], ts: number, frame: TrackFrame = {}): TrackerEvent[] {
    const others = frame.others ?? dets;
    const fresh = frame.cached !== true;
    const pixels = fresh ? frame.pixels : undefined;
    this.seen = [];
    // The filters run on the frames' steady times (the stream's own intervals: a connection's
    // first frames, written at once, are not 50 ms apart for them). An outage (no answer for
    // longer than HORIZON_S): the filters' clocks skip it.
    // A steady clock that went back (another camera object's, a test's) moves the filters'
    // clocks and the speeds' samples back with it, the frames' times' interval apart.
    const steady = frame.steady ?? ts;
    const gap = steady - this.lastSteady;
    if (gap > HORIZON_S * 1000) for (const t of this.tracks) t.at += gap;
    else if (gap < 0) {
      const back = gap - Math.max(0, ts - this.lastFrame);
      for (const t of this.tracks) {
        t.at += back;
        for (const g of t.ground.values()) g.shift(back);
      }
    }
    this.lastFrame = Math.max(this.lastFrame, ts);
    this.lastSteady = steady;
    const events: TrackerEvent[] = [];
    for (const t of this.tracks) t.misses++;
    const looks = new Map<ZonedDetection, Float32Array>();
    if (pixels && this.cfg.appearance !== false)
      for (const d of dets) {
        const h = colourHistogram(pixels, d.box);
        if (h) looks.set(d, h);
      }
    const step: Step = { ts, steady, others, fresh, pixels, looks, events };
    const groups = new Set([...this.tracks.map((t) => t.group), ...dets.map((d) => this.groups.of(d.label))]);
    for (const group of groups) this.updateGroup(group, dets, step);
    events.push(...this.endLost(others, frame.pixels));
    return events;
  }

  /** One label group's part of `update`: the ByteTrack stages, duplicates, objects coming out from behind others. */
  private updateGroup(group: string, dets: readonly ZonedDetection[], step: Step): void {
    const tracks = this.tracks.filter((t) => t.group === group);
    const own = dets.filter((d) => this.groups.of(d.label) === group);
    // A cached answer shows the picture of the last analysed frame: its boxes are where they were.
    const predicted = new Map(tracks.map((t) => [t, predict(t.kf, step.fresh ? since(t, step.steady) : 0)]));
    // Objects predicted out of the picture are looked for where they were last seen (comeBackCost).
    const away = new Set(tracks.filter((t) => gone(t, predicted.get(t)!, step.pixels)));
    for (const t of away) predicted.set(t, halt(t.kf));
    const high = own.filter((d) => d.score >= this.cfg.high_score);
    const low = own.filter((d) => d.score < this.cfg.high_score);
    const matchedHere: { t: Track; d: ZonedDetection }[] = [];
    const apply = (t: Track, d: ZonedDetection): void => {
      this.matched(t, predicted.get(t)!, d, step);
      matchedHere.push({ t, d });
    };
    const match = (
      pool: Track[],
      ds: ZonedDetection[],
      cost: (t: Track, d: ZonedDetection) => number,
      pair: (t: Track, d: ZonedDetection) => void = apply,
      near?: (a: Track, b: Track) => boolean,
    ): { tracks: Track[]; dets: ZonedDetection[] } => matchPool(pool, ds, cost, step.looks, pair, near);
    const motion = (t: Track, d: ZonedDetection): number =>
      motionCost(t, predicted.get(t)!, d.box, step.steady, step.pixels);
    // The confirmed objects' pairs are applied once the frame is known to be no cut (cut.ts).
    const pairs: { t: Track; d: ZonedDetection }[] = [];
    const hold = (t: Track, d: ZonedDetection): number => pairs.push({ t, d });
    const confirmed = tracks.filter((t) => t.confirmed && !away.has(t));
    // Confirmed objects that met may take each other's boxes where their looks say so (partners).
    const first = match(
      confirmed,
      high,
      motion,
      hold,
      step.fresh ? (a, b) => partners(a, predicted.get(a)!, b, predicted.get(b)!) : undefined,
    );
    match(first.tracks, low, motion, hold);
    const cut = step.fresh
      ? cutOf({
          confirmed: tracks.filter((t) => t.confirmed),
          away,
          pairs: new Map(pairs.map(({ t, d }) => [t, d.box])),
          predicted,
          pixels: step.pixels,
        })
      : undefined;
    const unpaired = [...first.dets];
    for (const { t, d } of pairs)
      if (!cut?.has(t)) apply(t, d);
      else if (d.score >= this.cfg.high_score) unpaired.push(d);
    if (cut) this.endCut(cut, step.events);
    const tentative = tracks.filter((t) => !t.confirmed);
    const third = match(tentative, unpaired, motion);
    // Another label's box on an object matched in this frame is that object.
    let left = third.dets.filter((d) => {
      const same = matchedHere.find((m) => iou(m.d.box, d.box) >= DUPLICATE_IOU);
      if (!same) return true;
      vote(same.t, d.label, d.score);
      this.seen.push({ id: same.t.id, label: same.t.label, detection: d });
      return false;
    });
    // An object coming out from behind another, or seen again where it stood, before anything
    // new starts there.
    // What a cut ended is not looked for again (cut.ts): whoever stands there is someone else.
    const held = tracks.filter((t) => t.held !== null && t.misses > 0 && !cut?.has(t));
    if (held.length && left.length)
      left = match(held, left, (t, d) => comeOutCost(t, predicted.get(t)!, d, step.others, step.steady)).dets;
    // Last, an object that went out of the picture, seen again where it was (a detection that
    // already started a tentative object there is that object: someone coming in).
    const back = [...away].filter((t) => t.confirmed && t.misses > 0 && !cut?.has(t));
    if (back.length && left.length)
      left = match(back, left, (t, d) => comeBackCost(t, d.box, step.looks.get(d), step.pixels)).dets;
    const dropped = new Set([...third.tracks, ...(cut ?? [])]);
    this.tracks = this.tracks.filter((t) => !dropped.has(t));
    for (const d of left) this.start(d, step);
  }

  /**
   * Ends the confirmed objects the camera's answered frames have not shown for more than
   * `end_after_s` (END_AFTER_MISSES of them in a row at least), unless they are held (hold.ts
   * `holds`): a still object whose place shows what it showed, or one hidden behind another
   * detection (for `hold_hidden_s` at most). Tentative ones were dropped at their first miss.
   */
  private endLost(others: readonly Detection[], pixels: Pixels | undefined): ObjectEvent[] {
    const events: ObjectEvent[] = [];
    this.tracks = this.tracks.filter((t) => {
      if (t.misses === 0) {
        t.held = null;
        return true;
      }
      t.held = holds(
        t,
        others,
        pixels,
        { ts: this.lastFrame, steady: this.lastSteady },
        this.cfg.hold_hidden_s,
      );
      if (t.held) return true;
      if (t.misses < END_AFTER_MISSES || this.lastFrame - t.lastSeen <= this.cfg.end_after_s * 1000)
        return true;
      events.push(this.event('end', t));
      return false;
    });
    return events;
  }

  /** The objects a cut took away (cut.ts) end now: whoever stands where one of them was is someone else. */
  private endCut(cut: ReadonlySet<Track>, events: TrackerEvent[]): void {
    for (const t of cut) events.push(this.event('end', t));
  }

  private start(d: ZonedDetection, step: Step): void {
    const { ts, events } = step;
    const t = newTrack(
      `${ts}-${this.camera}-${++this.counter}`,
      d,
      this.groups.of(d.label),
      step.looks.get(d),
      ts,
    );
    t.at = step.steady;
    this.areas.cross(t, d.box);
    this.areas.place(t, d, { ts, steady: step.steady }, step.fresh);
    this.areas.loiter(t, ts);
    this.tracks.push(t);
    this.seen.push({ id: t.id, label: t.label, detection: d });
    if (this.cfg.min_frames <= 1) this.confirm(t, ts, events);
  }

  private confirm(t: Track, ts: number, events: TrackerEvent[]): void {
    t.confirmed = true;
    t.anchor = centre(toBox(t.kf));
    t.anchorAt = ts;
    events.push(this.report('new', t), ...t.unconfirmedCrossings);
    t.unconfirmedCrossings = [];
  }

  private matched(t: Track, p: KalmanState, d: ZonedDetection, step: Step): void {
    const { ts, others, fresh, events } = step;
    vote(t, d.label, d.score);
    const pb = toBox(p);
    const covered = t.confirmed && (hidden(pb, d, others) || merged(d, others));
    const whole = covered ? wholeObject(d.box, pb, t.size) : d.box;
    if (fresh && !covered) t.size = [d.box[2] - d.box[0], d.box[3] - d.box[1]];
    // A cached answer repeats the last analysed box: the picture has not changed, so the object
    // is there and has not moved (its velocity goes to 0: a walker who stopped in a still scene
    // is not predicted on across the view when the next analysed frame comes); no position at
    // this time for the filter, speeds or lines.
    if (fresh) t.kf = update(p, whole);
    else t.kf = halt(t.kf);
    t.at = Math.max(t.at, step.steady);
    t.box = d.box;
    t.topScore = Math.max(t.topScore, d.score);
    t.lastSeen = Math.max(t.lastSeen, ts);
    this.areas.place(t, d, { ts, steady: step.steady }, fresh);
    this.areas.loiter(t, ts);
    t.misses = 0;
    t.held = null;
    t.hits++;
    const look = step.looks.get(d);
    if (look && !covered) t.look = t.look ? blend(t.look, look, LOOK_RATE) : Float32Array.from(look);
    relabel(t);
    this.seen.push({ id: t.id, label: t.label, detection: d });
    const crossed: LineCrossing[] = fresh
      ? crossingEvents(t, this.camera, ts, this.areas.cross(t, toBox(t.kf)))
      : [];
    if (!t.confirmed) {
      t.unconfirmedCrossings.push(...crossed);
      if (t.hits >= this.cfg.min_frames) this.confirm(t, ts, events);
      return;
    }
    settle(t, ts, this.cfg.stationary_after_s);
    notePlace(t, d, ts, { pixels: step.pixels, covered, fresh, highScore: this.cfg.high_score });
    if (due(t, this.cfg.update_move, this.cfg.update_score)) events.push(this.report('update', t));
    events.push(...crossed);
  }

  /** The objects matched or first seen in the latest frame given to `update`, with their detections. */
  sightings(): readonly Sighting[] {
    return this.seen;
  }

  /**
   * What tracking made of each of the latest frame's detections (those given to `update`, in
   * their order): the object it showed, confirmed (its id is its event's) or tentative, or none
   * (a low score that started nothing).
   */
  identify(dets: readonly ZonedDetection[]): DetectionTrack[] {
    const tracks = new Map(this.tracks.map((t) => [t.id, t]));
    const by = new Map(this.seen.map((s) => [s.detection, s.id]));
    return dets.map((d) => {
      const id = by.get(d);
      const t = id === undefined ? undefined : tracks.get(id);
      if (!t) return { id: null, track: 'none' };
      return t.confirmed ? { id: t.id, track: 'confirmed' } : { id: null, track: 'tentative' };
    });
  }

  /** Whether an object (tentative or confirmed) of that id is tracked. */
  has(id: string): boolean {
    return this.tracks.some((t) => t.id === id);
  }

  /** Ends every object now (shutdown, camera removed). */
  endAll(): ObjectEvent[] {
    const events = this.tracks.filter((t) => t.confirmed).map((t) => this.event('end', t));
    this.tracks = [];
    return events;
  }

  /**
   * The confirmed objects in view now (as `counts` counts them), each as an event would say it
   * now (its zones, loitering, speed): what the live page shows.
   */
  inView(): ObjectEvent[] {
    return this.tracks.filter((t) => inView(t, this.lastFrame)).map((t) => this.event('update', t));
  }

  /**
   * Confirmed objects in view now (matched in one of the last two answered frames, or within
   * COUNT_HOLD_MS of the latest), by label and zone.
   */
  counts(): TrackCounts {
    return countTracks(this.tracks, this.lastFrame);
  }
}
