import type { Detection, Picture } from '../../src/core/frame.js';
import type { DetectorStats } from '../../src/detector/index.js';
import type { ModelStage } from '../../src/models/index.js';
import type { BatchDetections } from '../../src/scheduler/index.js';

/**
 * A model stage whose start the test may hold (`gate`) or fail, and whose batches the test
 * answers. Every detection it gives is labelled with its `id`, so a test sees which stage
 * answered a frame; a batch sent before it started or after it stopped fails loudly.
 */
export class FakeModel implements ModelStage {
  readonly labels = ['thing'];
  started = false;
  stopped = false;
  readonly calls: { pictures: readonly Picture[]; resolve: () => void; done: boolean }[] = [];
  private open: (() => void) | undefined;
  private fail: ((e: Error) => void) | undefined;
  private readonly gate: Promise<void> | undefined;

  constructor(
    readonly id: string,
    opts: { held?: boolean; inputSize?: number; concurrency?: number } = {},
  ) {
    this.inputSize = opts.inputSize ?? 32;
    this.concurrency = opts.concurrency ?? 1;
    if (opts.held)
      this.gate = new Promise<void>((resolve, reject) => {
        this.open = resolve;
        this.fail = reject;
      });
  }

  readonly inputSize: number;
  readonly concurrency: number;

  /** Lets a held start finish, or fail with `error`. */
  release(error?: Error): void {
    if (error) this.fail?.(error);
    else this.open?.();
  }

  async start(): Promise<void> {
    await this.gate;
    this.started = true;
  }

  stop(): Promise<void> {
    this.stopped = true;
    return Promise.resolve();
  }

  stats(): DetectorStats {
    return {
      kind: 'local',
      provider: null,
      workers: this.concurrency,
      readyWorkers: this.started && !this.stopped ? this.concurrency : 0,
      sessionsRecreated: 0,
      deadlinesMissed: 0,
      buffersAllocated: 0,
    };
  }

  get pending(): { resolve: () => void }[] {
    return this.calls.filter((c) => !c.done);
  }

  detect(pictures: readonly Picture[]): Promise<BatchDetections> {
    if (!this.started || this.stopped)
      return Promise.reject(
        new Error(`${this.id} got a batch while ${this.started ? 'stopped' : 'loading'}`),
      );
    const label: Detection = { label: this.id, score: 0.9, box: [0, 0, 1, 1] };
    return new Promise((resolve) => {
      const call = {
        pictures,
        done: false,
        resolve: () => {
          call.done = true;
          resolve({ detections: pictures.map(() => [label]), inferMs: 5 });
        },
      };
      this.calls.push(call);
    });
  }
}
