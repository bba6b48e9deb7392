import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildFixtureModel, DEFAULT_FIXTURE } from '../../src/onnx/fixture.js';
import {
  ModelFormatError,
  parseModelInfo,
  parseUltralyticsImgsz,
  parseUltralyticsNames,
  quantizationOf,
} from '../../src/onnx/model-info.js';
import { ProtoWriter, readFields } from '../../src/onnx/proto.js';

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
