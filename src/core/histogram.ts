/**
 * A latency histogram with fixed buckets, kept by the stage that sees the durations and read at
 * scrape time (as every metric here is): counts per bucket, their sum and count, in seconds.
 */
export interface HistogramSnapshot {
  /** Upper bounds, in seconds, ascending; an implicit +Inf bucket follows. */
  bounds: readonly number[];
  /** Observations per bucket (not cumulative): one more entry than `bounds`, the last for +Inf. */
  counts: number[];
  sum: number;
  count: number;
}

export class Histogram {
  private readonly counts: number[];
  private sum = 0;
  private count = 0;

  constructor(readonly bounds: readonly number[]) {
    this.counts = new Array<number>(bounds.length + 1).fill(0);
  }

  /** Records one duration, in seconds. */
  observe(seconds: number): void {
    if (!Number.isFinite(seconds)) return;
    const v = Math.max(0, seconds);
    let i = 0;
    while (i < this.bounds.length && v > this.bounds[i]!) i++;
    this.counts[i]!++;
    this.sum += v;
    this.count++;
  }

  snapshot(): HistogramSnapshot {
    return { bounds: this.bounds, counts: [...this.counts], sum: this.sum, count: this.count };
  }
}

/**
 * The buckets of Argus' latency histograms (docs/http.md, "Histograms"), in seconds. A YOLO batch
 * takes 5 ms on a GPU to seconds on a small CPU; a frame waits from nothing (an idle detector)
 * to `scheduler.max_frame_age_ms` (2 s by default) before it is dropped as stale; capture to
 * publish adds the two and ffmpeg's own delay.
 */
export const LATENCY_BUCKETS = {
  inference: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  queueWait: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  captureToPublish: [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
} as const;
