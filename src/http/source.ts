import type { FileHandle } from 'node:fs/promises';
import type { EventQuery, NoSnapshot } from '../events/index.js';
import type { ServedModel } from '../kserve/index.js';
import type { FleetView } from '../fleet/index.js';
import type { KeptReason } from '../record/index.js';
import type { ControlApi } from './control.js';
import type { BoxCounts } from './geometry.js';

export interface Health {
  ok: boolean;
  /** All models together (`provider`: those in use, comma-separated). */
  detector: { ready_workers: number; provider: string | null };
  models: Record<string, { ready_workers: number; provider: string | null }>;
  mqtt: { connected: boolean; last_error: { cause: string; message: string } | null };
  cameras: Record<string, string>;
  /** Per camera, the parts of its events path that fail now (contained: the others go on). */
  event_faults: Record<string, { part: string; count: number; message: string; last: string }[]>;
  /** Each clip-keeping camera's ring of recent video: whether its directory can be used, and why not. */
  rings?: Record<string, { ok: boolean; error: string | null }>;
}

/** A camera's latest frame as latest.jpg answers it: the JPEG, its time, and the boxes drawn on it, counted. */
export interface LatestFrame {
  jpeg: Buffer;
  ts: number;
  boxes: BoxCounts;
}

/** What the HTTP API reads from the running daemon. */
/** An MP4 to serve (the caller closes it), or why there is none (its HTTP status and reason). */
export type ClipFile = { file: FileHandle; size: number } | { status: 404 | 409 | 503; error: string };

/** GET /api/cameras/<camera>/recording (docs/http.md): what a camera's recording holds, and its events. */
export interface RecordingIndex {
  camera: string;
  /** The window asked for (ISO 8601); null where not given (no bound). */
  start: string | null;
  end: string | null;
  /** Whether the camera has a recording (its clips on, or footage kept since they went off). */
  recording: boolean;
  /** The stretches kept that overlap the window, whole, oldest first; a gap is a time not kept. */
  ranges: {
    start: string;
    end: string;
    duration_s: number;
    why: KeptReason[];
    events: string[];
    bytes: number;
  }[];
  /** The camera's events in the history that overlap the window, oldest first. */
  events: { id: string; label: string; start: string; end: string | null; clip: string | null }[];
}

export interface HttpSource {
  health(): Health;
  cameras(): unknown[];
  /** Names of the configured cameras (the only names a URL may address). */
  cameraNames(): string[];
  /** Names of the models running. */
  modelNames(): string[];
  /** The camera's latest frame with its detections drawn, scaled to `width` when given. */
  latestJpeg(camera: string, width?: number): Promise<LatestFrame | undefined>;
  metrics(): Promise<{ contentType: string; body: string }>;
  /** Runs one image through the scheduler, on `model`; rejects with HttpError. */
  detect(image: Buffer, name: string, model: string): Promise<unknown>;
  /** The event history's events that match, of the running config's cameras, newest first. */
  events(query: EventQuery): unknown[];
  /** Whether the history holds an event of that id, of one of the running config's cameras. */
  hasEvent(id: string): boolean;
  /** An event's snapshot (the frame with its box drawn, or the crop); undefined without one. */
  eventSnapshot(id: string, which: 'full' | 'crop'): Promise<Buffer | NoSnapshot | undefined>;
  /**
   * An event's clip, opened, with its size (the caller closes it): its own file (written before
   * issue 47), or an MP4 made from its camera's recording; or why there is none (undefined: none).
   */
  eventClip(id: string): Promise<ClipFile | undefined>;
  /** `from`–`to` (ms) of a camera's recording as an MP4, opened; or why there is none. Absent: no recordings. */
  recording?(camera: string, from: number, to: number): Promise<ClipFile>;
  /**
   * What a camera's recording holds in `from`–`to` (ms; absent: no bound) and why, with its
   * events; undefined when no camera of that name runs. Absent: no recordings.
   */
  recordingIndex?(camera: string, from?: number, to?: number): RecordingIndex | undefined;
  /** With `fleet:`, this box's view of the fleet (GET /api/fleet); undefined without. */
  fleet?(): FleetView | undefined;
  /** Deletes an event with its snapshot and clip; false when there is no such event. */
  deleteEvent(id: string): Promise<boolean>;
  /** The models served over KServe v2 (`http.inference`). */
  servedModels(): readonly ServedModel[];
  /** The runtime settings (GET and PUT /api/control); undefined where none run (tools). */
  control(): ControlApi | undefined;
}
