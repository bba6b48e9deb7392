import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildFixtureModel, DEFAULT_FIXTURE } from '../../../src/onnx/fixture.js';
import { parseModelInfo } from '../../../src/onnx/model-info.js';

describe('fixture model', () => {
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
});
