import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildFixtureModel, DEFAULT_FIXTURE } from '../../../src/onnx/fixture.js';
import { floatsOf } from '../../../src/onnx/build.js';
import { decodeModel } from '../../../src/onnx/graph.js';
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

  it('flat layout gives [B, (4+C)*N]; channels-first is the default, [B, 4+C, N]', () => {
    const flat = parseModelInfo(buildFixtureModel({ ...DEFAULT_FIXTURE, layout: 'flat' }));
    assert.deepEqual(flat.outputs[0]!.shape, ['batch', 600]);
    assert.equal(flat.opCounts.Reshape, 3);
    assert.deepEqual(parseModelInfo(buildFixtureModel()).outputs[0]!.shape, ['batch', 6, 100]);
  });

  it('rejects a size that is not a multiple of the stride', () => {
    assert.throws(() => buildFixtureModel({ ...DEFAULT_FIXTURE, size: 100 }), /not a multiple of stride 32/);
  });

  it('anchors are the grid cells: centre and size in input pixels', () => {
    const model = decodeModel(buildFixtureModel({ ...DEFAULT_FIXTURE, size: 64, stride: 32 }));
    const anchors = model.graph.initializers.find((t) => t.name === 'anchors')!;
    assert.deepEqual(anchors.dims, [1, 4, 4]);
    // Rows cx, cy, w, h; cells in row-major order.
    assert.deepEqual(
      [...floatsOf(anchors)],
      [16, 48, 16, 48, 16, 16, 48, 48, 32, 32, 32, 32, 32, 32, 32, 32],
    );
    assert.deepEqual(
      model.graph.nodes.map((n) => n.op),
      ['AveragePool', 'Conv', 'Sigmoid', 'Reshape', 'Conv', 'Reshape', 'Add', 'Concat'],
    );
    assert.equal(model.graph.name, 'argus_fixture');
    assert.equal(model.producer, 'argus');
  });

  it('work adds convolutions of the image, times zero, to the class logits; none when 0', () => {
    assert.deepEqual(buildFixtureModel({ ...DEFAULT_FIXTURE, work: 0 }), buildFixtureModel());
    const model = decodeModel(buildFixtureModel({ ...DEFAULT_FIXTURE, work: 2 }));
    assert.deepEqual(
      model.graph.nodes.map((n) => n.op),
      [
        'AveragePool',
        'Conv',
        'Conv',
        'Sigmoid',
        'Conv',
        'Sigmoid',
        'ReduceMean',
        'Mul',
        'Add',
        'Sigmoid',
        'Reshape',
        'Conv',
        'Reshape',
        'Add',
        'Concat',
      ],
    );
    assert.deepEqual(model.graph.nodes[2]!.inputs, ['images', 'work_w0']);
    assert.deepEqual([...floatsOf(model.graph.initializers.find((i) => i.name === 'work_zero')!)], [0]);
    assert.ok(
      [...floatsOf(model.graph.initializers.find((i) => i.name === 'work_w1')!)].every((w) => w !== 0),
    );
    assert.throws(() => buildFixtureModel({ ...DEFAULT_FIXTURE, work: 1.5 }), /whole number/);
  });
});
