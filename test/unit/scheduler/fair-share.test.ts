import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FairShare } from '../../../src/scheduler/fair-share.js';

describe('fair share', () => {
  it('round-robins contenders of equal priority', () => {
    const fair = new FairShare();
    const picks = fair.pick(
      ['a', 'b', 'c'].map((key) => ({ key, priority: 5, waiting: 10 })),
      9,
    );
    assert.deepEqual(picks, ['a', 'b', 'c', 'a', 'b', 'c', 'a', 'b', 'c']);
  });

  it('serves a higher priority first, and still serves the lower', () => {
    const fair = new FairShare();
    const picks = fair.pick(
      [
        { key: 'low', priority: 1, waiting: 100 },
        { key: 'high', priority: 10, waiting: 100 },
      ],
      22,
    );
    assert.equal(picks[0], 'high');
    const low = picks.filter((p) => p === 'low').length;
    assert.equal(low, 2, `priority 10 vs 1 gets 10:1, got ${JSON.stringify(picks)}`);
  });

  it('does not let an idle camera bank credit', () => {
    const fair = new FairShare();
    fair.pick([{ key: 'busy', priority: 5, waiting: 1000 }], 500);
    const picks = fair.pick(
      [
        { key: 'busy', priority: 5, waiting: 10 },
        { key: 'quiet', priority: 5, waiting: 10 },
      ],
      10,
    );
    assert.deepEqual(picks.filter((p) => p === 'quiet').length, 5, JSON.stringify(picks));
  });

  it('a priority-10 queue holding one frame at a time gets its frame into every batch while under its share', () => {
    // 14 at priority 1 and 2 at priority 10, one frame each per batch of 4 (queue_size 1): the
    // weighted share of a priority 10 is 10/34 of 4 = 1.18 frames a batch, more than its one.
    const fair = new FairShare();
    const count = new Map<string, number>();
    const keys = [
      ...Array.from({ length: 14 }, (_, i) => [`low${i}`, 1] as const),
      ['a', 10],
      ['b', 10],
    ] as const;
    for (let batch = 0; batch < 140; batch++) {
      const contenders = keys.map(([key, priority]) => ({ key, priority, waiting: 1 }));
      for (let k = 0; k < 4; k++) {
        const [key] = fair.pick(contenders, 1);
        contenders.find((c) => c.key === key)!.waiting--;
        count.set(key!, (count.get(key!) ?? 0) + 1);
      }
    }
    assert.deepEqual([count.get('a'), count.get('b')], [140, 140], 'in every batch');
    const low = keys.slice(0, 14).map(([key]) => count.get(key) ?? 0);
    assert.ok(Math.min(...low) >= 19 && Math.max(...low) <= 21, `the rest shared evenly: ${low.join(' ')}`);
  });

  it('with frames always waiting, 10 : 1 exactly, and a camera back after a pause gets no burst', () => {
    const fair = new FairShare();
    const picks = fair.pick(
      [
        { key: 'low', priority: 1, waiting: 1000 },
        { key: 'high', priority: 10, waiting: 1000 },
      ],
      1100,
    );
    assert.equal(picks.filter((p) => p === 'low').length, 100);
    fair.pick([{ key: 'low', priority: 1, waiting: 1000 }], 50);
    const back = fair.pick(
      [
        { key: 'low', priority: 1, waiting: 1000 },
        { key: 'high', priority: 10, waiting: 1000 },
      ],
      110,
    );
    const high = back.filter((p) => p === 'high').length;
    assert.ok(Math.abs(high - 100) <= 1, `${high}: ${JSON.stringify(back)}`);
  });

  it('a camera served alone for long, one frame at a time, is not starved when others come', () => {
    const fair = new FairShare();
    for (let i = 0; i < 1000; i++) fair.pick([{ key: 'a', priority: 5, waiting: 1 }], 1);
    const picks: string[] = [];
    for (let batch = 0; batch < 30; batch++) {
      const contenders = ['a', 'b', 'c'].map((key) => ({ key, priority: 5, waiting: 1 }));
      picks.push(...fair.pick(contenders, 2));
    }
    const a = picks.filter((p) => p === 'a').length;
    assert.ok(a >= 19 && a <= 21, `a gets its third of 60: ${a} (${picks.slice(0, 12).join(' ')}…)`);
  });

  it('takes any value as a key: two queues of the same name are two contenders', () => {
    const fair = new FairShare<object>();
    const one = {};
    const two = {};
    const picks = fair.pick(
      [
        { key: one, priority: 5, waiting: 2 },
        { key: two, priority: 5, waiting: 2 },
      ],
      4,
    );
    assert.deepEqual(picks, [one, two, one, two]);
  });
});
