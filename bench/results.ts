/**
 * What a bench run measured: bench/results/<out>.json, written by bench/run.ts and rendered as
 * markdown by bench/report.ts.
 */
import type { ProviderName } from '../src/config/models.js';
import type { CacheBenchRow } from './cache.js';
import type { DetectorBenchRow } from './detector.js';
import type { EventsRow } from './events-summary.js';
import type { FleetBench } from './fleet-failover.js';
import type { benchHash } from './hash.js';
import type { HealthSummary } from './health.js';
import type { IdleResult } from './idle.js';
import type { OverloadResult } from './overload.js';
import type { PipelineRow } from './pipeline.js';
import type { RemoteBench } from './remote.js';
import type { TrackingRun } from './tracking.js';
import type { Efficiency, LiveSaturation } from './saturation.js';

export interface BenchResults {
  date: string;
  machine: {
    cpus: number;
    cpu: string;
    node: string;
    provider: ProviderName;
    /** With --provider webgpu on a CPU-type Vulkan device (lavapipe): its name; its figures are of the path, not of speed. */
    softwareVulkan?: string | null;
  };
  full: boolean;
  repeats: number;
  models: { original: string; prepared: string; rows: DetectorBenchRow[] }[];
  limit: {
    model: string;
    rows: DetectorBenchRow[];
    preprocessMsPerFrame: number;
    loopMsPerFrame: number;
  } | null;
  remote: RemoteBench | null;
  pipeline: {
    model: string;
    rows: PipelineRow[];
    /** The first figure: lavfi cameras against a bare session that decodes nothing. */
    efficiency: Efficiency | null;
    /** Live RTSP cameras against a bare session beside as many decoders (bench/saturation.ts). */
    live: LiveSaturation | null;
  } | null;
  levers: { model: string; rows: PipelineRow[] } | null;
  cacheLive: { model: string; rows: PipelineRow[]; perCpuRatio: number | null } | null;
  cacheReplay: CacheBenchRow[];
  hashes: Awaited<ReturnType<typeof benchHash>>[];
  /** Camera health on tampered and untampered clips (bench/health.ts): the scored set. */
  health?: HealthSummary;
  idle: IdleResult | null;
  events: { model: string; row: EventsRow } | null;
  /** Absent in results written before the section existed. */
  tracking?: {
    model: string;
    busy: number;
    /** `--tracking-events`: keys set under `events:` for every run. */
    events?: Record<string, string>;
    runs: TrackingRun[];
  } | null;
  overload: OverloadResult | null;
  /** Absent in results written before the section existed (issue 48). */
  fleet?: FleetBench | null;
  soak: PipelineRow | null;
}
