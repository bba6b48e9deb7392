import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newNode } from '../../../src/onnx/build.js';
import { GraphEditError, type Graph } from '../../../src/onnx/graph.js';
import { convertToFloat16 } from '../../../src/onnx/prepare.js';
import { SPECIAL_NAMES } from '../../helpers/names.js';

const graph = (op: string): Graph => ({
  name: 'g',
  nodes: [newNode(op, ['x'], ['y'])],
  initializers: [],
  inputs: [],
  outputs: [],
  valueInfo: [],
  other: [],
});

describe('model prepare: half precision', () => {
  it('has no rule for an op named __proto__, constructor, toString, hasOwnProperty or valueOf', () => {
    for (const op of SPECIAL_NAMES)
      assert.throws(
        () => convertToFloat16(graph(op)),
        (err: unknown) =>
          err instanceof GraphEditError && err.message === `fp16: no half-precision rule for op(s) ${op}`,
        op,
      );
    assert.deepEqual(convertToFloat16(graph('Relu')), [
      '0 float tensors → fp16 (float32 input and output kept)',
    ]);
  });
});
