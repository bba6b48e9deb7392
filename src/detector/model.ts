import { readFile } from 'node:fs/promises';
import { errorMessage } from '../core/errors.js';
import { topicWordProblem, type ModelConfig } from '../config/index.js';
import { extname } from 'node:path';
import {
  ModelFormatError,
  parseModelInfo,
  parseUltralyticsImgsz,
  parseUltralyticsNames,
  quantizationOf,
  type OnnxModelInfo,
} from '../onnx/index.js';

/** Everything the detector needs to know about a model before starting sessions. */
export interface ModelPlan {
  path: string;
  inputName: string;
  outputName: string;
  inputSize: number;
  /** null when the batch dimension is dynamic, else the fixed batch size. */
  staticBatch: number | null;
  labels: string[];
  labelsFrom: 'model metadata' | 'labels file';
  quantization: ReturnType<typeof quantizationOf>;
  info: OnnxModelInfo;
}

/** A problem with the model or labels file; the message names the file. */
export class ModelError extends Error {}

/** The model section's keys that say what to load (`argus detect` passes just a path). */
export type ModelOptions = { path: string } & Partial<Pick<ModelConfig, 'labels' | 'input_size'>>;

/**
 * Labels become MQTT topic levels (counts per label), like camera names: '#' in one would make
 * Argus publish to a wildcard, which brokers refuse by disconnecting it, and one of Argus' own
 * topic words (`status`, `set`: config RESERVED_NAMES) would land on another topic. Throws naming
 * `source` and where to rename the label (`renameIn`).
 */
export function checkLabels(labels: readonly string[], source: string, renameIn: string): void {
  labels.forEach((label, i) => {
    const problem = topicWordProblem(label);
    if (problem)
      throw new ModelError(
        `${source}: label ${i} ${JSON.stringify(label)} ${problem}; rename it in ${renameIn}`,
      );
  });
}

/** Class names from a labels file: a JSON array (or {"0": name} object), or one name per line. */
export async function readLabels(path: string): Promise<string[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new ModelError(
      `${path}: cannot read the labels file (${code === 'ENOENT' ? 'no such file' : (code ?? String(err))})`,
    );
  }
  let labels: unknown;
  if (extname(path).toLowerCase() === '.json') {
    try {
      labels = JSON.parse(text);
    } catch (err) {
      throw new ModelError(`${path}: labels file is not valid JSON (${errorMessage(err)})`);
    }
    if (labels && typeof labels === 'object' && !Array.isArray(labels)) {
      const entries = Object.entries(labels as Record<string, unknown>);
      const arr: unknown[] = [];
      for (const [k, v] of entries) arr[Number(k)] = v;
      labels = arr;
    }
  } else {
    labels = text
      .split(/\r?\n/)
      .map((l) => l.trim())
      .filter((l) => l.length > 0);
  }
  if (
    !Array.isArray(labels) ||
    labels.length === 0 ||
    labels.some((l) => typeof l !== 'string' || l === '')
  ) {
    throw new ModelError(
      `${path}: labels file must list class names (a JSON array of strings, or one name per line)`,
    );
  }
  return labels as string[];
}

/** Reads the model's signature and labels and checks it is something Argus can run. */
export async function planModel(opts: ModelOptions): Promise<ModelPlan> {
  const { path } = opts;
  let buf: Buffer;
  try {
    buf = await readFile(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new ModelError(
      `${path}: cannot read the model file (${code === 'ENOENT' ? 'no such file' : (code ?? String(err))})`,
    );
  }
  let info: OnnxModelInfo;
  try {
    info = parseModelInfo(buf);
  } catch (err) {
    if (err instanceof ModelFormatError) throw new ModelError(`${path}: ${err.message}`);
    throw err;
  }
  if (info.inputs.length !== 1) {
    throw new ModelError(
      `${path}: expected one image input, found ${info.inputs.length} (${info.inputs.map((i) => i.name).join(', ')})`,
    );
  }
  const input = info.inputs[0]!;
  const output = info.outputs[0]!;
  if (input.elemType !== 1)
    throw new ModelError(`${path}: input '${input.name}' is not float32; Argus feeds float32 NCHW images`);
  const [b, ch, h, w] = input.shape;
  if (input.shape.length !== 4 || (typeof ch === 'number' && ch !== 3)) {
    throw new ModelError(
      `${path}: input '${input.name}' has shape [${input.shape.join(', ')}], expected [batch, 3, height, width]`,
    );
  }
  let inputSize: number | undefined;
  if (typeof h === 'number' && typeof w === 'number') {
    if (h !== w) throw new ModelError(`${path}: input is ${w}x${h}; Argus supports square inputs only`);
    inputSize = h;
  } else {
    const imgsz = parseUltralyticsImgsz(info.metadata.imgsz);
    inputSize = imgsz && imgsz[0] === imgsz[1] ? imgsz[0] : opts.input_size;
  }
  if (!inputSize) {
    throw new ModelError(
      `${path}: the model does not fix its input size and has no imgsz metadata; set model.input_size`,
    );
  }
  let labels = parseUltralyticsNames(info.metadata.names);
  let labelsFrom: ModelPlan['labelsFrom'] = 'model metadata';
  if (opts.labels) {
    labels = await readLabels(opts.labels);
    labelsFrom = 'labels file';
  }
  if (!labels) {
    throw new ModelError(`${path}: the model has no 'names' metadata; set model.labels to a labels file`);
  }
  checkLabels(labels, opts.labels ?? path, opts.labels ? 'the labels file' : 'a labels file (model.labels)');
  return {
    path,
    inputName: input.name,
    outputName: output.name,
    inputSize,
    staticBatch: typeof b === 'number' && b > 0 ? b : null,
    labels,
    labelsFrom,
    quantization: quantizationOf(info),
    info,
  };
}
