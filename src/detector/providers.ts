import { errorMessage } from '../core/errors.js';
import type { ProviderName, WebgpuVendor } from '../config/index.js';

/**
 * Session options every Argus session uses: the detector's workers, and the tools that measure
 * or check a model against them (`model prepare`, the bench). Graph optimisation 'all' is what
 * makes a prepared fp32 model pay; without the memory pattern the speed stays and batch-8
 * memory drops (619 → 442 MB for YOLOv8n, issue 7).
 */
export const BASE_SESSION_OPTIONS = { graphOptimizationLevel: 'all', enableMemPattern: false } as const;

/** The onnxruntime-node execution-provider option for one configured provider. */
export function providerOption(
  name: ProviderName,
  deviceId: number,
): string | { name: string; deviceId?: number } {
  switch (name) {
    case 'cpu':
      return 'cpu';
    case 'webgpu':
      return { name: 'webgpu' };
    case 'cuda':
    case 'tensorrt':
      return { name, deviceId };
  }
}

/** Session config entries, nested as the binding's `extra` option takes them (`ep.context_enable`). */
export type SessionEntries = Record<string, Record<string, string>>;

/** What of a worker's settings its session options depend on. */
export interface SessionThreads {
  deviceId: number;
  intraOpThreads: number;
  interOpThreads: number;
  spinning: boolean;
}

/**
 * The session options one worker gives ONNX Runtime for one provider: the provider (and its
 * device), the threads, and the session config entries — where the TensorRT provider's engine
 * dump is switched on (`entries`), since the binding passes it no provider options but its device.
 * No ORT_TENSORRT_* variable is set anywhere: the provider ignores them once it is given options.
 */
export function providerSessionOptions(
  provider: ProviderName,
  t: SessionThreads,
  entries: SessionEntries = {},
) {
  const spin: Record<string, Record<string, unknown>> = t.spinning
    ? {}
    : { session: { intra_op: { allow_spinning: '0' }, inter_op: { allow_spinning: '0' } } };
  const extra = { ...spin };
  for (const [key, values] of Object.entries(entries)) extra[key] = { ...extra[key], ...values };
  return {
    executionProviders: [providerOption(provider, t.deviceId)],
    ...BASE_SESSION_OPTIONS,
    ...(t.intraOpThreads ? { intraOpNumThreads: t.intraOpThreads } : {}),
    ...(t.interOpThreads ? { interOpNumThreads: t.interOpThreads } : {}),
    ...(Object.keys(extra).length ? { extra } : {}),
    // Errors of providers that cannot load are reported through the fallback log line instead.
    logSeverityLevel: provider === 'cpu' ? 3 : 4,
  };
}

export interface Skipped {
  provider: ProviderName;
  reason: string;
}

export interface FallbackResult<S> {
  session: S;
  provider: ProviderName;
  skipped: Skipped[];
}

/** First line of an ONNX Runtime error, without its source-file prefix. */
export function shortReason(err: unknown): string {
  const msg = errorMessage(err);
  const line = msg.split('\n').find((l) => l.trim()) ?? msg;
  const noSource = line.replace(/^\/\S+:\d+\s+/, '');
  // ORT_ENFORCE messages read "<function> <condition> was false. <the actual reason>".
  const enforced = /\swas false\.\s*(.+)$/.exec(noSource);
  return (enforced?.[1] ?? noSource).replace(/\s+/g, ' ').trim().slice(0, 300);
}

/**
 * Tries `create` with each provider in order of preference and returns the first session that
 * could be made, with the reason each earlier provider was skipped. Throws when none works, and
 * at once, as it is, an error `ofModel` says is the model's own (an output layout Argus cannot
 * read): no other provider would do better, and the model file is what to name.
 */
export async function createWithFallback<S>(
  providers: readonly ProviderName[],
  create: (provider: ProviderName) => Promise<S>,
  ofModel: (err: unknown) => boolean = () => false,
): Promise<FallbackResult<S>> {
  const skipped: Skipped[] = [];
  for (const provider of providers) {
    try {
      return { session: await create(provider), provider, skipped };
    } catch (err) {
      if (ofModel(err)) throw err;
      skipped.push({ provider, reason: shortReason(err) });
    }
  }
  const detail = skipped.map((s) => `${s.provider}: ${s.reason}`).join('; ');
  throw new Error(`no execution provider could load the model (${detail})`);
}

/**
 * The one log line that says which provider is in use (with `detail`: how it runs, e.g. its
 * precision and adapter) and why others were skipped.
 */
export function describeProviderChoice(
  provider: ProviderName,
  skipped: readonly Skipped[],
  detail = '',
): string {
  const used = `using execution provider ${provider}${detail ? ` (${detail})` : ''}`;
  if (skipped.length === 0) return used;
  const why = skipped.map((s) => `${s.provider} (${s.reason})`).join(', ');
  return `${used}; skipped ${why}`;
}

/**
 * The Vulkan loader's driver filter (`VK_LOADER_DRIVERS_SELECT`, Vulkan loader 1.3.234 on) for
 * `detector.webgpu.vendor`: globs over the drivers' manifest names in /usr/share/vulkan/icd.d
 * (NVIDIA's nvidia_icd.json; Mesa's radeon_icd (RADV) and AMD's amd_icd (AMDVLK); Mesa's
 * intel_icd and intel_hasvk_icd; Mesa's lvp_icd, the software rasteriser lavapipe). ONNX Runtime
 * 1.30's Node binding passes Dawn no adapter option (its WebGPU options are layout, validation
 * and buffer caches), so the drivers Vulkan loads are what decides the adapter.
 */
export const VULKAN_DRIVER_GLOBS: Record<WebgpuVendor, string> = {
  nvidia: '*nvidia*',
  amd: '*radeon*,*amd*',
  intel: '*intel*',
  software: '*lvp*',
};

/** The environment variable the Vulkan loader reads its driver filter from. */
export const VULKAN_DRIVER_SELECT = 'VK_LOADER_DRIVERS_SELECT';

/**
 * Points the process's Vulkan loader at `vendor`'s drivers, before Dawn (inside ONNX Runtime)
 * makes its Vulkan instance: the main thread's environment is the process's, which worker
 * threads' native code reads. Dawn's instance lives as long as the process, so a vendor set by
 * an earlier start holds until a restart: returns the line to log when another is asked for.
 */
export function selectWebgpuVendor(
  vendor: WebgpuVendor | undefined,
  env: NodeJS.ProcessEnv = process.env,
): string | null {
  if (vendor === undefined) return null;
  const glob = VULKAN_DRIVER_GLOBS[vendor];
  const had = env[VULKAN_DRIVER_SELECT];
  const earlier = Object.entries(VULKAN_DRIVER_GLOBS).find(([, g]) => g === had)?.[0];
  if (had === glob) return null;
  if (earlier !== undefined)
    return `detector.webgpu.vendor ${vendor} applies at the next start: this process's WebGPU adapter comes from ${earlier} drivers`;
  env[VULKAN_DRIVER_SELECT] = glob;
  return null;
}

/** What the provider line says of how a session runs: fp16, and the WebGPU adapter asked for. */
export function runDetail(
  provider: ProviderName,
  o: { precision: 'fp32' | 'fp16'; vendor?: WebgpuVendor | undefined },
): string {
  if (provider === 'cpu') return '';
  // fp32 is the default, said only where it is the fallback of fp16 (the precision note).
  const parts: string[] = o.precision === 'fp16' ? ['fp16'] : [];
  // Unset, the adapter is Dawn's choice (a discrete GPU first): nothing to say.
  if (provider === 'webgpu' && o.vendor) parts.push(`adapter from ${o.vendor} drivers`);
  return parts.join(', ');
}
