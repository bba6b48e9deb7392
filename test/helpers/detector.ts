import { pino } from 'pino';
import { Detector } from '../../src/detector/detector.js';
import { planModel } from '../../src/detector/model.js';
import { tempDir, writeFixture } from './env.js';

/** A started detector on a freshly generated fixture model (one 1-thread CPU worker, conf 0.5). */
export async function fixtureDetector(
  t: Parameters<typeof tempDir>[0],
  log = pino({ level: 'silent' }),
): Promise<Detector> {
  const dir = await tempDir(t);
  const detector = new Detector(
    await planModel({ path: await writeFixture(dir, 'fixture.onnx') }),
    {
      providers: ['cpu'],
      deviceId: 0,
      workers: 1,
      intraOpThreads: 1,
      interOpThreads: 1,
      conf: 0.5,
      iou: 0.45,
      maxDet: 100,
    },
    log,
  );
  await detector.start();
  t.after(() => detector.stop());
  return detector;
}
