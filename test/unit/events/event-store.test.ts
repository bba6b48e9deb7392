import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { lstat, mkdir, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { EventStore, type EventStoreLimits, type StoredEvent } from '../../../src/events/index.js';
import { eventKey } from '../../../src/events/event-record.js';
import { repoRoot, tempDir } from '../../helpers/env.js';
import { recordingLog } from '../../helpers/fakes.js';

const ev = (n: number, over: Partial<StoredEvent> = {}): StoredEvent => ({
  id: `${1000 + n}-gate-${n}`,
  camera: 'gate',
  label: 'person',
  zones: [],
  start: 1000 + n,
  event: { type: 'new', n },
  ...over,
});

const snap = (n: number, size = 100) => ({
  full: Buffer.alloc(size, n),
  crop: Buffer.alloc(size / 2, n),
});

const ns = (events: Record<string, unknown>[]): unknown[] => events.map((e) => e.n);
const all = { limit: 1000 };

async function opened(
  dir: string,
  limits: Partial<EventStoreLimits> = {},
  log = recordingLog().log,
): Promise<EventStore> {
  const store = new EventStore(dir, { maxEvents: 100, maxBytes: 1e6, ...limits }, log);
  await store.load();
  return store;
}

describe('event history', () => {
  it('lists events newest first, filtered by camera, label, zone and start, up to a limit', async (t) => {
    const store = await opened(await tempDir(t));
    store.add(ev(1, { zones: ['drive'] }));
    store.add(ev(3, { camera: 'yard' }));
    store.add(ev(2, { label: 'car', zones: ['drive', 'street'] }));
    store.add(ev(4));
    assert.deepEqual(ns(store.list(all)), [4, 3, 2, 1], 'by start, whatever the order of arrival');
    assert.deepEqual(ns(store.list({ limit: 2 })), [4, 3]);
    assert.deepEqual(ns(store.list({ ...all, camera: 'gate' })), [4, 2, 1]);
    assert.deepEqual(ns(store.list({ ...all, label: 'car' })), [2]);
    assert.deepEqual(ns(store.list({ ...all, zone: 'drive' })), [2, 1]);
    assert.deepEqual(ns(store.list({ ...all, after: 1002 })), [4, 3], 'strictly after');
    assert.deepEqual(ns(store.list({ ...all, camera: 'gate', zone: 'street', after: 1001 })), [2]);
    store.update({ ...ev(2, { zones: ['drive', 'street', 'lawn'] }), event: { type: 'end', n: 2 } });
    store.update(ev(99));
    assert.deepEqual(store.list({ ...all, zone: 'lawn' }), [{ type: 'end', n: 2 }]);
    assert.equal(store.has(ev(99).id), false, 'an update adds nothing');
    await store.flush();
  });

  it('keeps events and snapshots across a restart, each in files of its own', async (t) => {
    const dir = await tempDir(t);
    const store = await opened(dir);
    store.add(ev(1));
    store.setSnapshot(ev(1).id, Promise.resolve(snap(1)), { snapshot: { score: 0.8 } });
    store.add(ev(2));
    store.update({ ...ev(2), event: { type: 'end', n: 2 } });
    await store.flush();
    const key = eventKey(ev(1).id);
    assert.deepEqual(
      (await readdir(dir)).sort(),
      [`${eventKey(ev(2).id)}.json`, `${key}.crop.jpg`, `${key}.jpg`, `${key}.json`].sort(),
    );

    const again = await opened(dir);
    // Event 1 had not ended: a restart that did not follow a stop ends it (tested below).
    const [two, one] = again.list(all);
    assert.deepEqual(two, { type: 'end', n: 2 });
    assert.deepEqual(
      { ...one, end_ts: undefined },
      { type: 'end', n: 1, snapshot: { score: 0.8 }, end_ts: undefined },
    );
    assert.deepEqual(await again.snapshot(ev(1).id, 'full'), snap(1).full);
    assert.deepEqual(await again.snapshot(ev(1).id, 'crop'), snap(1).crop);
    assert.equal(await again.snapshot(ev(2).id, 'full'), undefined, 'no snapshot');
    assert.equal(await again.snapshot('nope', 'full'), undefined);
    assert.equal(again.stats().events, 2);
  });

  it('serves a snapshot still being made once it is written, and replaces it with a better one', async (t) => {
    const store = await opened(await tempDir(t));
    store.add(ev(1));
    let done!: (s: ReturnType<typeof snap>) => void;
    store.setSnapshot(ev(1).id, new Promise((r) => (done = r)), {});
    const read = store.snapshot(ev(1).id, 'full');
    setTimeout(() => done(snap(7)), 20);
    assert.deepEqual(await read, snap(7).full);
    store.setSnapshot(ev(1).id, Promise.resolve(snap(8)), {});
    store.setSnapshot(ev(1).id, Promise.reject(new Error('sharp failed')), {});
    assert.deepEqual(await store.snapshot(ev(1).id, 'crop'), snap(8).crop, 'a failed one changes nothing');
  });

  it("writes an event's snapshot once, when it ends, however often a better one replaces it; serves the latest meanwhile", async (t) => {
    const dir = await tempDir(t);
    const store = await opened(dir);
    store.add(ev(1));
    const key = eventKey(ev(1).id);
    const jpgs = async (): Promise<string[]> => (await readdir(dir)).filter((n) => n.includes('.jpg')).sort();
    const until = async (what: string, cond: () => Promise<boolean>): Promise<void> => {
      for (const end = Date.now() + 10_000; !(await cond()); await new Promise((r) => setTimeout(r, 20)))
        if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    };
    for (const n of [1, 2, 3]) {
      store.setSnapshot(ev(1).id, Promise.resolve(snap(n)), { snapshot: { n } });
      assert.deepEqual(await store.snapshot(ev(1).id, 'full'), snap(n).full, 'the latest is served');
      assert.deepEqual(await jpgs(), [], 'not written while the event goes on (SNAPSHOT_SAVE_MS)');
    }
    assert.equal(store.stats().bytes > 150, true, 'counted in the bytes already');
    store.update({ ...ev(1), event: { type: 'end', n: 1, snapshot: { n: 3 } } });
    await until('the snapshot written at the end', async () => (await jpgs()).length === 2);
    assert.deepEqual(await readFile(join(dir, `${key}.jpg`)), snap(3).full);
    assert.deepEqual(await readFile(join(dir, `${key}.crop.jpg`)), snap(3).crop);
    // A better frame after the end (the snapshot at `end`) is written at once.
    store.setSnapshot(ev(1).id, Promise.resolve(snap(4)), {});
    await until('the end snapshot', async () => (await readFile(join(dir, `${key}.jpg`)))[0] === 4);
  });

  it("writes a new event's record at once, then holds its changes back (RECORD_SAVE_MS) and writes them together", async (t) => {
    const dir = await tempDir(t);
    const store = await opened(dir);
    const file = join(dir, `${eventKey(ev(1).id)}.json`);
    const onDisk = async (): Promise<unknown> =>
      (JSON.parse(await readFile(file, 'utf8')) as { event: unknown }).event;
    store.add(ev(1));
    for (let i = 0; i < 50 && !(await readdir(dir)).includes(`${eventKey(ev(1).id)}.json`); i++)
      await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(await onDisk(), { type: 'new', n: 1 }, 'the new event at once');
    for (const n of [2, 3, 4]) store.update({ ...ev(1), event: { type: 'update', n } });
    await new Promise((r) => setTimeout(r, 200));
    assert.deepEqual(await onDisk(), { type: 'new', n: 1 }, 'updates held back');
    assert.deepEqual(ns(store.list(all)), [4], 'served from memory meanwhile');
    store.update({ ...ev(1), event: { type: 'end', n: 5 } });
    await store.flush();
    assert.deepEqual(await onDisk(), { type: 'end', n: 5 }, 'flush writes the latest, once');
  });

  it('writes an end whose clip is being described together with the clip, in one write; an end without one at once', async (t) => {
    const dir = await tempDir(t);
    const store = await opened(dir);
    const file = (n: number): string => join(dir, `${eventKey(ev(n).id)}.json`);
    const onDisk = async (n: number): Promise<{ event: Record<string, unknown>; ino: number }> => ({
      event: (JSON.parse(await readFile(file(n), 'utf8')) as { event: Record<string, unknown> }).event,
      ino: (await lstat(file(n))).ino,
    });
    const settled = async (): Promise<void> => {
      for (let i = 0; i < 50 && !(await readdir(dir)).includes(`${eventKey(ev(2).id)}.json`); i++)
        await new Promise((r) => setTimeout(r, 20));
      await new Promise((r) => setTimeout(r, 200));
    };
    store.add(ev(1, { event: { type: 'new', n: 1, clip: { state: 'recording' } } }));
    store.add(ev(2));
    await settled();
    const written = await onDisk(1);
    store.update({ ...ev(1), event: { type: 'end', n: 1, clip: { state: 'recording' } } });
    store.update({ ...ev(2), event: { type: 'end', n: 2 } });
    await settled();
    assert.deepEqual(await onDisk(1), written, 'the end waits for its clip: no write');
    assert.deepEqual((await onDisk(2)).event, { type: 'end', n: 2 }, 'an end with no clip coming, at once');
    const ready = { state: 'ready', start: '2026-01-01T00:00:00.000Z', end: '2026-01-01T00:00:10.000Z' };
    store.setFields(ev(1).id, { clip: ready });
    for (let i = 0; i < 100 && (await onDisk(1)).ino === written.ino; i++)
      await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(
      (await onDisk(1)).event,
      { type: 'end', n: 1, clip: ready },
      'end and clip in one write',
    );
    await store.flush();

    store.add(ev(3, { event: { type: 'new', n: 3, clip: { state: 'recording' } } }));
    store.update({ ...ev(3), event: { type: 'end', n: 3, clip: { state: 'recording' } } });
    await store.flush();
    assert.deepEqual(
      (await onDisk(3)).event,
      { type: 'end', n: 3, clip: { state: 'recording' } },
      'flush writes a held end',
    );
  });

  it('an event not ended when Argus was killed (going on, or its end held for its clip) ends at the next start, when its record was last written', async (t) => {
    const dir = await tempDir(t);
    const store = await opened(dir);
    store.add(ev(1, { event: { type: 'new', n: 1, clip: { state: 'recording' } } }));
    store.add(ev(2, { event: { type: 'new', n: 2 } }));
    store.add(ev(3, { event: { type: 'end', n: 3, end_ts: '1970-01-01T00:00:01.003Z' } }));
    await store.flush();
    // Killed: the next start reads what is on disk.
    const before = Date.now();
    const again = await opened(dir);
    const event = (n: number): Record<string, unknown> => again.list(all).find((e) => e.n === n)!;
    for (const n of [1, 2]) {
      assert.equal(event(n).type, 'end', `event ${n} ends`);
      const end = Date.parse(event(n).end_ts as string);
      assert.ok(
        end <= before && end >= before - 60_000,
        `event ${n} ends when its record was written: ${String(event(n).end_ts)}`,
      );
    }
    assert.deepEqual((event(1).clip as { state: string }).state, 'failed', 'its clip never will be');
    assert.deepEqual(
      event(3),
      { type: 'end', n: 3, end_ts: '1970-01-01T00:00:01.003Z' },
      'an ended one as it was',
    );
    await again.flush();
    assert.equal((await opened(dir)).list(all).find((e) => e.n === 2)!.type, 'end', 'and it is written so');
  });

  it('flush writes the snapshots of events still going on (a stop), and a restart serves them', async (t) => {
    const dir = await tempDir(t);
    const store = await opened(dir);
    store.add(ev(1));
    store.setSnapshot(ev(1).id, Promise.resolve(snap(5)), {});
    await store.flush();
    const again = await opened(dir);
    assert.deepEqual(await again.snapshot(ev(1).id, 'full'), snap(5).full);
  });

  it('evicts the oldest beyond the count, with their files', async (t) => {
    const dir = await tempDir(t);
    const store = await opened(dir, { maxEvents: 3 });
    for (let n = 1; n <= 5; n++) {
      store.add(ev(n));
      store.setSnapshot(ev(n).id, Promise.resolve(snap(n)), {});
    }
    await store.flush();
    assert.deepEqual(ns(store.list(all)), [5, 4, 3]);
    assert.equal(store.has(ev(1).id), false);
    const files = await readdir(dir);
    assert.equal(files.length, 9, files.join(' '));
    assert.ok(!files.some((f) => f.startsWith(eventKey(ev(2).id))), 'evicted files are removed');
    store.update({ ...ev(1), event: { type: 'end', n: 1 } });
    store.setSnapshot(ev(1).id, Promise.resolve(snap(1)), {});
    await store.flush();
    assert.equal((await readdir(dir)).length, 9, 'an evicted event that ends later stays out');
  });

  it('evicts the oldest beyond the bytes, keeping the newest however big, and applies new limits at load', async (t) => {
    const dir = await tempDir(t);
    const store = await opened(dir, { maxBytes: 1000 });
    for (let n = 1; n <= 4; n++) {
      store.add(ev(n));
      store.setSnapshot(ev(n).id, Promise.resolve(snap(n, 200)), {});
      await store.flush();
    }
    // Each event: 300 bytes of snapshot and a record of about 100.
    assert.deepEqual(ns(store.list(all)), [4, 3]);
    assert.ok(store.stats().bytes <= 1000, `${store.stats().bytes} bytes`);
    store.add(ev(5));
    store.setSnapshot(ev(5).id, Promise.resolve(snap(5, 2000)), {});
    await store.flush();
    assert.deepEqual(ns(store.list(all)), [5]);
    assert.equal((await readdir(dir)).length, 3);

    const smaller = await opened(dir, { maxEvents: 100, maxBytes: 1e6 });
    smaller.add(ev(6));
    await smaller.flush();
    const fewer = await opened(dir, { maxEvents: 1 });
    assert.deepEqual(ns(fewer.list(all)), [6]);
    await fewer.flush();
    assert.equal((await readdir(dir)).length, 1);
  });

  it('removes corrupt records, stray snapshots and temporary files at load, leaves unreadable ones and files not its own, keeps the rest', async (t) => {
    const dir = await tempDir(t);
    const store = await opened(dir);
    store.add(ev(1));
    store.add(ev(2));
    store.setSnapshot(ev(2).id, Promise.resolve(snap(2)), {});
    store.add(ev(3));
    await store.flush();
    const bad = eventKey(ev(2).id);
    await writeFile(join(dir, `${bad}.json`), '{"version":1,"id":"12'); // torn (it cannot happen: files are renamed whole)
    await writeFile(join(dir, `${eventKey(ev(3).id)}.json`), JSON.stringify({ version: 1, ...ev(1) }));
    await writeFile(join(dir, `${eventKey('orphan')}.crop.jpg`), 'x'); // its record was evicted
    await writeFile(join(dir, 'stray.jpg'), 'x');
    await mkdir(join(dir, `${eventKey('locked')}.json`)); // reading it fails with EISDIR
    await writeFile(join(dir, `${eventKey('locked')}.jpg`), 'x');
    await writeFile(join(dir, `.${eventKey(ev(1).id)}.json.123.tmp`), '{');
    const { log, lines } = recordingLog();
    const again = await opened(dir, {}, log);
    assert.deepEqual(ns(again.list(all)), [1]);
    assert.deepEqual(
      (await readdir(dir)).sort(),
      [
        `${eventKey(ev(1).id)}.json`,
        `${eventKey('locked')}.json`,
        `${eventKey('locked')}.jpg`,
        'stray.jpg',
      ].sort(),
      'what cannot be read, and what is not its own, is left as it is',
    );
    const left = lines.find((l) => l.msg.includes('did not write')) as { names?: string[] } | undefined;
    assert.deepEqual(left?.names?.sort(), [`${eventKey('locked')}.json`, 'stray.jpg'].sort());
    const warned = lines.filter((l) => l.msg.includes('corrupt')).map((l) => l.file);
    assert.deepEqual(
      warned.sort(),
      [join(dir, `${bad}.json`), join(dir, `${eventKey(ev(3).id)}.json`)].sort(),
    );
  });

  it('follows no symbolic link: a linked snapshot or record is neither served nor read, and what it points to survives', async (t) => {
    const root = await tempDir(t);
    const outside = join(root, 'outside');
    await mkdir(outside);
    await writeFile(join(outside, 'secret.jpg'), 'not yours');
    await writeFile(join(outside, 'record.json'), JSON.stringify({ version: 1, ...ev(9) }));
    const dir = join(root, 'state', 'events');
    const store = await opened(dir, { maxEvents: 2 });
    store.add(ev(1));
    store.setSnapshot(ev(1).id, Promise.resolve(snap(1)), {});
    await store.flush();
    const key = eventKey(ev(1).id);
    // Links in the place of an event's snapshot, of a record, of a temporary file Argus writes next.
    await rm(join(dir, `${key}.jpg`));
    await symlink(join(outside, 'secret.jpg'), join(dir, `${key}.jpg`));
    await symlink(join(outside, 'record.json'), join(dir, `${eventKey(ev(9).id)}.json`));
    await symlink(join(outside, 'secret.jpg'), join(dir, `.${eventKey(ev(2).id)}.json.${process.pid}.tmp`));
    await symlink(join(outside, 'secret.jpg'), join(dir, `${eventKey(ev(3).id)}.crop.jpg`));

    const { log, lines } = recordingLog();
    const again = await opened(dir, { maxEvents: 2 }, log);
    assert.deepEqual(ns(again.list(all)), [1], 'the linked record is not read');
    assert.equal(await again.snapshot(ev(1).id, 'full'), undefined, 'the linked snapshot is not served');
    assert.deepEqual(await again.snapshot(ev(1).id, 'crop'), snap(1).crop);
    assert.ok(lines.some((l) => l.msg.includes('did not write')));
    again.add(ev(2)); // written where a link was: the link is replaced, not written through
    again.add(ev(3));
    again.add(ev(4)); // evicts event 1, whose snapshot is the link
    await again.flush();
    assert.deepEqual(ns(again.list(all)), [4, 3]);
    assert.equal(await readFile(join(outside, 'secret.jpg'), 'utf8'), 'not yours');
    assert.deepEqual(JSON.parse(await readFile(join(outside, 'record.json'), 'utf8')), {
      version: 1,
      ...ev(9),
    });
    assert.ok((await lstat(join(dir, `${key}.jpg`))).isSymbolicLink(), 'a link is not removed as a snapshot');
  });

  it('a history directory that is a symbolic link is not used: logged, kept in memory, the folder it points to untouched', async (t) => {
    const root = await tempDir(t);
    const outside = join(root, 'elsewhere');
    await mkdir(outside);
    const files = {
      'photo.jpg': 'a photo',
      [`${eventKey('x')}.jpg`]: 'a name of Argus, not its file',
      [`.${eventKey('x')}.json.1.tmp`]: '{',
      [`${eventKey(ev(5).id)}.json`]: JSON.stringify({ version: 1, ...ev(5) }),
    };
    for (const [name, text] of Object.entries(files)) await writeFile(join(outside, name), text);
    await mkdir(join(root, 'state'));
    const dir = join(root, 'state', 'events');
    await symlink(outside, dir);
    const { log, lines } = recordingLog();
    const store = await opened(dir, { maxEvents: 1 }, log);
    assert.equal(lines.filter((l) => l.msg.includes('is a symbolic link')).length, 1);
    assert.deepEqual(store.list(all), [], 'nothing read from it');
    store.add(ev(1));
    store.setSnapshot(ev(1).id, Promise.resolve(snap(1)), {});
    store.add(ev(2)); // evicts event 1
    await store.flush();
    assert.deepEqual(ns(store.list(all)), [2], 'in memory');
    assert.equal(await store.snapshot(ev(2).id, 'full'), undefined);
    assert.deepEqual((await readdir(outside)).sort(), Object.keys(files).sort());
    for (const [name, text] of Object.entries(files))
      assert.equal(await readFile(join(outside, name), 'utf8'), text);
    assert.equal(lines.filter((l) => l.msg.includes('is a symbolic link')).length, 1, 'logged once');
  });

  it('never stops Argus: a directory it cannot make keeps the history in memory, failed writes are logged', async (t) => {
    const dir = await tempDir(t);
    const file = join(dir, 'events');
    await writeFile(file, 'not a directory');
    const { log, lines } = recordingLog();
    const store = await opened(file, {}, log);
    assert.ok(lines.some((l) => l.msg.includes('kept in memory only')));
    store.add(ev(1));
    store.setSnapshot(ev(1).id, Promise.resolve(snap(1)), {});
    store.add(ev(2));
    await store.flush();
    assert.deepEqual(ns(store.list(all)), [2, 1]);
    assert.equal(lines.filter((l) => l.msg === 'cannot write the event history').length, 1, 'logged once');
    assert.equal(await store.snapshot(ev(1).id, 'full'), undefined);
  });

  it('with max_events 0 keeps nothing and makes no directory', async (t) => {
    const dir = join(await tempDir(t), 'events');
    const store = await opened(dir, { maxEvents: 0 });
    store.add(ev(1));
    store.setSnapshot(ev(1).id, Promise.resolve(snap(1)), {});
    await store.flush();
    assert.deepEqual(store.list(all), []);
    await assert.rejects(readdir(dir), /ENOENT/);
  });

  it('a process killed at any moment of its writes leaves a history that opens, with every event it finished', async (t) => {
    const dir = await tempDir(t);
    // A child adding events with snapshots (of 1-60 kB, each byte its event's number), updating
    // and ending them, as fast as it can, with the real module; it prints each event it has
    // finished writing. Past 40 events the oldest are evicted: files are removed too.
    const child = `
      import { EventStore } from ${JSON.stringify(join(repoRoot, 'dist/src/events/index.js'))};
      import { pino } from 'pino';
      const store = new EventStore(${JSON.stringify(dir)}, { maxEvents: 40, maxBytes: 1e9 }, pino({ level: 'silent' }));
      await store.load();
      const first = Math.max(0, ...store.list({ limit: 1 }).map((e) => e.n + 1));
      for (let n = first; ; n++) {
        const e = { id: 'e' + n, camera: 'gate', label: 'person', zones: [], start: n, event: { n, type: 'new' } };
        store.add(e);
        const size = 1000 + ((n * 7919) % 60000);
        store.setSnapshot(e.id, Promise.resolve({ full: Buffer.alloc(size, n % 256), crop: Buffer.alloc(size >> 2, n % 256) }), { size });
        store.update({ ...e, event: { n, type: 'update', size } });
        store.update({ ...e, event: { n, type: 'end', size } });
        await store.flush();
        process.stdout.write('done ' + n + '\\n');
      }
    `;
    let finished = -1;
    for (let round = 0; round < 8; round++) {
      const p = spawn(process.execPath, ['--input-type=module', '-e', child], {
        cwd: repoRoot,
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let out = '';
      p.stdout.on('data', (d: Buffer) => (out += d.toString()));
      await new Promise<void>((resolve) => p.stdout.once('data', () => resolve()));
      await new Promise((r) => setTimeout(r, 10 + Math.random() * 200));
      p.kill('SIGKILL');
      await new Promise((r) => p.once('exit', r));
      const done = [...out.matchAll(/done (\d+)/g)].map((m) => Number(m[1]));
      finished = Math.max(finished, ...done);

      const { log, lines } = recordingLog();
      const store = await opened(dir, { maxEvents: 40, maxBytes: 1e9 }, log);
      assert.deepEqual(
        lines.filter((l) => l.msg.includes('corrupt')),
        [],
        `round ${round}: every file is whole`,
      );
      const events = store.list(all) as { n: number; type: string; size?: number }[];
      assert.ok(events.length <= 40);
      assert.ok(
        events.some((e) => e.n === finished && e.type === 'end'),
        `round ${round}: event ${finished}, finished, is there (${events.length} events, newest ${events[0]?.n})`,
      );
      for (const e of events) {
        // A record is written before the snapshot it names: a crash between loses that snapshot.
        const full = await store.snapshot(`e${e.n}`, 'full');
        if (e.n === finished) assert.ok(full, `round ${round}: the finished event's snapshot is there`);
        if (full) {
          assert.ok(e.size !== undefined && full.length === e.size, `round ${round}: snapshot ${e.n} whole`);
          assert.ok(
            full.every((b) => b === e.n % 256),
            `round ${round}: snapshot ${e.n} is its own`,
          );
        }
      }
      const left = await readdir(dir);
      assert.deepEqual(
        left.filter((f) => f.endsWith('.tmp')),
        [],
        'temporary files are removed',
      );
      assert.ok(left.length <= 3 * events.length, `${left.length} files for ${events.length} events`);
      t.diagnostic(`round ${round}: killed after event ${finished}; ${events.length} events open`);
    }
  });
});

describe('event history: clips', () => {
  const clipOf = async (store: EventStore, id: string): Promise<Buffer | undefined> => {
    const c = await store.openClip(id);
    if (!c) return undefined;
    try {
      return await c.file.readFile();
    } finally {
      await c.file.close();
    }
  };

  it('keeps a clip written to its temporary file, counts it in the bytes, and names it in the record', async (t) => {
    const dir = await tempDir(t);
    const store = await opened(dir, { maxBytes: 5000 });
    store.add(ev(1));
    const tmp = (await store.clipTemp(ev(1).id))!;
    assert.match(tmp, /\/\.[0-9a-f]{24}\.mp4\.\d+\.tmp$/);
    await writeFile(tmp, Buffer.alloc(3000, 7));
    const bytes = await store.adoptClip(ev(1).id, tmp, (n) => ({ clip: { bytes: n } }));
    assert.equal(bytes, 3000);
    assert.deepEqual(await clipOf(store, ev(1).id), Buffer.alloc(3000, 7));
    assert.deepEqual(store.list(all)[0]!.clip, { bytes: 3000 });
    await store.flush();
    assert.ok(store.stats().bytes >= 3000);
    // Past max_mb with the clip: the oldest event goes with its clip.
    store.add(ev(2));
    const tmp2 = (await store.clipTemp(ev(2).id))!;
    await writeFile(tmp2, Buffer.alloc(3000, 8));
    await store.adoptClip(ev(2).id, tmp2, () => ({}));
    await store.flush();
    assert.deepEqual(ns(store.list(all)), [2]);
    const files = await readdir(dir);
    assert.ok(!files.includes(`${eventKey(ev(1).id)}.mp4`));
    assert.ok(files.includes(`${eventKey(ev(2).id)}.mp4`));
    // Reloaded, the clip is still there and counted.
    const again = await opened(dir, { maxBytes: 5000 });
    assert.deepEqual(await clipOf(again, ev(2).id), Buffer.alloc(3000, 8));
    assert.ok(again.stats().bytes >= 3000);
  });

  it('never serves half a clip: a temporary file left by a crash is removed at load', async (t) => {
    const dir = await tempDir(t);
    const store = await opened(dir);
    store.add(ev(1));
    await store.flush();
    const tmp = (await store.clipTemp(ev(1).id))!;
    await writeFile(tmp, Buffer.alloc(500, 1)); // killed while ffmpeg wrote it
    assert.equal(await clipOf(store, ev(1).id), undefined);
    const again = await opened(dir);
    assert.deepEqual(await readdir(dir), [`${eventKey(ev(1).id)}.json`]);
    assert.equal(await clipOf(again, ev(1).id), undefined);
  });

  it('a clip too large for the history takes its event out with it: refused, nothing left', async (t) => {
    const dir = await tempDir(t);
    const store = await opened(dir, { maxBytes: 20_000 });
    store.add(ev(1));
    store.add(ev(2)); // newer: the byte bound keeps the newest event, whatever its size
    const tmp = (await store.clipTemp(ev(1).id))!;
    await writeFile(tmp, Buffer.alloc(50_000));
    await assert.rejects(
      store.adoptClip(ev(1).id, tmp, () => ({ clip: { state: 'ready' } })),
      (err: NodeJS.ErrnoException) => err.code === 'EVICTED',
    );
    await store.flush();
    assert.deepEqual(await readdir(dir), [`${eventKey(ev(2).id)}.json`]);
    assert.equal(store.has(ev(1).id), false);
  });

  it('deleting an event deletes its snapshot and clip; a clip for an event no longer kept is removed', async (t) => {
    const dir = await tempDir(t);
    const store = await opened(dir);
    store.add(ev(1));
    store.setSnapshot(ev(1).id, Promise.resolve(snap(1)), {});
    const tmp = (await store.clipTemp(ev(1).id))!;
    await writeFile(tmp, Buffer.alloc(100));
    await store.adoptClip(ev(1).id, tmp, () => ({}));
    store.add(ev(2));
    const tmp2 = (await store.clipTemp(ev(2).id))!;
    await writeFile(tmp2, Buffer.alloc(100));
    assert.equal(await store.remove(ev(1).id), true);
    assert.equal(await store.remove(ev(1).id), false);
    assert.equal(await store.remove(ev(2).id), true);
    await assert.rejects(
      store.adoptClip(ev(2).id, tmp2, () => ({})),
      /no longer in the history/,
    );
    await store.flush();
    assert.deepEqual(await readdir(dir), []);
  });

  it('drops events older than max_days, with their files', async (t) => {
    const dir = await tempDir(t);
    let now = 1000 + 10;
    const store = new EventStore(
      dir,
      { maxEvents: 100, maxBytes: 1e6, maxAgeMs: 5 },
      recordingLog().log,
      () => now,
    );
    await store.load();
    store.add(ev(6));
    store.add(ev(8));
    await store.flush();
    now = 1000 + 12;
    store.expire();
    await store.flush();
    assert.deepEqual(ns(store.list(all)), [8]);
    assert.deepEqual(await readdir(dir), [`${eventKey(ev(8).id)}.json`]);
  });
});
