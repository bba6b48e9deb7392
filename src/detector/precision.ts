import { decodeModel, encodeModel, prepareModel } from '../onnx/index.js';

/**
 * The model GPU providers (cuda, tensorrt) run: the file's bytes with `precision: fp32`; with
 * fp16, Argus' half-precision conversion of them (`model prepare --precision fp16`'s: weights
 * and activations half, input and output float32; dynamic-int8 chains made fp32 first). The
 * conversion gives the same bytes for the same file every time, so a TensorRT engine keyed by
 * their hash is found again at the next start. Throws GraphEditError naming an op it cannot convert.
 */
export function gpuModel(file: Uint8Array, precision: 'fp32' | 'fp16'): Uint8Array {
  if (precision === 'fp32') return file;
  const model = decodeModel(file);
  prepareModel(model, { batch: 'keep', precision: 'fp16' });
  return encodeModel(model);
}
