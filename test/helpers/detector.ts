import { pino } from 'pino';
import { modelConfig, sectionConfig, type Config } from '../../src/config/index.js';
import { Detector, planModel } from '../../src/detector/index.js';
import { tempDir, writeFixture } from './env.js';

/**
 * A started detector on a freshly generated fixture model (one 1-thread CPU worker, conf 0.5).
 * `over` is applied after the schema, so a test may set values no config file may (a 1 ms deadline).
 */
export async function fixtureDetector(
  t: Parameters<typeof tempDir>[0],
  log = pino({ level: 'silent' }),
  over: Partial<Config['detector']> = {},
): Promise<Detector> {
  const dir = await tempDir(t);
  const path = await writeFixture(dir, 'fixture.onnx');
  const detector = new Detector(
    await planModel({ path }),
    {
      model: modelConfig({ path, conf: 0.5, max_detections: 100 }),
      detector: {
        ...sectionConfig('detector', { workers: 1, intra_op_threads: 1, inter_op_threads: 1 }),
        ...over,
      },
    },
    log,
  );
  await detector.start();
  t.after(() => detector.stop());
  return detector;
}
