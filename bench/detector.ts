/**
 * Detector benchmark: the bare onnxruntime-node session on the main thread (the physical limit)
 * against Argus' worker-thread detector on the same model, side by side in one run, plus the
 * cost of preprocessing one frame and the event-loop delay seen while each runs. Both take the
 * same RGB24 frames and convert them to float NCHW (the bare side with the same function,
 * untimed buffers aside); Argus' detector also decodes the output (NMS, source boxes).
 * Reports medians of repeated runs; compare ratios, not absolute times (shared, noisy machine).
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import ort from 'onnxruntime-node';
import type { Picture } from '../src/core/frame.js';
import { letterbox } from '../src/core/geometry.js';
import type { ProviderName } from '../src/config/index.js';
import { BASE_SESSION_OPTIONS, planModel, providerOption, type ModelPlan } from '../src/detector/index.js';
import { InputPool, rgbToNchw } from '../src/detector/preprocess.js';
import { startDetector, median } from './common.js';

export interface DetectorBenchRow {
  model: string;
  provider: ProviderName;
  batch: number;
  bareFps: number;
  /** Null when only the bare session was measured. */
  argusFps: number | null;
  /** Argus' detector with one batch at a time (what this section measured before issue 46). */
  argusSerialFps?: number | null;
  /** Batches kept in flight for argusFps: one per session of the detector. */
  inFlight?: number;
  efficiency: number | null;
  bareLoopDelayMaxMs: number;
  argusLoopDelayMaxMs: number | null;
}

export interface DetectorBenchResult {
  rows: DetectorBenchRow[];
  /** Converting one frame to the model's floats (in the worker thread that runs it). */
  preprocessMsPerFrame: Record<string, number>;
  /** What one frame costs the event loop instead: copying its bytes into the batch (InputPool). */
  loopMsPerFrame: Record<string, number>;
}

async function timed(fn: () => Promise<void>): Promise<{ ms: number; loopMaxMs: number }> {
  const h = monitorEventLoopDelay({ resolution: 5 });
  h.enable();
  const t0 = performance.now();
  await fn();
  const ms = performance.now() - t0;
  h.disable();
  return { ms, loopMaxMs: h.max / 1e6 };
}

/** Median milliseconds of `fn` over 5 runs of 20. */
function perCall(fn: () => void): number {
  const runs: number[] = [];
  for (let r = 0; r < 5; r++) {
    const t0 = performance.now();
    for (let i = 0; i < 20; i++) fn();
    runs.push((performance.now() - t0) / 20);
  }
  return median(runs);
}

function preprocessMs(plan: ModelPlan): { convert: number; loop: number } {
  const s = plan.inputSize;
  const frame = new Uint8Array(s * s * 3).map((_, i) => i & 255);
  const batch = new Float32Array(3 * s * s);
  const pool = new InputPool(s);
  const picture = { data: Buffer.from(frame), geometry: letterbox(s, s, s) };
  return {
    convert: perCall(() => rgbToNchw(frame, s, s, batch, 0)),
    loop: perCall(() => pool.release(pool.pack([picture]))),
  };
}

export async function benchDetector(
  modelPath: string,
  batches: number[],
  opts: {
    frames: number;
    repeats: number;
    provider?: ProviderName;
    argus?: boolean;
    name?: string;
    /** Sessions of Argus' detector: 1 (one, all threads), or 0, as the daemon chooses (the limit section). */
    workers?: number;
  },
): Promise<DetectorBenchResult> {
  const plan = await planModel({ path: modelPath });
  const name = opts.name ?? modelPath.split('/').pop() ?? modelPath;
  const provider = opts.provider ?? 'cpu';
  const floats = 3 * plan.inputSize * plan.inputSize;
  // The same session options as Argus' worker.
  const session = await ort.InferenceSession.create(modelPath, {
    executionProviders: [
      providerOption(provider, 0),
    ] as ort.InferenceSession.SessionOptions['executionProviders'],
    ...BASE_SESSION_OPTIONS,
  });
  const detector =
    opts.argus === false ? undefined : await startDetector(modelPath, provider, opts.workers ?? 1);
  // As many batches in flight as the detector has sessions, as the scheduler keeps them.
  const inFlight = detector?.concurrency ?? 1;
  const size = plan.inputSize;
  const frame: Picture = { data: Buffer.alloc(3 * size * size, 115), geometry: letterbox(size, size, size) };
  const rows: DetectorBenchRow[] = [];
  try {
    for (const batch of batches) {
      // A static-batch model runs item by item in both: that is its limit.
      const chunk = plan.staticBatch ?? batch;
      const bareData = new Float32Array(batch * floats);
      const pictures = Array.from({ length: batch }, () => frame);
      const calls = Math.max(1, Math.round(opts.frames / batch));
      const bare: number[] = [];
      const argus: number[] = [];
      const serial: number[] = [];
      const bareLoop: number[] = [];
      const argusLoop: number[] = [];
      // Interleave the two, so drift in machine load hits both alike.
      for (let r = 0; r < opts.repeats; r++) {
        const b = await timed(async () => {
          for (let c = 0; c < calls; c++) {
            for (let i = 0; i < batch; i++) rgbToNchw(frame.data, size, size, bareData, i);
            for (let s = 0; s < batch; s += chunk) {
              const data = bareData.subarray(s * floats, (s + chunk) * floats);
              const out = await session.run({
                [plan.inputName]: new ort.Tensor('float32', data, [chunk, 3, plan.inputSize, plan.inputSize]),
              });
              for (const t of Object.values(out)) t.dispose();
            }
          }
        });
        bare.push((calls * batch * 1000) / b.ms);
        bareLoop.push(b.loopMaxMs);
        if (!detector) continue;
        let sent = 0;
        const a = await timed(async () => {
          await Promise.all(
            Array.from({ length: inFlight }, async () => {
              while (sent < calls) {
                sent++;
                await detector.detect(pictures);
              }
            }),
          );
        });
        argus.push((calls * batch * 1000) / a.ms);
        argusLoop.push(a.loopMaxMs);
        if (inFlight === 1) continue;
        const one = await timed(async () => {
          for (let c = 0; c < calls; c++) await detector.detect(pictures);
        });
        serial.push((calls * batch * 1000) / one.ms);
      }
      const row: DetectorBenchRow = {
        model: name,
        provider,
        batch,
        bareFps: median(bare),
        argusFps: detector ? median(argus) : null,
        efficiency: detector ? median(argus) / median(bare) : null,
        argusSerialFps: serial.length ? median(serial) : null,
        inFlight,
        bareLoopDelayMaxMs: median(bareLoop),
        argusLoopDelayMaxMs: detector ? median(argusLoop) : null,
      };
      rows.push(row);
    }
  } finally {
    await detector?.stop();
    await session.release();
  }
  const pre = preprocessMs(plan);
  const key = `${name}@${plan.inputSize}`;
  return { rows, preprocessMsPerFrame: { [key]: pre.convert }, loopMsPerFrame: { [key]: pre.loop } };
}
