/**
 * Making and reading graph parts: models and nodes from scratch (the fixture, passes that add
 * nodes), tensor values for passes, and the check that a model is one passes can edit.
 */
import {
  AttrType,
  DataType,
  ELEMENT_BYTES,
  GraphEditError,
  type Attribute,
  type Graph,
  type Model,
  type Node,
  type Opset,
  type Tensor,
} from './graph.js';

/** What a model made from scratch (not read) states; everything else starts empty. */
export interface NewModel {
  irVersion: number;
  producer: string;
  producerVersion?: string;
  opsets: Opset[];
  graph: Pick<Graph, 'name' | 'nodes' | 'initializers' | 'inputs' | 'outputs'>;
  metadata?: Iterable<readonly [string, string]>;
}

export function newModel(m: NewModel): Model {
  return {
    irVersion: m.irVersion,
    producer: m.producer,
    producerVersion: m.producerVersion ?? '',
    opsets: m.opsets,
    graph: { ...m.graph, valueInfo: [], other: [] },
    metadata: new Map(m.metadata),
    other: [],
  };
}

/** A node in the default domain, named after its op and first output. */
export function newNode(op: string, inputs: string[], outputs: string[], attributes: Attribute[] = []): Node {
  return { name: `${op}_${outputs[0] ?? ''}`, op, domain: '', inputs, outputs, attributes };
}

export function intAttr(name: string, value: number | bigint): Attribute {
  return { name, type: AttrType.INT, int: BigInt(value) };
}

export function intsAttr(name: string, values: readonly number[]): Attribute {
  return { name, type: AttrType.INTS, ints: values.map((v) => BigInt(v)) };
}

const SPARSE_INITIALIZER = 15;

/**
 * Decoding takes any model, so that its signature can be read; passes need more. They rename
 * values and rewrite tensors, which a subgraph's references, an external data file, a sparse
 * initializer or a tensor they cannot read would not follow. Throws naming the first of these.
 */
export function checkEditable(g: Graph): void {
  for (const n of g.nodes) {
    for (const a of n.attributes) {
      if (a.type === AttrType.GRAPH || a.type === AttrType.GRAPHS) {
        throw new GraphEditError(
          `node '${n.name || n.op}' (${n.op}) has a subgraph; control flow is not supported`,
        );
      }
      if (a.tensor?.opaque) throw new GraphEditError(a.tensor.opaque.reason);
    }
  }
  if (g.other.some((f) => f.no === SPARSE_INITIALIZER)) {
    throw new GraphEditError('sparse initializers are not supported');
  }
  for (const t of g.initializers) if (t.opaque) throw new GraphEditError(t.opaque.reason);
}

/** The values of a float32 tensor: a view of its data when aligned, else a copy; read only. */
export function floatsOf(t: Tensor): Float32Array {
  if (t.opaque) throw new GraphEditError(t.opaque.reason);
  if (t.dataType !== DataType.FLOAT) throw new GraphEditError(`tensor '${t.name}' is not float32`);
  // A Float32Array must start at a multiple of 4 bytes; decoded data may start anywhere.
  const d = t.data.byteOffset % 4 === 0 ? t.data : new Uint8Array(t.data);
  return new Float32Array(d.buffer, d.byteOffset, d.byteLength / 4);
}

/** Integer tensor values as numbers (int8, uint8, int32, int64). */
export function intsOf(t: Tensor): number[] {
  if (t.opaque) throw new GraphEditError(t.opaque.reason);
  const v = new DataView(t.data.buffer, t.data.byteOffset, t.data.byteLength);
  const out: number[] = [];
  const n = t.data.byteLength / (ELEMENT_BYTES[t.dataType] ?? 1);
  for (let i = 0; i < n; i++) {
    if (t.dataType === DataType.INT8) out.push(v.getInt8(i));
    else if (t.dataType === DataType.UINT8) out.push(v.getUint8(i));
    else if (t.dataType === DataType.INT32) out.push(v.getInt32(i * 4, true));
    else if (t.dataType === DataType.INT64) out.push(Number(v.getBigInt64(i * 8, true)));
    else throw new GraphEditError(`tensor '${t.name}' is not an integer tensor`);
  }
  return out;
}

export function int64Tensor(name: string, values: number[]): Tensor {
  const data = new Uint8Array(new BigInt64Array(values.map((x) => BigInt(x))).buffer);
  return { name, dims: [values.length], dataType: DataType.INT64, data };
}

export function floatTensor(name: string, dims: number[], values: Float32Array): Tensor {
  // A copy of just this view's bytes (the array may be a view into a larger buffer).
  return {
    name,
    dims,
    dataType: DataType.FLOAT,
    data: new Uint8Array(values.buffer, values.byteOffset, values.byteLength).slice(),
  };
}
