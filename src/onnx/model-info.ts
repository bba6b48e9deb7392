import { readFile } from 'node:fs/promises';
import type { Dim } from './graph.js';
import { decodeString, ProtoError, readFields } from './proto.js';

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

function readShape(typeProto: Uint8Array): { elemType: number; shape: Dim[] } {
  let elemType = 0;
  const shape: Dim[] = [];
  for (const f of readFields(typeProto)) {
    if (f.no !== 1 || !f.bytes) continue; // tensor_type
    for (const t of readFields(f.bytes)) {
      if (t.no === 1 && t.varint !== undefined) elemType = Number(t.varint);
      if (t.no === 2 && t.bytes) {
        for (const d of readFields(t.bytes)) {
          if (d.no !== 1 || !d.bytes) continue;
          let dim: Dim = null;
          for (const v of readFields(d.bytes)) {
            if (v.no === 1 && v.varint !== undefined) dim = Number(v.varint);
            if (v.no === 2 && v.bytes) dim = decodeString(v.bytes);
          }
          shape.push(dim);
        }
      }
    }
  }
  return { elemType, shape };
}

function readValueInfo(b: Uint8Array): TensorSignature {
  let name = '';
  let sig = { elemType: 0, shape: [] as Dim[] };
  for (const f of readFields(b)) {
    if (f.no === 1) name = decodeString(f.bytes);
    if (f.no === 2 && f.bytes) sig = readShape(f.bytes);
  }
  return { name, ...sig };
}

/** Parses an ONNX ModelProto's signature and metadata; weights are skipped, never copied. */
export function parseModelInfo(buf: Uint8Array): OnnxModelInfo {
  const info: OnnxModelInfo = {
    irVersion: 0,
    producer: '',
    opsets: [],
    metadata: {},
    inputs: [],
    outputs: [],
    opCounts: {},
  };
  let sawGraph = false;
  try {
    for (const f of readFields(buf)) {
      if (f.no === 1 && f.varint !== undefined) info.irVersion = Number(f.varint);
      else if (f.no === 2) info.producer = decodeString(f.bytes);
      else if (f.no === 8 && f.bytes) {
        let domain = '';
        let version = 0;
        for (const o of readFields(f.bytes)) {
          if (o.no === 1) domain = decodeString(o.bytes);
          if (o.no === 2 && o.varint !== undefined) version = Number(o.varint);
        }
        info.opsets.push({ domain, version });
      } else if (f.no === 14 && f.bytes) {
        let key = '';
        let value = '';
        for (const e of readFields(f.bytes)) {
          if (e.no === 1) key = decodeString(e.bytes);
          if (e.no === 2) value = decodeString(e.bytes);
        }
        info.metadata[key] = value;
      } else if (f.no === 7 && f.bytes) {
        sawGraph = true;
        const initializers = new Set<string>();
        const inputs: TensorSignature[] = [];
        for (const g of readFields(f.bytes)) {
          if (g.no === 1 && g.bytes) {
            for (const n of readFields(g.bytes)) {
              if (n.no === 4) {
                const op = decodeString(n.bytes);
                info.opCounts[op] = (info.opCounts[op] ?? 0) + 1;
              }
            }
          } else if (g.no === 5 && g.bytes) {
            for (const t of readFields(g.bytes)) if (t.no === 8) initializers.add(decodeString(t.bytes));
          } else if (g.no === 11 && g.bytes) inputs.push(readValueInfo(g.bytes));
          else if (g.no === 12 && g.bytes) info.outputs.push(readValueInfo(g.bytes));
        }
        info.inputs = inputs.filter((i) => !initializers.has(i.name));
      }
    }
  } catch (err) {
    if (err instanceof ProtoError) throw new ModelFormatError(`not a valid ONNX model (${err.message})`);
    throw err;
  }
  if (!sawGraph || info.irVersion === 0 || info.inputs.length === 0 || info.outputs.length === 0) {
    throw new ModelFormatError('not a valid ONNX model (no graph with inputs and outputs)');
  }
  return info;
}

export async function readModelInfo(path: string): Promise<OnnxModelInfo> {
  const buf = await readFile(path);
  return parseModelInfo(buf);
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
