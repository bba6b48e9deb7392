import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildFixtureModel } from '../../../src/onnx/fixture.js';
import {
  ModelFormatError,
  parseModelInfo,
  parseUltralyticsImgsz,
  parseUltralyticsNames,
  quantizationOf,
} from '../../../src/onnx/model-info.js';

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
