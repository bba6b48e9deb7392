import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import ort from 'onnxruntime-node';
import { errorMessage } from '../core/errors.js';
import type { Detection } from '../core/frame.js';
import { iou } from '../core/geometry.js';
import {
  BASE_SESSION_OPTIONS,
  openDetector,
  planModel,
  resolveLayout,
  type Detector,
} from '../detector/index.js';
import { loadLetterboxed } from '../ingest/index.js';
import { createLogger } from '../log.js';
import {
  decodeModel,
  encodeModel,
  GraphEditError,
  prepareModel,
  type PrepareOptions,
} from '../onnx/index.js';

export interface PrepareCommandOptions extends PrepareOptions {
  input: string;
  out: string;
  labels?: string | undefined;
  checkImages: string[];
}

/** A problem that stops `model prepare`; nothing is written. */
class PrepareError extends Error {}

/**
 * `argus model prepare IN --out OUT`: rewrites the model, then proves the result before keeping
 * it: ONNX Runtime must load it, batch 2 must give each frame the answer batch 1 gives, and each
 * `--check-image` must give the original's detections (same labels, box IoU ≥ 0.9).
 */
export async function runPrepare(opts: PrepareCommandOptions): Promise<number> {
  if (resolve(opts.input) === resolve(opts.out)) {
    process.stderr.write('argus: model prepare: --out must differ from the input file\n');
    return 2;
  }
  const tmp = `${opts.out}.tmp-${process.pid}`;
  try {
    const model = decodeModel(await readFileOr(opts.input));
    const report = prepareModel(model, opts);
    try {
      await writeFile(tmp, encodeModel(model));
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? String(err);
      throw new PrepareError(`cannot write ${opts.out} (${code === 'ENOENT' ? 'no such directory' : code})`);
    }
    for (const line of report) process.stdout.write(`  ${line}\n`);
    await selfCheck(opts, tmp);
    const mismatches = await checkImages(opts, tmp);
    if (mismatches) throw new PrepareError(`${mismatches} check image(s) differ; ${opts.out} not written`);
    await rename(tmp, opts.out);
    process.stdout.write(`wrote ${opts.out}\n`);
    return 0;
  } catch (err) {
    await rm(tmp, { force: true });
    if (err instanceof GraphEditError || err instanceof PrepareError) {
      process.stderr.write(`argus: ${opts.input}: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
}

async function readFileOr(path: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (err) {
    throw new PrepareError(`cannot read the model (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
}

/** A deterministic, image-like input (smooth gradients, not noise) for `batch` frames. */
function probe(size: number, batch: number): Float32Array {
  const plane = size * size;
  const one = new Float32Array(3 * plane);
  for (let c = 0; c < 3; c++)
    for (let y = 0; y < size; y++)
      for (let x = 0; x < size; x++)
        one[c * plane + y * size + x] = ((x * (c + 1) + y * (3 - c)) % size) / size;
  const out = new Float32Array(batch * one.length);
  for (let b = 0; b < batch; b++) out.set(one, b * one.length);
  return out;
}

async function session(path: string): Promise<ort.InferenceSession> {
  try {
    return await ort.InferenceSession.create(path, BASE_SESSION_OPTIONS);
  } catch (err) {
    throw new PrepareError(`ONNX Runtime cannot load the prepared model: ${errorMessage(err)}`);
  }
}

async function runOnce(
  s: ort.InferenceSession,
  input: string,
  size: number,
  batch: number,
): Promise<{ out: Float32Array; dims: readonly number[]; ms: number }> {
  const feeds = { [input]: new ort.Tensor('float32', probe(size, batch), [batch, 3, size, size]) };
  const t0 = performance.now();
  const result = await s.run(feeds);
  const ms = performance.now() - t0;
  const first = result[s.outputNames[0]!]!;
  return { out: Float32Array.from(first.data as Float32Array), dims: first.dims, ms };
}

const maxAbs = (a: Float32Array, b: Float32Array, bOffset = 0): number => {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i + bOffset]!));
  return m;
};

async function selfCheck(opts: PrepareCommandOptions, tmp: string): Promise<void> {
  const plan = await planModel({ path: opts.input, labels: opts.labels }).catch((err: Error) => {
    throw new PrepareError(err.message);
  });
  const size = plan.inputSize;
  const original = await session(opts.input);
  const prepared = await session(tmp);
  const base = await runOnce(original, plan.inputName, size, plan.staticBatch ?? 1);
  const one = await runOnce(prepared, plan.inputName, size, 1);
  const scale = 1 + base.out.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
  if (opts.batch === 'dynamic') {
    const two = await runOnce(prepared, plan.inputName, size, 2);
    const d = maxAbs(one.out, two.out, one.out.length);
    if (d > 1e-3 * scale)
      throw new PrepareError(`the prepared model answers batch 2 differently (max |Δ| ${d})`);
    process.stdout.write(
      `  check: batch 2 gives each frame the batch-1 answer (max |Δ| ${d.toPrecision(2)})\n`,
    );
  }
  const d = maxAbs(base.out.subarray(0, one.out.length), one.out);
  if (opts.precision === 'keep' && d > 1e-3 * scale) {
    throw new PrepareError(`the prepared model's output differs from the original's (max |Δ| ${d})`);
  }
  process.stdout.write(`  check: ${scoreChange(base.out, one.out, one.dims, plan.labels.length)}\n`);
  const times = async (s: ort.InferenceSession): Promise<number> => {
    const ms: number[] = [];
    for (let i = 0; i < 5; i++) ms.push((await runOnce(s, plan.inputName, size, 1)).ms);
    return ms.sort((a, b) => a - b)[2]!;
  };
  // Original and prepared timed alternately would be fairer on a noisy machine; five each,
  // median, is enough to tell the user what the rewrite bought.
  const [t0, t1] = [await times(original), await times(prepared)];
  process.stdout.write(
    `  speed (CPU, batch 1, median of 5): original ${t0.toFixed(1)} ms, prepared ${t1.toFixed(1)} ms (×${(t0 / t1).toFixed(2)})\n`,
  );
  await original.release();
  await prepared.release();
}

/** Boxes of anchors that see nothing swing widely with precision; class scores are what matter. */
function scoreChange(
  base: Float32Array,
  prepared: Float32Array,
  dims: readonly number[],
  classes: number,
): string {
  let layout;
  try {
    layout = resolveLayout(dims, classes);
  } catch {
    return `max |Δ| of the raw output on a test pattern ${maxAbs(base.subarray(0, prepared.length), prepared).toPrecision(3)}`;
  }
  let d = 0;
  for (let c = 0; c < layout.classes; c++)
    for (let a = 0; a < layout.anchors; a++) {
      const i =
        layout.kind === 'channels-first' ? (4 + c) * layout.anchors + a : a * (4 + layout.classes) + 4 + c;
      d = Math.max(d, Math.abs(base[i]! - prepared[i]!));
    }
  return `largest class-score change on a test pattern ${d.toFixed(4)}`;
}

async function detectAll(detector: Detector, images: string[]): Promise<Detection[][]> {
  const out: Detection[][] = [];
  for (const image of images) {
    const picture = await loadLetterboxed(image, detector.inputSize).catch((err: Error) => {
      throw new PrepareError(err.message);
    });
    out.push((await detector.detect([picture])).detections[0] ?? []);
  }
  return out;
}

/** Runs both models on each check image; returns how many images disagree. */
async function checkImages(opts: PrepareCommandOptions, tmp: string): Promise<number> {
  if (opts.checkImages.length === 0) return 0;
  const log = createLogger({ level: 'warn', fd: 2 });
  const results: Detection[][][] = [];
  for (const path of [opts.input, tmp]) {
    const detector = await openDetector(
      { path, labels: opts.labels },
      { providers: ['cpu'], workers: 1, thread_spinning: true },
      log,
    ).catch((err: Error) => {
      throw new PrepareError(err.message);
    });
    try {
      results.push(await detectAll(detector, opts.checkImages));
    } finally {
      await detector.stop();
    }
  }
  let bad = 0;
  opts.checkImages.forEach((image, i) => {
    const verdict = compareDetections(results[0]![i]!, results[1]![i]!);
    if (!verdict.same) bad++;
    process.stdout.write(`  check ${image}: ${verdict.text}\n`);
  });
  return bad;
}

/** Same labels and count, each original box matched by a prepared box with IoU ≥ 0.9. */
export function compareDetections(a: Detection[], b: Detection[]): { same: boolean; text: string } {
  const free = [...b];
  let minIou = 1;
  for (const d of a) {
    let best = -1;
    let bestIou = 0;
    free.forEach((e, j) => {
      const o = e.label === d.label ? iou(d.box, e.box) : 0;
      if (o > bestIou) [best, bestIou] = [j, o];
    });
    if (best < 0 || bestIou < 0.9) {
      return { same: false, text: `no match for ${d.label} ${d.score} [${d.box.join(', ')}]` };
    }
    minIou = Math.min(minIou, bestIou);
    free.splice(best, 1);
  }
  if (free.length) return { same: false, text: `${free.length} extra detection(s), e.g. ${free[0]!.label}` };
  return { same: true, text: `${a.length} detections, same labels, box IoU ≥ ${minIou.toFixed(3)}` };
}
