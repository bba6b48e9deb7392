import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { probeProvider } from '../../src/detector/index.js';
import { decodeModel, encodeModel, prepareModel } from '../../src/onnx/index.js';
import { shared } from './env.js';

/**
 * Whether this machine has a Vulkan device Dawn takes (CI: Mesa's lavapipe from Debian's
 * backports, installed by .ci/run; docs/operations.md says how on a developer machine). Tests
 * that need WebGPU skip with this message where it has none.
 */
const reason = await probeProvider('webgpu');
export const needsWebgpu: string | false =
  reason === null
    ? false
    : `no WebGPU adapter here (${reason}): install Mesa's Vulkan driver from bookworm-backports, as .ci/run does`;
if (needsWebgpu) process.stderr.write(`webgpu tests: ${needsWebgpu}\n`);

/** YOLO11n @320 from ../shared, prepared as `argus model prepare` does (dynamic batch, fp32), into `dir`. */
export async function preparedYolo(dir: string): Promise<string> {
  const model = decodeModel(new Uint8Array(await readFile(shared('models/yolo11n_int8_320.onnx'))));
  prepareModel(model, { batch: 'dynamic', precision: 'fp32' });
  const out = join(dir, 'yolo11n-320.onnx');
  await writeFile(out, encodeModel(model));
  return out;
}
