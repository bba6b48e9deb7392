import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildFixtureModel, DEFAULT_FIXTURE } from '../../../src/onnx/fixture.js';
import {
  ModelFormatError,
  parseModelInfo,
  parseUltralyticsImgsz,
  parseUltralyticsNames,
  quantizationOf,
} from '../../../src/onnx/model-info.js';
import { ProtoWriter, readFields } from '../../../src/onnx/proto.js';
import { fromFloat16Bits, toFloat16Bits } from '../../../src/onnx/graph.js';

describe('protobuf wire codec', () => {
  it('round-trips varints (including negative int64), strings, floats and nested messages', () => {
    const inner = new ProtoWriter().string(1, 'héllo').float(2, 1.5);
    const buf = new ProtoWriter()
      .varint(1, 300)
      .varint(2, -1)
      .message(3, inner)
      .packedInt64(4, [1, 2, 300])
      .finish();
    const fields = [...readFields(buf)];
    assert.equal(fields[0]!.varint, 300n);
    assert.equal(BigInt.asIntN(64, fields[1]!.varint!), -1n);
    const nested = [...readFields(fields[2]!.bytes!)];
    assert.equal(new TextDecoder().decode(nested[0]!.bytes), 'héllo');
    assert.equal(nested[1]!.fixed32, 1.5);
    assert.deepEqual([...fields[3]!.bytes!], [1, 2, 0xac, 0x02], 'packed varints');
  });

  it('rejects truncated input', () => {
    const buf = new ProtoWriter().string(1, 'abcdef').finish();
    assert.throws(() => [...readFields(buf.subarray(0, 4))], /runs past the end/);
  });
});

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

  it('is deterministic: the same options give the same bytes', () => {
    assert.deepEqual(buildFixtureModel(), buildFixtureModel({ ...DEFAULT_FIXTURE }));
    assert.notDeepEqual(buildFixtureModel(), buildFixtureModel({ ...DEFAULT_FIXTURE, layout: 'transposed' }));
  });

  it('reflects the options: static batch, transposed layout, no names', () => {
    const info = parseModelInfo(
      buildFixtureModel({ size: 64, stride: 16, layout: 'transposed', batch: 1, names: false }),
    );
    assert.deepEqual(info.inputs[0]!.shape, [1, 3, 64, 64]);
    assert.deepEqual(info.outputs[0]!.shape, [1, 16, 6]);
    assert.equal(info.metadata.names, undefined);
  });

  it('rejects files that are not ONNX models', () => {
    assert.throws(() => parseModelInfo(new TextEncoder().encode('{"name": "argus"}')), ModelFormatError);
    assert.throws(() => parseModelInfo(new Uint8Array([0x08, 0x01])), /no graph/);
    assert.throws(() => parseModelInfo(new Uint8Array(0)), ModelFormatError);
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

describe('float16 rounding', () => {
  it('rounds to nearest even and handles the edges', () => {
    const cases: [number, number][] = [
      [1, 0x3c00],
      [-2, 0xc000],
      [65504, 0x7bff],
      [65520, 0x7c00], // rounds up past the largest half: infinity
      [2 ** -24, 0x0001], // smallest subnormal
      [2 ** -26, 0x0000], // below half of it: zero
      [1 + 2 ** -11, 0x3c00], // a tie rounds to even
      [1 + 3 * 2 ** -11, 0x3c02],
      [-0, 0x8000],
      [Infinity, 0x7c00],
      [0.1, 0x2e66],
    ];
    const bits = toFloat16Bits(Float32Array.from(cases.map(([v]) => v)));
    cases.forEach(([v, want], i) => assert.equal(bits[i], want, `${v}`));
    assert.ok((toFloat16Bits(Float32Array.of(NaN))[0]! & 0x7fff) > 0x7c00, 'NaN stays NaN');
  });

  it('every half value survives half → float → half', () => {
    const all = Uint16Array.from({ length: 65536 }, (_, i) => i).filter(
      (h) => (h & 0x7c00) !== 0x7c00 || (h & 0x3ff) === 0,
    );
    const back = toFloat16Bits(fromFloat16Bits(all));
    for (let i = 0; i < all.length; i++)
      if (back[i] !== all[i]) assert.fail(`0x${all[i]!.toString(16)} became 0x${back[i]!.toString(16)}`);
  });
});
