import { ProtoWriter } from './proto.js';

/**
 * Builds Argus' own test model: a tiny, hand-weighted network with YOLOv8's input and output
 * format, so tests know the ground truth without any downloaded weights.
 *
 * The input image is divided into a grid of `stride`-pixel cells. For each cell it averages the
 * pixels (AveragePool) and scores two classes with a 1x1 convolution and a sigmoid:
 *   - class 0 "bright": mean of R, G, B above ~0.6 (white and near-white cells);
 *   - class 1 "red":    R well above the mean of G and B.
 * Every cell is one anchor whose box is the cell itself (cx, cy, w, h in input pixels).
 * The letterbox grey (114/255 ≈ 0.45) scores below 0.05 on both classes.
 */
export interface FixtureOptions {
  /** Square input size in pixels; a multiple of `stride`. */
  size: number;
  stride: number;
  /** `channels-first` is YOLOv8's [B, 4+C, N]; `transposed` is [B, N, 4+C]; `flat` is [B, (4+C)*N], a layout Argus must reject. */
  layout: 'channels-first' | 'transposed' | 'flat';
  /** `dynamic` gives a symbolic batch dimension; a number fixes it. */
  batch: 'dynamic' | number;
  /** Write Ultralytics-style `names` metadata into the model. */
  names: boolean;
}

export const FIXTURE_LABELS = ['bright', 'red'] as const;
export const DEFAULT_FIXTURE: FixtureOptions = {
  size: 320,
  stride: 32,
  layout: 'channels-first',
  batch: 'dynamic',
  names: true,
};

const FLOAT = 1;
const INT64 = 7;
const ATTR_INTS = 7;
const ATTR_INT = 2;

function floatTensor(name: string, dims: number[], values: Float32Array): ProtoWriter {
  const w = new ProtoWriter().packedInt64(1, dims).varint(2, FLOAT).string(8, name);
  return w.bytes(9, new Uint8Array(values.buffer, values.byteOffset, values.byteLength));
}

function int64Tensor(name: string, values: number[]): ProtoWriter {
  const raw = new BigInt64Array(values.map((v) => BigInt(v)));
  return new ProtoWriter()
    .packedInt64(1, [values.length])
    .varint(2, INT64)
    .string(8, name)
    .bytes(9, new Uint8Array(raw.buffer));
}

type Attr = { name: string; ints: number[] } | { name: string; int: number };

function node(op: string, inputs: string[], outputs: string[], attrs: Attr[] = []): ProtoWriter {
  const w = new ProtoWriter();
  for (const i of inputs) w.string(1, i);
  for (const o of outputs) w.string(2, o);
  w.string(3, `${op}_${outputs[0] ?? ''}`).string(4, op);
  for (const a of attrs) {
    const aw = new ProtoWriter().string(1, a.name);
    if ('ints' in a) aw.packedInt64(8, a.ints).varint(20, ATTR_INTS);
    else aw.varint(3, a.int).varint(20, ATTR_INT);
    w.message(5, aw);
  }
  return w;
}

function valueInfo(name: string, dims: (number | string)[]): ProtoWriter {
  const shape = new ProtoWriter();
  for (const d of dims) {
    const dim = new ProtoWriter();
    if (typeof d === 'number') dim.varint(1, d);
    else dim.string(2, d);
    shape.message(1, dim);
  }
  const tensorType = new ProtoWriter().varint(1, FLOAT).message(2, shape);
  return new ProtoWriter().string(1, name).message(2, new ProtoWriter().message(1, tensorType));
}

/** Serialises the fixture model. Deterministic: the same options give the same bytes. */
export function buildFixtureModel(opts: FixtureOptions = DEFAULT_FIXTURE): Uint8Array {
  const { size, stride } = opts;
  if (size % stride !== 0) throw new Error(`fixture size ${size} is not a multiple of stride ${stride}`);
  const grid = size / stride;
  const n = grid * grid;
  const c = FIXTURE_LABELS.length;
  const batch: number | string = opts.batch === 'dynamic' ? 'batch' : opts.batch;

  const anchors = new Float32Array(4 * n);
  for (let gy = 0; gy < grid; gy++) {
    for (let gx = 0; gx < grid; gx++) {
      const i = gy * grid + gx;
      anchors[i] = (gx + 0.5) * stride;
      anchors[n + i] = (gy + 0.5) * stride;
      anchors[2 * n + i] = stride;
      anchors[3 * n + i] = stride;
    }
  }
  // Class logits from a cell's mean (r, g, b) in [0, 1].
  const k = 20;
  const classW = new Float32Array([k / 3, k / 3, k / 3, k, -k / 2, -k / 2]);
  const classB = new Float32Array([-0.6 * k, -0.5 * k]);

  const g = new ProtoWriter();
  const nodes = [
    node(
      'AveragePool',
      ['images'],
      ['pooled'],
      [
        { name: 'kernel_shape', ints: [stride, stride] },
        { name: 'strides', ints: [stride, stride] },
      ],
    ),
    node('Conv', ['pooled', 'class_w', 'class_b'], ['logits']),
    node('Sigmoid', ['logits'], ['scores']),
    node('Reshape', ['scores', 'scores_shape'], ['scores_flat']),
    node('Conv', ['pooled', 'zero_w'], ['zeros']),
    node('Reshape', ['zeros', 'box_shape'], ['zeros_flat']),
    node('Add', ['zeros_flat', 'anchors'], ['boxes']),
  ];
  const outDims: (number | string)[] = [batch, 4 + c, n];
  if (opts.layout === 'channels-first') {
    nodes.push(node('Concat', ['boxes', 'scores_flat'], ['output0'], [{ name: 'axis', int: 1 }]));
  } else {
    nodes.push(node('Concat', ['boxes', 'scores_flat'], ['joined'], [{ name: 'axis', int: 1 }]));
    if (opts.layout === 'transposed') {
      nodes.push(node('Transpose', ['joined'], ['output0'], [{ name: 'perm', ints: [0, 2, 1] }]));
      outDims.splice(1, 2, n, 4 + c);
    } else {
      nodes.push(node('Reshape', ['joined', 'flat_shape'], ['output0']));
      outDims.splice(1, 2, (4 + c) * n);
    }
  }
  for (const nd of nodes) g.message(1, nd);
  g.string(2, 'argus_fixture');
  g.message(5, floatTensor('class_w', [c, 3, 1, 1], classW));
  g.message(5, floatTensor('class_b', [c], classB));
  g.message(5, floatTensor('zero_w', [4, 3, 1, 1], new Float32Array(12)));
  g.message(5, floatTensor('anchors', [1, 4, n], anchors));
  g.message(5, int64Tensor('scores_shape', [0, c, -1]));
  g.message(5, int64Tensor('box_shape', [0, 4, -1]));
  if (opts.layout === 'flat') g.message(5, int64Tensor('flat_shape', [0, -1]));
  g.message(11, valueInfo('images', [batch, 3, size, size]));
  g.message(12, valueInfo('output0', outDims));

  const m = new ProtoWriter()
    .varint(1, 8)
    .string(2, 'argus')
    .string(3, '1')
    .message(7, g)
    .message(8, new ProtoWriter().string(1, '').varint(2, 13));
  const meta: [string, string][] = [
    ['description', 'Argus test fixture: bright and red cells of a grid, YOLOv8 output format'],
    ['stride', String(stride)],
    ['task', 'detect'],
    ['imgsz', `[${size}, ${size}]`],
  ];
  if (opts.names) meta.push(['names', `{${FIXTURE_LABELS.map((l, i) => `${i}: '${l}'`).join(', ')}}`]);
  for (const [key, value] of meta) m.message(14, new ProtoWriter().string(1, key).string(2, value));
  return m.finish();
}
