import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { letterbox } from '../../../src/core/geometry.js';
import { modelConfig, sectionConfig, type Config } from '../../../src/config/index.js';
import { Detector, planModel } from '../../../src/detector/index.js';
import { gpuIdentity } from '../../../src/detector/tensorrt.js';
import { tempDir, writeFixture } from '../../helpers/env.js';
import { recordingLog } from '../../helpers/fakes.js';

/**
 * A real worker thread and ONNX Runtime on a machine without CUDA or TensorRT (this project's):
 * both fail to load their provider library, and the session falls back to the CPU.
 */
async function startOn(
  t: Parameters<typeof tempDir>[0],
  detector: Partial<Config['detector']>,
): Promise<{ lines: ReturnType<typeof recordingLog>['lines']; state: string; d: Detector }> {
  const dir = await tempDir(t);
  const path = await writeFixture(dir, 'fixture.onnx');
  const state = join(dir, 'state');
  const { log, lines } = recordingLog();
  const d = new Detector(
    await planModel({ path }),
    {
      model: modelConfig({ path }),
      detector: sectionConfig('detector', { workers: 1, intra_op_threads: 1, ...detector }),
      engines: { stateDir: state, maxBatch: 4 },
    },
    log,
  );
  await d.start();
  t.after(() => d.stop());
  return { lines, state, d };
}

describe(
  'GPU providers that cannot load',
  { skip: existsSync('/dev/nvidiactl') && 'this machine has a GPU' },
  () => {
    for (const precision of ['fp32', 'fp16'] as const)
      it(`fall back to the CPU with one warning line, and make no engine directory (${precision})`, async (t) => {
        assert.equal(await gpuIdentity(), 'none', 'no NVIDIA driver here');
        const { lines, state, d } = await startOn(t, { providers: ['tensorrt', 'cuda', 'cpu'], precision });
        assert.equal(d.provider, 'cpu');
        const choice = lines.filter((l) => l.msg.startsWith('using execution provider'));
        assert.equal(choice.length, 1);
        assert.match(
          choice[0]!.msg,
          /^using execution provider cpu; skipped tensorrt \(.*Failed to load shared library\), cuda \(.*Failed to load shared library\)$/,
        );
        assert.equal((choice[0] as { level?: number }).level, 40, 'a warning');
        assert.deepEqual(
          lines.filter((l) => /TensorRT engine/.test(l.msg)),
          [],
          'no engine is built or loaded',
        );
        assert.equal(existsSync(join(state, 'trt')), false);
        // The CPU runs the fp32 model whatever the precision: batches of any size work.
        const size = d.inputSize;
        const pic = { data: Buffer.alloc(3 * size * size, 114), geometry: letterbox(size, size, size) };
        const out = await d.detect([pic, pic, pic]);
        assert.equal(out.detections.length, 3);
      });
  },
);
