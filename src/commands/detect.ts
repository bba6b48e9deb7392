import type { Picture } from '../core/frame.js';
import type { ProviderName, WebgpuVendor } from '../config/index.js';
import { DetectorError, ModelError, openDetector, type Detector } from '../detector/index.js';
import { ImageError, loadLetterboxed } from '../ingest/index.js';
import { createLogger } from '../log.js';

export interface DetectOptions {
  model: string;
  labels?: string | undefined;
  images: string[];
  conf: number;
  iou: number;
  batch: number;
  providers: ProviderName[];
  precision?: 'fp32' | 'fp16';
  webgpuVendor?: WebgpuVendor | undefined;
  logLevel: string;
}

/**
 * `argus detect`: one JSON object per image on stdout; on stderr the provider line, and errors
 * naming the file.
 */
export async function runDetect(opts: DetectOptions): Promise<number> {
  const log = createLogger({ level: opts.logLevel, fd: 2 });
  let detector: Detector;
  try {
    detector = await openDetector(
      { path: opts.model, labels: opts.labels, conf: opts.conf, iou: opts.iou },
      // One session with ONNX Runtime's own thread choice and spinning: a command has the machine.
      {
        providers: opts.providers,
        workers: 1,
        thread_spinning: true,
        precision: opts.precision ?? 'fp32',
        webgpu: opts.webgpuVendor ? { vendor: opts.webgpuVendor } : {},
      },
      log,
    );
  } catch (err) {
    if (err instanceof ModelError || err instanceof DetectorError) {
      process.stderr.write(`argus: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
  // Which provider ran, how, and why each preferred one was skipped: one line, beside the JSON on stdout.
  if (detector.choice) process.stderr.write(`argus: ${detector.choice.message}\n`);
  let failed = 0;
  try {
    for (let start = 0; start < opts.images.length; start += opts.batch) {
      const names = opts.images.slice(start, start + opts.batch);
      const loaded: { name: string; picture: Picture }[] = [];
      for (const name of names) {
        try {
          loaded.push({ name, picture: await loadLetterboxed(name, detector.inputSize) });
        } catch (err) {
          if (!(err instanceof ImageError)) throw err;
          process.stderr.write(`argus: ${err.message}\n`);
          failed++;
        }
      }
      if (loaded.length === 0) continue;
      const result = await detector.detect(loaded.map((l) => l.picture));
      loaded.forEach(({ name, picture }, i) => {
        const g = picture.geometry;
        const detections = result.detections[i] ?? [];
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
