import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { FrameQueue } from '../../../src/queue/frame-queue.js';

describe('frame queue (property)', () => {
  it('stays bounded, keeps order, drops the oldest, and accounts for every frame', () => {
    type Op = { op: 'push'; ts: number } | { op: 'shift' } | { op: 'stale'; cutoff: number };
    const ops = fc.array(
      fc.oneof(
        fc.record({ op: fc.constant('push' as const), ts: fc.integer({ min: 0, max: 1000 }) }),
        fc.record({ op: fc.constant('shift' as const) }),
        fc.record({ op: fc.constant('stale' as const), cutoff: fc.integer({ min: 0, max: 1000 }) }),
      ),
      { maxLength: 200 },
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 6 }), ops, (cap, list: Op[]) => {
        const q = new FrameQueue<{ ts: number; id: number }>(cap);
        const model: { ts: number; id: number }[] = [];
        let id = 0;
        let shifted = 0;
        let clock = 0;
        for (const o of list) {
          if (o.op === 'push') {
            // Frames arrive in time order.
            clock = Math.max(clock, o.ts);
            const item = { ts: clock, id: id++ };
            const evicted = q.push(item);
            model.push(item);
            if (model.length > cap) assert.equal(evicted, model.shift(), 'the oldest is dropped');
            else assert.equal(evicted, undefined);
          } else if (o.op === 'shift') {
            const got = q.shift();
            assert.equal(got, model.shift());
            if (got) shifted++;
          } else {
            q.dropOlderThan(o.cutoff);
            while (model.length && model[0]!.ts < o.cutoff) model.shift();
          }
          assert.ok(q.length <= cap);
          assert.equal(q.length, model.length);
          assert.equal(q.peek(), model[0]);
          assert.equal(q.pushed, q.length + shifted + q.dropped.full + q.dropped.stale);
        }
      }),
    );
  });
});
