import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { RefusalLog, RetainedQuota, underTopic } from '../../../src/broker/broker-policy.js';

describe('underTopic', () => {
  it('is the base topic itself or a topic below it, not a topic that merely starts alike', () => {
    assert.ok(underTopic('argus', 'argus'));
    assert.ok(underTopic('argus/status', 'argus'));
    assert.ok(underTopic('home/argus/cameras/x/status', 'home/argus'));
    assert.ok(!underTopic('argus2/status', 'argus'));
    assert.ok(!underTopic('/argus/status', 'argus'));
    assert.ok(!underTopic('homeassistant/status', 'argus'));
  });
});

describe('RetainedQuota', () => {
  it('admits retained messages up to the count and byte limits, counting topic and payload', () => {
    const q = new RetainedQuota(2, 100);
    assert.ok(q.admit('a', 40)); // 41 bytes
    assert.ok(q.admit('b', 50)); // 51 bytes
    assert.ok(!q.admit('c', 1), 'a third topic is over the count');
    assert.ok(!q.admit('b', 59), 'replacing b with 60 bytes is over 100 in all');
    assert.ok(q.admit('b', 58), 'replacing b with 59 bytes fits');
    assert.deepEqual(q.stats(), { messages: 2, bytes: 100 });
  });

  it('always admits an empty payload, which deletes the topic, and frees what Argus replaced', () => {
    const q = new RetainedQuota(1, 1000);
    assert.ok(q.admit('a', 10));
    assert.ok(q.admit('zzz', 0), 'a delete of a topic never stored');
    assert.ok(q.admit('a', 0));
    assert.deepEqual(q.stats(), { messages: 0, bytes: 0 });
    assert.ok(q.admit('b', 10));
    q.forget('b');
    assert.ok(q.admit('c', 10), "b's place was freed when Argus retained its own message there");
  });

  it('with zero limits, admits no retained message but deletes', () => {
    const q = new RetainedQuota(0, 0);
    assert.ok(!q.admit('a', 1));
    assert.ok(q.admit('a', 0));
  });
});

describe('RefusalLog', () => {
  it('logs the first refusal of each reason, then one line a minute saying how many went unlogged; counts all', () => {
    let now = 0;
    type Line = { reason: string; unlogged?: number; client?: string };
    const lines: Line[] = [];
    const log = pino({ level: 'warn' }, { write: (l: string) => void lines.push(JSON.parse(l) as Line) });
    const refusals = new RefusalLog(log, { now: () => now });
    for (let i = 0; i < 500; i++) {
      refusals.refuse('base_topic', { client: `c${i}` });
      now += 100; // 10 a second for 50 s
    }
    refusals.refuse('login', {});
    assert.deepEqual(
      lines.map((l) => [l.reason, l.unlogged, l.client]),
      [
        ['base_topic', undefined, 'c0'],
        ['login', undefined, undefined],
      ],
    );
    now = 60_000;
    refusals.refuse('base_topic', { client: 'late' });
    assert.deepEqual(lines.at(-1), { ...lines.at(-1), reason: 'base_topic', unlogged: 499, client: 'late' });
    assert.equal(refusals.stats().base_topic, 501);
    assert.equal(refusals.stats().login, 1);
    assert.equal(refusals.stats().oversize, 0);
  });
});
