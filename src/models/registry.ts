import type { Logger } from 'pino';
import { systemClock, type Clock } from '../core/clock.js';
import { namedRecord } from '../core/names.js';
import { errorMessage as message } from '../core/errors.js';
import type { Picture } from '../core/frame.js';
import type { Config, ModelConfig } from '../config/index.js';
import type { BatchDetections, BatchDetector, ModelAvailability, ModelSet } from '../scheduler/index.js';
import type { EngineSettings } from '../detector/index.js';
import { buildModel, modelSpec, type BuildModel } from './build.js';
import { readySessions, type ModelStage, type ModelStats } from './stage.js';

/** A model's numbers (by its kind), with the pictures it takes. */
export type NamedModelStats = ModelStats & { inputSize: number };

export interface RegistryDeps {
  log: Logger;
  /** For the models' own timers (a remote model's retries); default: the system clock. */
  clock?: Clock;
  /** The config's secrets, for the models to hide (the daemon's list, which grows on reload). */
  secrets?: readonly string[];
  /** Makes one model's stage (tests pass fakes); default: local sessions or a remote server. */
  build?: BuildModel;
  /** What identifies a model's settings and files (tests pass their own); default: modelSpec. */
  spec?: (model: ModelConfig, detector: Config['detector']) => Promise<string>;
  /**
   * At the moment models switch (swapped, added or removed), before any other batch is sent:
   * the scheduler is told (its cameras forget the answers the old model gave).
   */
  onSwitch?: (names: readonly string[]) => void;
  /**
   * A running model became unavailable or available again (`availability(name)` says which).
   * Only the stage that runs under that name is heard: one still loading is not, until it does.
   */
  onAvailability?: (name: string, availability: ModelAvailability) => void;
  /** Where local models keep their TensorRT engines, and the largest batch they must take. */
  engines?: EngineSettings;
}

/** What a reload did to the models. */
export interface SwapResult {
  /** Models now running a new stage, added, or removed. */
  switched: string[];
  /** Models whose new stage failed to load: the running one (if any) stays. */
  failed: string[];
  /** Resolves when every replaced or removed stage has finished its batches and stopped. */
  retired: Promise<void>;
}

/**
 * What the scheduler holds of a model: its stage, with the batches it has in flight counted, so a
 * replaced stage is stopped only once its last batch has come back.
 */
class Handle implements BatchDetector {
  private inFlight = 0;
  private waiting: (() => void)[] = [];

  constructor(
    readonly name: string,
    readonly config: ModelConfig,
    readonly spec: string,
    readonly stage: ModelStage,
    /** When it started taking batches (clock ms). */
    readonly startedAt: number,
  ) {}

  get concurrency(): number {
    return this.stage.concurrency;
  }

  get inputSize(): number {
    return this.stage.inputSize;
  }

  async detect(pictures: readonly Picture[]): Promise<BatchDetections> {
    this.inFlight++;
    try {
      return await this.stage.detect(pictures);
    } finally {
      if (--this.inFlight === 0) for (const resolve of this.waiting.splice(0)) resolve();
    }
  }

  /** Resolves when no batch is in flight. */
  drained(): Promise<void> {
    return this.inFlight === 0 ? Promise.resolve() : new Promise((r) => this.waiting.push(r));
  }
}

/**
 * The named models (`models:`, `model:` as `default`): a stage that starts every model (one that
 * fails to load fails start-up, naming it), gives the scheduler each model's detector by name,
 * and on reload swaps a changed model without a gap: the new stage loads and warms beside the
 * old one, the scheduler switches to it at once, and the old one stops when its batches in
 * flight are done. A model that fails to load on reload leaves the running one in place.
 */
export class ModelRegistry implements ModelSet {
  private live = new Map<string, Handle>();
  private retiring = new Set<Promise<void>>();
  private readonly build: BuildModel;
  private readonly spec: NonNullable<RegistryDeps['spec']>;

  constructor(
    private readonly models: Record<string, ModelConfig>,
    private readonly detectorCfg: Config['detector'],
    private readonly deps: RegistryDeps,
  ) {
    this.build = deps.build ?? buildModel;
    this.spec = deps.spec ?? modelSpec;
  }

  /** Loads and warms every model at once. Rejects naming the model (and its file) that failed. */
  async start(): Promise<void> {
    const names = Object.keys(this.models);
    const results = await Promise.allSettled(
      names.map(async (name) => {
        const model = this.models[name]!;
        return this.load(name, model, this.detectorCfg, await this.spec(model, this.detectorCfg));
      }),
    );
    results.forEach((r, i) => {
      if (r.status === 'fulfilled') this.live.set(names[i]!, r.value);
    });
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) {
      await this.stop();
      throw failed.reason;
    }
  }

  /** Builds and starts one model's stage, of `spec`; rejects with an error that starts with its name. */
  private async load(
    name: string,
    model: ModelConfig,
    detector: Config['detector'],
    spec: string,
  ): Promise<Handle> {
    const log = this.deps.log.child({ model: name });
    let stage: ModelStage | undefined;
    const ctx = {
      log,
      clock: this.deps.clock ?? systemClock,
      secrets: this.deps.secrets ?? [],
      engines: this.deps.engines,
      onAvailability: () => {
        const a = stage && this.live.get(name)?.stage === stage ? this.availability(name) : undefined;
        if (a) this.deps.onAvailability?.(name, a);
      },
    };
    try {
      stage = await this.build(name, model, detector, ctx);
      await stage.start();
      return new Handle(name, model, spec, stage, ctx.clock.now());
    } catch (err) {
      throw new Error(prefixed(name, message(err)), { cause: err });
    }
  }

  detector(name: string): BatchDetector | undefined {
    return this.live.get(name);
  }

  names(): string[] {
    return [...this.live.keys()];
  }

  /** The settings of the models running now (a model that failed to reload keeps its old ones). */
  config(): Record<string, ModelConfig> {
    const out = namedRecord<ModelConfig>();
    for (const [name, h] of this.live) out[name] = h.config;
    return out;
  }

  labels(name: string): readonly string[] | undefined {
    return this.live.get(name)?.stage.labels;
  }

  /**
   * Whether the model of this name takes batches now, as the model decides it (a remote
   * model's server away or back); undefined for a name that runs no model.
   */
  availability(name: string): ModelAvailability | undefined {
    const h = this.live.get(name);
    if (!h) return undefined;
    return h.stage.availability?.() ?? { model: name, up: true, message: null, since: h.startedAt };
  }

  /** Why the model of this name takes no batch now (its server away), or undefined. */
  unavailable(name: string): string | undefined {
    const a = this.availability(name);
    return a && !a.up ? (a.message ?? `model ${name} is unavailable`) : undefined;
  }

  stats(): Record<string, NamedModelStats> {
    const out = namedRecord<NamedModelStats>();
    for (const [name, h] of this.live) out[name] = { ...h.stage.stats(), inputSize: h.stage.inputSize };
    return out;
  }

  /** Whether every local model has a session ready: what a restart of Argus could mend. */
  localReady(): boolean {
    return [...this.live.values()].every((h) => h.config.remote || readySessions(h.stage.stats()) > 0);
  }

  /**
   * Brings the models in line with a reloaded file: new and changed models load beside what runs;
   * once all have loaded (or failed), the scheduler switches at once to each one that loaded, and
   * removed models go. Replaced stages stop when their batches in flight are done (`retired`).
   */
  async swap(models: Record<string, ModelConfig>, detector: Config['detector']): Promise<SwapResult> {
    const names = Object.keys(models);
    const specs = await Promise.all(names.map((n) => this.spec(models[n]!, detector)));
    const toLoad = names.flatMap((n, i) =>
      this.live.get(n)?.spec === specs[i] ? [] : [[n, specs[i]!] as const],
    );
    const removed = [...this.live.keys()].filter((n) => !Object.hasOwn(models, n));
    const results = await Promise.allSettled(
      toLoad.map(([n, spec]) => this.load(n, models[n]!, detector, spec)),
    );
    // From here to onSwitch nothing awaits: no batch goes out between the switch and the scheduler
    // hearing of it.
    const switched: string[] = [];
    const failed: string[] = [];
    const old: Handle[] = [];
    results.forEach((r, i) => {
      const [name] = toLoad[i]!;
      const running = this.live.get(name);
      if (r.status === 'rejected') {
        failed.push(name);
        this.deps.log.error(
          { model: name, err: message(r.reason) },
          `reload: ${message(r.reason)}; ${running ? 'the running model stays' : 'the model is not added'}`,
        );
        return;
      }
      this.live.set(name, r.value);
      switched.push(name);
      if (running) old.push(running);
      this.deps.log.info({ model: name }, running ? 'model swapped' : 'model added');
    });
    for (const name of removed) {
      old.push(this.live.get(name)!);
      this.live.delete(name);
      switched.push(name);
      this.deps.log.info({ model: name }, 'model removed');
    }
    if (switched.length) this.deps.onSwitch?.(switched);
    const retired = Promise.all(old.map((h) => this.retire(h))).then(() => undefined);
    return { switched, failed, retired };
  }

  /** Stops a stage no longer used once its last batch is back. */
  private retire(h: Handle): Promise<void> {
    const done = h
      .drained()
      .then(() => h.stage.stop())
      .catch((err: unknown) =>
        this.deps.log.error({ model: h.name, err: message(err) }, 'error while stopping a replaced model'),
      )
      .finally(() => this.retiring.delete(done));
    this.retiring.add(done);
    return done;
  }

  /** Stops every model (each on its own), and waits for replaced ones still finishing. */
  async stop(): Promise<void> {
    const handles = [...this.live.values()];
    this.live.clear();
    await Promise.all(
      handles.map(async (h) => {
        try {
          await h.stage.stop();
        } catch (err) {
          this.deps.log.error({ model: h.name, err: message(err) }, 'error while stopping a model');
        }
      }),
    );
    await Promise.all([...this.retiring]);
  }
}

/** `model plates: …`, unless the message already says so. */
function prefixed(name: string, text: string): string {
  return text.startsWith(`model ${name}:`) ? text : `model ${name}: ${text}`;
}
