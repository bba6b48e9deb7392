import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { floatsOf, newModel } from '../../../src/onnx/build.js';
import { AttrType, DataType, decodeModel, encodeModel } from '../../../src/onnx/graph.js';
import { tiny } from '../../helpers/tiny-model.js';
import { ProtoWriter } from '../../../src/onnx/proto.js';

describe('decoding', () => {
  it('reads int and ints attributes as signed int64', () => {
    const node = new ProtoWriter()
      .string(1, 'x')
      .string(2, 'y')
      .string(4, 'Transpose')
      .message(5, new ProtoWriter().string(1, 'axis').varint(3, -1).varint(20, AttrType.INT))
      .message(5, new ProtoWriter().string(1, 'perm').packedInt64(8, [-1, 0, 2]).varint(20, AttrType.INTS));
    const bytes = new ProtoWriter().message(7, new ProtoWriter().message(1, node)).finish();
    const [axis, perm] = decodeModel(bytes).graph.nodes[0]!.attributes;
    assert.equal(axis!.int, -1n);
    assert.deepEqual(perm!.ints, [-1n, 0n, 2n]);
  });

  it('skips value info fields of the wrong wire type, as protobuf parsers do', () => {
    const shape = new ProtoWriter()
      .message(1, new ProtoWriter().varint(1, 3))
      .message(1, new ProtoWriter().string(1, '3'))
      .message(1, new ProtoWriter().varint(2, 7));
    const tensorType = new ProtoWriter().varint(1, DataType.FLOAT).string(1, 'x').message(2, shape);
    const input = new ProtoWriter().string(1, 'in').message(2, new ProtoWriter().message(1, tensorType));
    const bytes = new ProtoWriter().message(7, new ProtoWriter().message(11, input)).finish();
    const [v] = decodeModel(bytes).graph.inputs;
    assert.equal(v!.elemType, DataType.FLOAT);
    assert.deepEqual(v!.shape, [3, null, null]);
  });
});

describe('initializer data', () => {
  const bytes = encodeModel(newModel(tiny()));
  const weights = (buf: Uint8Array) => decodeModel(buf).graph.initializers.find((t) => t.name === 'w')!;

  it('is a view into the decoded bytes, not a copy, and a plain Uint8Array over a Buffer', () => {
    assert.equal(weights(bytes).data.buffer, bytes.buffer);
    const data = weights(Buffer.from(bytes)).data;
    assert.equal(Object.getPrototypeOf(data), Uint8Array.prototype);
  });

  it('reads as floats wherever in the buffer it starts', () => {
    for (let offset = 0; offset < 4; offset++) {
      const shifted = new Uint8Array(bytes.length + offset);
      shifted.set(bytes, offset);
      assert.deepEqual([...floatsOf(weights(shifted.subarray(offset)))], [0.5, -2], `offset ${offset}`);
    }
  });

  it('is a view too when written as packed float_data rather than raw_data', () => {
    const values = Float32Array.of(1.5, -3);
    const tensor = new ProtoWriter()
      .packedInt64(1, [2])
      .varint(2, DataType.FLOAT)
      .bytes(4, new Uint8Array(values.buffer))
      .string(8, 'f');
    const graph = new ProtoWriter().message(5, tensor);
    const buf = new ProtoWriter().message(7, graph).finish();
    const t = decodeModel(buf).graph.initializers[0]!;
    assert.equal(t.data.buffer, buf.buffer);
    assert.deepEqual([...floatsOf(t)], [1.5, -3]);
  });
});
