import { decodeModel, type Dim, GraphEditError, type Model, type ValueInfo } from './graph.js';

export type { Dim } from './graph.js';

export interface TensorSignature {
  name: string;
  elemType: number;
  shape: Dim[];
}

export interface OnnxModelInfo {
  irVersion: number;
  producer: string;
  opsets: { domain: string; version: number }[];
  metadata: Record<string, string>;
  inputs: TensorSignature[];
  outputs: TensorSignature[];
  /** How many nodes of each op type the main graph has. */
  opCounts: Record<string, number>;
}

export class ModelFormatError extends Error {}

/** A value of unknown rank (no shape recorded) has shape []. */
const signature = (v: ValueInfo): TensorSignature => ({
  name: v.name,
  elemType: v.elemType,
  shape: v.shape ?? [],
});

/**
 * An ONNX model's signature and metadata, read from its decoded graph. Decoding leaves weights
 * as views into `buf`, never copied.
 */
export function parseModelInfo(buf: Uint8Array): OnnxModelInfo {
  let model: Model;
  try {
    model = decodeModel(buf);
  } catch (err) {
    if (err instanceof GraphEditError) throw new ModelFormatError(err.message);
    throw err;
  }
  const g = model.graph;
  // Older exporters also list initializers as graph inputs; they are not fed.
  const initializers = new Set(g.initializers.map((t) => t.name));
  const opCounts: Record<string, number> = {};
  for (const n of g.nodes) opCounts[n.op] = (opCounts[n.op] ?? 0) + 1;
  const info: OnnxModelInfo = {
    irVersion: model.irVersion,
    producer: model.producer,
    opsets: model.opsets,
    metadata: Object.fromEntries(model.metadata),
    inputs: g.inputs.filter((v) => !initializers.has(v.name)).map(signature),
    outputs: g.outputs.map(signature),
    opCounts,
  };
  if (info.irVersion === 0 || info.inputs.length === 0 || info.outputs.length === 0) {
    throw new ModelFormatError('not a valid ONNX model (no graph with inputs and outputs)');
  }
  return info;
}

/**
 * Class names from Ultralytics' `names` metadata, a Python dict literal such as
 * "{0: 'person', 1: 'bicycle'}". Returns undefined when absent or not of that form.
 */
export function parseUltralyticsNames(value: string | undefined): string[] | undefined {
  if (!value) return undefined;
  const names: string[] = [];
  const re = /(\d+)\s*:\s*(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)")/g;
  for (const m of value.matchAll(re)) {
    names[Number(m[1])] = (m[2] ?? m[3] ?? '').replace(/\\(.)/g, '$1');
  }
  if (names.length === 0) return undefined;
  for (let i = 0; i < names.length; i++) if (names[i] === undefined) return undefined;
  return names;
}

/** Ultralytics' `imgsz` metadata, "[640, 640]", as [height, width]. */
export function parseUltralyticsImgsz(value: string | undefined): [number, number] | undefined {
  if (!value) return undefined;
  const nums = [...value.matchAll(/\d+/g)].map((m) => Number(m[0]));
  if (nums.length === 1 && nums[0]) return [nums[0], nums[0]];
  if (nums.length === 2 && nums[0] && nums[1]) return [nums[0], nums[1]];
  return undefined;
}

/** Quantization the graph uses, judged by its op types. */
export function quantizationOf(info: OnnxModelInfo): 'none' | 'dynamic-int8' | 'static-int8' {
  const c = info.opCounts;
  if (c.ConvInteger || c.MatMulInteger || c.DynamicQuantizeLinear) return 'dynamic-int8';
  if (c.QLinearConv || c.QuantizeLinear) return 'static-int8';
  return 'none';
}
