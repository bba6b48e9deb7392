import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Backlog } from '../../../src/broker/broker-backlog.js';

const limits = { maxBytes: 1000, maxBehindMs: 10_000 };

describe('Backlog', () => {
  it('sends every message while at most maxBytes wait, counting those not written yet', () => {
    const b = new Backlog(limits);
    assert.equal(b.admit(100, 600, 0, 0), 'send');
    assert.equal(b.admit(100, 600, 0, 0), 'send', '700 wait: under the limit, so the next goes too');
    assert.equal(b.queued(100), 1300);
    assert.equal(b.admit(100, 10, 0, 0), 'drop', '1300 wait, 100 of them in the socket');
    b.written(600);
    b.written(600);
    assert.equal(b.admit(400, 10, 0, 0), 'send', 'written, 400 still in the socket');
    assert.equal(b.admit(1000, 10, 0, 0), 'drop', '1010 wait');
  });

  it('sends every message to a client whose socket holds nothing: the kernel takes what it is given', () => {
    const b = new Backlog(limits);
    for (let i = 0; i < 5; i++) assert.equal(b.admit(0, 600, 0, 0), 'send');
    assert.ok(!b.behind(0));
    assert.ok(b.behind(1), 'once something waits in its socket, all that was let through counts');
  });

  it('drops QoS 0 messages over maxBytes, sends QoS 1 and 2 up to twice that, then closes', () => {
    const b = new Backlog(limits);
    assert.equal(b.admit(1500, 100, 0, 0), 'drop');
    assert.equal(b.admit(1500, 100, 1, 0), 'send');
    assert.equal(b.admit(1500, 100, 2, 0), 'send');
    assert.equal(b.queued(1500), 1700);
    assert.ok(!b.overflowing(1500));
    assert.equal(b.admit(1900, 100, 1, 0), 'close', '2100 wait: over twice the limit');
    assert.ok(b.overflowing(1900));
    assert.equal(b.admit(1900, 100, 0, 0), 'drop', 'a QoS 0 message is only dropped');
  });

  it('closes a client over maxBytes at every look for maxBehindMs; one look under it starts again', () => {
    const b = new Backlog(limits);
    assert.ok(!b.tooLong(2000, 1000));
    assert.equal(b.admit(2000, 10, 0, 5000), 'drop');
    assert.ok(!b.tooLong(2000, 10_999));
    assert.ok(b.tooLong(2000, 11_000), '10 s after it was first seen over');
    assert.equal(b.admit(2000, 10, 0, 11_000), 'close');

    const c = new Backlog(limits);
    assert.ok(!c.tooLong(2000, 0));
    assert.ok(!c.tooLong(500, 9000), 'it caught up');
    assert.ok(!c.tooLong(2000, 10_000));
    assert.ok(!c.tooLong(2000, 19_999));
    assert.ok(c.tooLong(2000, 20_000));
  });
});
