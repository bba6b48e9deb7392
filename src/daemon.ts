import type { Logger } from 'pino';
import { FrameCache } from './cache/index.js';
import { systemClock, type Clock } from './core/clock.js';
import type { LoadedConfig } from './config/index.js';
import { createMetrics, HttpServer, LiveView } from './http/index.js';
import { Ingest } from './ingest/index.js';
import { ModelRegistry } from './models/index.js';
import { SystemdNotifier } from './ops/index.js';
import { EmbeddedBroker } from './broker/index.js';
import { Control } from './control/index.js';
import { EventStore } from './events/index.js';
import { Parts, reportingParts } from './parts.js';
import { MqttOutput, StatsPublisher, topics } from './publish/index.js';
import { redactUrl, scrub } from './redact.js';
import { applyCameras, reloadFile, type Running } from './reload.js';
import { Scheduler } from './scheduler/index.js';
import { Shutdown, type Stage } from './stop.js';

/** A stop came while the daemon was starting: what had started is stopped again. */
export class StoppedDuringStart extends Error {}

/**
 * The composition root: builds the stages, starts them in pipeline order (detector to cameras)
 * and stops them in reverse, each stop on its own. It holds no state of the pipeline's own.
 */
export class Daemon {
  private started: { name: string; stage: Stage }[] = [];
  /** The stages a reload reaches, once started. */
  private running: Running | undefined;
  private readonly notifier: SystemdNotifier;
  /** Reloads run one after another; stopping waits for the one in progress. */
  private reloads: Promise<unknown> = Promise.resolve();
  /** Start-up in progress: a stop waits for it to reach a stage boundary, then unwinds it. */
  private starting: Promise<void> | undefined;
  private stopping = false;
  private readonly shutdown: Shutdown;
  /** The cameras' stage: a hurried stop kills its ffmpeg processes. */
  private ingest: Ingest | undefined;

  constructor(
    private loaded: LoadedConfig,
    private readonly log: Logger,
    private readonly clock: Clock = systemClock,
  ) {
    this.notifier = new SystemdNotifier(process.env, log.child({ stage: 'systemd' }));
    this.shutdown = new Shutdown(log, () => this.ingest?.killable() ?? []);
  }

  /**
   * Starts a stage and remembers to stop it. Once a stop was asked for, nothing more starts and
   * start-up goes no further than the stage in progress.
   */
  private async begin(name: string, stage: Stage): Promise<void> {
    if (this.stopping) throw new StoppedDuringStart('stopped during start-up');
    await stage.start();
    this.started.push({ name, stage });
    if (this.stopping) throw new StoppedDuringStart('stopped during start-up');
  }

  /** Rejects with StoppedDuringStart when `stop()` was called before it finished. */
  start(): Promise<void> {
    return (this.starting = this.startStages());
  }

  private async startStages(): Promise<void> {
    const { config: file, secrets } = this.loaded;
    const { log, clock } = this;
    const stage = (name: string): Logger => log.child({ stage: name });
    const t = topics(file.mqtt.base_topic);
    log.info({ models: Object.keys(file.models), state_dir: file.state_dir }, 'starting');

    const models: ModelRegistry = new ModelRegistry(file.models, file.detector, {
      ...{ log: stage('models'), clock, secrets },
      onSwitch: (names) => scheduler.modelsChanged(names),
      onAvailability: (_name, a) => this.running?.parts.tell('onModelAvailability', a),
      engines: { stateDir: file.state_dir!, maxBatch: file.scheduler.max_batch }, // state_dir: resolved
    });
    await this.notifier.extendWhile(this.begin('models', models), 'loading models'); // engines: minutes

    const broker = file.mqtt.url
      ? undefined
      : new EmbeddedBroker(file.mqtt, stage('broker'), clock, file.control.enabled);
    if (broker) await this.begin('broker', broker);
    const { url, mqtt } = broker?.ownClient() ?? { url: file.mqtt.url!, mqtt: file.mqtt };
    const output = new MqttOutput(url, mqtt, t.status, stage('mqtt'), secrets);
    await this.begin('mqtt', output);
    // The cameras that run: the file's, with the mode and runtime changes kept in the state dir.
    const control: Control = new Control(file, {
      ...{ log: stage('control'), clock, out: output, topics: t },
      apply: () => this.queue(async (r) => r && applyCameras(r, this.loaded, control.cameras(), log)),
      resetLine: (camera, line) => events.resetLine(camera, line),
    });
    await control.load();
    const config = (this.loaded = { ...this.loaded, config: control.effective(file) }).config;
    control.listen(broker ? { broker } : { inbox: output }, config.mqtt.base_topic);

    const ingest: Ingest = new Ingest(
      { ...config, size: (c) => models.detector(c.model)!.inputSize, secrets, clips: config.events.clips },
      { log, clock, onFrame: (f) => scheduler.push(f), onStatus: (s) => parts.tell('onCameraStatus', s) },
    );
    this.ingest = ingest;
    const history = EventStore.inStateDir(config.state_dir, config.events.history, stage('events'), clock);
    const { discovery, detections, events, statuses, frameFit, latency } = reportingParts(config, {
      out: output,
      topics: t,
      clock,
      log,
      history,
      clipSource: () => ingest,
      modes: () => Object.keys(this.loaded.config.modes),
      cameraStatus: (name) => ingest.status(name),
      availability: (model) => models.availability(model),
      lag: { of: (name) => scheduler.lag(name), afterS: config.scheduler.lagging_after_s },
    });
    const scheduler: Scheduler = new Scheduler(config.scheduler, config.cameras, {
      models,
      cache: new FrameCache(config.cache, (camera) => this.loaded.config.cameras[camera]?.cache_mask),
      clock,
      log: stage('scheduler'),
      // Once the stop is hurried, results in flight are dropped.
      onResult: (r) => this.shutdown.hurried || parts.tell('onResult', r),
      onDetectorError: (camera, message) =>
        this.shutdown.hurried || parts.tell('onDetectorError', camera, scrub(message, secrets)),
    });
    const sources = { scheduler, ingest, models, output };
    const stats = new StatsPublisher(config, sources, { out: output, topics: t, clock });
    const view: LiveView = new LiveView(config.http, {
      ...sources,
      stats,
      ...{ history, control },
      ...{ counts: (c) => events.countsOf(c), zoneDwell: (c) => events.dwellOf(c) },
      ...{ lineCounts: () => events.lineCountsNow(), eventFaults: events.faults },
      cameras: () => this.loaded.config.cameras,
      metrics: createMetrics({ ...sources, broker, latency, eventFaults: events.faults }),
    });
    // Those that hear of results, statuses and reloads, in order; the latency last.
    const list = [discovery, control, view, events, detections, statuses, frameFit, latency];
    const parts = new Parts(list, stage('parts'), clock);

    await this.begin('events', parts);
    await this.begin('scheduler', scheduler);
    await this.begin('stats', stats);
    if (config.http.enabled) await this.begin('http', new HttpServer(config.http, view, stage('http')));
    await this.begin('cameras', ingest);
    this.running = { ingest, scheduler, parts, models, control };

    this.notifier.startWatchdog(() => models.localReady()); // what a restart can mend
    const enabled = Object.values(config.cameras).filter((c) => c.enabled).length;
    const cameras = Object.keys(config.cameras).length;
    const provider = view.health().detector.provider;
    log.info({ cameras, enabled, models: models.names(), provider, mqtt: redactUrl(url) }, 'argus started');
    await this.notifier.ready(`${enabled} cameras, ${provider ?? 'no'} detector`);
  }

  /**
   * Reloads the config file (SIGHUP). An invalid file changes nothing; otherwise cameras and
   * models change at once (see applyConfig), and changes to other sections are reported as
   * needing a restart. Reloads queue: each ends in the state its file describes. Resolves with
   * whether it applied.
   */
  reload(): Promise<boolean> {
    return this.queue(async (r) => (r ? reloadFile(r, this.loaded, this.log) : undefined));
  }

  /**
   * Runs `job` with the running stages after the reloads and runtime changes (control topics,
   * modes, HTTP) queued before it; the configuration it returns runs from then on.
   */
  private queue(job: (running: Running | undefined) => Promise<LoadedConfig | undefined>): Promise<boolean> {
    const done = this.reloads.then(async () => {
      if (!this.running) this.log.warn('reload: Argus is starting or stopping; ignored');
      const next = await job(this.running);
      if (next) this.loaded = next;
      return !!next;
    });
    this.reloads = done.catch(() => undefined);
    return done;
  }

  /**
   * Stops in reverse order: cameras, HTTP, stats, then the scheduler (finishing batches in
   * flight), the events still open, MQTT (final states and `offline`), the broker and the models.
   * `hurry()` makes it quicker (see Shutdown).
   */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.notifier.stopping();
    this.notifier.stopWatchdog();
    this.running = undefined;
    await Promise.allSettled([this.starting, this.reloads]);
    await this.shutdown.run(this.started.splice(0));
    this.log.info('argus stopped');
  }

  /** Makes the stop in progress, or the next, quicker and still clean: results in flight are dropped. */
  hurry(): void {
    this.shutdown.hurry();
  }
}
