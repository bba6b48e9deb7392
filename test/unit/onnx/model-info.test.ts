import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildFixtureModel } from '../../../src/onnx/fixture.js';
import { checkEditable, floatTensor, newModel, newNode, type NewModel } from '../../../src/onnx/build.js';
import { AttrType, DataType, decodeModel, encodeModel, type Model } from '../../../src/onnx/graph.js';
import { ProtoWriter, readFields } from '../../../src/onnx/proto.js';
import {
  ModelFormatError,
  parseModelInfo,
  parseUltralyticsImgsz,
  parseUltralyticsNames,
  quantizationOf,
} from '../../../src/onnx/model-info.js';

const model = (over: Partial<NewModel['graph']> = {}): NewModel => ({
  irVersion: 9,
  producer: 'pytorch',
  opsets: [{ domain: '', version: 17 }],
  graph: {
    name: 'main',
    nodes: [newNode('Conv', ['images', 'w'], ['output0'])],
    initializers: [floatTensor('w', [1, 3, 1, 1], new Float32Array(3))],
    inputs: [{ name: 'images', elemType: DataType.FLOAT, shape: [1, 3, 'h', 'w'] }],
    outputs: [{ name: 'output0', elemType: DataType.FLOAT, shape: [1, 1, 'h', 'w'] }],
    ...over,
  },
});
const infoOf = (m: NewModel) => parseModelInfo(encodeModel(newModel(m)));

describe('ONNX model info', () => {
  it('reads the fixture model signature and metadata', () => {
    const info = parseModelInfo(buildFixtureModel());
    assert.equal(info.irVersion, 8);
    assert.deepEqual(info.opsets, [{ domain: '', version: 13 }]);
    assert.deepEqual(info.inputs, [{ name: 'images', elemType: 1, shape: ['batch', 3, 320, 320] }]);
    assert.deepEqual(info.outputs, [{ name: 'output0', elemType: 1, shape: ['batch', 6, 100] }]);
    assert.deepEqual(parseUltralyticsNames(info.metadata.names), ['bright', 'red']);
    assert.deepEqual(parseUltralyticsImgsz(info.metadata.imgsz), [320, 320]);
    assert.equal(info.opCounts.Conv, 2);
    assert.equal(quantizationOf(info), 'none');
  });

  it('rejects files that are not ONNX models', () => {
    assert.throws(() => parseModelInfo(new TextEncoder().encode('{"name": "argus"}')), ModelFormatError);
    assert.throws(() => parseModelInfo(new Uint8Array([0x08, 0x01])), /no graph/);
    assert.throws(() => parseModelInfo(new Uint8Array(0)), ModelFormatError);
  });

  it('names what is wrong with a file that is not a usable model', () => {
    const notValid = (message: RegExp) => (err: unknown) =>
      err instanceof ModelFormatError && message.test(err.message);
    assert.throws(
      () => parseModelInfo(new TextEncoder().encode('{"name": "argus"}')),
      notValid(/^not a valid ONNX model \(unsupported wire type \d\)$/),
    );
    assert.throws(
      () => parseModelInfo(buildFixtureModel().subarray(0, 100)),
      notValid(/^not a valid ONNX model \(.*runs past the end\)$/),
    );
    assert.throws(
      () => infoOf(model({ outputs: [] })),
      notValid(/^not a valid ONNX model \(no graph with inputs and outputs\)$/),
    );
    assert.throws(
      () => infoOf({ ...model(), irVersion: 0 }),
      notValid(/no graph with inputs and outputs/),
      'no IR version',
    );
  });

  it('reads header, op counts and shapes from the decoded graph', () => {
    const i = infoOf(model());
    assert.deepEqual([i.irVersion, i.producer, i.opsets], [9, 'pytorch', [{ domain: '', version: 17 }]]);
    assert.deepEqual(i.opCounts, { Conv: 1 });
    assert.deepEqual(i.inputs, [{ name: 'images', elemType: DataType.FLOAT, shape: [1, 3, 'h', 'w'] }]);
    assert.deepEqual(i.metadata, {});
  });

  it('leaves out inputs that are initializers, as older exporters list them', () => {
    const i = infoOf(
      model({
        inputs: [
          { name: 'images', elemType: DataType.FLOAT, shape: [1, 3, 8, 8] },
          { name: 'w', elemType: DataType.FLOAT, shape: [1, 3, 1, 1] },
        ],
      }),
    );
    assert.deepEqual(
      i.inputs.map((v) => v.name),
      ['images'],
    );
  });

  it('gives a value of unknown rank the shape []', () => {
    const i = infoOf(model({ outputs: [{ name: 'output0', elemType: DataType.FLOAT, shape: undefined }] }));
    assert.deepEqual(i.outputs, [{ name: 'output0', elemType: DataType.FLOAT, shape: [] }]);
  });

  it('reads models that graph edits refuse: external data, a subgraph, a sparse initializer', () => {
    // Written in as they are: the bytes another tool would have written.
    const external = new ProtoWriter()
      .packedInt64(1, [1, 3, 1, 1])
      .varint(2, DataType.FLOAT)
      .string(8, 'w')
      .message(13, new ProtoWriter().string(1, 'location').string(2, 'w.bin'))
      .varint(14, 1)
      .finish();
    const branch = new ProtoWriter()
      .string(1, 'then_branch')
      .message(6, new ProtoWriter())
      .varint(20, AttrType.GRAPH)
      .finish();
    const sparse = new ProtoWriter().bytes(15, Uint8Array.of(1)).finish();
    const cases: [RegExp, (m: Model) => void][] = [
      [
        /external file/,
        (m) => {
          m.graph.initializers[0] = { ...m.graph.initializers[0]!, opaque: { reason: '', raw: external } };
        },
      ],
      [
        /subgraph/,
        (m) =>
          m.graph.nodes.push(newNode('If', ['c'], ['d'], [{ name: 'b', type: AttrType.GRAPH, raw: branch }])),
      ],
      [/sparse/, (m) => m.graph.other.push(...readFields(sparse))],
    ];
    for (const [refusal, add] of cases) {
      const m = newModel(model());
      add(m);
      const bytes = encodeModel(m);
      assert.throws(() => checkEditable(decodeModel(bytes).graph), refusal);
      const i = parseModelInfo(bytes);
      assert.deepEqual(
        i.inputs.map((v) => v.name),
        ['images'],
        `${refusal}`,
      );
      assert.equal(i.opCounts.Conv, 1);
    }
  });

  it('judges quantization by op types', () => {
    const withOps = (...ops: string[]) =>
      infoOf(model({ nodes: ops.map((op, k) => newNode(op, ['images'], [k ? `t${k}` : 'output0'])) }));
    assert.equal(quantizationOf(withOps('DynamicQuantizeLinear', 'ConvInteger')), 'dynamic-int8');
    assert.equal(quantizationOf(withOps('MatMulInteger')), 'dynamic-int8');
    assert.equal(quantizationOf(withOps('QuantizeLinear', 'QLinearConv')), 'static-int8');
    assert.equal(quantizationOf(withOps('Conv')), 'none');
  });

  it('parses Ultralytics names and imgsz metadata', () => {
    assert.deepEqual(parseUltralyticsNames("{0: 'person', 1: \"traffic light\", 2: 'o\\'clock'}"), [
      'person',
      'traffic light',
      "o'clock",
    ]);
    assert.equal(parseUltralyticsNames('{0: "a", 2: "c"}'), undefined, 'a gap in class ids');
    assert.equal(parseUltralyticsNames('nonsense'), undefined);
    assert.deepEqual(parseUltralyticsImgsz('[480, 640]'), [480, 640]);
    assert.deepEqual(parseUltralyticsImgsz('640'), [640, 640]);
    assert.equal(parseUltralyticsImgsz(undefined), undefined);
  });
});
