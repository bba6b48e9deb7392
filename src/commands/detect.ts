import type { ProviderName } from '../config/schema.js';
import { Detector, DetectorError } from '../detector/detector.js';
import { ImageError, loadLetterboxed, type LetterboxedImage } from '../detector/image.js';
import { ModelError, planModel } from '../detector/model.js';
import { rgbToNchw } from '../detector/preprocess.js';
import { toDetections } from '../detector/results.js';
import { createLogger, type Logger } from '../log.js';

export interface DetectOptions {
  model: string;
  labels?: string | undefined;
  images: string[];
  conf: number;
  iou: number;
  batch: number;
  providers: ProviderName[];
  logLevel: string;
}

type OpenOptions = Pick<DetectOptions, 'model' | 'labels' | 'conf' | 'iou' | 'providers'>;

/** A started one-worker detector for a command; throws ModelError or DetectorError. */
export async function openDetector(opts: OpenOptions, log: Logger): Promise<Detector> {
  const plan = await planModel({ path: opts.model, labels: opts.labels });
  const detector = new Detector(
    plan,
    {
      providers: opts.providers,
      deviceId: 0,
      workers: 1,
      intraOpThreads: 0,
      interOpThreads: 0,
      conf: opts.conf,
      iou: opts.iou,
      maxDet: 300,
    },
    log,
  );
  await detector.start();
  return detector;
}

/** `argus detect`: one JSON object per image on stdout, errors on stderr naming the file. */
export async function runDetect(opts: DetectOptions): Promise<number> {
  const log = createLogger({ level: opts.logLevel, fd: 2 });
  let detector: Detector;
  try {
    detector = await openDetector(opts, log);
  } catch (err) {
    if (err instanceof ModelError || err instanceof DetectorError) {
      process.stderr.write(`argus: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
  let failed = 0;
  try {
    const size = detector.inputSize;
    let buffer: Float32Array = new Float32Array(opts.batch * detector.frameFloats);
    for (let start = 0; start < opts.images.length; start += opts.batch) {
      const names = opts.images.slice(start, start + opts.batch);
      const loaded: { name: string; img: LetterboxedImage }[] = [];
      for (const name of names) {
        try {
          loaded.push({ name, img: await loadLetterboxed(name, size) });
        } catch (err) {
          if (!(err instanceof ImageError)) throw err;
          process.stderr.write(`argus: ${err.message}\n`);
          failed++;
        }
      }
      if (loaded.length === 0) continue;
      loaded.forEach(({ img }, slot) => rgbToNchw(img.rgb, size, size, buffer, slot));
      const result = await detector.detect(buffer, loaded.length);
      buffer = result.input;
      loaded.forEach(({ name, img }, i) => {
        const g = img.geometry;
        const detections = toDetections(result.detections[i] ?? [], g, detector.labels);
        process.stdout.write(
          `${JSON.stringify({ image: name, width: g.srcW, height: g.srcH, detections })}\n`,
        );
      });
    }
  } catch (err) {
    if (!(err instanceof DetectorError)) throw err;
    process.stderr.write(`argus: ${opts.model}: ${err.message}\n`);
    failed++;
  } finally {
    await detector.stop();
  }
  return failed ? 1 : 0;
}
