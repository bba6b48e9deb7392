/**
 * What the page reads from the HTTP API (docs/http.md), as it reads it: only the fields it uses.
 * The page runs in the browser and imports nothing from the daemon; these mirror the answers of
 * `GET /api/cameras`, `/api/control`, `/api/events`, `/api/fleet` and a camera's `recording`.
 */

export type Point = [number, number];

export interface BoxCounts {
  labels: Record<string, number>;
  zones: Record<string, Record<string, number>>;
}

export interface CameraGeometry {
  width: number | null;
  height: number | null;
  zones: Record<string, { points: Point[]; enabled: boolean }>;
  lines: Record<string, { points: [Point, Point]; directions: string[]; enabled: boolean }>;
  masks: { label: string | null; points: Point[] }[];
  cache_mask: Point[][];
}

/** An object's speed on a calibrated zone's ground, as events and `objects` give it. */
export interface Speed {
  /** Over the last second; null when not measured in the last second. */
  current: number | null;
  max: number;
  unit: string;
  zone: string;
}

/** A confirmed object in view (`GET /api/cameras` `objects`). */
export interface LiveObject {
  id: string;
  label: string;
  current_zones: string[];
  loitering_zones: string[];
  speed: Speed | null;
  stationary: boolean;
}

/** One camera of `GET /api/cameras`. */
export interface CameraView {
  camera: string;
  state: string;
  last_error: { cause: string; message: string } | null;
  fps_in: number;
  fps_analysed: number;
  has_frame: boolean;
  last_frame_ts: string | null;
  detections: unknown[];
  counts: BoxCounts;
  line_counts: Record<string, Record<string, Record<string, number>>>;
  zone_dwell_s: Record<string, number>;
  /** Absent from a daemon older than the page. */
  objects?: LiveObject[];
  geometry: CameraGeometry;
  /** Its health (ok, or a fault); null with health off for it (absent from an older Argus). */
  health?: { state: string; since: string; measure?: number; learning: boolean } | null;
}

export type SettingValue = boolean | number;

/** `GET /api/control`, and the answer to each change. */
export interface ControlView {
  enabled: boolean;
  mode: string;
  modes: string[];
  cameras: Record<string, Record<string, SettingValue>>;
}

export type Clip =
  | { state: 'recording' }
  | {
      state: 'ready';
      path: string;
      duration_s: number;
      codec: string;
      browser_plays: boolean;
      missing?: { start_s: number; end_s: number; reasons: string[] };
    }
  | { state: 'failed'; error: string };

/** One event of `GET /api/events`. */
export interface EventView {
  id: string;
  camera: string;
  label: string;
  start_ts: string;
  end_ts: string | null;
  entered_zones: string[];
  /** Absent from records older than the fields. */
  loitering_zones?: string[];
  speed?: Speed | null;
  snapshot: { ts: string; path: string; score: number } | null;
  clip?: Clip | null;
}

/** `GET /api/fleet` (with `fleet:` only): this box's view of the fleet, as it last read etcd. */
export interface FleetView {
  box: string;
  connected: boolean;
  members: { name: string; capacity: number; labels: string[]; cameras: string[]; limit: number }[];
  owners: Record<string, { box: string; epoch: number }>;
  running: string[];
  unplaced: string[];
}

/** `GET /api/cameras/<camera>/recording`: what a camera's recording holds and why, and its events. */
export interface RecordingView {
  camera: string;
  recording: boolean;
  ranges: { start: string; end: string; duration_s: number; why: string[]; events: string[] }[];
  events: { id: string; label: string; start: string; end: string | null; clip: string | null }[];
}

/** A JSON answer, or an error saying what failed (the header shows it). */
export async function json<T>(path: string): Promise<T> {
  const res = await fetch(path);
  if (!res.ok) throw new Error(path.split('?')[0] + ' answered ' + res.status);
  return (await res.json()) as T;
}
