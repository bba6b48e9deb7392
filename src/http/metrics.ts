import type { Registry } from 'prom-client';
import type { HistogramSnapshot } from '../core/histogram.js';
import { own } from '../core/names.js';
import type { CameraState, CameraStatus } from '../ingest/index.js';
import type { RingStats } from '../record/index.js';
import type { RemoteStats } from '../kserve/index.js';
import { providerOf, readySessions, type NamedModelStats } from '../models/index.js';
import type { BrokerStats } from '../broker/index.js';
import type { SnapshotFrameCounts } from '../events/index.js';
import { FAULTS, type CameraHealthView } from '../health/index.js';
import type { OutputStats, StatsSources } from '../publish/index.js';
import type { SchedulerStats } from '../scheduler/index.js';
import { readRegistry, type SetSeries } from './metrics-registry.js';

interface Snapshot {
  sched: SchedulerStats;
  cams: CameraStatus[];
  models: Record<string, NamedModelStats>;
  mqtt: OutputStats;
  broker: BrokerStats | undefined;
  /** Per camera, capture to publish (the reporter's). */
  latency: Map<string, HistogramSnapshot>;
  /** Clip-keeping cameras' rings. */
  rings: Record<string, RingStats>;
  /** Faults of the events path since start, per camera and part. */
  faults: { camera: string; part: string; count: number }[];
  /** Each camera's health (those with it on). */
  health: CameraHealthView[];
  /** Recording cameras' snapshots drawn from their recordings, and rescued (absent: none). */
  frames: SnapshotFrameCounts | undefined;
}

const STATES: CameraState[] = ['connecting', 'streaming', 'backoff', 'offline', 'disabled', 'stopped'];

/**
 * Prometheus metrics, read from the running stages at scrape time (one registry per daemon, no
 * globals). Every metric of one scrape reads the same snapshot, taken once. Names are listed in
 * docs/http.md. Label values are camera and model names (validated as topic levels) and fixed
 * words: never URLs.
 */
export function createMetrics(
  src: StatsSources & {
    broker?: { stats(): BrokerStats };
    latency?: { latency(): Map<string, HistogramSnapshot> };
    eventFaults?: { total(): { camera: string; part: string; count: number }[] };
    health?: { states(): CameraHealthView[] };
    snapshotFrames?: { readonly counts: SnapshotFrameCounts };
  },
): Registry {
  const { registry, metric, histogram } = readRegistry<Snapshot>(() => ({
    sched: src.scheduler.stats(),
    cams: src.ingest.statuses(),
    models: src.models.stats(),
    mqtt: src.output.stats(),
    broker: src.broker?.stats(),
    latency: src.latency?.latency() ?? new Map<string, HistogramSnapshot>(),
    rings: src.ingest.ringStats?.() ?? {},
    faults: src.eventFaults?.total() ?? [],
    health: src.health?.states() ?? [],
    frames: src.snapshotFrames ? { ...src.snapshotFrames.counts } : undefined,
  }));
  const perCamera = (pick: (c: Snapshot['cams'][number]) => number) => (s: Snapshot, set: SetSeries) => {
    for (const c of s.cams) set({ camera: c.camera }, pick(c));
  };
  const perQueue =
    (pick: (c: SchedulerStats['cameras'][string]) => number) => (s: Snapshot, set: SetSeries) => {
      for (const [camera, c] of Object.entries(s.sched.cameras)) set({ camera }, pick(c));
    };

  metric(
    'gauge',
    'argus_camera_health',
    'Camera health: 1 for each cause that holds now (ok, or the faults: blackout, frozen, covered, moved, defocused), else 0',
    ['camera', 'cause'],
    (s, set) => {
      for (const { camera, report } of s.health)
        for (const cause of ['ok', ...FAULTS])
          set(
            { camera, cause },
            cause === 'ok'
              ? Number(report.state === 'ok')
              : Number(report.faults.includes(cause as (typeof FAULTS)[number])),
          );
    },
  );
  metric(
    'counter',
    'argus_camera_frames_received_total',
    'Frames received from the camera (ffmpeg)',
    ['camera'],
    perCamera((c) => c.framesReceived),
  );
  metric(
    'counter',
    'argus_camera_bytes_received_total',
    'Bytes of raw frames received from ffmpeg',
    ['camera'],
    perCamera((c) => c.bytesReceived),
  );
  metric(
    'counter',
    'argus_camera_restarts_total',
    'ffmpeg restarts',
    ['camera'],
    perCamera((c) => c.restarts),
  );
  metric(
    'counter',
    'argus_event_faults_total',
    "Faults caught in a part of the camera's events path (the others went on)",
    ['camera', 'part'],
    (s, set) => {
      for (const f of s.faults) set({ camera: f.camera, part: f.part }, f.count);
    },
  );
  const perRing = (pick: (r: RingStats) => number) => (s: Snapshot, set: SetSeries) => {
    for (const [camera, r] of Object.entries(s.rings)) set({ camera }, pick(r));
  };
  metric(
    'gauge',
    'argus_clip_ring_bytes',
    "Bytes of video the camera's ring of recent video holds (events.clips)",
    ['camera'],
    perRing((r) => r.bytes),
  );
  metric(
    'gauge',
    'argus_recording_bytes',
    "Bytes of a camera's recording kept, by why: `event` (an event's footage), `snapshot` (listed again until an event's snapshot frame in it is kept as a file), `recent` (the pre-roll's margin), `always` (continuous recording, record: always), `retired` (a camera that no longer records: its events' footage)",
    ['camera', 'reason'],
    (s, set) => {
      for (const [camera, r] of Object.entries(s.rings)) {
        if (r.eventBytes !== undefined) set({ camera, reason: 'event' }, r.eventBytes);
        if (r.snapshotBytes !== undefined) set({ camera, reason: 'snapshot' }, r.snapshotBytes);
        if (r.recentBytes !== undefined) set({ camera, reason: 'recent' }, r.recentBytes);
        if (r.alwaysBytes !== undefined) set({ camera, reason: 'always' }, r.alwaysBytes);
        if (r.retiredBytes !== undefined) set({ camera, reason: 'retired' }, r.retiredBytes);
      }
    },
  );
  metric(
    'counter',
    'argus_clip_ring_written_bytes_total',
    "Bytes the camera's ring has written to disk",
    ['camera'],
    perRing((r) => r.bytesWritten),
  );
  metric(
    'counter',
    'argus_clip_ring_lost_segments_total',
    "Segments of the camera's ring lost to a full, failing or slow disk",
    ['camera'],
    perRing((r) => r.segmentsLost),
  );
  metric(
    'counter',
    'argus_snapshot_frames_total',
    "Recording cameras' event snapshots, by what happened: `drawn` (decoded from the recording on request), `cached` (served from the cache, or joined a decode in progress), `rescued` (written as their own file before their footage went), `deferred` (a rescue put off, the rescues busy), `lost` (their frame could not be read or kept)",
    ['result'],
    (s, set) => {
      const f = s.frames;
      if (!f) return;
      set({ result: 'drawn' }, f.drawn);
      set({ result: 'cached' }, f.hits);
      set({ result: 'rescued' }, f.rescued);
      set({ result: 'deferred' }, f.deferred);
      set({ result: 'lost' }, f.gone);
    },
  );
  metric(
    'gauge',
    'argus_camera_state',
    'The camera state: 1 for the current one',
    ['camera', 'state'],
    (s, set) => {
      for (const c of s.cams)
        for (const state of STATES) set({ camera: c.camera, state }, c.state === state ? 1 : 0);
    },
  );
  metric(
    'counter',
    'argus_camera_frames_analysed_total',
    'Frames analysed by the model',
    ['camera'],
    perQueue((c) => c.analysed),
  );
  metric(
    'counter',
    'argus_camera_frames_cached_total',
    'Frames answered from the frame cache',
    ['camera'],
    perQueue((c) => c.cached),
  );
  metric(
    'counter',
    'argus_camera_frames_resequenced_total',
    "Answers held back so that a camera's results leave in capture order",
    ['camera'],
    perQueue((c) => c.resequenced),
  );
  metric(
    'counter',
    'argus_camera_frames_dropped_total',
    'Frames dropped, by reason (full, stale, error)',
    ['camera', 'reason'],
    (s, set) => {
      for (const [camera, c] of Object.entries(s.sched.cameras))
        for (const [reason, n] of Object.entries(c.dropped)) set({ camera, reason }, n);
    },
  );
  metric(
    'gauge',
    'argus_camera_queue_depth',
    'Frames waiting for the detector',
    ['camera'],
    perQueue((c) => c.queueDepth),
  );
  metric(
    'gauge',
    'argus_camera_frame_age_seconds',
    'Mean time frames waited before their batch was sent',
    ['camera'],
    perQueue((c) => c.frameAgeMsMean / 1000),
  );
  metric(
    'gauge',
    'argus_camera_lag_seconds',
    'Age of the newest answered frame (from the first frame while none was answered)',
    ['camera'],
    (s, set) => {
      for (const [camera, c] of Object.entries(s.sched.cameras))
        if (c.lagMs !== null) set({ camera }, c.lagMs / 1000);
    },
  );
  metric(
    'gauge',
    'argus_camera_lagging',
    '1 while the answers are more than scheduler.lagging_after_s behind the frames',
    ['camera'],
    perQueue((c) => (c.lagging ? 1 : 0)),
  );
  metric('gauge', 'argus_camera_model', "The camera's model: 1 for it", ['camera', 'model'], (s, set) => {
    for (const [camera, c] of Object.entries(s.sched.cameras)) set({ camera, model: c.model }, 1);
  });

  metric(
    'gauge',
    'argus_detector_provider',
    "The execution provider a model's sessions run on (kserve: a remote server's): 1 for it",
    ['model', 'provider'],
    (s, set) => {
      for (const [model, m] of Object.entries(s.models)) {
        const provider = providerOf(m);
        if (provider !== null) set({ model, provider }, 1);
      }
    },
  );

  // Per model: the scheduler's batches for it, and its stage's sessions (local) or server (remote).
  const batchesOf = (s: Snapshot, model: string) => own(s.sched.models, model);
  // A remote model's deadlines missed are its requests that got no answer in time; it recreates no session.
  const deadlinesOf = (m: NamedModelStats) => (m.kind === 'local' ? m.deadlinesMissed : m.failures.timeout);
  const recreatedOf = (m: NamedModelStats) => (m.kind === 'local' ? m.sessionsRecreated : 0);
  metric(
    'counter',
    'argus_detector_batches_total',
    'Batches sent to a model, by size',
    ['model', 'size'],
    (s, set) => {
      for (const model of Object.keys(s.models))
        batchesOf(s, model)?.batchSizes.forEach((n, size) => {
          if (size > 0) set({ model, size: String(size) }, n);
        });
    },
  );
  const perModel: ['counter' | 'gauge', string, string, (s: Snapshot, model: string) => number][] = [
    [
      'counter',
      'argus_detector_frames_total',
      'Pictures a model analysed',
      (s, m) => batchesOf(s, m)?.frames ?? 0,
    ],
    [
      'gauge',
      'argus_detector_inference_seconds',
      'Mean inference time of a batch',
      (s, m) => (batchesOf(s, m)?.inferenceMsMean ?? 0) / 1000,
    ],
    [
      'gauge',
      'argus_detector_batches_in_flight',
      'Batches running now',
      (s, m) => batchesOf(s, m)?.inFlight ?? 0,
    ],
    [
      'counter',
      'argus_detector_deadlines_missed_total',
      'Batches abandoned past their deadline',
      (s, m) => deadlinesOf(s.models[m]!),
    ],
    [
      'counter',
      'argus_detector_sessions_recreated_total',
      'Sessions recreated after a deadline or a crash',
      (s, m) => recreatedOf(s.models[m]!),
    ],
    [
      'gauge',
      'argus_detector_ready_workers',
      'Detector sessions loaded and ready',
      (s, m) => readySessions(s.models[m]!),
    ],
  ];
  for (const [kind, name, help, value] of perModel)
    metric(kind, name, help, ['model'], (s, set) => {
      for (const model of Object.keys(s.models)) set({ model }, value(s, model));
    });

  // Remote models: their client's view of the server (label values: model names and fixed words).
  const remotes = (s: Snapshot) =>
    Object.entries(s.models).flatMap(([model, m]) => (m.kind === 'remote' ? [[model, m] as const] : []));
  const perRemote: ['counter' | 'gauge', string, string, (r: RemoteStats) => number][] = [
    [
      'gauge',
      'argus_remote_model_up',
      'A remote model’s server: 1 reachable and ready, 0 not',
      (r) => (r.state === 'up' ? 1 : 0),
    ],
    [
      'counter',
      'argus_remote_requests_total',
      'Inference requests sent to a remote model’s server, retries included',
      (r) => r.requests,
    ],
    [
      'counter',
      'argus_remote_retries_total',
      'Inference requests sent again after a connection error or 502/503/504',
      (r) => r.retries,
    ],
  ];
  for (const [kind, name, help, value] of perRemote)
    metric(kind, name, help, ['model'], (s, set) => {
      for (const [model, r] of remotes(s)) set({ model }, value(r));
    });
  metric(
    'counter',
    'argus_remote_request_errors_total',
    'Inference requests that failed, by kind (connect, timeout, unavailable, rejected, protocol)',
    ['model', 'kind'],
    (s, set) => {
      for (const [model, r] of remotes(s))
        for (const [kind, n] of Object.entries(r.failures)) set({ model, kind }, n);
    },
  );
  metric(
    'counter',
    'argus_remote_bytes_total',
    'HTTP body bytes to and from a remote model’s server',
    ['model', 'direction'],
    (s, set) => {
      for (const [model, r] of remotes(s)) {
        set({ model, direction: 'sent' }, r.bytesSent);
        set({ model, direction: 'received' }, r.bytesReceived);
      }
    },
  );

  metric(
    'counter',
    'argus_detect_requests_total',
    'Images posted to /api/detect, by result (answered, dropped)',
    ['result'],
    (s, set) => {
      set({ result: 'answered' }, s.sched.submitted.answered);
      set({ result: 'dropped' }, s.sched.submitted.dropped);
    },
  );

  metric(
    'counter',
    'argus_mqtt_connect_failures_total',
    'Failed connections to the broker, by cause (auth, refused, unreachable, tls, error)',
    ['cause'],
    (s, set) => {
      for (const [cause, n] of Object.entries(s.mqtt.failures)) set({ cause }, n);
    },
  );

  // The embedded broker's metrics exist only when it runs (no mqtt.url).
  if (src.broker) {
    metric(
      'counter',
      'argus_mqtt_broker_refusals_total',
      'Clients and packets the embedded broker refused, by reason',
      ['reason'],
      (s, set) => {
        for (const [reason, n] of Object.entries(s.broker?.refusals ?? {})) set({ reason }, n);
      },
    );
    for (const [what, help] of [
      ['messages', "Other clients' retained messages on the embedded broker"],
      ['bytes', "Bytes (topics and payloads) of other clients' retained messages on the embedded broker"],
    ] as const)
      metric('gauge', `argus_mqtt_broker_retained_${what}`, help, [], (s, set) => {
        if (s.broker) set({}, s.broker.retained[what]);
      });
  }

  const scalars: ['counter' | 'gauge', string, string, (s: Snapshot) => number][] = [
    [
      'gauge',
      'argus_cache_hit_ratio',
      'Share of answered frames that came from the cache',
      (s) => s.sched.cacheHitRatio,
    ],
    ['gauge', 'argus_mqtt_connected', '1 when connected to the broker', (s) => (s.mqtt.connected ? 1 : 0)],
    [
      'counter',
      'argus_mqtt_reconnects_total',
      'Reconnection attempts to the broker',
      (s) => s.mqtt.reconnects,
    ],
    [
      'counter',
      'argus_mqtt_detections_dropped_total',
      'Detection messages dropped while the broker was away',
      (s) => s.mqtt.detectionsDropped,
    ],
    [
      'counter',
      'argus_mqtt_events_dropped_total',
      'Events dropped from a full buffer while the broker was away',
      (s) => s.mqtt.eventsDropped,
    ],
  ];
  for (const [kind, name, help, value] of scalars)
    metric(kind, name, help, [], (s, set) => set({}, value(s)));

  // Latency histograms (buckets: LATENCY_BUCKETS, docs/http.md), kept by the stages that time them.
  histogram(
    'argus_detector_inference_duration_seconds',
    'Inference time of each batch that succeeded',
    'model',
    (s) => Object.entries(s.sched.models).map(([model, m]) => [model, m.inference] as const),
  );
  histogram(
    'argus_camera_queue_wait_seconds',
    "How long each of a camera's frames waited in its queue before its batch was sent",
    'camera',
    (s) => Object.entries(s.sched.cameras).map(([camera, c]) => [camera, c.queueWait] as const),
  );
  histogram(
    'argus_camera_capture_to_publish_seconds',
    "From a frame's capture (its arrival from ffmpeg) to its answer handed to MQTT",
    'camera',
    (s) => s.latency,
  );
  return registry;
}
