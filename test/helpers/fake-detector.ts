import type { BatchResult } from '../../src/detector/detector.js';
import type { RawDetection } from '../../src/detector/decode.js';
import type { BatchDetector } from '../../src/scheduler/scheduler.js';

export interface FakeCall {
  count: number;
  input: Float32Array;
  timeoutMs: number | undefined;
  resolve(dets?: RawDetection[][], inferMs?: number): void;
  reject(err: Error): void;
}

/** A detector whose batches finish when the test says so. */
export class FakeDetector implements BatchDetector {
  readonly labels = ['thing'];
  readonly calls: FakeCall[] = [];
  constructor(readonly inputSize = 32) {}

  get frameFloats(): number {
    return 3 * this.inputSize * this.inputSize;
  }

  get pending(): FakeCall[] {
    return this.calls.filter((c) => !(c as { done?: boolean }).done);
  }

  detect(input: Float32Array, count: number, timeoutMs?: number): Promise<BatchResult> {
    return new Promise((resolve, reject) => {
      const call: FakeCall & { done?: boolean } = {
        count,
        input,
        timeoutMs,
        resolve: (dets, inferMs = 10) => {
          call.done = true;
          resolve({ input, detections: dets ?? Array.from({ length: count }, () => []), inferMs });
        },
        reject: (err) => {
          call.done = true;
          reject(Object.assign(err, { input }));
        },
      };
      this.calls.push(call);
    });
  }
}
