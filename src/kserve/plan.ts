import { resolveLayout, type OutputLayout } from '../detector/index.js';
import { parseUltralyticsNames } from '../onnx/index.js';
import { ARGUS_RGB24, type MetadataTensor, type ModelConfigJson } from './protocol.js';

/**
 * What a client needs to know of a remote model, worked out from what the server says of it:
 * its model metadata (`inputs`, `outputs`: name, datatype, shape with -1 for variable
 * dimensions), its server's metadata (`extensions`) and, where the server has Triton's model
 * configuration extension, its `max_batch_size` and `parameters.metadata` (where Ultralytics'
 * Triton guide puts the model's metadata, class names included).
 */

/** How pictures go on the wire. */
export type InputForm =
  /** [batch, 3, S, S] RGB scaled to 0..1, what a YOLO exported to ONNX takes (on Triton too). */
  | 'FP32'
  /** The same in half precision (a TensorRT engine built with FP16 inputs). */
  | 'FP16'
  /** [batch, S, S, 3] RGB24 as it is: Argus servers (extension `argus_rgb24`). */
  | 'UINT8';

export type OutputPlan =
  /** The raw YOLO tensor: decoded, NMS'd and mapped back here, as the local detector does. */
  | { kind: 'yolo'; name: string; layout: OutputLayout }
  /** Post-NMS `detections` [B, K, 6] (x1, y1, x2, y2, score, class) + `num_detections` [B]. */
  | { kind: 'detections'; name: 'detections'; countName: 'num_detections' };

export interface RemotePlan {
  inputName: string;
  input: InputForm;
  inputSize: number;
  /** A model with a fixed batch takes exactly that many; otherwise at most `max` (null: any). */
  batch: { fixed: number } | { max: number | null };
  output: OutputPlan;
  /**
   * The most one batch item's answer can hold: its output values (the YOLO tensor's, or
   * `detections` rows × 6 and a count), at `bytesPerValue` (4: binary FP32; as JSON text from a
   * server without the binary tensor data extension). What bounds an answer (answerLimit).
   */
  answer: { values: number; bytesPerValue: number };
  labels: string[];
  labelsFrom: 'server' | 'labels file';
}

/**
 * `detections` rows per item when the model's metadata leaves K variable: the most an Argus
 * server sends (its `max_detections` is at most 10000).
 */
export const MAX_DETECTION_ROWS = 10_000;
/** Beside the tensors, an answer's JSON header (names, shapes, parameters) or an error's text. */
export const ANSWER_SLACK_BYTES = 64 * 1024;
/** A float printed as JSON text, with its separator (`-1.1920928955078125e-7, `). */
const JSON_VALUE_BYTES = 32;

/** The largest answer a request of `slots` batch items can need: larger ones are refused unread. */
export function answerLimit(plan: Pick<RemotePlan, 'answer'>, slots: number): number {
  return ANSWER_SLACK_BYTES + slots * plan.answer.values * plan.answer.bytesPerValue;
}

/** A remote model Argus cannot use as it is; the message says why. */
export class PlanError extends Error {}

export interface ServerFacts {
  /** `extensions` of the server's metadata (empty when it has none to give). */
  extensions: readonly string[];
  inputs: MetadataTensor[];
  outputs: MetadataTensor[];
  /** Undefined when the server has no model configuration to give. */
  config: ModelConfigJson | undefined;
}

/** Class names from the Ultralytics metadata a model configuration carries, if any. */
export function labelsFromConfig(config: ModelConfigJson | undefined): string[] | undefined {
  const meta = config?.parameters?.metadata?.string_value;
  // A Python dict literal: {'description': ..., 'names': {0: 'person', ...}, 'imgsz': [640, 640]}.
  const names = meta && /['"]names['"]\s*:\s*(\{[^}]*\})/.exec(meta);
  return names ? parseUltralyticsNames(names[1]) : undefined;
}

const shown = (t: MetadataTensor): string => `'${t.name}' ${t.datatype} [${t.shape.join(', ')}]`;

/** The one image input: [batch, 3, S, S] FP32 or FP16 (or, from an Argus server, UINT8). */
function planInput(
  facts: ServerFacts,
): Pick<RemotePlan, 'inputName' | 'input' | 'inputSize'> & { batch: number } {
  if (facts.inputs.length !== 1)
    throw new PlanError(
      `the model has ${facts.inputs.length} inputs (${facts.inputs.map(shown).join(', ')}); Argus feeds one image input`,
    );
  const input = facts.inputs[0]!;
  const [b, c, h, w] = input.shape;
  if (input.shape.length !== 4 || c !== 3 || !h || h <= 0 || h !== w || b === undefined || b === 0 || b < -1)
    throw new PlanError(`input ${shown(input)} is not [batch, 3, size, size] (square RGB, channels first)`);
  if (input.datatype !== 'FP32' && input.datatype !== 'FP16')
    throw new PlanError(`input ${shown(input)} is not FP32 or FP16; Argus sends float images`);
  const rgb24 = input.datatype === 'FP32' && facts.extensions.includes(ARGUS_RGB24);
  return { inputName: input.name, input: rgb24 ? 'UINT8' : input.datatype, inputSize: h, batch: b };
}

/** The output, and how many values of it one batch item's answer holds at most. */
function planOutput(facts: ServerFacts, classes: number | undefined): { output: OutputPlan; values: number } {
  const det = facts.outputs.find((o) => o.name === 'detections');
  const count = facts.outputs.find((o) => o.name === 'num_detections');
  if (det && count) {
    if (det.datatype !== 'FP32' || det.shape.length !== 3 || det.shape[2] !== 6 || count.datatype !== 'INT32')
      throw new PlanError(
        `outputs ${shown(det)} and ${shown(count)} are not FP32 [batch, K, 6] detections with INT32 [batch] counts`,
      );
    const k = det.shape[1]!;
    return {
      output: { kind: 'detections', name: 'detections', countName: 'num_detections' },
      values: (k > 0 ? k : MAX_DETECTION_ROWS) * 6 + 1,
    };
  }
  // Segmentation and pose exports add outputs after the boxes: the first of rank 3 is the one.
  const out = facts.outputs.find((o) => o.shape.length === 3) ?? facts.outputs[0];
  if (!out) throw new PlanError('the model has no outputs');
  if (out.datatype !== 'FP32' && out.datatype !== 'FP16')
    throw new PlanError(`output ${shown(out)} is not FP32 or FP16`);
  try {
    const layout = resolveLayout(out.shape, classes);
    return {
      output: { kind: 'yolo', name: out.name, layout },
      values: (4 + layout.classes) * layout.anchors,
    };
  } catch (err) {
    throw new PlanError(`output ${shown(out)}: ${(err as Error).message}`);
  }
}

/**
 * Works out how to use a remote model. `fileLabels` (the model entry's labels file) wins over
 * the names the server gives, as a local model's labels file wins over its metadata.
 */
export function planRemote(facts: ServerFacts, fileLabels: string[] | undefined): RemotePlan {
  const input = planInput(facts);
  const serverLabels = labelsFromConfig(facts.config);
  const labels = fileLabels ?? serverLabels;
  if (!labels)
    throw new PlanError(
      "the server gives no class names for the model (Ultralytics' metadata); set labels to a labels file",
    );
  const { output, values } = planOutput(facts, labels.length);
  const max = facts.config?.max_batch_size;
  // An Argus server says how many RGB24 pictures fit its body limit beside the FP32 count.
  const rgb24Max = Number(facts.config?.parameters?.rgb24_max_batch_size?.string_value);
  const dynamicMax = input.input === 'UINT8' && rgb24Max > 0 ? rgb24Max : max && max > 0 ? max : null;
  return {
    inputName: input.inputName,
    input: input.input,
    inputSize: input.inputSize,
    batch: input.batch > 0 ? { fixed: input.batch } : { max: dynamicMax },
    output,
    answer: {
      values,
      bytesPerValue: facts.extensions.includes('binary_tensor_data') ? 4 : JSON_VALUE_BYTES,
    },
    labels,
    labelsFrom: fileLabels ? 'labels file' : 'server',
  };
}
