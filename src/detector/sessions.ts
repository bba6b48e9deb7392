import type { Config, ModelConfig, ProviderName, WebgpuVendor } from '../config/index.js';
import type { ModelPlan } from './model.js';
import type { EngineSettings, WorkerInit } from './protocol.js';
import { describeProviderChoice, runDetail, type Skipped } from './providers.js';
import { detectorThreads } from './threads.js';

/** What a local model overrides of `detector:` (models: providers, device_ids, workers). */
export type SessionOverrides = Partial<Pick<ModelConfig, 'providers' | 'device_ids' | 'workers'>>;

/** `detector:` with a model's own settings over it; `device_id` becomes the list of devices. */
export interface SessionSettings extends Omit<Config['detector'], 'device_id'> {
  deviceIds: number[];
}

export function sessionSettings(detector: Config['detector'], model: SessionOverrides): SessionSettings {
  const { device_id, ...rest } = detector;
  return {
    ...rest,
    providers: model.providers ?? detector.providers,
    workers: model.workers ?? detector.workers,
    deviceIds: model.device_ids ?? [device_id],
  };
}

/**
 * The settings each worker (session) starts with: as many as `detectorThreads` says (on a GPU
 * by default one per device), worker i on device i modulo the devices.
 */
export function workerInits(
  plan: ModelPlan,
  s: SessionSettings,
  output: Pick<ModelConfig, 'conf' | 'iou' | 'max_detections'>,
  cores: number,
  engines: EngineSettings | null = null,
): WorkerInit[] {
  const { workers, intraOpThreads } = detectorThreads(s, cores, s.deviceIds.length);
  return Array.from({ length: workers }, (_, i) => ({
    modelPath: plan.path,
    inputName: plan.inputName,
    outputName: plan.outputName,
    inputSize: plan.inputSize,
    staticBatch: plan.staticBatch,
    classes: plan.labels.length,
    providers: s.providers,
    deviceId: s.deviceIds[i % s.deviceIds.length]!,
    intraOpThreads,
    interOpThreads: s.inter_op_threads,
    spinning: s.thread_spinning,
    conf: output.conf,
    iou: output.iou,
    maxDet: output.max_detections,
    precision: s.precision,
    engines,
  }));
}

/** How one session started: on which device, with which provider, and what it skipped. */
export interface SessionStart {
  deviceId: number;
  provider: ProviderName;
  skipped: Skipped[];
  /** What it runs (fp32 unless told). */
  precision?: 'fp32' | 'fp16';
  /** Why the fp16 asked for is not what runs. */
  precisionNote?: string | undefined;
}

const ON_DEVICE = new Set<ProviderName>(['cuda', 'tensorrt']);

/**
 * The one log line saying where the sessions run: the provider (and why preferred ones were
 * skipped), the devices when the provider uses them, and a warning when the sessions of
 * several devices did not all get the same provider, or all fell back to the CPU.
 */
export function describeSessions(
  starts: readonly SessionStart[],
  vendor?: WebgpuVendor,
): { warn: boolean; message: string } {
  const first = starts[0];
  if (!first) return { warn: true, message: 'no detector session started' };
  const devices = [...new Set(starts.map((s) => s.deviceId))];
  const key = (s: SessionStart): string =>
    `${s.provider} ${s.precision ?? 'fp32'} ${JSON.stringify(s.skipped)}`;
  if (starts.every((s) => key(s) === key(first))) {
    const how = runDetail(first.provider, { precision: first.precision ?? 'fp32', vendor });
    const detail = [how, first.precisionNote].filter(Boolean).join('; ');
    const base = describeProviderChoice(first.provider, first.skipped, detail);
    const several = devices.length > 1;
    const warned = first.skipped.length > 0 || first.precisionNote !== undefined;
    if (ON_DEVICE.has(first.provider))
      return {
        warn: warned,
        message: several ? `${base} on devices ${devices.join(', ')}` : base,
      };
    // The device ids asked for are not applied: say so, in the same line.
    const why =
      first.provider === 'cpu'
        ? `devices ${devices.join(', ')} not used`
        : `device_ids apply to cuda and tensorrt; ${first.provider} picks its own adapter`;
    return {
      warn: warned,
      message: several ? `${base}; ${why}` : base,
    };
  }
  const parts = devices.map((d) => {
    const s = starts.find((x) => x.deviceId === d)!;
    const why = s.skipped.map((k) => `${k.provider}: ${k.reason}`).join('; ');
    const half = s.precision === 'fp16' ? ' fp16' : '';
    return `device ${d} ${s.provider}${half}${why ? ` (skipped ${why})` : ''}`;
  });
  return { warn: true, message: `sessions differ by device: ${parts.join(', ')}` };
}
