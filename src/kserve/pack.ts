import type { Picture } from '../core/frame.js';
import { decodeYolo, rgbToNchw, type RawDetection } from '../detector/index.js';
import { toFloat16Bits } from '../onnx/index.js';
import type { WireTensor } from './codec.js';
import type { InputForm, OutputPlan } from './plan.js';
import { ProtocolError, type Tensor } from './tensor.js';

/**
 * Pictures to an input tensor, and output tensors back to detections: the pure halves of the
 * remote detector. Detections stay in model-input pixels here; the caller maps them to each
 * picture's source pixels as the local detector does.
 */

/**
 * The input tensor for `pictures` (size × size RGB24 each), `batch` slots long: slots beyond the
 * pictures (a model with a fixed batch) are zeros and their answers ignored.
 */
export function packPictures(
  name: string,
  pictures: readonly Picture[],
  form: InputForm,
  size: number,
  batch = pictures.length,
): WireTensor {
  const frame = 3 * size * size;
  if (form === 'UINT8') {
    const bytes = Buffer.alloc(batch * frame);
    pictures.forEach((p, i) => bytes.set(p.data, i * frame));
    return { name, datatype: 'UINT8', shape: [batch, size, size, 3], bytes };
  }
  const floats = new Float32Array(batch * frame);
  pictures.forEach((p, i) => rgbToNchw(p.data, size, size, floats, i));
  const data = form === 'FP16' ? toFloat16Bits(floats) : floats;
  return {
    name,
    datatype: form,
    shape: [batch, 3, size, size],
    bytes: Buffer.from(data.buffer, data.byteOffset, data.byteLength),
  };
}

export interface UnpackOptions {
  conf: number;
  iou: number;
  maxDet: number;
}

function output(outputs: readonly Tensor[], name: string): Tensor {
  const t = outputs.find((o) => o.name === name);
  if (!t)
    throw new ProtocolError(
      `the response has no output '${name}' (it has ${outputs.map((o) => `'${o.name}'`).join(', ') || 'none'})`,
    );
  return t;
}

function floats(t: Tensor): Float32Array {
  if (!(t.data instanceof Float32Array))
    throw new ProtocolError(`output '${t.name}' is ${t.datatype}, not FP32 or FP16`);
  return t.data;
}

/**
 * Each of the first `count` batch items' detections in model-input pixels: from the raw YOLO
 * tensor through the local detector's decode and class-aware NMS, or from post-NMS `detections`
 * rows (filtered by `conf`, best `maxDet` kept).
 */
export function unpackDetections(
  outputs: readonly Tensor[],
  plan: OutputPlan,
  count: number,
  opts: UnpackOptions,
): RawDetection[][] {
  if (plan.kind === 'yolo') {
    const t = output(outputs, plan.name);
    const { layout } = plan;
    const rows = 4 + layout.classes;
    const expected = layout.kind === 'channels-first' ? [rows, layout.anchors] : [layout.anchors, rows];
    if (
      t.shape.length !== 3 ||
      t.shape[0]! < count ||
      t.shape[1] !== expected[0] ||
      t.shape[2] !== expected[1]
    )
      throw new ProtocolError(
        `output '${t.name}' has shape [${t.shape.join(', ')}]; expected [${count}, ${expected.join(', ')}]`,
      );
    const data = floats(t);
    return Array.from({ length: count }, (_, i) =>
      decodeYolo(data, layout, i, { conf: opts.conf, iou: opts.iou, maxDet: opts.maxDet }),
    );
  }
  const det = output(outputs, plan.name);
  const num = output(outputs, plan.countName);
  const [b, k, six] = det.shape;
  if (det.shape.length !== 3 || six !== 6 || b === undefined || b < count || k === undefined)
    throw new ProtocolError(
      `output 'detections' has shape [${det.shape.join(', ')}]; expected [${count}, K, 6]`,
    );
  if (!(num.data instanceof Int32Array) || num.data.length < count)
    throw new ProtocolError(`output 'num_detections' is not INT32 [${count}]`);
  const data = floats(det);
  const counts = num.data;
  return Array.from({ length: count }, (_, i) => {
    const n = Math.min(Math.max(0, counts[i]!), k);
    const out: RawDetection[] = [];
    for (let r = 0; r < n; r++) {
      const at = (i * k + r) * 6;
      const score = data[at + 4]!;
      if (score < opts.conf) continue;
      out.push({
        classId: Math.round(data[at + 5]!),
        score,
        box: [data[at]!, data[at + 1]!, data[at + 2]!, data[at + 3]!],
      });
    }
    return out.sort((x, y) => y.score - x.score).slice(0, opts.maxDet);
  });
}
