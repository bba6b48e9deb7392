import assert from 'node:assert/strict';
import { lstat, mkdir, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { EventStore } from '../../src/events/index.js';
import { eventKey } from '../../src/events/event-record.js';
import { httpBase, startDaemon, writeDaemonConfig } from '../helpers/daemon.js';
import { tempDir, waitFor } from '../helpers/env.js';
import { freePort } from '../helpers/rtsp.js';

/**
 * Issue 24, item 2: `argus run` on a real state directory with real symbolic links in it. Argus
 * touches only the files it wrote, follows no link out of the state directory, and says what it
 * left alone.
 */
const STARTED = '"msg":"argus started"';

/** Files and what they hold, to put in a folder and to find there unchanged. */
const OUTSIDE = {
  'holiday.jpg': 'a photo that is not Argus’',
  'notes.txt': 'notes',
  [`${eventKey('not-argus')}.jpg`]: 'a file of one of Argus’ names',
  [`.${eventKey('not-argus')}.json.1.tmp`]: 'and of its temporary files',
};

async function fill(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  for (const [name, text] of Object.entries(OUTSIDE)) await writeFile(join(dir, name), text);
}

async function assertUntouched(dir: string): Promise<void> {
  assert.deepEqual((await readdir(dir)).sort(), Object.keys(OUTSIDE).sort());
  for (const [name, text] of Object.entries(OUTSIDE))
    assert.equal(await readFile(join(dir, name), 'utf8'), text, name);
}

async function start(
  t: Parameters<typeof tempDir>[0],
  dir: string,
  cameras?: Record<string, unknown>,
): Promise<ReturnType<typeof startDaemon>> {
  const config = await writeDaemonConfig(dir, { mqtt: { embedded: { port: await freePort() } }, cameras });
  const daemon = startDaemon(t, config);
  await waitFor('Argus to start', () => daemon.output().includes(STARTED), 60_000);
  return daemon;
}

async function stop(daemon: ReturnType<typeof startDaemon>): Promise<void> {
  daemon.child.kill('SIGTERM');
  assert.equal((await daemon.exited).code, 0);
}

describe(
  'the state directory: only what Argus wrote, no link followed (issue 24)',
  { timeout: 120_000 },
  () => {
    it('an events/ that is a symbolic link is not used: the folder it points to keeps every file; one log line says why', async (t) => {
      const dir = await tempDir(t);
      const elsewhere = join(dir, 'elsewhere');
      await fill(elsewhere);
      await mkdir(join(dir, 'state'));
      await symlink(elsewhere, join(dir, 'state', 'events'));

      const daemon = await start(t, dir);
      const base = await httpBase(daemon.output);
      const res = await fetch(`${base}/api/events`);
      assert.deepEqual([res.status, await res.json()], [200, []]);
      await stop(daemon);
      await assertUntouched(elsewhere);
      const said = daemon
        .output()
        .split('\n')
        .filter((l) => l.includes('is a symbolic link'));
      assert.equal(said.length, 1, daemon.output());
      assert.match(said[0]!, new RegExp(`"target":"${elsewhere}"`));
      assert.ok((await lstat(join(dir, 'state', 'events'))).isSymbolicLink(), 'the link itself stays');
    });

    it('in events/, files of other names stay (named in the log), a snapshot that is a link is not served, and what it points to survives', async (t) => {
      const dir = await tempDir(t);
      const events = join(dir, 'state', 'events');
      // An event with its snapshot, as a last run left it.
      const store = new EventStore(events, { maxEvents: 10, maxBytes: 1e6 }, pino({ level: 'silent' }));
      await store.load();
      const id = '1796049790233-gate-1';
      store.add({ id, camera: 'gate', label: 'person', zones: [], start: 1796049790233, event: { id } });
      const jpegs = { full: Buffer.from('full jpeg'), crop: Buffer.from('crop jpeg') };
      store.setSnapshot(id, Promise.resolve(jpegs), {});
      await store.flush();
      // Someone else's files beside it, and its snapshot swapped for a link to a file outside.
      await fill(events);
      const secret = join(dir, 'secret.jpg');
      await writeFile(secret, 'outside the state directory');
      await rm(join(events, `${eventKey(id)}.jpg`));
      await symlink(secret, join(events, `${eventKey(id)}.jpg`));

      // The API lists the events of the config's cameras only (issue 45, item 3): it has 'gate'.
      const daemon = await start(t, dir, { gate: { url: 'lavfi:color=c=black:s=320x240:r=1', fps: 1 } });
      const base = await httpBase(daemon.output);
      const listed = (await (await fetch(`${base}/api/events`)).json()) as { id: string }[];
      assert.deepEqual(
        listed.map((e) => e.id),
        [id],
      );
      const path = `${base}/api/events/${encodeURIComponent(id)}/snapshot.jpg`;
      const linked = await fetch(path);
      assert.deepEqual([linked.status, await linked.text()], [404, 'no snapshot for this event\n']);
      const crop = await fetch(`${path}?crop=1`);
      assert.deepEqual([crop.status, Buffer.from(await crop.arrayBuffer())], [200, jpegs.crop]);
      await stop(daemon);

      assert.equal(await readFile(secret, 'utf8'), 'outside the state directory');
      assert.ok((await lstat(join(events, `${eventKey(id)}.jpg`))).isSymbolicLink());
      assert.equal(await readFile(join(events, 'holiday.jpg'), 'utf8'), OUTSIDE['holiday.jpg']);
      assert.equal(await readFile(join(events, 'notes.txt'), 'utf8'), OUTSIDE['notes.txt']);
      assert.deepEqual(
        (await readdir(events)).sort(),
        [
          `${eventKey(id)}.json`,
          `${eventKey(id)}.jpg`,
          `${eventKey(id)}.crop.jpg`,
          'holiday.jpg',
          'notes.txt',
        ].sort(),
        'regular files of its own names that no record names are its leftovers: removed',
      );
      const left = daemon
        .output()
        .split('\n')
        .find((l) => l.includes('did not write'));
      assert.ok(left, daemon.output());
      for (const name of ['holiday.jpg', 'notes.txt', `${eventKey(id)}.jpg`])
        assert.ok(left.includes(name), name);
    });
  },
);
