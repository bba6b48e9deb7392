import { floatTensor, int64Tensor, intAttr, intsAttr, newModel, newNode as node } from './build.js';
import { DataType, encodeModel, type Dim, type Node, type Tensor } from './graph.js';

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
  /**
   * A slow fixture, for tests of overload: this many 3×3 convolutions (16 channels, at the full
   * input size) on the image, whose result is multiplied by zero before it joins the class
   * logits, so the output is the plain fixture's, bit for bit. 0 (or absent): none.
   */
  work?: number;
}

export const FIXTURE_LABELS = ['bright', 'red'] as const;
export const DEFAULT_FIXTURE: FixtureOptions = {
  size: 320,
  stride: 32,
  layout: 'channels-first',
  batch: 'dynamic',
  names: true,
};

/** Channels of the slow fixture's convolutions. */
const WORK_CHANNELS = 16;

/**
 * The slow fixture's extra work (`FixtureOptions.work`): `layers` convolutions of the image,
 * each followed by a sigmoid (their values stay in (0, 1): finite, so that times zero is zero),
 * their mean times zero added to the class logits. The weights are fixed values, none zero, and
 * the branch depends on the input: ONNX Runtime cannot fold it away.
 */
function addWork(nodes: Node[], initializers: Tensor[], layers: number): void {
  if (!Number.isInteger(layers) || layers < 0)
    throw new Error(`fixture work must be a whole number, got ${layers}`);
  const k = WORK_CHANNELS;
  const at = nodes.findIndex((n) => n.outputs[0] === 'logits');
  nodes[at]!.outputs = ['plain_logits'];
  const added: Node[] = [];
  let from = 'images';
  for (let i = 0; i < layers; i++) {
    const inC = i === 0 ? 3 : k;
    const w = new Float32Array(k * inC * 9);
    for (let j = 0; j < w.length; j++) w[j] = (((j * 7919 + i * 104729) % 17) - 8.5) / (9 * inC);
    initializers.push(floatTensor(`work_w${i}`, [k, inC, 3, 3], w));
    added.push(
      node('Conv', [from, `work_w${i}`], [`work_conv${i}`], [intsAttr('pads', [1, 1, 1, 1])]),
      node('Sigmoid', [`work_conv${i}`], [`work${i}`]),
    );
    from = `work${i}`;
  }
  initializers.push(floatTensor('work_zero', [1], new Float32Array(1)));
  added.push(
    node('ReduceMean', [from], ['work_mean'], [intsAttr('axes', [1, 2, 3])]),
    node('Mul', ['work_mean', 'work_zero'], ['work_nothing']),
    node('Add', ['plain_logits', 'work_nothing'], ['logits']),
  );
  // In topological order: before the sigmoid that reads the logits.
  nodes.splice(at + 1, 0, ...added);
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

  const nodes: Node[] = [
    node(
      'AveragePool',
      ['images'],
      ['pooled'],
      [intsAttr('kernel_shape', [stride, stride]), intsAttr('strides', [stride, stride])],
    ),
    node('Conv', ['pooled', 'class_w', 'class_b'], ['logits']),
    node('Sigmoid', ['logits'], ['scores']),
    node('Reshape', ['scores', 'scores_shape'], ['scores_flat']),
    node('Conv', ['pooled', 'zero_w'], ['zeros']),
    node('Reshape', ['zeros', 'box_shape'], ['zeros_flat']),
    node('Add', ['zeros_flat', 'anchors'], ['boxes']),
  ];
  const initializers = [
    floatTensor('class_w', [c, 3, 1, 1], classW),
    floatTensor('class_b', [c], classB),
    floatTensor('zero_w', [4, 3, 1, 1], new Float32Array(12)),
    floatTensor('anchors', [1, 4, n], anchors),
    int64Tensor('scores_shape', [0, c, -1]),
    int64Tensor('box_shape', [0, 4, -1]),
  ];
  if (opts.work) addWork(nodes, initializers, opts.work);
  const outDims: Dim[] = [batch, 4 + c, n];
  if (opts.layout === 'channels-first') {
    nodes.push(node('Concat', ['boxes', 'scores_flat'], ['output0'], [intAttr('axis', 1)]));
  } else {
    nodes.push(node('Concat', ['boxes', 'scores_flat'], ['joined'], [intAttr('axis', 1)]));
    if (opts.layout === 'transposed') {
      nodes.push(node('Transpose', ['joined'], ['output0'], [intsAttr('perm', [0, 2, 1])]));
      outDims.splice(1, 2, n, 4 + c);
    } else {
      nodes.push(node('Reshape', ['joined', 'flat_shape'], ['output0']));
      initializers.push(int64Tensor('flat_shape', [0, -1]));
      outDims.splice(1, 2, (4 + c) * n);
    }
  }
  const metadata: [string, string][] = [
    ['description', 'Argus test fixture: bright and red cells of a grid, YOLOv8 output format'],
    ['stride', String(stride)],
    ['task', 'detect'],
    ['imgsz', `[${size}, ${size}]`],
  ];
  if (opts.names) metadata.push(['names', `{${FIXTURE_LABELS.map((l, i) => `${i}: '${l}'`).join(', ')}}`]);
  const model = newModel({
    irVersion: 8,
    producer: 'argus',
    producerVersion: '1',
    opsets: [{ domain: '', version: 13 }],
    graph: {
      name: 'argus_fixture',
      nodes,
      initializers,
      inputs: [{ name: 'images', elemType: DataType.FLOAT, shape: [batch, 3, size, size] }],
      outputs: [{ name: 'output0', elemType: DataType.FLOAT, shape: outDims }],
    },
    metadata,
  });
  return encodeModel(model);
}
