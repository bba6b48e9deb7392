import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  checkEditable,
  floatsOf,
  intAttr,
  intsAttr,
  intsOf,
  newModel,
  newNode,
} from '../../../src/onnx/build.js';
import { AttrType, DataType, decodeModel, encodeModel, type Tensor } from '../../../src/onnx/graph.js';
import { tiny } from '../../helpers/tiny-model.js';
import { ProtoWriter, readFields } from '../../../src/onnx/proto.js';

describe('what passes cannot edit', () => {
  const tensor = (name: string, dataType: number, dims: number[], more: (w: ProtoWriter) => ProtoWriter) =>
    more(new ProtoWriter().packedInt64(1, dims).varint(2, dataType).string(8, name)).finish();
  // Tensor protos as other tools write them, put into a model as they are.
  const cases: [Uint8Array, RegExp][] = [
    [
      tensor('ext', DataType.FLOAT, [2], (w) =>
        w.message(13, new ProtoWriter().string(1, 'location').string(2, 'w.bin')).varint(14, 1),
      ),
      /tensor 'ext' keeps its data in an external file/,
    ],
    [tensor('s', DataType.STRING, [1], (w) => w.string(6, 'a')), /tensor 's' holds strings/],
    [
      tensor('i4', 22, [2], (w) => w.bytes(9, Uint8Array.of(0x21))),
      /tensor 'i4' has unsupported data type 22/,
    ],
    [
      tensor('short', DataType.FLOAT, [3], (w) => w.bytes(9, new Uint8Array(8))),
      /tensor 'short' has 8 bytes of data for shape \[3\]/,
    ],
  ];
  const asRead = (raw: Uint8Array): Tensor => ({
    name: '',
    dims: [],
    dataType: 0,
    data: new Uint8Array(0),
    opaque: { reason: '', raw },
  });

  it('a tensor it cannot read is decoded, written back as read, and named when a pass needs it', () => {
    for (const [raw, reason] of cases) {
      const model = newModel(tiny());
      model.graph.initializers.push(asRead(raw));
      const g = decodeModel(encodeModel(model)).graph;
      const t = g.initializers[2]!;
      assert.match(t.opaque!.reason, reason);
      assert.deepEqual(t.opaque!.raw, raw, 'written back unchanged');
      assert.equal(t.data.length, 0);
      assert.throws(() => floatsOf(t), reason);
      assert.throws(() => intsOf(t), reason);
      assert.throws(() => checkEditable(g), reason);
    }
  });

  it('a Constant holding such a tensor is refused too', () => {
    const model = newModel(tiny());
    const [raw, reason] = cases[0]!;
    model.graph.nodes.push(
      newNode('Constant', [], ['c'], [{ name: 'value', type: AttrType.TENSOR, tensor: asRead(raw) }]),
    );
    assert.throws(() => checkEditable(decodeModel(encodeModel(model)).graph), reason);
  });

  it('a subgraph or a sparse initializer is decoded and carried, and refused for editing', () => {
    const branch = new ProtoWriter()
      .string(1, 'then_branch')
      .message(6, new ProtoWriter().string(2, 'g'))
      .varint(20, AttrType.GRAPH)
      .finish();
    const withIf = newModel(tiny());
    withIf.graph.nodes.push(
      newNode('If', ['cond'], ['z'], [{ name: 'then_branch', type: AttrType.GRAPH, raw: branch }]),
    );
    const decoded = decodeModel(encodeModel(withIf));
    assert.deepEqual(decoded.graph.nodes[3]!.attributes[0]!.raw, branch);
    assert.throws(() => checkEditable(decoded.graph), /node 'If_z' \(If\) has a subgraph/);

    const sparse = newModel(tiny());
    sparse.graph.other.push(...readFields(new ProtoWriter().bytes(15, Uint8Array.of(1, 2)).finish()));
    const g = decodeModel(encodeModel(sparse)).graph;
    assert.deepEqual(
      g.other.map((f) => [f.no, [...f.bytes!]]),
      [[15, [1, 2]]],
    );
    assert.throws(() => checkEditable(g), /sparse initializers are not supported/);
  });

  it('a plain graph is editable', () => {
    assert.doesNotThrow(() => checkEditable(decodeModel(encodeModel(newModel(tiny()))).graph));
  });
});

describe('models built from scratch', () => {
  it('start with empty value infos and carried fields, and name nodes after op and output', () => {
    const m = newModel(tiny({ producerVersion: undefined }));
    assert.equal(m.producerVersion, '');
    assert.deepEqual(m.graph.valueInfo, []);
    assert.deepEqual(m.graph.other, []);
    assert.deepEqual(m.other, []);
    assert.deepEqual([...m.metadata.keys()], ['b', 'a'], 'metadata in the order given');
    assert.deepEqual(newNode('Sigmoid', ['a'], ['b']), {
      name: 'Sigmoid_b',
      op: 'Sigmoid',
      domain: '',
      inputs: ['a'],
      outputs: ['b'],
      attributes: [],
    });
  });

  it('builds int and ints attributes', () => {
    assert.deepEqual(intAttr('axis', -1), { name: 'axis', type: AttrType.INT, int: -1n });
    assert.deepEqual(intAttr('to', 10n), { name: 'to', type: AttrType.INT, int: 10n });
    assert.deepEqual(intsAttr('perm', [0, 2, 1]), { name: 'perm', type: AttrType.INTS, ints: [0n, 2n, 1n] });
  });

  it('encode and decode back to the same header, graph and metadata', () => {
    const m = decodeModel(encodeModel(newModel(tiny())));
    assert.equal(m.irVersion, 8);
    assert.equal(m.producer, 'test');
    assert.equal(m.producerVersion, '2');
    assert.deepEqual(m.opsets, tiny().opsets);
    assert.deepEqual(m.other, [], 'nothing left undecoded');
    assert.equal(m.graph.name, 'tiny');
    assert.deepEqual(m.graph.other, []);
    assert.deepEqual(
      m.graph.nodes.map((n) => [n.name, n.op, n.inputs, n.outputs]),
      [
        ['Reshape_flat', 'Reshape', ['x', 'shape'], ['flat']],
        ['Transpose_t', 'Transpose', ['flat'], ['t']],
        ['Concat_y', 'Concat', ['t', 'w'], ['y']],
      ],
    );
    const [perm, axis] = [m.graph.nodes[1]!.attributes[0]!, m.graph.nodes[2]!.attributes[0]!];
    assert.deepEqual([perm.name, perm.type, perm.ints], ['perm', AttrType.INTS, [1n, 0n]]);
    assert.deepEqual([axis.name, axis.type, axis.int], ['axis', AttrType.INT, -1n]);
    const fieldOrder = (raw: Uint8Array | undefined): number[] => [...readFields(raw!)].map((f) => f.no);
    assert.deepEqual(fieldOrder(axis.raw), [1, 3, 20], 'written in field-number order');
    assert.deepEqual(fieldOrder(perm.raw), [1, 8, 20]);
    const [shape, w] = m.graph.initializers;
    assert.deepEqual([shape!.name, shape!.dims, intsOf(shape!)], ['shape', [2], [2, -1]]);
    assert.deepEqual([w!.name, w!.dims, [...floatsOf(w!)]], ['w', [2, 1], [0.5, -2]]);
    assert.deepEqual(
      m.graph.inputs.map((v) => [v.name, v.elemType, v.shape]),
      [['x', DataType.FLOAT, ['batch', 2, null]]],
    );
    assert.deepEqual(
      m.graph.outputs.map((v) => [v.name, v.elemType, v.shape]),
      [['y', DataType.FLOAT, [2, 'n']]],
    );
    assert.deepEqual(
      [...m.metadata],
      [
        ['b', '2'],
        ['a', '1'],
      ],
    );
  });

  it('leave out an unset header rather than write defaults', () => {
    const m = decodeModel(encodeModel(newModel(tiny({ irVersion: 0, producer: '', producerVersion: '' }))));
    assert.deepEqual([m.irVersion, m.producer, m.producerVersion, m.other], [0, '', '', []]);
  });
});
