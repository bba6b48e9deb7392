import { floatTensor, int64Tensor, intAttr, intsAttr, newNode, type NewModel } from '../../src/onnx/build.js';
import { DataType } from '../../src/onnx/graph.js';

/** A small model built from scratch: a Reshape, a Transpose and a Concat, with metadata. */
export const tiny = (over: Partial<NewModel> = {}): NewModel => ({
  irVersion: 8,
  producer: 'test',
  producerVersion: '2',
  opsets: [
    { domain: '', version: 13 },
    { domain: 'com.microsoft', version: 1 },
  ],
  graph: {
    name: 'tiny',
    nodes: [
      newNode('Reshape', ['x', 'shape'], ['flat']),
      newNode('Transpose', ['flat'], ['t'], [intsAttr('perm', [1, 0])]),
      newNode('Concat', ['t', 'w'], ['y'], [intAttr('axis', -1)]),
    ],
    initializers: [int64Tensor('shape', [2, -1]), floatTensor('w', [2, 1], Float32Array.of(0.5, -2))],
    inputs: [{ name: 'x', elemType: DataType.FLOAT, shape: ['batch', 2, null] }],
    outputs: [{ name: 'y', elemType: DataType.FLOAT, shape: [2, 'n'] }],
  },
  metadata: [
    ['b', '2'],
    ['a', '1'],
  ],
  ...over,
});
