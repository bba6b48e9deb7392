import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CameraOwner } from '../../../src/core/owner.js';
import { Follow, WRITE_MS, type Guard, type StateKv } from '../../../src/fleet/follow.js';
import { FakeClock, recordingLog } from '../../helpers/fakes.js';

/**
 * etcd as the state sees it: keys with a revision, owner keys (box and epoch) and member keys
 * (lease), each guard checked as etcd's transaction would; `away` makes every call throw.
 */
class FakeKv implements StateKv {
  rev = 100;
  readonly keys = new Map<string, { value: string; mod: string }>();
  readonly owners = new Map<string, CameraOwner>();
  readonly leases = new Map<string, string>();
  readonly puts: { key: string; value: string }[] = [];
  refused = 0;
  away = false;

  async get(key: string): Promise<{ value: string; mod: string } | undefined> {
    await Promise.resolve();
    if (this.away) throw new Error('etcd unreachable');
    return this.keys.get(key);
  }

  async putIf(guard: Guard, key: string, value: string): Promise<string | undefined> {
    await Promise.resolve();
    if (this.away) throw new Error('etcd unreachable');
    const holds =
      guard.kind === 'owner'
        ? this.owners.get(guard.camera)?.box === guard.owner.box &&
          this.owners.get(guard.camera)?.epoch === guard.owner.epoch
        : this.leases.get(guard.box) === guard.lease;
    if (!holds) {
      this.refused++;
      return undefined;
    }
    this.put(key, value);
    return String(this.rev);
  }

  /** A put as another box (or etcdctl) makes it. */
  put(key: string, value: string): void {
    this.keys.set(key, { value, mod: String(++this.rev) });
    this.puts.push({ key, value });
  }
}

function setUp(box = 'a') {
  const kv = new FakeKv();
  const clock = new FakeClock();
  const { log, lines } = recordingLog();
  const mine = new Map<string, number>();
  const counts = new Map<string, string>();
  const settings = new Map<string, string>();
  let mode = 'none';
  const adopted: string[] = [];
  let lease: string | undefined = 'L1';
  kv.leases.set(box, 'L1');
  const follow = new Follow({
    kv,
    log,
    clock,
    prefix: '/argus',
    box,
    say: (err) => String(err),
    ownership: (camera) => {
      const epoch = mine.get(camera);
      return epoch === undefined ? undefined : { box, epoch };
    },
    lease: () => lease,
    cameras: {
      line_counts: {
        read: (c) => counts.get(c) ?? '{}',
        adopt: (c, v) => (counts.set(c, v), adopted.push(`line_counts ${c} ${v}`)),
      },
      control: {
        read: (c) => settings.get(c) ?? '{}',
        adopt: (c, v) => {
          JSON.parse(v);
          settings.set(c, v);
          adopted.push(`control ${c} ${v}`);
        },
      },
    },
    globals: {
      mode: {
        read: () => mode,
        adopt: (v) => ((mode = v), adopted.push(`mode ${v}`), true),
      },
    },
  });
  /** This box owns `camera` at `epoch`, as etcd says. */
  const own = (camera: string, epoch: number): void => {
    mine.set(camera, epoch);
    kv.owners.set(camera, { box, epoch });
  };
  return {
    kv,
    clock,
    lines,
    follow,
    own,
    mine,
    counts,
    settings,
    adopted,
    mode: () => mode,
    setMode: (m: string) => (mode = m),
    setLease: (l: string | undefined) => (lease = l),
  };
}

const COUNTS_KEY = '/argus/state/line_counts/gate';

describe('Follow: the state that follows a camera, kept in etcd', () => {
  it("the owner writes a camera's counts within a second, at most once a second, the latest value", async () => {
    const s = setUp();
    s.own('gate', 7);
    for (let n = 1; n <= 5; n++) {
      s.counts.set('gate', `{"in":{"person":{"in":${n}}}}`);
      s.follow.cameraChanged('gate', 'line_counts');
    }
    await s.clock.advance(0);
    assert.deepEqual(s.kv.puts, [{ key: COUNTS_KEY, value: '{"in":{"person":{"in":5}}}' }]);
    // More crossings right after: the next write waits for the second to pass.
    s.counts.set('gate', '{"in":{"person":{"in":6}}}');
    s.follow.cameraChanged('gate', 'line_counts');
    s.counts.set('gate', '{"in":{"person":{"in":7}}}');
    s.follow.cameraChanged('gate', 'line_counts');
    await s.clock.advance(WRITE_MS - 1);
    assert.equal(s.kv.puts.length, 1, 'no second write within the second');
    await s.clock.advance(1);
    assert.deepEqual(s.kv.puts.at(-1), { key: COUNTS_KEY, value: '{"in":{"person":{"in":7}}}' });
    assert.equal(s.kv.puts.length, 2);
  });

  it('writes the value a change had when made (a camera handed on is pruned here before its last write)', async () => {
    const s = setUp();
    s.own('gate', 7);
    s.counts.set('gate', '{"in":{"person":{"in":3}}}');
    s.follow.cameraChanged('gate', 'line_counts');
    s.counts.delete('gate'); // the camera stopped here: its local copy pruned
    await s.follow.flush('gate');
    assert.deepEqual(s.kv.puts, [{ key: COUNTS_KEY, value: '{"in":{"person":{"in":3}}}' }]);
  });

  it('does not write the state of a camera this box does not own', async () => {
    const s = setUp();
    s.counts.set('gate', '{"in":{"person":{"in":3}}}');
    s.follow.cameraChanged('gate', 'line_counts');
    await s.clock.advance(5 * WRITE_MS);
    assert.deepEqual(s.kv.puts, []);
  });

  it('a stale owner cannot overwrite the new owner’s state (the write is guarded by box and epoch)', async () => {
    const s = setUp();
    s.own('gate', 7);
    // Box b took the camera over (this box was cut off from etcd): a greater epoch, b's state.
    s.kv.owners.set('gate', { box: 'b', epoch: 42 });
    s.kv.put(COUNTS_KEY, '{"in":{"person":{"in":10}}}');
    s.counts.set('gate', '{"in":{"person":{"in":4}}}');
    s.follow.cameraChanged('gate', 'line_counts');
    await s.clock.advance(0);
    assert.equal(s.kv.refused, 1);
    assert.equal(s.kv.keys.get(COUNTS_KEY)?.value, '{"in":{"person":{"in":10}}}', "b's counts stand");
    assert.ok(s.lines.some((l) => /no longer owns it/.test(l.msg)));
    await s.clock.advance(5 * WRITE_MS);
    assert.equal(s.kv.refused, 1, 'not tried again');
  });

  it('etcd away: the change is kept and written once etcd is back', async () => {
    const s = setUp();
    s.own('gate', 7);
    s.kv.away = true;
    s.settings.set('gate', '{"fps":{"value":1,"base":5}}');
    s.follow.cameraChanged('gate', 'control');
    await s.clock.advance(3 * WRITE_MS);
    assert.deepEqual(s.kv.puts, []);
    s.kv.away = false;
    await s.clock.advance(WRITE_MS);
    assert.deepEqual(s.kv.puts, [
      { key: '/argus/state/control/gate', value: '{"fps":{"value":1,"base":5}}' },
    ]);
    await s.clock.advance(5 * WRITE_MS);
    assert.equal(s.kv.puts.length, 1, 'written once');
  });

  it('the box that takes a camera over adopts what etcd keeps of it; where etcd has none, its copy stays', async () => {
    const s = setUp('b');
    s.kv.put(COUNTS_KEY, '{"in":{"person":{"in":12}}}');
    s.kv.put('/argus/state/control/gate', '{"detect":{"value":false,"base":true}}');
    s.counts.set('yard', '{"x":{"car":{"out":2}}}');
    assert.deepEqual((await s.follow.take('gate')).sort(), ['control', 'line_counts']);
    assert.equal(s.counts.get('gate'), '{"in":{"person":{"in":12}}}');
    assert.equal(s.settings.get('gate'), '{"detect":{"value":false,"base":true}}');
    assert.deepEqual(await s.follow.take('yard'), []);
    assert.equal(s.counts.get('yard'), '{"x":{"car":{"out":2}}}', 'the local copy stays');
  });

  it('take() throws while etcd is away (the caller starts the camera with its local copy)', async () => {
    const s = setUp('b');
    s.kv.away = true;
    await assert.rejects(s.follow.take('gate'), /unreachable/);
  });

  it('a state etcd keeps that cannot be read is logged and the local copy stays', async () => {
    const s = setUp('b');
    s.kv.put('/argus/state/control/gate', 'not json');
    s.settings.set('gate', '{}');
    assert.deepEqual(await s.follow.take('gate'), []);
    assert.equal(s.settings.get('gate'), '{}');
    assert.ok(s.lines.some((l) => /unreadable/.test(l.msg)));
  });

  it('the mode: written by the box that heard it while a member, adopted by the others, not echoed', async () => {
    const a = setUp('a');
    a.setMode('away');
    a.follow.globalChanged('mode');
    await a.clock.advance(0);
    assert.deepEqual(a.kv.puts, [{ key: '/argus/global/mode', value: 'away' }]);
    assert.equal(await a.follow.sync(), false, 'its own write is not adopted again');
    assert.deepEqual(a.adopted, []);
    // Another box sets it.
    a.kv.put('/argus/global/mode', 'home');
    assert.equal(await a.follow.sync(), true);
    assert.equal(a.mode(), 'home');
    assert.equal(await a.follow.sync(), false, 'adopted once');
  });

  it('a mode changed here while etcd was away wins over the one etcd holds, and is written when back', async () => {
    const a = setUp('a');
    a.kv.put('/argus/global/mode', 'home');
    assert.equal(await a.follow.sync(), true);
    a.setLease(undefined); // etcd away: no lease
    a.setMode('away');
    a.follow.globalChanged('mode');
    await a.clock.advance(2 * WRITE_MS);
    assert.equal(a.kv.keys.get('/argus/global/mode')?.value, 'home');
    assert.equal(await a.follow.sync(), false);
    assert.equal(a.mode(), 'away');
    a.setLease('L1');
    await a.clock.advance(WRITE_MS);
    assert.equal(a.kv.keys.get('/argus/global/mode')?.value, 'away');
  });

  it('a box that is no member (its lease gone) does not write the mode', async () => {
    const a = setUp('a');
    a.kv.leases.set('a', 'L0'); // etcd holds the member key on another lease
    a.follow.globalChanged('mode');
    await a.clock.advance(0);
    assert.equal(a.kv.refused, 1);
    assert.deepEqual(a.kv.puts, []);
  });

  it('stop writes what is pending at once', async () => {
    const s = setUp();
    s.own('gate', 7);
    s.follow.cameraChanged('gate', 'line_counts'); // written at once (the first)
    await s.clock.advance(0);
    s.counts.set('gate', '{"in":{"person":{"in":9}}}');
    s.follow.cameraChanged('gate', 'line_counts');
    await s.follow.stop();
    assert.deepEqual(s.kv.puts.at(-1), { key: COUNTS_KEY, value: '{"in":{"person":{"in":9}}}' });
    assert.equal(s.clock.pending, 0, 'nothing scheduled after stop');
  });
});
