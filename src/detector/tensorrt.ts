/**
 * TensorRT engines kept in the state directory, so a restart loads an engine in seconds instead
 * of building it for minutes.
 *
 * What onnxruntime-node 1.30 lets through (read in its binding, js/node/src/session_options_helper.cc,
 * `ParseExecutionProviders`): for `tensorrt` it makes default `OrtTensorRTProviderOptionsV2`,
 * sets `device_id` and appends them with `AppendExecutionProvider_TensorRT_V2`; every other key of
 * the provider's object (trt_engine_cache_enable, trt_fp16_enable, trt_profile_*_shapes…) is
 * ignored. The `ORT_TENSORRT_*` environment variables do not help either: the V2 factory
 * (onnxruntime/core/providers/tensorrt/tensorrt_provider_factory.cc) sets `has_trt_options`, and
 * the provider reads the environment only when it is not set. What does pass is the session's
 * config entries (`extra` in the binding's session options, `AddConfigEntry`): ONNX Runtime copies
 * `ep.context_enable`, `ep.context_file_path` and `ep.context_embed_mode` into the TensorRT
 * provider's options when its own say nothing of them. With those set, the provider writes an
 * "EP context" model: an ONNX file with the serialised engine inside (embed mode 1), rewritten each
 * time it builds the engine again. Loading that file instead of the model skips the build. (That
 * ONNX Runtime 1.30 copies these entries for TensorRT, in its provider bridge, is not confirmed
 * from its source here, and no GPU was at hand: a build after which no engine file is there says
 * so in the log, and the next start builds again; bench/gpu.sh's warm start shows it works.)
 *
 * The directory of an engine is named after what makes it valid (`EngineKey`): the model's bytes,
 * the GPUs, the driver, ONNX Runtime's and TensorRT's versions, the precision, the input size and
 * the largest batch. A manifest, written crash-safely once a build has been run at every batch
 * size, records the key and the engine file's hash: an engine without its manifest, with another
 * key, or whose bytes no longer match is deleted and built again, never loaded.
 */
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { readOwnFile, writeAtomic } from '../state/index.js';
import type { EngineEvent } from './protocol.js';
import { shortReason } from './providers.js';

/** Everything an engine depends on: another value of any of these needs another engine. */
export interface EngineKey {
  /** sha256 of the model bytes the session is made from (after Argus' own fp16 conversion). */
  modelSha256: string;
  /** The GPUs the driver lists (model and UUID each) and the driver's version. */
  gpu: string;
  deviceId: number;
  onnxruntime: string;
  /** The TensorRT library's version (from its file name), or 'unknown'. */
  tensorrt: string;
  precision: 'fp32' | 'fp16';
  inputSize: number;
  /** The optimisation profile spans batches 1 to this. */
  maxBatch: number;
}

/** The engine file in its directory: an ONNX model holding the serialised engine. */
export const ENGINE_FILE = 'engine_ctx.onnx';
export const MANIFEST_FILE = 'manifest.json';
const MANIFEST_VERSION = 1;

interface Manifest {
  version: number;
  key: EngineKey;
  file: string;
  bytes: number;
  sha256: string;
  builtAt: string;
  buildMs: number;
}

/** A short, file-name-safe form of a free text (a GPU's name). */
function slug(text: string, max: number): string {
  const s = text
    .toLowerCase()
    .replace(/[^a-z0-9.]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return s.slice(0, max) || 'none';
}

/**
 * The engine's directory name: readable parts (model hash prefix, GPU, versions, precision,
 * size, batch), then a hash of the whole key, so two keys that read alike never share a directory.
 */
export function engineDirName(k: EngineKey): string {
  const whole = createHash('sha256').update(JSON.stringify(k)).digest('hex').slice(0, 8);
  const gpuName = k.gpu.split(/[;,]/)[0] ?? k.gpu;
  return [
    k.modelSha256.slice(0, 16),
    slug(gpuName, 32),
    `d${k.deviceId}`,
    `ort${slug(k.onnxruntime, 16)}`,
    `trt${slug(k.tensorrt, 16)}`,
    k.precision,
    `s${k.inputSize}`,
    `b${k.maxBatch}`,
    whole,
  ].join('-');
}

/** Where a model's engines live: `<state dir>/trt/<engineDirName>/`. */
export function engineDir(stateDir: string, k: EngineKey): string {
  return join(stateDir, 'trt', engineDirName(k));
}

export type EngineState =
  { state: 'cached'; engine: string } | { state: 'build'; engine: string; reason: string };

function sameKey(a: unknown, b: EngineKey): boolean {
  if (typeof a !== 'object' || a === null) return false;
  const x = a as Record<string, unknown>;
  const keys = Object.keys(b) as (keyof EngineKey)[];
  return Object.keys(x).length === keys.length && keys.every((k) => x[k] === b[k]);
}

const sha256 = (buf: Uint8Array): string => createHash('sha256').update(buf).digest('hex');

/**
 * Whether `dir` holds an engine to load for `key`. Anything else there (an engine without a
 * manifest, a manifest of another key or version, an engine whose bytes changed, files left by
 * a build that did not finish) is deleted, and the answer says why a build is needed.
 */
export async function checkEngine(dir: string, key: EngineKey): Promise<EngineState> {
  const engine = join(dir, ENGINE_FILE);
  const reason = await staleReason(dir, key);
  if (reason === undefined) return { state: 'cached', engine };
  await clearDir(dir);
  return { state: 'build', engine, reason };
}

async function staleReason(dir: string, key: EngineKey): Promise<string | undefined> {
  const [manifestBytes, engineBytes] = await Promise.all([
    readOwnFile(join(dir, MANIFEST_FILE)),
    readOwnFile(join(dir, ENGINE_FILE)),
  ]);
  if (!manifestBytes && !engineBytes) return 'no engine cached';
  if (!manifestBytes) return 'an engine without its manifest (a build that did not finish)';
  let m: Partial<Manifest>;
  try {
    m = JSON.parse(manifestBytes.toString('utf8')) as Partial<Manifest>;
  } catch {
    return 'a corrupt manifest';
  }
  if (m.version !== MANIFEST_VERSION || !sameKey(m.key, key)) return 'a manifest of other settings';
  if (!engineBytes) return 'a manifest without its engine';
  if (engineBytes.length !== m.bytes || sha256(engineBytes) !== m.sha256)
    return 'an engine file that does not match its manifest (corrupt)';
  return undefined;
}

/** Empties (or creates) an engine's directory. */
export async function clearDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true, mode: 0o750 });
}

/**
 * Records a finished build: the manifest, with the engine file's size and hash, written
 * crash-safely (a crash before it leaves an engine without a manifest, which is rebuilt).
 * Returns false when ONNX Runtime wrote no engine file.
 */
export async function recordEngine(
  dir: string,
  key: EngineKey,
  buildMs: number,
  now = new Date(),
): Promise<boolean> {
  const bytes = await readOwnFile(join(dir, ENGINE_FILE));
  if (!bytes || bytes.length === 0) return false;
  const manifest: Manifest = {
    version: MANIFEST_VERSION,
    key,
    file: ENGINE_FILE,
    bytes: bytes.length,
    sha256: sha256(bytes),
    builtAt: now.toISOString(),
    buildMs: Math.round(buildMs),
  };
  await writeAtomic(join(dir, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
  return true;
}

/**
 * Opens a TensorRT session through the engine cache in `dir`: the engine kept there when its
 * manifest vouches for it (`create('engine')`), else the model with the entries that make the
 * provider write its engine there (`create('model', entries)`), the build finishing in the
 * warm-up that follows. A kept engine that fails to load (another TensorRT, a GPU that cannot run
 * it) is deleted and built again, not trusted. `built` says a build started, and when.
 */
export async function openEngine<S>(
  dir: string,
  key: EngineKey,
  create: (
    source: { engine: string } | { model: true; entries: ReturnType<typeof dumpEngineEntries> },
  ) => Promise<S>,
  event: (e: EngineEvent) => void,
  now: () => number = () => performance.now(),
): Promise<{ session: S; built: number | null }> {
  const found = await checkEngine(dir, key);
  let reason = found.state === 'build' ? found.reason : '';
  if (found.state === 'cached') {
    const t0 = now();
    try {
      const session = await create({ engine: found.engine });
      event({ phase: 'loaded', ms: now() - t0, dir });
      return { session, built: null };
    } catch (err) {
      reason = `the cached engine did not load (${shortReason(err)})`;
      await clearDir(dir);
    }
  }
  event({ phase: 'building', reason, dir });
  const t0 = now();
  return { session: await create({ model: true, entries: dumpEngineEntries(found.engine) }), built: t0 };
}

/**
 * The session config entries that make the TensorRT provider write its engine into `engine` (an
 * EP context model with the engine embedded), as the binding's `extra` option nests them.
 */
export function dumpEngineEntries(engine: string): { ep: Record<string, string> } {
  return { ep: { context_enable: '1', context_file_path: engine, context_embed_mode: '1' } };
}

/**
 * The batch sizes a session runs before it is ready. TensorRT's provider builds a dynamic-batch
 * engine for the shapes it has seen (the profile's range grows to take in a new batch size, and
 * the engine is built again): running 1 and then `maxBatch` leaves a profile from 1 to `maxBatch`,
 * which every batch the scheduler makes fits, so no build happens once cameras run.
 */
export function warmupBatches(staticBatch: number | null, maxBatch: number, tensorrt: boolean): number[] {
  if (staticBatch !== null) return [staticBatch];
  if (!tensorrt || maxBatch <= 1) return [1];
  return [1, maxBatch];
}

/**
 * What identifies this machine's GPUs for the engine key: each GPU's model and UUID from the
 * NVIDIA driver's /proc files, and the driver's version. 'none' without the driver.
 */
export async function gpuIdentity(root = '/proc/driver/nvidia'): Promise<string> {
  let gpus: string[];
  try {
    gpus = (await readdir(join(root, 'gpus'))).sort();
  } catch {
    return 'none';
  }
  const parts: string[] = [];
  for (const bus of gpus) {
    const info = await readFile(join(root, 'gpus', bus, 'information'), 'utf8').catch(() => '');
    const field = (name: string): string =>
      new RegExp(`^${name}:\\s*(.+)$`, 'm').exec(info)?.[1]?.trim() ?? '?';
    parts.push(`${field('Model')} ${field('GPU UUID')}`);
  }
  const version = await readFile(join(root, 'version'), 'utf8').catch(() => '');
  const driver = /Kernel Module\s+(\S+)/.exec(version)?.[1] ?? '?';
  return `${parts.join(', ')}; driver ${driver}`;
}

/** TensorRT's version from its library's file name (libnvinfer.so.10.3.0) in the usual places. */
export async function tensorrtVersion(dirs: readonly string[]): Promise<string> {
  for (const dir of dirs) {
    const names = await readdir(dir).catch(() => [] as string[]);
    const versions = names
      .map((n) => /^libnvinfer\.so\.(\d+\.\d+\.\d+)$/.exec(n)?.[1])
      .filter((v): v is string => v !== undefined)
      .sort((x, y) => {
        const [a, b] = [x, y].map((v) => v.split('.').map(Number));
        return a!.reduce((d, n, i) => d || n - b![i]!, 0);
      });
    if (versions.length) return versions[versions.length - 1]!;
  }
  return 'unknown';
}

/** The directories the dynamic loader searches for libnvinfer, LD_LIBRARY_PATH first. */
export function libraryDirs(env: NodeJS.ProcessEnv): string[] {
  const fromEnv = (env.LD_LIBRARY_PATH ?? '').split(':').filter(Boolean);
  return [
    ...fromEnv,
    '/usr/lib/x86_64-linux-gnu',
    '/usr/local/cuda/lib64',
    '/usr/local/tensorrt/lib',
    '/usr/lib',
  ];
}

/**
 * Where onnxruntime-node looks for ONNX Runtime's TensorRT provider library: beside its binding
 * (`bin/napi-v6/<platform>/<arch>/`), where its install script (or the unzip in
 * docs/operations.md) puts it. Without it no engine can be built, and none is looked for.
 */
export function tensorrtProviderLibrary(
  packageDir: string,
  platform = process.platform,
  arch = process.arch,
): string {
  return join(packageDir, 'bin', 'napi-v6', platform, arch, 'libonnxruntime_providers_tensorrt.so');
}

/** sha256 of a model's bytes. */
export function modelHash(bytes: Uint8Array): string {
  return sha256(bytes);
}
