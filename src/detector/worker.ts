/**
 * Worker thread that owns one ONNX Runtime session. `session.run` blocks the thread for the whole
 * inference, so it must never run on the daemon's event loop. Inputs arrive as transferred
 * buffers of RGB bytes, are converted to the model's floats here, and go back the same way, so
 * the caller can reuse them.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import ort from 'onnxruntime-node';
import { errorMessage } from '../core/errors.js';
import type { ProviderName } from '../config/index.js';
import { gpuModel } from './precision.js';
import { decodeYolo, LayoutError, resolveLayout, type OutputLayout, type RawDetection } from './decode.js';
import { NchwBatch } from './preprocess.js';
import { createWithFallback, providerSessionOptions, shortReason, type SessionEntries } from './providers.js';
import {
  THREAD_NAME,
  type EngineEvent,
  type FromWorker,
  type ToWorker,
  type WorkerInit,
} from './protocol.js';
import {
  engineDir,
  gpuIdentity,
  libraryDirs,
  modelHash,
  openEngine,
  recordEngine,
  tensorrtProviderLibrary,
  tensorrtVersion,
  warmupBatches,
  type EngineKey,
} from './tensorrt.js';

const init = workerData as WorkerInit;
// The thread's name in `top -H` and /proc/<pid>/task/*/comm, where the model's CPU time can be
// told from the rest of the daemon's (ONNX Runtime's own threads inherit it). Linux only.
try {
  writeFileSync('/proc/thread-self/comm', THREAD_NAME);
} catch {
  // not Linux: the name is only a convenience
}
// Providers that cannot load also log natively at error level; their reasons reach the
// daemon's log through the fallback line instead, so only fatal native messages are let through.
ort.env.logLevel = 'fatal';
const port = parentPort!;
const post = (msg: FromWorker, transfer: ArrayBuffer[] = []): void => port.postMessage(msg, transfer);
const plane = 3 * init.inputSize * init.inputSize;

const sessionOptions = (
  provider: ProviderName,
  entries: SessionEntries = {},
): ort.InferenceSession.SessionOptions =>
  providerSessionOptions(provider, init, entries) as ort.InferenceSession.SessionOptions;

/** onnxruntime-node's package directory, whose binding loads the provider libraries. */
const ortPackageDir = (): string =>
  dirname(createRequire(import.meta.url).resolve('onnxruntime-node/package.json'));

const engineEvent = (event: EngineEvent): void => post({ type: 'engine', event });

/** The model for GPU providers: Argus' fp16 conversion of it with `precision: fp16`, read once. */
let gpuBytes: Promise<Uint8Array> | undefined;
function gpuModelBytes(): Promise<Uint8Array> {
  gpuBytes ??= readFile(init.modelPath).then((buf) => gpuModel(new Uint8Array(buf), init.precision));
  return gpuBytes;
}

/** Set once a TensorRT engine was built in this session: recorded after the warm-up. */
let building: { dir: string; key: EngineKey; t0: number } | undefined;

/**
 * A TensorRT session: the engine kept in the state directory when one was built for this model,
 * GPU, runtime and settings; else built (during the warm-up that follows) and kept.
 */
async function tensorrtSession(): Promise<ort.InferenceSession> {
  const bytes = await gpuModelBytes();
  const gpu = init.engines ? await gpuIdentity() : 'none';
  // Without NVIDIA's driver or ONNX Runtime's TensorRT library nothing is built: no engine is
  // looked for, and the session fails as it would (the fallback line says why).
  if (!init.engines || gpu === 'none' || !existsSync(tensorrtProviderLibrary(ortPackageDir())))
    return ort.InferenceSession.create(bytes, sessionOptions('tensorrt'));
  const key: EngineKey = {
    modelSha256: modelHash(bytes),
    gpu,
    deviceId: init.deviceId,
    onnxruntime: ort.env.versions.node ?? ort.env.versions.common,
    tensorrt: await tensorrtVersion(libraryDirs(process.env)),
    precision: init.precision,
    inputSize: init.inputSize,
    maxBatch: init.staticBatch ?? init.engines.maxBatch,
  };
  const dir = engineDir(init.engines.stateDir, key);
  const opened = await openEngine(
    dir,
    key,
    (source) =>
      'engine' in source
        ? ort.InferenceSession.create(source.engine, sessionOptions('tensorrt'))
        : ort.InferenceSession.create(bytes, sessionOptions('tensorrt', source.entries)),
    engineEvent,
  );
  if (opened.built !== null) building = { dir, key, t0: opened.built };
  return opened.session;
}

/** Why the fp16 model asked for did not run on WebGPU; unset when it did, or was not asked for. */
let fp16Refused: string | undefined;

/**
 * A WebGPU session: with `precision: fp16` the fp16 model, every node on the GPU or no session
 * (an adapter without shader-f16 leaves half-precision nodes to the CPU: ONNX Runtime says so
 * and nothing of it is learnt otherwise), else, and then, the file as it is.
 */
async function webgpuSession(): Promise<ort.InferenceSession> {
  if (init.precision === 'fp16') {
    try {
      const allOnGpu = { session: { disable_cpu_ep_fallback: '1' } };
      const s = await ort.InferenceSession.create(await gpuModelBytes(), sessionOptions('webgpu', allOnGpu));
      fp16Refused = undefined;
      return s;
    } catch (err) {
      fp16Refused = shortReason(err);
    }
  }
  return ort.InferenceSession.create(init.modelPath, sessionOptions('webgpu'));
}

async function createSession(provider: ProviderName): Promise<ort.InferenceSession> {
  if (provider === 'tensorrt') return tensorrtSession();
  if (provider === 'webgpu') return webgpuSession();
  if (provider === 'cuda' && init.precision === 'fp16')
    return ort.InferenceSession.create(await gpuModelBytes(), sessionOptions(provider));
  return ort.InferenceSession.create(init.modelPath, sessionOptions(provider));
}

let session: ort.InferenceSession;
let layout: OutputLayout;
const floats = new NchwBatch(init.inputSize);

async function infer(input: Uint8Array, count: number): Promise<RawDetection[][]> {
  const size = init.inputSize;
  const chunk = init.staticBatch ?? count;
  const out: RawDetection[][] = [];
  for (let start = 0; start < count; start += chunk) {
    const n = Math.min(chunk, count - start);
    // A static batch's last chunk is padded with zeros.
    const data = floats.convert(input, start, n, chunk);
    const feeds = { [init.inputName]: new ort.Tensor('float32', data, [chunk, 3, size, size]) };
    const result = await session.run(feeds);
    const tensor = result[init.outputName];
    if (!tensor) throw new Error(`model produced no output '${init.outputName}'`);
    if (!layout) layout = resolveLayout(tensor.dims, init.classes);
    const values = tensor.data as Float32Array;
    for (let i = 0; i < n; i++)
      out.push(decodeYolo(values, layout, i, { conf: init.conf, iou: init.iou, maxDet: init.maxDet }));
    tensor.dispose();
  }
  return out;
}

async function warmup(s: ort.InferenceSession, batch: number): Promise<OutputLayout> {
  const warm = new Float32Array(batch * plane).fill(114 / 255);
  const feeds = {
    [init.inputName]: new ort.Tensor('float32', warm, [batch, 3, init.inputSize, init.inputSize]),
  };
  const result = await s.run(feeds);
  const tensor = result[init.outputName];
  if (!tensor) throw new LayoutError(`model has no output named '${init.outputName}'`);
  const resolved = resolveLayout(tensor.dims, init.classes);
  tensor.dispose();
  return resolved;
}

/**
 * A session made and run at every batch size it must take. TensorRT builds a dynamic-batch
 * engine during these first runs, so a build that fails (out of GPU memory) falls back to the
 * next provider as a session that cannot load does.
 */
async function readySession(
  provider: ProviderName,
): Promise<{ s: ort.InferenceSession; layout: OutputLayout; warmupMs: number }> {
  const s = await createSession(provider);
  const t0 = performance.now();
  try {
    let resolved: OutputLayout | undefined;
    for (const batch of warmupBatches(init.staticBatch, init.engines?.maxBatch ?? 1, provider === 'tensorrt'))
      resolved = await warmup(s, batch);
    return { s, layout: resolved!, warmupMs: performance.now() - t0 };
  } catch (err) {
    await s.release().catch(() => undefined);
    throw err;
  }
}

async function start(): Promise<void> {
  // A layout the model's answer cannot be read in is the model's fault, whatever the provider.
  const chosen = await createWithFallback(init.providers, readySession, (err) => err instanceof LayoutError);
  ({ s: session, layout } = chosen.session);
  if (building && chosen.provider === 'tensorrt') {
    const { dir, key } = building;
    const ms = performance.now() - building.t0;
    const saved = await recordEngine(dir, key, ms).catch(() => false);
    engineEvent({ phase: 'built', ms, saved, dir });
  }
  const refused = chosen.provider === 'webgpu' && fp16Refused !== undefined;
  post({
    type: 'ready',
    provider: chosen.provider,
    skipped: chosen.skipped,
    layout,
    warmupMs: chosen.session.warmupMs,
    precision: chosen.provider === 'cpu' || refused ? 'fp32' : init.precision,
    ...(refused ? { precisionNote: `fp16 refused by this adapter (${fp16Refused}): running fp32` } : {}),
  });
}

port.on('message', (msg: ToWorker) => {
  const t0 = performance.now();
  infer(msg.input, msg.count).then(
    (detections) =>
      post({ type: 'result', id: msg.id, input: msg.input, detections, inferMs: performance.now() - t0 }, [
        msg.input.buffer as ArrayBuffer,
      ]),
    (err: unknown) =>
      post(
        {
          type: 'run-error',
          id: msg.id,
          input: msg.input,
          message: errorMessage(err),
        },
        [msg.input.buffer as ArrayBuffer],
      ),
  );
});

start().catch((err: unknown) => post({ type: 'init-error', message: errorMessage(err) }));
