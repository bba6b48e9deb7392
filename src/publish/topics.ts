import type { CameraOwner } from '../core/owner.js';
import type { Box } from '../core/geometry.js';
import { controlLevels, type ControlRef, type SettingRef } from '../core/setting-keys.js';
import type { CameraState, FailureCause } from '../ingest/index.js';
import type { ClipShortfall } from '../record/index.js';
import type { DetectionTrack, ZonedDetection } from '../track/index.js';
import type { ObjectEvent } from '../track/index.js';

/**
 * Every MQTT topic Argus publishes: its payload, its QoS and whether it is retained. One entry
 * per topic, as zigbee2mqtt's `lib/types/api.ts` keys its API by topic; docs/mqtt.md is the human
 * side of the same table (one heading per topic, in this order). A payload that is not its
 * topic's, or a topic sent with another QoS or retain flag, does not compile (see `Publisher`).
 */
export interface TopicMap {
  /** `online`; the broker's last will, and Argus when it stops, set `offline`. */
  status: { payload: 'online' | 'offline'; qos: 1; retain: true };
  /** A camera's status, on every change. */
  cameraStatus: { payload: CameraStatusPayload; qos: 1; retain: true };
  /** A camera's detections, per answered frame (as `mqtt.detections` says). */
  detections: { payload: DetectionsPayload; qos: 0; retain: false };
  /** Objects of a label in view. */
  count: { payload: number; qos: 1; retain: true };
  /** Objects of a label in view and not stationary. */
  countActive: { payload: number; qos: 1; retain: true };
  /** The camera's latest picture of an object of a label (a JPEG). */
  snapshot: { payload: Buffer; qos: 1; retain: true };
  /** Objects of a label in view in a zone. */
  zoneCount: { payload: number; qos: 1; retain: true };
  /** Objects of a label in view in a zone and not stationary. */
  zoneCountActive: { payload: number; qos: 1; retain: true };
  /** Whole seconds the longest present object of a label in a zone has been in it (0: none there). */
  zoneDwell: { payload: number; qos: 1; retain: true };
  /**
   * A calibrated zone's last speed measured of an object of a label (in `events.speed_unit`, to
   * 0.1): the fastest of those measured in the latest frame that measured one.
   */
  zoneSpeed: { payload: number; qos: 1; retain: true };
  /** Objects of a label that crossed a line in a direction (kept across restarts). */
  lineCount: { payload: number; qos: 1; retain: true };
  /** Object events: `new`, `update`, `end`. */
  events: { payload: EventPayload; qos: 1; retain: false };
  /** Line crossings. */
  crossings: { payload: CrossingPayload; qos: 1; retain: false };
  /** The pipeline's stats, every `mqtt.stats_interval_s`. */
  stats: { payload: StatsPayload; qos: 0; retain: false };
  /** A camera switch (`enabled`, `detect`, `snapshots`) or a zone's or line's `enabled`, on every change. */
  switchState: { payload: 'ON' | 'OFF'; qos: 1; retain: true };
  /** A camera number (`fps`, `priority`), on every change. */
  numberState: { payload: number; qos: 1; retain: true };
  /** The active arming mode (`none`: no mode). */
  modeState: { payload: string; qos: 1; retain: true };
  /** A camera's health (ok, or a fault with since and its measure), on every change. */
  health: { payload: HealthPayload; qos: 1; retain: true };
  /** A Home Assistant entity's discovery config, under `home_assistant.discovery_prefix`. */
  discovery: { payload: Record<string, unknown>; qos: 1; retain: true };
}

export type TopicKey = keyof TopicMap;

/** The topics sent at a QoS, retained or not. */
export type TopicsSent<Q extends 0 | 1, R extends boolean> = {
  [K in TopicKey]: TopicMap[K]['qos'] extends Q ? (TopicMap[K]['retain'] extends R ? K : never) : never;
}[TopicKey];

declare const topicKey: unique symbol;
/** A topic's name, marked with its entry in TopicMap: a string everywhere else. */
export type Topic<K extends TopicKey> = string & { readonly [topicKey]: K };

const topic = <K extends TopicKey>(name: string): Topic<K> => name as Topic<K>;

/**
 * Where a camera setting's topics are (`<stem>/state`, `<stem>/set`): `<base>/cameras/<camera>/`
 * then the setting's levels (core/setting-keys.ts `controlLevels`; the zone `front.door`:
 * `zones/front.door/enabled`), and a line's reset (`lines/<line>/reset`, a command only).
 */
export const settingTopic = (base: string, camera: string, ref: ControlRef): string =>
  [base, 'cameras', camera, ...controlLevels(ref)].join('/');

/** The topic a setting (or a line's reset) is commanded on: `<stem>/set` (control/commands.ts reads it). */
export const commandTopic = (base: string, camera: string, ref: ControlRef): string =>
  `${settingTopic(base, camera, ref)}/set`;

/** The topics of TopicMap under `base` (`mqtt.base_topic`), by name. */
export const topics = (base: string) => ({
  status: topic<'status'>(`${base}/status`),
  /** With `fleet:`, a box's own availability (its last will), instead of `<base>/status`. */
  boxStatus: (box: string) => topic<'status'>(`${base}/boxes/${box}/status`),
  cameraStatus: (camera: string) => topic<'cameraStatus'>(`${base}/cameras/${camera}/status`),
  detections: (camera: string) => topic<'detections'>(`${base}/cameras/${camera}/detections`),
  count: (camera: string, label: string) => topic<'count'>(`${base}/cameras/${camera}/${label}`),
  countActive: (camera: string, label: string) =>
    topic<'countActive'>(`${base}/cameras/${camera}/${label}/active`),
  snapshot: (camera: string, label: string) =>
    topic<'snapshot'>(`${base}/cameras/${camera}/${label}/snapshot`),
  zoneCount: (camera: string, zone: string, label: string) =>
    topic<'zoneCount'>(`${base}/cameras/${camera}/zones/${zone}/${label}`),
  zoneCountActive: (camera: string, zone: string, label: string) =>
    topic<'zoneCountActive'>(`${base}/cameras/${camera}/zones/${zone}/${label}/active`),
  zoneDwell: (camera: string, zone: string, label: string) =>
    topic<'zoneDwell'>(`${base}/cameras/${camera}/zones/${zone}/${label}/dwell_s`),
  zoneSpeed: (camera: string, zone: string, label: string) =>
    topic<'zoneSpeed'>(`${base}/cameras/${camera}/zones/${zone}/${label}/speed`),
  lineCount: (camera: string, line: string, label: string, direction: string) =>
    topic<'lineCount'>(`${base}/cameras/${camera}/lines/${line}/${label}/${direction}`),
  /** A camera setting's state: a camera switch, a zone's or line's `enabled`. */
  switchState: (camera: string, ref: SettingRef) =>
    topic<'switchState'>(`${settingTopic(base, camera, ref)}/state`),
  /** A camera number's state: `fps`, `priority`. */
  numberState: (camera: string, ref: SettingRef) =>
    topic<'numberState'>(`${settingTopic(base, camera, ref)}/state`),
  modeState: topic<'modeState'>(`${base}/mode/state`),
  health: (camera: string) => topic<'health'>(`${base}/cameras/${camera}/health`),
  events: topic<'events'>(`${base}/events`),
  crossings: topic<'crossings'>(`${base}/crossings`),
  stats: topic<'stats'>(`${base}/stats`),
  /** `<prefix>/<component>/<node id>/<object id>/config` (Home Assistant's discovery topics). */
  discovery: (prefix: string, component: string, node: string, objectId: string) =>
    topic<'discovery'>(`${prefix}/${component}/${node}/${objectId}/config`),
});

export type Topics = ReturnType<typeof topics>;

/** A camera's health (src/health; docs/mqtt.md says what each fault means and its measure). */
export interface HealthPayload {
  state: 'ok' | 'blackout' | 'frozen' | 'covered' | 'moved' | 'defocused';
  /** Since when the state holds (ISO 8601). */
  since: string;
  /** The fault's measure; absent when ok. */
  measure?: number;
  /** Every fault that holds, the state's first. */
  faults: string[];
  /** The time of day's reference is being learnt: only blackout and frozen are judged meanwhile. */
  learning: boolean;
}

export interface CameraStatusPayload {
  camera: string;
  /** With `fleet:`: the box that runs the camera and its ownership epoch (docs/fleet.md). */
  owner?: CameraOwner;
  state: CameraState;
  since: string;
  restarts: number;
  frames_received: number;
  last_frame: string | null;
  source: { width: number; height: number } | null;
  last_error: {
    cause: FailureCause | 'detector' | 'detector_unavailable' | 'lagging';
    message: string;
    at: string;
  } | null;
  retry_at: string | null;
  /** The age of its newest answered frame when this status was published (s); null before any frame. */
  lag_s: number | null;
  /**
   * The parts of its events path that fail (a fault contained: its other parts go on), each with
   * its latest error and since when; empty while none fails.
   */
  event_faults: { part: string; message: string; since: string }[];
}

export interface DetectionsPayload {
  camera: string;
  ts: string;
  frame: number;
  cached: boolean;
  width: number;
  height: number;
  /** With `fleet:`: the box that analysed the frame and its ownership epoch (docs/fleet.md). */
  owner?: CameraOwner;
  /** With `id` and `track` when the camera's detection runs (tracking made something of them). */
  detections: (Omit<ZonedDetection, 'zones'> & { zones?: string[] } & Partial<DetectionTrack>)[];
}

export type EventPayload = Omit<
  ObjectEvent,
  'type' | 'startTs' | 'endTs' | 'currentZones' | 'enteredZones' | 'loiteringZones' | 'zoneTimes'
> & {
  /** The tracker's `new`, `update`, `end`; `clip` when the event's clip is written or has failed (after its end, mostly). */
  type: ObjectEvent['type'] | 'clip';
  start_ts: string;
  end_ts: string | null;
  current_zones: string[];
  entered_zones: string[];
  loitering_zones: string[];
  /** Seconds in each zone entered during the visit: the current stay, or the last one. */
  zone_time_s: Record<string, number>;
  /** The event's snapshot: its best frame so far; null without one (snapshots off, no frame yet). */
  snapshot: SnapshotPayload | null;
  /** The event's clip: being recorded, written, or failed; null when its camera keeps none. */
  clip: ClipPayload | null;
  /**
   * With `fleet:`: the box that made the event (its history, snapshots and clip are kept there)
   * and its ownership epoch (docs/fleet.md).
   */
  owner?: CameraOwner;
};

/** An event's `clip` field (docs/mqtt.md). */
export type ClipPayload =
  | { state: 'recording' }
  | {
      state: 'ready';
      /** Over HTTP (docs/http.md); `url` the same with `http.public_url` in front, when set. */
      path: string;
      url?: string;
      start: string;
      end: string;
      duration_s: number;
      /** The MP4's size: only in clips written before the recording was kept once (each event its own file, issue 47). */
      bytes?: number;
      codec: string;
      /** Whether browsers play it (H.264); an H.265 clip plays in some only. */
      browser_plays: boolean;
      /** Seconds it lacks at its start and end, and why; absent when whole. */
      missing?: { start_s: number; end_s: number; reasons: ClipShortfall[] };
      /** It was cut at `events.clips.max_clip_s`. */
      capped?: true;
    }
  | {
      state: 'failed';
      error: string;
      reasons: (ClipShortfall | 'codec' | 'write_failed' | 'no_ring' | 'evicted')[];
    };

/** Names an event's snapshot, and says which frame it is. */
export interface SnapshotPayload {
  /** The JPEG over HTTP (docs/http.md); `?crop=1` for the crop. */
  path: string;
  /** The frame's time. */
  ts: string;
  /** The detection's score and box (source pixels) in that frame. */
  score: number;
  box: Box;
}

export interface CrossingPayload {
  camera: string;
  line: string;
  direction: string;
  /** The object's event id. */
  id: string;
  label: string;
  ts: string;
  /**
   * The line's count for this label and direction, this crossing included; null when the count
   * could not be kept (a fault of the camera's `line_counts`, which its status names).
   */
  count: number | null;
}

export interface StatsPayload {
  ts: string;
  uptime_s: number;
  cameras: Record<
    string,
    {
      /** The model that analyses its frames. */
      model: string;
      state: CameraState;
      fps_in: number;
      fps_analysed: number;
      fps_cached: number;
      dropped: Record<string, number>;
      queue_depth: number;
      frame_age_ms: number;
      /** The age of its newest answered frame (s); null before any frame. */
      lag_s: number | null;
      /** Its answers are more than `scheduler.lagging_after_s` behind its frames. */
      lagging: boolean;
      restarts: number;
    }
  >;
  /** All models together (`provider`: the providers in use, comma-separated). */
  detector: {
    provider: string;
    workers: number;
    batches: number;
    batch_sizes: Record<string, number>;
    inference_ms: number;
    deadlines_missed: number;
    sessions_recreated: number;
  };
  /** Each model on its own. */
  models: Record<
    string,
    {
      kind: 'local' | 'remote';
      provider: string;
      workers: number;
      ready_workers: number;
      input_size: number;
      batches: number;
      batch_sizes: Record<string, number>;
      /** Pictures analysed (camera frames and posted images). */
      frames: number;
      inference_ms: number;
      in_flight: number;
      deadlines_missed: number;
      sessions_recreated: number;
    }
  >;
  cache: { enabled: boolean; hit_ratio: number };
  mqtt: { reconnects: number; detections_dropped: number; events_dropped: number; buffered: number };
}
