/**
 * Worker thread that owns one ONNX Runtime session. `session.run` blocks the thread for the whole
 * inference, so it must never run on the daemon's event loop. Inputs arrive as transferred
 * buffers of RGB bytes, are converted to the model's floats here, and go back the same way, so
 * the caller can reuse them.
 */
import { writeFileSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import ort from 'onnxruntime-node';
import { errorMessage } from '../core/errors.js';
import type { ProviderName } from '../config/index.js';
import { decodeYolo, resolveLayout, type OutputLayout, type RawDetection } from './decode.js';
import { NchwBatch } from './preprocess.js';
import { BASE_SESSION_OPTIONS, createWithFallback, providerOption } from './providers.js';
import { THREAD_NAME, type FromWorker, type ToWorker, type WorkerInit } from './protocol.js';

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

function sessionOptions(provider: ProviderName): ort.InferenceSession.SessionOptions {
  return {
    executionProviders: [
      providerOption(provider, init.deviceId),
    ] as ort.InferenceSession.SessionOptions['executionProviders'],
    ...BASE_SESSION_OPTIONS,
    ...(init.intraOpThreads ? { intraOpNumThreads: init.intraOpThreads } : {}),
    ...(init.interOpThreads ? { interOpNumThreads: init.interOpThreads } : {}),
    // Session config entries session.intra_op.allow_spinning / inter_op.allow_spinning.
    ...(init.spinning
      ? {}
      : { extra: { session: { intra_op: { allow_spinning: '0' }, inter_op: { allow_spinning: '0' } } } }),
    // Errors of providers that cannot load are reported through the fallback log line instead.
    logSeverityLevel: provider === 'cpu' ? 3 : 4,
  };
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

async function start(): Promise<void> {
  const chosen = await createWithFallback(init.providers, (p) =>
    ort.InferenceSession.create(init.modelPath, sessionOptions(p)),
  );
  session = chosen.session;
  const t0 = performance.now();
  const warm = new Float32Array((init.staticBatch ?? 1) * plane).fill(114 / 255);
  const feeds = {
    [init.inputName]: new ort.Tensor('float32', warm, [
      init.staticBatch ?? 1,
      3,
      init.inputSize,
      init.inputSize,
    ]),
  };
  const result = await session.run(feeds);
  const tensor = result[init.outputName];
  if (!tensor) throw new Error(`model has no output named '${init.outputName}'`);
  layout = resolveLayout(tensor.dims, init.classes);
  post({
    type: 'ready',
    provider: chosen.provider,
    skipped: chosen.skipped,
    layout,
    warmupMs: performance.now() - t0,
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
