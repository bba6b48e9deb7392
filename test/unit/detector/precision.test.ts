import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildFixtureModel, decodeModel } from '../../../src/onnx/index.js';
import { gpuModel } from '../../../src/detector/precision.js';
import { modelHash } from '../../../src/detector/tensorrt.js';

describe('the model GPU providers run', () => {
  const file = buildFixtureModel();

  it('is the file itself with fp32', () => {
    assert.equal(gpuModel(file, 'fp32'), file);
  });

  it('is the fp16 conversion with fp16: half-precision weights, float32 input and output', () => {
    const half = decodeModel(gpuModel(file, 'fp16'));
    assert.equal(half.metadata.get('argus_prepared'), 'fp16');
    const FLOAT = 1;
    const FLOAT16 = 10;
    assert.ok(
      half.graph.initializers.some((t) => t.dataType === FLOAT16),
      'some weights are fp16',
    );
    assert.equal(half.graph.inputs[0]!.elemType, FLOAT);
    assert.equal(half.graph.outputs[0]!.elemType, FLOAT);
  });

  it('converts to the same bytes every time, so the engine cache finds its engine again', () => {
    const a = gpuModel(file, 'fp16');
    const b = gpuModel(buildFixtureModel(), 'fp16');
    assert.equal(modelHash(a), modelHash(b));
    assert.notEqual(modelHash(a), modelHash(file), 'and fp16 has engines of its own');
  });
});
