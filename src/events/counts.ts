import { namedRecord, own } from '../core/names.js';
import type { CameraConfig } from '../config/index.js';
import { areaLabels, cameraLabels, type Publisher, type Topic, type Topics } from '../publish/index.js';
import { SPEED_UNITS, type Count, type SpeedUnit, type TrackCounts } from '../track/index.js';

/**
 * Confirmed objects in view, by label, and by zone and label: the count topics' numbers. Objects
 * without a prototype (core/names.ts).
 */
export interface CountsInView {
  labels: Record<string, number>;
  zones: Record<string, Record<string, number>>;
}

type CountTopic = Topic<'count' | 'countActive' | 'zoneCount' | 'zoneCountActive' | 'zoneDwell'>;
/** A count's topics: in view, active, and for a zone's count the longest dwell. */
type CountTopics = [inView: CountTopic, active: CountTopic, dwell?: CountTopic];

/** Each count of a camera's counts: by label (no zone), then by zone and label. */
function* eachCount(
  counts: TrackCounts | undefined,
): Generator<[label: string, count: Count, zone?: string]> {
  if (!counts) return;
  for (const [label, c] of counts.labels) yield [label, c];
  for (const [zone, m] of counts.zones) for (const [label, c] of m) yield [label, c, zone];
}

/**
 * The retained counts of objects in view (and of the active ones), per label and per zone and
 * label: each published when it changes, and those a subscriber needs before the first object
 * published as 0 (`startsAtZero`).
 */
export class InViewCounts {
  private counts = new Map<string, TrackCounts>();
  /** Each zone speed topic's last value published (a speed not measured keeps it). */
  private speeds = new Map<Topic<'zoneSpeed'>, number>();

  constructor(
    private readonly mqtt: Publisher,
    private readonly topics: Topics,
    /** The labels Home Assistant has entities for, for cameras that track every label. */
    private readonly defaultLabels: () => readonly string[],
    /** `events.speed_unit`: the zone speed topics' unit. */
    private readonly speedUnit: SpeedUnit = 'km/h',
  ) {}

  /**
   * A camera's objects in view as its count topics say: by label, and by zone and label, with
   * the labels whose counts start at 0 listed from 0.
   */
  of(camera: string, cam: CameraConfig | undefined): CountsInView {
    const out: CountsInView = { labels: namedRecord(), zones: namedRecord() };
    if (!cam) return out;
    const start = this.startsAtZero(cam);
    for (const label of start.labels) out.labels[label] = 0;
    for (const [zone, labels] of start.zones)
      for (const label of labels) (out.zones[zone] ??= namedRecord())[label] = 0;
    for (const [label, c, zone] of eachCount(this.counts.get(camera)))
      (zone === undefined ? out.labels : (out.zones[zone] ??= namedRecord()))[label] = c.inView;
    return out;
  }

  /** A camera's counts now (its tracker's; none once it has no tracker): those changed are published. */
  publish(camera: string, now: TrackCounts | undefined): void {
    const none: TrackCounts = { labels: new Map(), zones: new Map() };
    const counts = now ?? none;
    const before = this.counts.get(camera) ?? none;
    this.publishChanged(before.labels, counts.labels, (label) => this.countTopics(camera, label));
    for (const zone of new Set([...before.zones.keys(), ...counts.zones.keys()]))
      this.publishChanged(before.zones.get(zone), counts.zones.get(zone), (label) =>
        this.countTopics(camera, label, zone),
      );
    for (const [zone, labels] of counts.zones)
      for (const [label, c] of labels)
        if (c.speedMps !== undefined) this.publishSpeed(camera, zone, label, c.speedMps);
    this.counts.set(camera, counts);
  }

  /**
   * A speed measured in a calibrated zone: its topic's retained value when it changed (in
   * `events.speed_unit`, to 0.1, as events give it). Never published as 0 at start: before the
   * first measurement there is no last speed.
   */
  private publishSpeed(camera: string, zone: string, label: string, mps: number): void {
    const topic = this.topics.zoneSpeed(camera, zone, label);
    const value = Math.round(mps * SPEED_UNITS[this.speedUnit] * 10) / 10;
    if (this.speeds.get(topic) === value) return;
    this.speeds.set(topic, value);
    this.mqtt.state(topic, value);
  }

  /** A count's two topics, in view and active: the camera's, or with `zone` that zone's. */
  private countTopics(camera: string, label: string, zone?: string): CountTopics {
    const t = this.topics;
    return zone === undefined
      ? [t.count(camera, label), t.countActive(camera, label)]
      : [
          t.zoneCount(camera, zone, label),
          t.zoneCountActive(camera, zone, label),
          t.zoneDwell(camera, zone, label),
        ];
  }

  /**
   * The labels whose counts start at 0, so subscribers (Home Assistant's sensors) have a value
   * before the first object: those the camera tracks and its zones' labels; for a camera that
   * tracks every label, its zones' `objects`, and the labels Home Assistant has entities for
   * (`default_labels`) while discovery is on. Its other counts appear with their objects.
   */
  private startsAtZero(cam: CameraConfig): { labels: string[]; zones: Map<string, string[]> } {
    const defaults = this.defaultLabels();
    const zones = new Map<string, string[]>();
    for (const [zone, z] of Object.entries(cam.zones)) zones.set(zone, areaLabels(z.objects, cam, defaults));
    return { labels: cameraLabels(cam, defaults), zones };
  }

  /** The count topics (in view and active) of `startsAtZero`. */
  private zeroTopics(camera: string, cam: CameraConfig | undefined): CountTopic[] {
    if (!cam) return [];
    const start = this.startsAtZero(cam);
    const out = start.labels.flatMap((label) => this.countTopics(camera, label));
    for (const [zone, labels] of start.zones)
      for (const label of labels) out.push(...this.countTopics(camera, label, zone));
    return out.filter((t): t is CountTopic => t !== undefined);
  }

  /** The count topics whose last published value is not 0. */
  private countedTopics(camera: string): Set<string> {
    const out = new Set<string>();
    for (const [label, c, zone] of eachCount(this.counts.get(camera))) {
      const [inView, active, dwell] = this.countTopics(camera, label, zone);
      if (c.inView) out.add(inView);
      if (c.active) out.add(active);
      if (dwell && c.inView) out.add(dwell);
    }
    return out;
  }

  /**
   * Nothing is in view before the first frame: the counts of `startsAtZero` are published as 0,
   * replacing what a crashed run may have left retained on the broker. At a reload, those a
   * camera did not have before are (a zone or label added), unless counted already.
   */
  publishZeros(cameras: Record<string, CameraConfig>, before?: Record<string, CameraConfig>): void {
    for (const [camera, cam] of Object.entries(cameras)) {
      const had = new Set<string>(this.zeroTopics(camera, own(before, camera)));
      const counted = this.countedTopics(camera);
      for (const topic of this.zeroTopics(camera, cam))
        if (!had.has(topic) && !counted.has(topic)) this.mqtt.state(topic, 0);
    }
  }

  private publishChanged(
    before: ReadonlyMap<string, Count> = new Map(),
    now: ReadonlyMap<string, Count> = new Map(),
    topicsOf: (label: string) => CountTopics,
  ): void {
    const zero: Count = { inView: 0, active: 0 };
    for (const label of new Set([...before.keys(), ...now.keys()])) {
      const n = now.get(label) ?? zero;
      const b = before.get(label) ?? zero;
      const [inView, active, dwell] = topicsOf(label);
      if (n.inView !== b.inView) this.mqtt.state(inView, n.inView);
      if (n.active !== b.active) this.mqtt.state(active, n.active);
      if (dwell && (n.dwellS ?? 0) !== (b.dwellS ?? 0)) this.mqtt.state(dwell, n.dwellS ?? 0);
    }
  }
}
