import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  answerLimit,
  labelsFromConfig,
  PlanError,
  planRemote,
  type ServerFacts,
} from '../../../src/kserve/plan.js';

const coco = ['person', 'bicycle', 'car'];
/** Ultralytics' Triton guide: the exporter's metadata dict, as Python prints it, in the config. */
const metadata = {
  metadata: {
    string_value:
      "{'description': 'Ultralytics YOLOv8n model', 'stride': 32, 'task': 'detect', 'names': {0: 'person', 1: 'bicycle', 2: 'car'}, 'imgsz': [640, 640]}",
  },
};

/** A YOLO ONNX on Triton with max_batch_size 8: metadata shapes start with -1. */
const triton: ServerFacts = {
  extensions: ['classification', 'binary_tensor_data', 'model_configuration'],
  inputs: [{ name: 'images', datatype: 'FP32', shape: [-1, 3, 640, 640] }],
  outputs: [{ name: 'output0', datatype: 'FP32', shape: [-1, 7, 8400] }],
  config: { name: 'yolo', max_batch_size: 8, parameters: metadata },
};

describe('planRemote', () => {
  it('a dynamic-batch YOLO on Triton: FP32 NCHW in, raw output decoded here, names from the config', () => {
    assert.deepEqual(planRemote(triton, undefined), {
      inputName: 'images',
      input: 'FP32',
      inputSize: 640,
      batch: { max: 8 },
      output: {
        kind: 'yolo',
        name: 'output0',
        layout: { kind: 'channels-first', classes: 3, anchors: 8400 },
      },
      // An item's answer: 7 × 8400 binary floats.
      answer: { values: 7 * 8400, bytesPerValue: 4 },
      labels: coco,
      labelsFrom: 'server',
    });
  });

  it('a fixed batch of 1 (max_batch_size 0, the batch dimension in the shape)', () => {
    const plan = planRemote(
      {
        ...triton,
        inputs: [{ name: 'images', datatype: 'FP32', shape: [1, 3, 320, 320] }],
        outputs: [{ name: 'output0', datatype: 'FP32', shape: [1, 2100, 7] }],
        config: { max_batch_size: 0, parameters: metadata },
      },
      undefined,
    );
    assert.deepEqual(
      [plan.batch, plan.inputSize, plan.output],
      [
        { fixed: 1 },
        320,
        { kind: 'yolo', name: 'output0', layout: { kind: 'transposed', classes: 3, anchors: 2100 } },
      ],
    );
  });

  it('FP16 in and out (a TensorRT engine); no configuration: any batch, the labels file', () => {
    const plan = planRemote(
      {
        extensions: [],
        inputs: [{ name: 'x', datatype: 'FP16', shape: [-1, 3, 640, 640] }],
        outputs: [{ name: 'y', datatype: 'FP16', shape: [-1, 7, 8400] }],
        config: undefined,
      },
      coco,
    );
    assert.deepEqual([plan.input, plan.batch, plan.labelsFrom], ['FP16', { max: null }, 'labels file']);
    // No binary tensor data extension: the answer may come as JSON text, 32 bytes a value at most.
    assert.deepEqual(plan.answer, { values: 7 * 8400, bytesPerValue: 32 });
  });

  it('an Argus server: RGB24 pictures, post-NMS detections, its RGB24 batch limit', () => {
    const plan = planRemote(
      {
        extensions: ['binary_tensor_data', 'model_configuration', 'argus_rgb24'],
        inputs: [{ name: 'images', datatype: 'FP32', shape: [-1, 3, 320, 320] }],
        outputs: [
          { name: 'detections', datatype: 'FP32', shape: [-1, -1, 6] },
          { name: 'num_detections', datatype: 'INT32', shape: [-1] },
        ],
        config: {
          max_batch_size: 8,
          parameters: { ...metadata, rgb24_max_batch_size: { string_value: '32' } },
        },
      },
      undefined,
    );
    assert.deepEqual([plan.input, plan.batch, plan.output.kind], ['UINT8', { max: 32 }, 'detections']);
    // K is variable: as many rows as an Argus server sends at most (10000), and the count.
    assert.deepEqual(plan.answer, { values: 10_000 * 6 + 1, bytesPerValue: 4 });
    assert.equal(answerLimit(plan, 2), 64 * 1024 + 2 * 60_001 * 4);
  });

  it('a labels file wins over the names the server gives', () => {
    const plan = planRemote(triton, ['a', 'b', 'c']);
    assert.deepEqual([plan.labels, plan.labelsFrom], [['a', 'b', 'c'], 'labels file']);
  });

  it('refuses what Argus cannot feed or read, saying why', () => {
    const refuses = (facts: Partial<ServerFacts>, re: RegExp, labels?: string[]): void =>
      assert.throws(
        () => planRemote({ ...triton, ...facts }, labels),
        (e: Error) => e instanceof PlanError && re.test(e.message),
      );
    refuses({ inputs: [...triton.inputs, { name: 'scale', datatype: 'FP32', shape: [-1, 2] }] }, /2 inputs/);
    refuses(
      { inputs: [{ name: 'images', datatype: 'FP32', shape: [-1, 640, 640, 3] }] },
      /not \[batch, 3, size, size\]/,
    );
    refuses(
      { inputs: [{ name: 'images', datatype: 'FP32', shape: [-1, 3, 640, 480] }] },
      /not \[batch, 3, size, size\]/,
    );
    refuses(
      { inputs: [{ name: 'images', datatype: 'UINT8', shape: [-1, 3, 640, 640] }] },
      /not FP32 or FP16/,
    );
    refuses({ config: undefined }, /gives no class names.*set labels/);
    refuses({}, /does not fit 2 classes/, ['a', 'b']);
    refuses({ outputs: [{ name: 'output0', datatype: 'INT32', shape: [-1, 7, 8400] }] }, /not FP32 or FP16/);
    refuses(
      {
        outputs: [
          { name: 'detections', datatype: 'FP32', shape: [-1, -1, 7] },
          { name: 'num_detections', datatype: 'INT32', shape: [-1] },
        ],
      },
      /not FP32 \[batch, K, 6\]/,
    );
  });
});

describe('labelsFromConfig', () => {
  it('reads the names of the metadata dict, with either quotes', () => {
    assert.deepEqual(labelsFromConfig({ parameters: metadata }), coco);
    assert.deepEqual(
      labelsFromConfig({ parameters: { metadata: { string_value: `{"names": {0: "it's", 1: 'b'}}` } } }),
      ["it's", 'b'],
    );
    assert.equal(labelsFromConfig({ parameters: { other: { string_value: 'x' } } }), undefined);
    assert.equal(labelsFromConfig(undefined), undefined);
  });
});
