import {
  floatTensor,
  int64Tensor,
  intAttr,
  intsAttr,
  newModel,
  newNode as node,
} from '../../src/onnx/build.js';
import { DataType, encodeModel, type Node } from '../../src/onnx/graph.js';

/**
 * A small model in the shape onnxruntime's dynamic int8 quantizer writes: a 3×3 convolution as
 * DynamicQuantizeLinear → ConvInteger → Cast → Mul (→ Add of a reshaped bias), then a sigmoid
 * and two Reshapes that spell out a static batch of 1. Its float twin is known exactly, so a
 * test can tell whether `model prepare` computes (w − zero point) × scale + bias.
 */
export const Q = { size: 8, inC: 3, outC: 4, zeroPoint: 131, scale: 0.013 } as const;

export interface QuantizedModel {
  bytes: Uint8Array;
  /** uint8 weights [outC, inC, 3, 3]. */
  weights: Uint8Array;
  bias: Float32Array;
}

export function buildQuantizedModel(opts: { biasAdd?: boolean; castTo?: number } = {}): QuantizedModel {
  const { size, inC, outC } = Q;
  const weights = new Uint8Array(outC * inC * 9).map((_, i) => (i * 37 + 11) % 256);
  const bias = Float32Array.from({ length: outC }, (_, i) => (i - 1.5) * 0.25);
  const biasAdd = opts.biasAdd ?? true;
  const nodes: Node[] = [
    node('DynamicQuantizeLinear', ['images'], ['xq', 'xs', 'xzp']),
    node('Mul', ['xs', 'w_scale'], ['scales']),
    node(
      'ConvInteger',
      ['xq', 'w_q', 'xzp', 'w_zp'],
      ['ci'],
      [intsAttr('kernel_shape', [3, 3]), intsAttr('pads', [1, 1, 1, 1])],
    ),
    node('Cast', ['ci'], ['cf'], [intAttr('to', opts.castTo ?? DataType.FLOAT)]),
    node('Mul', ['cf', 'scales'], [biasAdd ? 'scaled' : 'conv']),
  ];
  if (biasAdd) {
    nodes.push(
      node('Reshape', ['bias', 'bias_shape'], ['bias4']),
      node('Add', ['scaled', 'bias4'], ['conv']),
    );
  }
  nodes.push(
    node('Sigmoid', ['conv'], ['act']),
    node('Reshape', ['act', 'shape_a'], ['flat3']),
    node('Reshape', ['flat3', 'shape_b'], ['output0']),
  );
  const model = newModel({
    irVersion: 8,
    producer: 'argus-test',
    opsets: [{ domain: '', version: 13 }],
    graph: {
      name: 'quantized_conv',
      nodes,
      initializers: [
        { name: 'w_q', dims: [outC, inC, 3, 3], dataType: DataType.UINT8, data: weights },
        { name: 'w_zp', dims: [], dataType: DataType.UINT8, data: Uint8Array.of(Q.zeroPoint) },
        floatTensor('w_scale', [], Float32Array.of(Q.scale)),
        floatTensor('bias', [outC], bias),
        int64Tensor('bias_shape', [1, outC, 1, 1]),
        int64Tensor('shape_a', [1, outC, -1]),
        int64Tensor('shape_b', [1, outC * size * size]),
      ],
      inputs: [{ name: 'images', elemType: DataType.FLOAT, shape: [1, inC, size, size] }],
      outputs: [{ name: 'output0', elemType: DataType.FLOAT, shape: [1, outC * size * size] }],
    },
    metadata: [['names', "{0: 'a', 1: 'b'}"]],
  });
  return { bytes: encodeModel(model), weights, bias };
}

/** The float computation the quantized model approximates, for one [inC, size, size] frame. */
export function floatReference(m: QuantizedModel, x: Float32Array): Float32Array {
  const { size, inC, outC, zeroPoint, scale } = Q;
  const out = new Float32Array(outC * size * size);
  for (let o = 0; o < outC; o++)
    for (let y = 0; y < size; y++)
      for (let xx = 0; xx < size; xx++) {
        let acc = m.bias[o]!;
        for (let c = 0; c < inC; c++)
          for (let ky = 0; ky < 3; ky++)
            for (let kx = 0; kx < 3; kx++) {
              const sy = y + ky - 1;
              const sx = xx + kx - 1;
              if (sy < 0 || sx < 0 || sy >= size || sx >= size) continue;
              const w = (m.weights[((o * inC + c) * 3 + ky) * 3 + kx]! - zeroPoint) * scale;
              acc += w * x[(c * size + sy) * size + sx]!;
            }
        out[(o * size + y) * size + xx] = 1 / (1 + Math.exp(-acc));
      }
  return out;
}
