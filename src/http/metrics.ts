import { Counter, Gauge, Registry } from 'prom-client';
import type { CameraState } from '../ingest/camera.js';
import type { StatsPayload } from '../publish/topics.js';
import type { SchedulerStats } from '../scheduler/scheduler.js';

export interface MetricsSource {
  scheduler(): SchedulerStats;
  cameras(): {
    camera: string;
    state: CameraState;
    restarts: number;
    framesReceived: number;
    bytesReceived: number;
  }[];
  detector(): { provider: string | null; readyWorkers: number; recreated: number };
  mqtt(): StatsPayload['mqtt'] & { connected: boolean };
}

const STATES: CameraState[] = ['connecting', 'streaming', 'backoff', 'offline', 'disabled', 'stopped'];

/**
 * Prometheus metrics, read from the running stages at scrape time (one registry per daemon, no
 * globals). Names are listed in docs/operations.md. Label values are camera names (validated as
 * topic levels) and fixed words: never URLs.
 */
export function createMetrics(src: MetricsSource): Registry {
  const registry = new Registry();
  const counter = (
    name: string,
    help: string,
    labelNames: string[],
    read: (set: (labels: Record<string, string>, v: number) => void) => void,
  ) =>
    new Counter({
      name,
      help,
      labelNames,
      registers: [registry],
      collect() {
        this.reset();
        read((labels, v) => this.inc(labels, Math.max(0, v)));
      },
    });
  const gauge = (
    name: string,
    help: string,
    labelNames: string[],
    read: (set: (labels: Record<string, string>, v: number) => void) => void,
  ) =>
    new Gauge({
      name,
      help,
      labelNames,
      registers: [registry],
      collect() {
        this.reset();
        read((labels, v) => this.set(labels, v));
      },
    });

  counter(
    'argus_camera_frames_received_total',
    'Frames received from the camera (ffmpeg)',
    ['camera'],
    (set) => {
      for (const c of src.cameras()) set({ camera: c.camera }, c.framesReceived);
    },
  );
  counter(
    'argus_camera_bytes_received_total',
    'Bytes of raw frames received from ffmpeg',
    ['camera'],
    (set) => {
      for (const c of src.cameras()) set({ camera: c.camera }, c.bytesReceived);
    },
  );
  counter('argus_camera_restarts_total', 'ffmpeg restarts', ['camera'], (set) => {
    for (const c of src.cameras()) set({ camera: c.camera }, c.restarts);
  });
  gauge('argus_camera_state', 'The camera state: 1 for the current one', ['camera', 'state'], (set) => {
    for (const c of src.cameras())
      for (const s of STATES) set({ camera: c.camera, state: s }, c.state === s ? 1 : 0);
  });
  counter('argus_camera_frames_analysed_total', 'Frames analysed by the model', ['camera'], (set) => {
    for (const [camera, s] of Object.entries(src.scheduler().cameras)) set({ camera }, s.analysed);
  });
  counter('argus_camera_frames_cached_total', 'Frames answered from the frame cache', ['camera'], (set) => {
    for (const [camera, s] of Object.entries(src.scheduler().cameras)) set({ camera }, s.cached);
  });
  counter(
    'argus_camera_frames_dropped_total',
    'Frames dropped, by reason (full, stale, error)',
    ['camera', 'reason'],
    (set) => {
      for (const [camera, s] of Object.entries(src.scheduler().cameras))
        for (const [reason, n] of Object.entries(s.dropped)) set({ camera, reason }, n);
    },
  );
  gauge('argus_camera_queue_depth', 'Frames waiting for the detector', ['camera'], (set) => {
    for (const [camera, s] of Object.entries(src.scheduler().cameras)) set({ camera }, s.queue_depth);
  });
  gauge(
    'argus_camera_frame_age_seconds',
    'Mean time frames waited before their batch was sent',
    ['camera'],
    (set) => {
      for (const [camera, s] of Object.entries(src.scheduler().cameras))
        set({ camera }, s.frame_age_ms_mean / 1000);
    },
  );
  counter('argus_detector_batches_total', 'Batches sent to the detector, by size', ['size'], (set) => {
    src.scheduler().batch_sizes.forEach((n, size) => {
      if (size > 0) set({ size: String(size) }, n);
    });
  });
  gauge('argus_detector_inference_seconds', 'Mean inference time of a batch', [], (set) =>
    set({}, src.scheduler().inference_ms_mean / 1000),
  );
  gauge('argus_detector_batches_in_flight', 'Batches running now', [], (set) =>
    set({}, src.scheduler().in_flight),
  );
  counter('argus_detector_deadlines_missed_total', 'Batches abandoned past their deadline', [], (set) =>
    set({}, src.scheduler().deadlines_missed),
  );
  counter(
    'argus_detector_sessions_recreated_total',
    'Sessions recreated after a deadline or a crash',
    [],
    (set) => set({}, src.detector().recreated),
  );
  gauge('argus_detector_ready_workers', 'Detector sessions loaded and ready', [], (set) =>
    set({}, src.detector().readyWorkers),
  );
  gauge('argus_cache_hit_ratio', 'Share of answered frames that came from the cache', [], (set) =>
    set({}, src.scheduler().cache_hit_ratio),
  );
  gauge('argus_mqtt_connected', '1 when connected to the broker', [], (set) =>
    set({}, src.mqtt().connected ? 1 : 0),
  );
  counter('argus_mqtt_reconnects_total', 'Reconnection attempts to the broker', [], (set) =>
    set({}, src.mqtt().reconnects),
  );
  counter(
    'argus_mqtt_detections_dropped_total',
    'Detection messages dropped while the broker was away',
    [],
    (set) => set({}, src.mqtt().detections_dropped),
  );
  counter(
    'argus_mqtt_events_dropped_total',
    'Events dropped from a full buffer while the broker was away',
    [],
    (set) => set({}, src.mqtt().events_dropped),
  );
  return registry;
}
