import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { batchSchedule, batchTable, percentile, table } from '../../../bench/gpu.js';

describe('bench/gpu.ts figures', () => {
  it('takes percentiles by nearest rank', () => {
    const xs = Array.from({ length: 100 }, (_, i) => 100 - i); // 100..1, unsorted
    assert.equal(percentile(xs, 50), 50);
    assert.equal(percentile(xs, 99), 99);
    assert.equal(percentile(xs, 100), 100);
    assert.equal(percentile([7], 99), 7);
    assert.ok(Number.isNaN(percentile([], 50)));
  });

  it('counts a run far slower than its batch size’s others as a build, per size', () => {
    const samples = [
      ...Array.from({ length: 50 }, () => ({ batch: 1, ms: 5 })),
      { batch: 1, ms: 90_000 }, // an engine build in the middle of the run
      ...Array.from({ length: 50 }, () => ({ batch: 8, ms: 20 })),
      { batch: 8, ms: 300 }, // slow, but not a build: under 500 ms
    ];
    const rows = batchTable(samples);
    assert.deepEqual(
      rows.map((r) => [r.batch, r.runs, r.p50, r.slow]),
      [
        [1, 51, 5, 1],
        [8, 51, 20, 0],
      ],
    );
    // Frames per second over the time spent: the build's 90 s counts.
    assert.equal(
      Math.round(rows[0]!.fps * 100) / 100,
      Math.round((51 * 1000 * 100) / (50 * 5 + 90_000)) / 100,
    );
  });

  it('varies batch sizes over every size from 1 to max_batch, the same way each run', () => {
    const s = batchSchedule(16, 2000);
    assert.deepEqual(
      [...new Set(s)].sort((a, b) => a - b),
      Array.from({ length: 16 }, (_, i) => i + 1),
    );
    assert.deepEqual(batchSchedule(16, 50), s.slice(0, 50));
  });

  it('writes Markdown tables, numbers to one decimal', () => {
    assert.equal(table(['a', 'b'], [['x', 1.234]]), '| a | b |\n| --- | --- |\n| x | 1.2 |');
  });
});
