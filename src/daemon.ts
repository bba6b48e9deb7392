import { availableParallelism } from 'node:os';
import { detectorThreads } from './detector/threads.js';
import type { Logger } from 'pino';
import { FrameCache } from './cache/frame-cache.js';
import { ConfigError, loadConfig, type LoadedConfig } from './config/load.js';
import { Detector } from './detector/detector.js';
import { planModel } from './detector/model.js';
import type { CameraStatus } from './ingest/camera.js';
import { systemClock, type Clock } from './ingest/clock.js';
import { Ingest } from './ingest/ingest.js';
import { createMetrics } from './http/metrics.js';
import { HttpError, HttpServer, type Health } from './http/server.js';
import { ImageError, loadLetterboxed } from './detector/image.js';
import { annotatedJpeg } from './http/snapshot.js';
import { EmbeddedBroker } from './publish/broker.js';
import { MqttOutput } from './publish/mqtt-output.js';
import { Reporter } from './publish/reporter.js';
import { topics, type StatsPayload, type Topics } from './publish/topics.js';
import { Scheduler, type Result, type SchedulerStats } from './scheduler/scheduler.js';
import { SystemdNotifier } from './ops/notify.js';

/** The scheduler's name for images posted to /api/detect (no camera can be named so). */
const API_CAMERA = '\u0000api';

interface Stage {
  name: string;
  stop: () => Promise<void> | void;
}

/**
 * The composition root: builds the stages, starts them in order (detector, broker, MQTT,
 * scheduler, cameras) and stops them in reverse, each stop on its own so one failing stop
 * does not prevent the others.
 */
export class Daemon {
  private started: Stage[] = [];
  private detector: Detector | undefined;
  private scheduler: Scheduler | undefined;
  private ingest: Ingest | undefined;
  private output: MqttOutput | undefined;
  private reporter: Reporter | undefined;
  private topics: Topics;
  private timers: NodeJS.Timeout[] = [];
  private startedAt = 0;
  private lastStats: { at: number; sched: SchedulerStats } | undefined;
  private prevStats: { at: number; sched: SchedulerStats } | undefined;
  private statuses = new Map<string, CameraStatus>();
  /** The last answered frame of each camera, for snapshots and the live page. */
  private latest = new Map<string, Result>();
  private http: HttpServer | undefined;
  /** Images posted to /api/detect wait for their answer here, by frame number. */
  private apiPending = new Map<number, { resolve: (r: Result) => void; reject: (e: Error) => void }>();
  private apiSeq = 0;
  private notifier: SystemdNotifier;

  constructor(
    private loaded: LoadedConfig,
    private readonly log: Logger,
    private readonly clock: Clock = systemClock,
  ) {
    this.topics = topics(loaded.config.mqtt.base_topic);
    this.notifier = new SystemdNotifier(process.env, log.child({ stage: 'systemd' }));
  }

  async start(): Promise<void> {
    const { config, secrets } = this.loaded;
    this.startedAt = this.clock.now();
    const log = this.log;

    const plan = await planModel(config.model);
    const threads = detectorThreads(config.detector, availableParallelism());
    const detector = new Detector(
      plan,
      {
        providers: config.detector.providers,
        deviceId: config.detector.device_id,
        workers: threads.workers,
        intraOpThreads: threads.intraOpThreads,
        interOpThreads: config.detector.inter_op_threads,
        spinning: config.detector.thread_spinning,
        conf: config.model.conf,
        iou: config.model.iou,
        maxDet: config.model.max_detections,
      },
      log.child({ stage: 'detector' }),
    );
    await detector.start();
    this.detector = detector;
    this.started.push({ name: 'detector', stop: () => detector.stop() });

    let url = config.mqtt.url;
    if (!url) {
      const broker = new EmbeddedBroker(
        config.mqtt.embedded.host,
        config.mqtt.embedded.port,
        log.child({ stage: 'broker' }),
      );
      await broker.start();
      this.started.push({ name: 'broker', stop: () => broker.stop() });
      url = broker.url;
    }
    const output = new MqttOutput(url, config.mqtt, this.topics.status, log.child({ stage: 'mqtt' }));
    output.start();
    this.output = output;
    this.started.push({ name: 'mqtt', stop: () => output.stop() });

    const reporter = new Reporter(config.cameras, config.events, this.topics, output);
    this.reporter = reporter;
    this.started.push({ name: 'events', stop: () => reporter.finish() });

    const scheduler = new Scheduler(
      {
        maxBatch: config.scheduler.max_batch,
        maxWaitMs: config.scheduler.max_wait_ms,
        fillWhenIdle: config.scheduler.fill_when_idle,
        maxInFlight: config.scheduler.max_in_flight || threads.workers,
        maxFrameAgeMs: config.scheduler.max_frame_age_ms,
        inferenceTimeoutMs: config.detector.inference_timeout_ms,
      },
      {
        detector,
        cache: new FrameCache({
          enabled: config.cache.enabled,
          maxDistance: config.cache.max_distance,
          cellThreshold: config.cache.cell_threshold,
          maxAgeMs: config.cache.max_age_s * 1000,
        }),
        clock: this.clock,
        log: log.child({ stage: 'scheduler' }),
        onResult: (r) => {
          if (r.camera === API_CAMERA) return this.apiPending.get(r.seq)?.resolve(r);
          this.latest.set(r.camera, r);
          reporter.onResult(r);
        },
        onDrop: (frame, reason) => {
          if (frame.camera === API_CAMERA)
            this.apiPending
              .get(frame.seq)
              ?.reject(new HttpError(503, `the detector is busy: the image was dropped (${reason})`));
        },
        onDetectorError: (camera, message) => reporter.onDetectorError(camera, message, this.clock.now()),
      },
    );
    for (const [name, c] of Object.entries(config.cameras)) {
      if (c.enabled)
        scheduler.addCamera({ name, priority: c.priority, queueSize: config.scheduler.queue_size });
    }
    // Images posted to /api/detect share the detector with the cameras, at their own priority.
    scheduler.addCamera({
      name: API_CAMERA,
      priority: config.http.detect_priority,
      queueSize: 16,
      cache: false,
      internal: true,
    });
    this.scheduler = scheduler;
    this.started.push({ name: 'scheduler', stop: () => scheduler.stop() });

    if (config.http.enabled) {
      const http = new HttpServer(
        config.http.host,
        config.http.port,
        this.httpSource(),
        log.child({ stage: 'http' }),
      );
      await http.start();
      this.http = http;
      this.started.push({ name: 'http', stop: () => http.stop() });
    }

    const ingest = new Ingest(
      { cameras: config.cameras, ffmpeg: config.ffmpeg, size: detector.inputSize, secrets },
      {
        log,
        onFrame: (f) => scheduler.push(f),
        onStatus: (s) => {
          this.statuses.set(s.camera, s);
          reporter.onCameraStatus(s);
        },
        clock: this.clock,
      },
    );
    this.ingest = ingest;
    await ingest.start();
    this.started.push({ name: 'cameras', stop: () => ingest.stop() });

    this.timers.push(setInterval(() => reporter.tick(this.clock.now()), 1000));
    this.timers.push(setInterval(() => this.publishStats(), config.mqtt.stats_interval_s * 1000));
    // The watchdog is fed from the event loop, and only while a detector session is ready: a
    // stuck loop or a detector that cannot recover stops the pings and systemd restarts Argus.
    const watchdogMs = this.notifier.watchdogIntervalMs;
    if (watchdogMs) {
      this.timers.push(
        setInterval(() => {
          if (this.health().ok) this.notifier.watchdog();
          else log.warn('unhealthy: withholding the systemd watchdog ping');
        }, watchdogMs),
      );
    }
    const cams = Object.values(config.cameras);
    log.info(
      {
        cameras: cams.length,
        enabled: cams.filter((c) => c.enabled).length,
        provider: detector.provider,
        mqtt: url.replace(/\/\/[^@/]*@/, '//***@'),
      },
      'argus started',
    );
    await this.notifier.ready(
      `${cams.filter((c) => c.enabled).length} cameras, ${detector.provider ?? 'no'} detector`,
    );
  }

  health(): Health {
    const ready = this.detector?.readyWorkers ?? 0;
    const cameras: Record<string, string> = {};
    for (const [name, s] of this.statuses) cameras[name] = s.state;
    return {
      ok: ready > 0 && this.scheduler !== undefined,
      detector: { ready_workers: ready, provider: this.detector?.provider ?? null },
      cameras,
    };
  }

  private httpSource() {
    const metrics = createMetrics({
      scheduler: () => this.scheduler!.stats(),
      cameras: () =>
        [...this.statuses.values()].map((s) => ({
          camera: s.camera,
          state: s.state,
          restarts: s.restarts,
          framesReceived: s.framesReceived,
          bytesReceived: s.bytesReceived,
        })),
      detector: () => ({
        provider: this.detector?.provider ?? null,
        readyWorkers: this.detector?.readyWorkers ?? 0,
        recreated: this.detector?.recreated ?? 0,
      }),
      mqtt: () => {
        const s = this.output!.stats();
        return {
          connected: s.connected,
          reconnects: s.reconnects,
          detections_dropped: s.detections_dropped,
          events_dropped: s.events_dropped,
          buffered: s.buffered,
        };
      },
    });
    return {
      health: () => this.health(),
      cameraNames: () => Object.keys(this.loaded.config.cameras),
      cameras: () => {
        const sched = this.scheduler?.stats();
        const rates = this.scheduler ? this.statsPayload(false).cameras : undefined;
        return Object.keys(this.loaded.config.cameras).map((name) => {
          const st = this.statuses.get(name);
          const latest = this.latest.get(name);
          return {
            camera: name,
            state: st?.state ?? (this.loaded.config.cameras[name]!.enabled ? 'connecting' : 'disabled'),
            since: st ? new Date(st.since).toISOString() : null,
            restarts: st?.restarts ?? 0,
            last_error: st?.lastError ? { cause: st.lastError.cause, message: st.lastError.message } : null,
            source: st?.source ?? null,
            fps_in: rates?.[name]?.fps_in ?? 0,
            fps_analysed: rates?.[name]?.fps_analysed ?? 0,
            queue_depth: sched?.cameras[name]?.queue_depth ?? 0,
            has_frame: latest !== undefined,
            last_frame_ts: latest ? new Date(latest.ts).toISOString() : null,
            cached: latest?.cached ?? false,
            detections: latest?.detections ?? [],
          };
        });
      },
      latestJpeg: async (camera: string) => {
        const r = this.latest.get(camera);
        return r ? annotatedJpeg(r.data, r.geometry, r.detections) : undefined;
      },
      metrics: async () => ({ contentType: metrics.contentType, body: await metrics.metrics() }),
      detect: (image: Buffer, name: string) => this.detectImage(image, name),
    };
  }

  /** One posted image through the scheduler: the same JSON as `argus detect`. */
  private async detectImage(image: Buffer, name: string): Promise<unknown> {
    const detector = this.detector!;
    let img;
    try {
      img = await loadLetterboxed(image, detector.inputSize, name);
    } catch (err) {
      if (err instanceof ImageError) throw new HttpError(400, err.message);
      throw err;
    }
    const seq = ++this.apiSeq;
    const g = img.geometry;
    const result = await new Promise<Result>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new HttpError(504, 'no answer from the detector in time')),
        60_000,
      );
      const done = () => {
        clearTimeout(timer);
        this.apiPending.delete(seq);
      };
      this.apiPending.set(seq, {
        resolve: (r) => (done(), resolve(r)),
        reject: (e) => (done(), reject(e)),
      });
      this.scheduler!.push({
        camera: API_CAMERA,
        seq,
        ts: this.clock.now(),
        data: Buffer.from(img.rgb.buffer, img.rgb.byteOffset, img.rgb.byteLength),
        geometry: g,
      });
    });
    return { image: name, width: g.srcW, height: g.srcH, detections: result.detections };
  }

  /** The `stats` message: rates over the last interval, totals since start. */
  statsPayload(advance = true): StatsPayload {
    const now = this.clock.now();
    const sched = this.scheduler!.stats();
    // The stats message moves the window on; a read for the API measures over the last window.
    const prev = advance ? this.lastStats : this.prevStats;
    const secs = prev
      ? Math.max(0.001, (now - prev.at) / 1000)
      : Math.max(0.001, (now - this.startedAt) / 1000);
    if (advance) {
      this.prevStats = this.lastStats;
      this.lastStats = { at: now, sched };
    }
    const rate = (cur: number, before: number | undefined): number =>
      Math.round(((cur - (before ?? 0)) / secs) * 100) / 100;
    const cameras: StatsPayload['cameras'] = {};
    for (const [name, c] of Object.entries(sched.cameras)) {
      const p = prev?.sched.cameras[name];
      const st = this.statuses.get(name);
      cameras[name] = {
        state: st?.state ?? 'stopped',
        fps_in: rate(c.frames_in, p?.frames_in),
        fps_analysed: rate(c.analysed, p?.analysed),
        fps_cached: rate(c.cached, p?.cached),
        dropped: c.dropped,
        queue_depth: c.queue_depth,
        frame_age_ms: Math.round(c.frame_age_ms_mean),
        restarts: st?.restarts ?? 0,
      };
    }
    const sizes: Record<string, number> = {};
    sched.batch_sizes.forEach((n, size) => {
      if (n) sizes[String(size)] = n;
    });
    const out = this.output!.stats();
    return {
      ts: new Date(now).toISOString(),
      uptime_s: Math.round((now - this.startedAt) / 1000),
      cameras,
      detector: {
        provider: this.detector?.provider ?? 'none',
        workers: this.detector?.workerCount ?? 0,
        batches: sched.batches,
        batch_sizes: sizes,
        inference_ms: Math.round(sched.inference_ms_mean * 10) / 10,
        deadlines_missed: sched.deadlines_missed,
        sessions_recreated: this.detector?.recreated ?? 0,
      },
      cache: {
        enabled: this.loaded.config.cache.enabled,
        hit_ratio: Math.round(sched.cache_hit_ratio * 1000) / 1000,
      },
      mqtt: {
        reconnects: out.reconnects,
        detections_dropped: out.detections_dropped,
        events_dropped: out.events_dropped,
        buffered: out.buffered,
      },
    };
  }

  private publishStats(): void {
    if (!this.output || !this.scheduler) return;
    this.output.detection(this.topics.stats, JSON.stringify(this.statsPayload()));
  }

  /**
   * Reloads the config file (SIGHUP). An invalid file changes nothing. Camera changes apply at
   * once: added cameras start, removed ones stop, changed ones restart, the rest keep streaming.
   * Changes to other sections are reported as needing a restart. Returns whether it applied.
   */
  async reload(): Promise<boolean> {
    if (!this.ingest || !this.scheduler || !this.reporter) {
      this.log.warn('reload: still starting; ignored');
      return false;
    }
    let next: LoadedConfig;
    try {
      next = await loadConfig(this.loaded.file);
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      for (const i of err.issues) this.log.error({ line: i.line, path: i.path }, `reload: ${i.message}`);
      this.log.error(`reload: ${err.message}; the running configuration is unchanged`);
      return false;
    }
    const cameras = next.config.cameras;
    const sections = Object.keys(next.config) as (keyof typeof next.config)[];
    const needRestart = sections.filter(
      (k) => k !== 'cameras' && JSON.stringify(next.config[k]) !== JSON.stringify(this.loaded.config[k]),
    );
    if (needRestart.length)
      this.log.warn(
        { sections: needRestart },
        `reload: changes to ${needRestart.join(', ')} need a restart; not applied`,
      );
    const scheduler = this.scheduler;
    const result = await this.ingest.reconcile(cameras, next.secrets);
    for (const name of result.removed) {
      scheduler.removeCamera(name);
      this.latest.delete(name);
      this.statuses.delete(name);
    }
    for (const name of [...result.added, ...result.restarted]) {
      const c = cameras[name]!;
      scheduler.removeCamera(name);
      if (c.enabled)
        scheduler.addCamera({
          name,
          priority: c.priority,
          queueSize: this.loaded.config.scheduler.queue_size,
        });
    }
    this.reporter.setCameras(cameras);
    // The logger scrubs the same array: new secrets are hidden from now on.
    for (const secret of next.secrets)
      if (!this.loaded.secrets.includes(secret)) this.loaded.secrets.push(secret);
    this.loaded = { ...this.loaded, config: { ...this.loaded.config, cameras } };
    this.log.info({ ...result, cameras: Object.keys(cameras).length }, 'configuration reloaded');
    return true;
  }

  /**
   * Stops in reverse order: cameras, then the scheduler (finishing batches in flight), then the
   * events still open, then MQTT (final states and `offline`), the broker and the detector.
   */
  async stop(): Promise<void> {
    await this.notifier.stopping();
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    const stages = this.started.reverse();
    this.started = [];
    for (const stage of stages) {
      try {
        await stage.stop();
      } catch (err) {
        this.log.error(
          { stage: stage.name, err: err instanceof Error ? err.message : String(err) },
          'error while stopping',
        );
      }
    }
    this.log.info('argus stopped');
  }
}
