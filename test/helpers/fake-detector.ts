import type { Detection, Picture } from '../../src/core/frame.js';
import type { BatchDetections, BatchDetector, ModelSet } from '../../src/scheduler/index.js';

export interface FakeCall {
  pictures: readonly Picture[];
  count: number;
  resolve(dets?: Detection[][], inferMs?: number): void;
  reject(err: Error): void;
}

/** The model set of a daemon with one model, `default`, run by `detector`. */
export const onlyModel = (detector: BatchDetector): ModelSet => ({
  detector: (name) => (name === 'default' ? detector : undefined),
});

/** A detector whose batches finish when the test says so. */
export class FakeDetector implements BatchDetector {
  readonly calls: FakeCall[] = [];
  constructor(
    readonly concurrency = 1,
    readonly inputSize = 32,
  ) {}

  get pending(): FakeCall[] {
    return this.calls.filter((c) => !(c as { done?: boolean }).done);
  }

  detect(pictures: readonly Picture[]): Promise<BatchDetections> {
    return new Promise((resolve, reject) => {
      const call: FakeCall & { done?: boolean } = {
        pictures,
        count: pictures.length,
        resolve: (dets, inferMs = 10) => {
          call.done = true;
          resolve({ detections: dets ?? pictures.map(() => []), inferMs });
        },
        reject: (err) => {
          call.done = true;
          reject(err);
        },
      };
      this.calls.push(call);
    });
  }
}
