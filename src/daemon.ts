import type { Logger } from 'pino';
import { systemClock, type Clock } from './core/clock.js';
import type { LoadedConfig } from './config/index.js';
import type { ApplyOutcome } from './control/index.js';
import type { Ingest } from './ingest/index.js';
import { SystemdNotifier } from './ops/index.js';
import { redactUrl } from './redact.js';
import { applyCameras, assemble, reloadFile, RunningConfig, type Pipeline } from './root/index.js';
import { Shutdown, type Stage } from './stop.js';

/** A stop came while the daemon was starting: what had started is stopped again. */
export class StoppedDuringStart extends Error {}

/**
 * The daemon's lifecycle: starts the pipeline as the root builds it (root/pipeline.ts: each
 * stage started as it is built, detector to cameras), queues reloads and runtime changes, and
 * stops the stages in reverse, each stop on its own. It holds no state of the pipeline's own.
 */
export class Daemon {
  private started: { name: string; stage: Stage }[] = [];
  /** The running pipeline, once started: what reloads and changes reach. */
  private running: Pipeline | undefined;
  /** The configuration that runs: the one place that holds it. */
  private readonly config: RunningConfig;
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
    loaded: LoadedConfig,
    private readonly log: Logger,
    private readonly clock: Clock = systemClock,
  ) {
    this.config = new RunningConfig(loaded);
    this.notifier = new SystemdNotifier(process.env, log.child({ stage: 'systemd' }));
    this.shutdown = new Shutdown(log, () => this.ingest?.killable() ?? []);
  }

  /**
   * Starts a stage and remembers to stop it. Once a stop was asked for, nothing more starts and
   * start-up goes no further than the stage in progress.
   */
  private async begin(name: string, stage: Stage, slow?: string): Promise<void> {
    if (this.stopping) throw new StoppedDuringStart('stopped during start-up');
    await (slow ? this.notifier.extendWhile(Promise.resolve(stage.start()), slow) : stage.start());
    this.started.push({ name, stage });
    if (this.stopping) throw new StoppedDuringStart('stopped during start-up');
  }

  /** Rejects with StoppedDuringStart when `stop()` was called before it finished. */
  start(): Promise<void> {
    return (this.starting = this.startStages());
  }

  private async startStages(): Promise<void> {
    const pipeline = await assemble(this.config, {
      log: this.log,
      clock: this.clock,
      begin: (name, stage, slow) => this.begin(name, stage, slow),
      hurried: () => this.shutdown.hurried,
      apply: () => this.applyControl(),
      started: () => this.afterStart(),
    });
    this.ingest = pipeline.ingest;
    this.running = pipeline;

    const { models, view, url } = pipeline;
    const config = this.config.cameras();
    this.notifier.startWatchdog(() => models.localReady()); // what a restart can mend
    const enabled = Object.values(config).filter((c) => c.enabled).length;
    const cameras = Object.keys(config).length;
    const provider = view.health().detector.provider;
    this.log.info(
      { cameras, enabled, models: models.names(), provider, mqtt: redactUrl(url) },
      'argus started',
    );
    await this.notifier.ready(`${enabled} cameras, ${provider ?? 'no'} detector`);
  }

  /**
   * Applies Control's cameras (a command, a PUT, a mode) to the running pipeline, after the
   * reloads and changes queued before it. One heard while Argus starts waits for the start (the
   * pipeline being built took the cameras before it): applied once Argus runs, never dropped.
   * Not applied while stopping: kept in control.json, it runs at the next start.
   */
  private async applyControl(): Promise<ApplyOutcome> {
    await this.afterStart();
    let outcome: ApplyOutcome = {
      outcome: 'deferred',
      reason: 'Argus is stopping: kept in control.json, it runs at the next start',
    };
    await this.queue(async (r) => {
      if (!r) return undefined;
      const next = await applyCameras(r, this.config.current(), r.control.cameras(), this.log);
      outcome = { outcome: 'applied' };
      return next;
    });
    return outcome;
  }

  /** Resolves once start-up is over, whether it went well or not (at once when none is running). */
  private afterStart(): Promise<void> {
    return (
      this.starting?.then(
        () => undefined,
        () => undefined,
      ) ?? Promise.resolve()
    );
  }

  /**
   * Reloads the config file (SIGHUP). An invalid file changes nothing; otherwise cameras and
   * models change at once (see applyConfig), and changes to other sections are reported as
   * needing a restart. Reloads queue: each ends in the state its file describes. Resolves with
   * whether it applied.
   */
  reload(): Promise<boolean> {
    // A reload asked for while Argus starts (a SIGHUP) runs once it has started, not dropped.
    return this.afterStart().then(() =>
      this.queue(async (r) => (r ? reloadFile(r, this.config.current(), this.log) : undefined)),
    );
  }

  /**
   * Runs `job` with the running stages after the reloads and runtime changes (control topics,
   * modes, HTTP) queued before it; the configuration it returns runs from then on.
   */
  private queue(job: (running: Pipeline | undefined) => Promise<LoadedConfig | undefined>): Promise<boolean> {
    const done = this.reloads.then(async () => {
      if (!this.running) this.log.warn('reload: Argus is stopping; ignored');
      const next = await job(this.running);
      if (next) this.config.set(next);
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
