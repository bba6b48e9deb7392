import type { Box } from '../core/geometry.js';
import type { CameraState, FailureCause } from '../ingest/index.js';
import type { ZonedDetection } from '../track/index.js';
import type { ObjectEvent } from '../track/index.js';

/** Every MQTT topic Argus publishes, and its payload. docs/mqtt.md has one heading per topic. */

export const topics = (base: string) => ({
  /** Retained `online`; the broker's last-will sets `offline`. */
  status: `${base}/status`,
  /** Retained CameraStatusPayload. */
  cameraStatus: (camera: string) => `${base}/cameras/${camera}/status`,
  /** DetectionsPayload for every answered frame. */
  detections: (camera: string) => `${base}/cameras/${camera}/detections`,
  /** Retained count of `label` in view. */
  count: (camera: string, label: string) => `${base}/cameras/${camera}/${label}`,
  /** Retained count of `label` in view and not stationary. */
  countActive: (camera: string, label: string) => `${base}/cameras/${camera}/${label}/active`,
  /** Retained JPEG of the camera's latest picture of a `label` object (binary). */
  snapshot: (camera: string, label: string) => `${base}/cameras/${camera}/${label}/snapshot`,
  /** Retained count of `label` in view in `zone`. */
  zoneCount: (camera: string, zone: string, label: string) =>
    `${base}/cameras/${camera}/zones/${zone}/${label}`,
  /** Retained count of `label` in view in `zone` and not stationary. */
  zoneCountActive: (camera: string, zone: string, label: string) =>
    `${base}/cameras/${camera}/zones/${zone}/${label}/active`,
  /** Retained cumulative count of `label` crossing `line` in `direction` (kept across restarts). */
  lineCount: (camera: string, line: string, label: string, direction: string) =>
    `${base}/cameras/${camera}/lines/${line}/${label}/${direction}`,
  /** ObjectEvent, QoS 1. */
  events: `${base}/events`,
  /** CrossingPayload, QoS 1. */
  crossings: `${base}/crossings`,
  /** StatsPayload, periodically. */
  stats: `${base}/stats`,
});

export type Topics = ReturnType<typeof topics>;

export interface CameraStatusPayload {
  camera: string;
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
}

export interface DetectionsPayload {
  camera: string;
  ts: string;
  frame: number;
  cached: boolean;
  width: number;
  height: number;
  detections: (Omit<ZonedDetection, 'zones'> & { zones?: string[] })[];
}

export type EventPayload = Omit<
  ObjectEvent,
  'startTs' | 'endTs' | 'currentZones' | 'enteredZones' | 'loiteringZones'
> & {
  start_ts: string;
  end_ts: string | null;
  current_zones: string[];
  entered_zones: string[];
  loitering_zones: string[];
  /** The event's snapshot: its best frame so far; null without one (snapshots off, no frame yet). */
  snapshot: SnapshotPayload | null;
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
  /** The line's count for this label and direction, this crossing included. */
  count: number;
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
