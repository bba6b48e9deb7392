import type { Clock, Timer } from '../core/clock.js';
import { namedRecord, own } from '../core/names.js';
import { isoTime } from '../core/time.js';
import type { Config } from '../config/index.js';
import type { CameraStatus } from '../ingest/index.js';
import type { RingStats } from '../record/index.js';
import { providerOf, readySessions, type ModelStats, type NamedModelStats } from '../models/index.js';
import type { SchedulerStats } from '../scheduler/index.js';
import type { Output, OutputStats } from './mqtt-output.js';
import { Publisher } from './publisher.js';
import type { StatsPayload, Topics } from './topics.js';

/** Where the numbers come from: each stage's own counters. */
export interface StatsSources {
  scheduler: { stats(): SchedulerStats };
  ingest: { statuses(): CameraStatus[]; ringStats?(): Record<string, RingStats> };
  models: { stats(): Record<string, NamedModelStats> };
  output: { stats(): OutputStats };
}

export interface CameraRates {
  fpsIn: number;
  fpsAnalysed: number;
  fpsCached: number;
}

type Counts = Pick<SchedulerStats['cameras'][string], 'framesIn' | 'analysed' | 'cached'>;

/**
 * The cameras' counts at a message. A camera the scheduler does not list now (disabled, removed)
 * keeps its last counts: its counters go on from them when it comes back, so its rate does too.
 */
interface Sample {
  at: number;
  counts: Record<string, Counts>;
}

function sample(at: number, sched: SchedulerStats, before: Sample | undefined): Sample {
  const counts = namedRecord<Counts>();
  for (const [name, c] of Object.entries(before?.counts ?? {})) counts[name] = c;
  for (const [name, { framesIn, analysed, cached }] of Object.entries(sched.cameras))
    counts[name] = { framesIn, analysed, cached };
  return { at, counts };
}

const round2 = (v: number): number => Math.round(v * 100) / 100;

/** A lag in ms as the stats, statuses and the API give it: seconds, to a tenth. */
export const lagSeconds = (ms: number | null): number | null =>
  ms === null ? null : Math.round(ms / 100) / 10;

/**
 * The `stats` message, every `mqtt.stats_interval_s`: rates over the last interval, totals
 * since start. The same rates serve the HTTP API between messages.
 */
export class StatsPublisher {
  private startedAt = 0;
  /** The samples at the last two messages: a message moves the window on. */
  private last: Sample | undefined;
  private prev: Sample | undefined;
  private timer: Timer | null = null;
  private readonly mqtt: Publisher;

  constructor(
    private readonly cfg: {
      mqtt: Pick<Config['mqtt'], 'stats_interval_s'>;
      cache: Pick<Config['cache'], 'enabled'>;
    },
    private readonly sources: StatsSources,
    private readonly deps: { out: Output; topics: Topics; clock: Clock },
  ) {
    this.mqtt = new Publisher(deps.out);
  }

  start(): void {
    this.startedAt = this.deps.clock.now();
    const publish = (): void => {
      this.mqtt.detection(this.deps.topics.stats, this.payload());
      this.timer = this.deps.clock.setTimeout(publish, this.cfg.mqtt.stats_interval_s * 1000);
    };
    this.timer = this.deps.clock.setTimeout(publish, this.cfg.mqtt.stats_interval_s * 1000);
  }

  stop(): void {
    if (this.timer) this.deps.clock.clearTimeout(this.timer);
    this.timer = null;
  }

  /**
   * Per-camera rates over the last complete window (since start before the first message), from
   * `sched` when the caller has just read it.
   */
  rates(sched: SchedulerStats = this.sources.scheduler.stats()): Record<string, CameraRates> {
    return this.measure(this.prev, this.deps.clock.now(), sched);
  }

  private measure(
    since: Sample | undefined,
    now: number,
    sched: SchedulerStats,
  ): Record<string, CameraRates> {
    const secs = Math.max(0.001, (now - (since?.at ?? this.startedAt)) / 1000);
    // The counters only go up (the stages keep them across a camera's restarts): the floor at 0
    // is a last guard, so that no rate is ever shown below 0.
    const rate = (cur: number, before: number | undefined): number =>
      round2(Math.max(0, cur - (before ?? 0)) / secs);
    const out = namedRecord<CameraRates>();
    for (const [name, c] of Object.entries(sched.cameras)) {
      const p = own(since?.counts, name);
      out[name] = {
        fpsIn: rate(c.framesIn, p?.framesIn),
        fpsAnalysed: rate(c.analysed, p?.analysed),
        fpsCached: rate(c.cached, p?.cached),
      };
    }
    return out;
  }

  /** The message now; moves the rate window on. */
  payload(): StatsPayload {
    const now = this.deps.clock.now();
    const sched = this.sources.scheduler.stats();
    const rates = this.measure(this.last, now, sched);
    this.prev = this.last;
    this.last = sample(now, sched, this.last);
    const statuses = new Map(this.sources.ingest.statuses().map((s) => [s.camera, s]));
    const cameras: StatsPayload['cameras'] = namedRecord();
    for (const [name, c] of Object.entries(sched.cameras)) {
      const st = statuses.get(name);
      const r = rates[name]!;
      cameras[name] = {
        model: c.model,
        state: st?.state ?? 'stopped',
        fps_in: r.fpsIn,
        fps_analysed: r.fpsAnalysed,
        fps_cached: r.fpsCached,
        dropped: c.dropped,
        queue_depth: c.queueDepth,
        frame_age_ms: Math.round(c.frameAgeMsMean),
        lag_s: lagSeconds(c.lagMs),
        lagging: c.lagging,
        restarts: st?.restarts ?? 0,
      };
    }
    const sizes = (batchSizes: number[]): Record<string, number> => {
      const out: Record<string, number> = {};
      batchSizes.forEach((n, size) => {
        if (n) out[String(size)] = n;
      });
      return out;
    };
    const ms = (v: number): number => Math.round(v * 10) / 10;
    const det = this.sources.models.stats();
    const models: StatsPayload['models'] = namedRecord();
    for (const [name, m] of Object.entries(det)) {
      const b = own(sched.models, name);
      models[name] = {
        kind: m.kind,
        provider: providerOf(m) ?? 'none',
        workers: workersOf(m),
        ready_workers: readySessions(m),
        input_size: m.inputSize,
        batches: b?.batches ?? 0,
        batch_sizes: sizes(b?.batchSizes ?? []),
        frames: b?.frames ?? 0,
        inference_ms: ms(b?.inferenceMsMean ?? 0),
        in_flight: b?.inFlight ?? 0,
        deadlines_missed: deadlinesOf(m),
        sessions_recreated: recreatedOf(m),
      };
    }
    const all = Object.values(det);
    const sum = (pick: (m: NamedModelStats) => number): number => all.reduce((n, m) => n + pick(m), 0);
    const out = this.sources.output.stats();
    return {
      ts: isoTime(now),
      uptime_s: Math.round((now - this.startedAt) / 1000),
      cameras,
      detector: {
        provider: [...new Set(all.map((m) => providerOf(m) ?? 'none'))].join(',') || 'none',
        workers: sum(workersOf),
        batches: sched.batches,
        batch_sizes: sizes(sched.batchSizes),
        inference_ms: ms(sched.inferenceMsMean),
        deadlines_missed: sum(deadlinesOf),
        sessions_recreated: sum(recreatedOf),
      },
      models,
      cache: { enabled: this.cfg.cache.enabled, hit_ratio: Math.round(sched.cacheHitRatio * 1000) / 1000 },
      mqtt: {
        reconnects: out.reconnects,
        detections_dropped: out.detectionsDropped,
        events_dropped: out.eventsDropped,
        buffered: out.buffered,
      },
    };
  }
}

/*
 * A model's sessions as the stats topic counts them: a remote model's connections are its
 * workers, its requests past their deadline its deadlines missed, and it recreates no session.
 */
const workersOf = (m: ModelStats): number => (m.kind === 'local' ? m.workers : m.connections);
const deadlinesOf = (m: ModelStats): number => (m.kind === 'local' ? m.deadlinesMissed : m.failures.timeout);
const recreatedOf = (m: ModelStats): number => (m.kind === 'local' ? m.sessionsRecreated : 0);
