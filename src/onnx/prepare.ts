/**
 * `argus model prepare`: graph passes that make an exported model fit for Argus.
 *
 * - dynamic batch: a static batch dimension becomes symbolic, and Reshape shapes that spell the
 *   batch out are rewritten (-1, or 0 = "copy from the input") so the scheduler can batch frames;
 * - fp32: each dynamic-int8 DynamicQuantizeLinear → ConvInteger → Cast → Mul (→ Add bias) chain
 *   becomes one Conv with weights (w − zero point) × scale and the bias folded in. ConvInteger is
 *   slow on x86 and unsupported by the CUDA and TensorRT providers;
 * - fp16: weights and activations in half precision for GPUs, float32 kept at the model's edges.
 *
 * Every pass either applies completely or throws a GraphEditError naming the node it could not
 * handle; a half-converted model is never written.
 */
import { checkEditable, floatsOf, floatTensor, int64Tensor, intAttr, intsOf } from './build.js';
import { toFloat16Bits } from './float16.js';
import { DataType, type Graph, GraphEditError, type Model, type Node, type Tensor } from './graph.js';

export type Precision = 'keep' | 'fp32' | 'fp16';

export interface PrepareOptions {
  batch: 'keep' | 'dynamic';
  precision: Precision;
}

/** One line per change made, for the command's report. */
export type PrepareReport = string[];

export function prepareModel(model: Model, opts: PrepareOptions): PrepareReport {
  const report: PrepareReport = [];
  const g = model.graph;
  checkEditable(g);
  if (opts.precision !== 'keep') {
    const n = dequantizeConvInteger(g);
    if (n) report.push(`${n} ConvInteger chains → Conv with fp32 weights`);
    const left = g.nodes.filter((x) => x.op === 'MatMulInteger' || x.op === 'QLinearConv').length;
    if (left) throw new GraphEditError(`${left} MatMulInteger/QLinearConv nodes cannot be converted yet`);
  }
  if (opts.batch === 'dynamic') report.push(...makeBatchDynamic(g));
  const removed = removeDeadNodes(g);
  if (removed) report.push(`${removed} nodes no longer needed removed`);
  if (opts.precision === 'fp16') report.push(...convertToFloat16(g));
  const steps = [
    opts.batch === 'dynamic' ? 'batch=dynamic' : '',
    opts.precision !== 'keep' ? opts.precision : '',
  ]
    .filter(Boolean)
    .join(',');
  model.metadata.set('argus_prepared', steps);
  return report;
}

// ---- graph queries ----------------------------------------------------------------------------

function consumersOf(g: Graph): Map<string, Node[]> {
  const m = new Map<string, Node[]>();
  for (const n of g.nodes) for (const i of n.inputs) if (i) m.set(i, [...(m.get(i) ?? []), n]);
  return m;
}

function producersOf(g: Graph): Map<string, Node> {
  const m = new Map<string, Node>();
  for (const n of g.nodes) for (const o of n.outputs) m.set(o, n);
  return m;
}

/** The value of a tensor known when the model is built: an initializer or a Constant node. */
function constantOf(g: Graph, name: string, producers = producersOf(g)): Tensor | undefined {
  const init = g.initializers.find((t) => t.name === name);
  if (init) return init;
  const p = producers.get(name);
  if (p?.op === 'Constant') return p.attributes.find((a) => a.name === 'value')?.tensor;
  return undefined;
}

function uniqueName(g: Graph, base: string): string {
  const taken = new Set([...g.initializers.map((t) => t.name), ...g.nodes.flatMap((n) => n.outputs)]);
  let name = base;
  for (let i = 1; taken.has(name); i++) name = `${base}_${i}`;
  return name;
}

const label = (n: Node): string => `'${n.name || n.outputs[0] || '?'}' (${n.op})`;

// ---- int8 → fp32 ------------------------------------------------------------------------------

export function dequantizeConvInteger(g: Graph): number {
  const consumers = consumersOf(g);
  const producers = producersOf(g);
  const dead = new Set<Node>();
  const replacements = new Map<Node, Node>();
  const only = (name: string, op: string, at: Node): Node => {
    const c = consumers.get(name) ?? [];
    if (c.length !== 1 || c[0]!.op !== op) {
      throw new GraphEditError(`ConvInteger ${label(at)}: expected '${name}' to feed one ${op}`);
    }
    return c[0]!;
  };
  for (const conv of g.nodes) {
    if (conv.op !== 'ConvInteger') continue;
    const [xq, wq, , wzp] = conv.inputs;
    const dql = producers.get(xq ?? '');
    if (dql?.op !== 'DynamicQuantizeLinear') {
      throw new GraphEditError(`ConvInteger ${label(conv)}: its input is not from DynamicQuantizeLinear`);
    }
    const weights = constantOf(g, wq ?? '', producers);
    if (!weights) throw new GraphEditError(`ConvInteger ${label(conv)}: weights are not a constant`);
    const cast = only(conv.outputs[0]!, 'Cast', conv);
    const to = cast.attributes.find((a) => a.name === 'to')?.int;
    if (to !== BigInt(DataType.FLOAT)) throw new GraphEditError(`Cast ${label(cast)} does not cast to float`);
    const mul = only(cast.outputs[0]!, 'Mul', conv);
    const scaleName = mul.inputs.find((i) => i !== cast.outputs[0]);
    const scaleMul = producers.get(scaleName ?? '');
    if (scaleMul?.op !== 'Mul' || !scaleMul.inputs.includes(dql.outputs[1]!)) {
      throw new GraphEditError(`Mul ${label(mul)}: its scale is not the input scale × weight scale`);
    }
    const wScaleName = scaleMul.inputs.find((i) => i !== dql.outputs[1]);
    const wScale = constantOf(g, wScaleName ?? '', producers);
    if (!wScale) throw new GraphEditError(`Mul ${label(scaleMul)}: the weight scale is not a constant`);

    const outC = weights.dims[0] ?? 0;
    const q = intsOf(weights);
    const per = q.length / Math.max(1, outC);
    const scales = floatsOf(wScale);
    const zps = wzp
      ? intsOf(constantOf(g, wzp, producers) ?? fail(`ConvInteger ${label(conv)}: zero point`))
      : [0];
    if (![1, outC].includes(scales.length) || ![1, outC].includes(zps.length)) {
      throw new GraphEditError(
        `ConvInteger ${label(conv)}: weight scale/zero point is neither per-tensor nor per-channel`,
      );
    }
    const w = new Float32Array(q.length);
    for (let i = 0; i < q.length; i++) {
      const c = Math.floor(i / per);
      w[i] = (q[i]! - zps[zps.length === 1 ? 0 : c]!) * scales[scales.length === 1 ? 0 : c]!;
    }
    const wName = uniqueName(g, `${(wq ?? 'w').replace(/_quantized$/, '')}_fp32`);
    g.initializers.push(floatTensor(wName, weights.dims, w));

    // Fold a following per-channel bias Add into the Conv.
    let output = mul.outputs[0]!;
    const inputs = [dql.inputs[0]!, wName];
    const after = consumers.get(output) ?? [];
    if (after.length === 1 && after[0]!.op === 'Add') {
      const add = after[0]!;
      const other = add.inputs.find((i) => i !== output) ?? '';
      const bias = biasOf(g, other, outC, producers);
      if (bias) {
        const bName = uniqueName(g, `${wName.replace(/_fp32$/, '')}_bias`);
        g.initializers.push(floatTensor(bName, [outC], bias));
        inputs.push(bName);
        output = add.outputs[0]!;
        dead.add(add);
      }
    }
    dead.add(cast).add(mul);
    replacements.set(conv, {
      name: conv.name.replace(/_quant$/, '') || output,
      op: 'Conv',
      domain: '',
      inputs,
      outputs: [output],
      attributes: conv.attributes,
    });
  }
  g.nodes = g.nodes.filter((n) => !dead.has(n)).map((n) => replacements.get(n) ?? n);
  return replacements.size;
}

function fail(what: string): never {
  throw new GraphEditError(`${what} is not a constant`);
}

/** A per-channel float bias of `channels` values behind `name` (directly or through a Reshape). */
function biasOf(
  g: Graph,
  name: string,
  channels: number,
  producers: Map<string, Node>,
): Float32Array | undefined {
  let t = constantOf(g, name, producers);
  const p = producers.get(name);
  if (!t && p?.op === 'Reshape') t = constantOf(g, p.inputs[0] ?? '', producers);
  if (!t || t.dataType !== DataType.FLOAT) return undefined;
  const v = floatsOf(t);
  if (v.length !== channels) return undefined;
  // Shapes that broadcast over channels: [C], [C,1,1], [1,C,1,1] (after the Reshape).
  return Float32Array.from(v);
}

// ---- static → dynamic batch -------------------------------------------------------------------

export function makeBatchDynamic(g: Graph): string[] {
  const initNames = new Set(g.initializers.map((t) => t.name));
  const inputs = g.inputs.filter((v) => !initNames.has(v.name));
  const first = inputs[0]?.shape?.[0];
  if (typeof first !== 'number') return [];
  const batch = first;
  const report = [`batch ${batch} → dynamic`];
  for (const v of [...inputs, ...g.outputs]) {
    if (v.shape?.[0] === batch) {
      v.shape[0] = 'batch';
      delete v.raw;
    }
  }
  // Intermediate shapes recorded at export spell out the old batch; ONNX Runtime infers them.
  g.valueInfo = [];

  const producers = producersOf(g);
  const dependent = new Set(inputs.map((v) => v.name));
  let rewritten = 0;
  for (const n of g.nodes) {
    if (!n.inputs.some((i) => dependent.has(i))) continue;
    for (const o of n.outputs) dependent.add(o);
    if (n.op !== 'Reshape' || !dependent.has(n.inputs[0] ?? '')) continue;
    const shape = constantOf(g, n.inputs[1] ?? '', producers);
    if (!shape) continue;
    const values = intsOf(shape);
    if (values[0] !== batch) continue;
    const allowZero = n.attributes.find((a) => a.name === 'allowzero')?.int === 1n;
    if (values.includes(-1) && allowZero) {
      throw new GraphEditError(`Reshape ${label(n)}: batch spelled out next to -1 with allowzero=1`);
    }
    values[0] = values.includes(-1) ? 0 : -1;
    const name = uniqueName(g, `${n.inputs[1]}_dynamic_batch`);
    g.initializers.push(int64Tensor(name, values));
    n.inputs[1] = name;
    rewritten++;
  }
  if (rewritten) report.push(`${rewritten} Reshape shapes no longer fix the batch`);
  return report;
}

// ---- fp16 -------------------------------------------------------------------------------------

/** Ops whose float inputs may all be half precision, except the listed input positions. */
const FP16_OPS: Record<string, number[]> = {
  Conv: [],
  ConvTranspose: [],
  Add: [],
  Sub: [],
  Mul: [],
  Div: [],
  Pow: [],
  Sqrt: [],
  Exp: [],
  Sigmoid: [],
  Tanh: [],
  Relu: [],
  LeakyRelu: [],
  HardSigmoid: [],
  HardSwish: [],
  Clip: [],
  Softmax: [],
  Split: [],
  Concat: [],
  Slice: [],
  Reshape: [],
  Transpose: [],
  Flatten: [],
  Squeeze: [],
  Unsqueeze: [],
  Identity: [],
  Gather: [],
  Shape: [],
  MaxPool: [],
  AveragePool: [],
  GlobalAveragePool: [],
  BatchNormalization: [],
  MatMul: [],
  Gemm: [],
  ReduceMax: [],
  ReduceMean: [],
  ArgMax: [],
  // Resize's roi and scales, and Upsample's scales, stay float32.
  Resize: [1, 2],
  Upsample: [1],
  Constant: [],
  Cast: [],
};

export function convertToFloat16(g: Graph): string[] {
  // Own rules only: an op named `constructor` or `toString` (a custom op may be) has none.
  const unsupported = [...new Set(g.nodes.map((n) => n.op).filter((op) => !Object.hasOwn(FP16_OPS, op)))];
  if (unsupported.length) {
    throw new GraphEditError(`fp16: no half-precision rule for op(s) ${unsupported.join(', ')}`);
  }
  const keep32 = new Set<string>();
  for (const n of g.nodes) for (const i of FP16_OPS[n.op] ?? []) if (n.inputs[i]) keep32.add(n.inputs[i]);

  let converted = 0;
  const half = (t: Tensor): void => {
    if (t.dataType !== DataType.FLOAT || keep32.has(t.name)) return;
    t.data = new Uint8Array(toFloat16Bits(floatsOf(t)).buffer);
    t.dataType = DataType.FLOAT16;
    converted++;
  };
  g.initializers.forEach(half);
  for (const n of g.nodes) {
    for (const a of n.attributes) {
      if (n.op === 'Constant' && a.tensor && !n.outputs.some((o) => keep32.has(o))) {
        half(a.tensor);
        delete a.raw;
      }
      if (n.op === 'Cast' && a.name === 'to' && a.int === BigInt(DataType.FLOAT)) {
        a.int = BigInt(DataType.FLOAT16);
        delete a.raw;
      }
    }
  }

  // float32 at the edges: Cast after each float input, before each float output.
  const initNames = new Set(g.initializers.map((t) => t.name));
  const casts: Node[] = [];
  for (const v of g.inputs) {
    if (initNames.has(v.name) || v.elemType !== DataType.FLOAT) continue;
    const inner = uniqueName(g, `${v.name}_fp16`);
    for (const n of g.nodes) n.inputs = n.inputs.map((i) => (i === v.name ? inner : i));
    casts.push(castNode(v.name, inner, DataType.FLOAT16));
  }
  const tail: Node[] = [];
  for (const v of g.outputs) {
    if (v.elemType !== DataType.FLOAT) continue;
    const inner = uniqueName(g, `${v.name}_fp16`);
    for (const n of g.nodes) {
      n.outputs = n.outputs.map((o) => (o === v.name ? inner : o));
      n.inputs = n.inputs.map((i) => (i === v.name ? inner : i));
    }
    tail.push(castNode(inner, v.name, DataType.FLOAT));
  }
  g.nodes = [...casts, ...g.nodes, ...tail];
  g.valueInfo = [];
  return [`${converted} float tensors → fp16 (float32 input and output kept)`];
}

function castNode(input: string, output: string, to: number): Node {
  return {
    name: `${output}_cast`,
    op: 'Cast',
    domain: '',
    inputs: [input],
    outputs: [output],
    attributes: [intAttr('to', to)],
  };
}

// ---- clean-up ---------------------------------------------------------------------------------

/** Drops nodes whose outputs nothing uses, then unused initializers. Returns nodes removed. */
export function removeDeadNodes(g: Graph): number {
  const needed = new Set(g.outputs.map((v) => v.name));
  const live: Node[] = [];
  for (let i = g.nodes.length - 1; i >= 0; i--) {
    const n = g.nodes[i]!;
    if (!n.outputs.some((o) => needed.has(o))) continue;
    live.push(n);
    for (const x of n.inputs) if (x) needed.add(x);
  }
  const removed = g.nodes.length - live.length;
  g.nodes = live.reverse();
  const initNames = new Set(g.initializers.map((t) => t.name));
  g.initializers = g.initializers.filter((t) => needed.has(t.name));
  // Older models also list initializers as graph inputs; drop the entries of removed ones.
  g.inputs = g.inputs.filter((v) => needed.has(v.name) || !initNames.has(v.name));
  return removed;
}
