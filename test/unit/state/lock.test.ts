import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readdir, readFile, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  LOCK_FILE,
  OWNER_FILE,
  StateDirInUse,
  StateLock,
  systemProcesses,
  type LockHolder,
} from '../../../src/state/index.js';
import { tempDir } from '../../helpers/env.js';
import { recordingLog } from '../../helpers/fakes.js';

const A = '/etc/argus/a.yaml';
const B = '/home/me/b.yaml';

/** A real process that runs until the test ends. */
async function runningProcess(t: {
  after: (fn: () => unknown) => void;
}): Promise<ChildProcess & { pid: number }> {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  await once(child, 'spawn');
  t.after(() => child.kill('SIGKILL'));
  return child as ChildProcess & { pid: number };
}

/** The pid of a real process that has exited. */
async function exitedPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
  await once(child, 'exit');
  return child.pid!;
}

/** A lock as another Argus writes it, for the process `pid` as it is now. */
function lockOf(pid: number, config: string): LockHolder {
  const holder: LockHolder = {
    version: 1,
    pid,
    config,
    since: new Date().toISOString(),
    token: 'someone-else',
  };
  const boot = systemProcesses.bootId();
  const start = systemProcesses.startOf(pid);
  if (boot) holder.boot = boot;
  if (start) holder.start = start;
  return holder;
}

const readLock = async (dir: string): Promise<LockHolder> =>
  JSON.parse(await readFile(join(dir, LOCK_FILE), 'utf8')) as LockHolder;

describe('state directory lock', () => {
  it('takes a free directory: the lock names pid and config, the owner record the config; stop removes the lock only', async (t) => {
    const dir = join(await tempDir(t), 'state');
    const { log, lines } = recordingLog();
    const lock = new StateLock(dir, A, 'default', log);
    await lock.start();
    const held = await readLock(dir);
    assert.equal(held.pid, process.pid);
    assert.equal(held.config, A);
    assert.deepEqual(Object.keys(held).sort(), [
      'boot',
      'config',
      'pid',
      'since',
      'start',
      'token',
      'version',
    ]);
    assert.deepEqual(JSON.parse(await readFile(join(dir, OWNER_FILE), 'utf8')), { version: 1, config: A });
    assert.deepEqual(lines, [], 'nothing to say');
    await lock.stop();
    assert.deepEqual((await readdir(dir)).sort(), [OWNER_FILE], 'no lock, no temporary file left');
  });

  it('removes the temporary files a crash left while taking the lock, of processes gone only', async (t) => {
    const dir = await tempDir(t);
    const dead = await exitedPid();
    const gone = [`.${LOCK_FILE}.${dead}.0123abcd.tmp`, `.${LOCK_FILE}.${dead}.0123abcd.stale`];
    const alive = `.${LOCK_FILE}.${process.pid}.ffff0000.tmp`;
    for (const name of [...gone, alive, 'notes.txt']) await writeFile(join(dir, name), 'x');
    const lock = new StateLock(dir, A, 'config', recordingLog().log);
    await lock.start();
    await lock.stop();
    assert.deepEqual((await readdir(dir)).sort(), [alive, OWNER_FILE, 'notes.txt'].sort());
  });

  it('refuses a directory held by a running Argus of another config, naming both configs, the pid and the directory', async (t) => {
    const dir = await tempDir(t);
    const other = await runningProcess(t);
    const theirs = `${JSON.stringify(lockOf(other.pid, B))}\n`;
    await writeFile(join(dir, LOCK_FILE), theirs);
    const lock = new StateLock(dir, A, 'config', recordingLog().log);
    await assert.rejects(lock.start(), (err: Error) => {
      assert.ok(err instanceof StateDirInUse);
      assert.equal(
        err.message,
        `the state directory ${dir} is in use by another Argus (pid ${other.pid}) running config ${B}; ` +
          `config ${A} cannot share it (its history, line counts and control.json would mix): stop that one, or give this config its own state_dir`,
      );
      return true;
    });
    assert.equal(await readFile(join(dir, LOCK_FILE), 'utf8'), theirs, 'their lock is left as it is');
    await lock.stop();
    assert.equal(
      await readFile(join(dir, LOCK_FILE), 'utf8'),
      theirs,
      'and not removed by a stop of the refused one',
    );
  });

  it('refuses a second running Argus of the same config too', async (t) => {
    const dir = await tempDir(t);
    const other = await runningProcess(t);
    await writeFile(join(dir, LOCK_FILE), JSON.stringify(lockOf(other.pid, A)));
    await assert.rejects(
      new StateLock(dir, A, 'config', recordingLog().log).start(),
      new RegExp(
        `in use by another Argus \\(pid ${other.pid}\\) running this same config, ${A}; stop that one first`,
      ),
    );
  });

  it('takes over the lock of an Argus that is gone (same config: a restart after a crash; another config: logged)', async (t) => {
    for (const config of [A, B]) {
      const dir = await tempDir(t);
      const dead = await exitedPid();
      await writeFile(join(dir, LOCK_FILE), JSON.stringify(lockOf(dead, config)));
      const { log, lines } = recordingLog();
      const lock = new StateLock(dir, A, 'default', log);
      await lock.start();
      assert.equal((await readLock(dir)).pid, process.pid, `${config}: taken over`);
      assert.deepEqual(
        lines.map((l) => l.msg),
        ['the state directory was locked by an Argus that is no longer running; lock taken over'],
      );
      await lock.stop();
    }
  });

  it('takes over a lock whose pid is now another process (a start time or boot that is not the holder’s)', async (t) => {
    const dir = await tempDir(t);
    const other = await runningProcess(t);
    const reused = { ...lockOf(other.pid, B), start: '1' };
    await writeFile(join(dir, LOCK_FILE), JSON.stringify(reused));
    const lock = new StateLock(dir, A, 'config', recordingLog().log);
    await lock.start();
    assert.equal((await readLock(dir)).pid, process.pid);
    await lock.stop();
    const rebooted = { ...lockOf(other.pid, B), boot: 'another-boot' };
    await writeFile(join(dir, LOCK_FILE), JSON.stringify(rebooted));
    const again = new StateLock(dir, A, 'config', recordingLog().log);
    await again.start();
    assert.equal((await readLock(dir)).pid, process.pid);
    await again.stop();
  });

  it('takes over a lock file that does not parse, once it is not a fresh one', async (t) => {
    const dir = await tempDir(t);
    await writeFile(join(dir, LOCK_FILE), 'not json');
    const past = new Date(Date.now() - 60_000);
    await utimes(join(dir, LOCK_FILE), past, past);
    const { log, lines } = recordingLog();
    const lock = new StateLock(dir, A, 'config', log);
    await lock.start();
    assert.equal((await readLock(dir)).pid, process.pid);
    assert.deepEqual(
      lines.map((l) => l.msg),
      ['the state directory held a lock file that does not parse; taken over'],
    );
    await lock.stop();
  });

  it('of two taking a free directory at once, one holds it and the other is refused', async (t) => {
    const dir = await tempDir(t);
    const locks = [
      new StateLock(dir, A, 'config', recordingLog().log),
      new StateLock(dir, B, 'config', recordingLog().log),
    ];
    const outcomes = await Promise.allSettled(locks.map((l) => l.start()));
    assert.deepEqual(outcomes.map((o) => o.status).sort(), ['fulfilled', 'rejected']);
    const refused = outcomes.find((o) => o.status === 'rejected')!;
    assert.ok(refused.reason instanceof StateDirInUse);
    await Promise.all(locks.map((l) => l.stop()));
    assert.deepEqual(await readdir(dir), [OWNER_FILE], "the winner's stop removed its lock");
  });

  it('says when the directory was last another config’s, and when it keeps the shared directory of old', async (t) => {
    const dir = await tempDir(t);
    await writeFile(join(dir, OWNER_FILE), JSON.stringify({ version: 1, config: B }));
    const { log, lines } = recordingLog();
    const lock = new StateLock(dir, A, 'config', log);
    await lock.start();
    await lock.stop();
    assert.deepEqual(
      lines.map((l) => l.msg),
      [
        'the state directory was last used by another config; state of cameras this config does not have is kept, not shown',
      ],
    );
    assert.deepEqual(JSON.parse(await readFile(join(dir, OWNER_FILE), 'utf8')), { version: 1, config: A });
    const shared = await tempDir(t);
    const legacy = recordingLog();
    const adopted = new StateLock(shared, A, 'legacy', legacy.log);
    await adopted.start();
    await adopted.stop();
    assert.match(
      legacy.lines[0]!.msg,
      /the shared state directory of earlier versions holds state of this config’s cameras/,
    );
    const restart = recordingLog();
    const again = new StateLock(shared, A, 'legacy', restart.log);
    await again.start();
    await again.stop();
    assert.deepEqual(restart.lines, [], 'said once: the owner record names it from then on');
  });
});
