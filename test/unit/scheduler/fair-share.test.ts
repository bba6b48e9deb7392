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
