import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmod, chown, lstat, mkdir, mkdtemp, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { checkDir, RING_CHECK_MS } from '../../../src/record/ring-dir.js';
import { Ring } from '../../../src/record/ring.js';
import { FakeClock, recordingLog } from '../../helpers/fakes.js';

async function home(t: TestContext): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'argus-ringdir-'));
  t.after(async () => {
    spawnSync('chattr', ['-R', '-i', dir]);
    await rm(dir, { recursive: true, force: true });
  });
  return dir;
}

/** Whether this process can make a directory take no new file (as root a mode does not: `chattr +i` does). */
function immutableSkip(): string | false {
  if (process.getuid?.() !== 0) return false;
  const r = spawnSync('chattr', ['--help']);
  return r.error ? 'root without chattr: a directory cannot be made unwritable (case skipped)' : false;
}

describe('checkDir', () => {
  it('makes a missing directory (and its parent) 0700; a file in its place is removed, a changed mode set back', async (t) => {
    const dir = join(await home(t), 'ring', 'abc');
    const made = await checkDir(dir, true);
    assert.equal(made.ok, true);
    assert.match(made.ok ? (made.mended ?? '') : '', /missing: made again/);
    assert.equal((await stat(dir)).mode & 0o777, 0o700);
    await rm(dir, { recursive: true });
    await writeFile(dir, 'someone else');
    const file = await checkDir(dir, false);
    assert.match(file.ok ? (file.mended ?? '') : '', /a file stood in its place/);
    assert.ok((await lstat(dir)).isDirectory());
    await chmod(dir, 0o000);
    const mode = await checkDir(dir, true);
    assert.match(mode.ok ? (mode.mended ?? '') : '', /mode was 0000: set back to 0700/);
    assert.equal((await stat(dir)).mode & 0o777, 0o700);
    assert.deepEqual(await readdir(dir), [], 'the probe leaves nothing');
    const again = await checkDir(dir, true);
    assert.deepEqual(again.ok && [again.mended, again.id], [undefined, made.ok ? again.id : undefined]);
  });

  it("refuses a symbolic link without following it, and another user's directory", async (t) => {
    const root = await home(t);
    const target = join(root, 'elsewhere');
    await mkdir(target);
    const dir = join(root, 'abc');
    await symlink(target, dir);
    const linked = await checkDir(dir, true);
    assert.equal(linked.ok, false);
    assert.match(
      linked.ok ? '' : linked.error,
      new RegExp(`ring directory ${dir} is a symbolic link: Argus does not follow it`),
    );
    assert.deepEqual(await readdir(target), [], 'nothing written through it');
    assert.ok((await lstat(dir)).isSymbolicLink(), 'the link is left for whoever made it');
    if (process.getuid?.() !== 0) return t.diagnostic('not root: the other-owner case needs chown (skipped)');
    await rm(dir);
    await mkdir(dir, { mode: 0o700 });
    await chown(dir, 65534, 65534);
    const foreign = await checkDir(dir, true);
    assert.match(foreign.ok ? '' : foreign.error, /belongs to user 65534, not to Argus/);
  });

  it(
    'a directory that takes no file is refused, naming it; usable again once it does',
    { skip: immutableSkip() },
    async (t) => {
      const dir = join(await home(t), 'abc');
      await mkdir(dir, { mode: 0o700 });
      if (process.getuid?.() === 0) assert.equal(spawnSync('chattr', ['+i', dir]).status, 0);
      else await chmod(dir, 0o500);
      const r = await checkDir(dir, true);
      if (process.getuid?.() === 0) {
        assert.equal(r.ok, false);
        assert.match(
          r.ok ? '' : r.error,
          new RegExp(`the ring directory ${dir} cannot be used: .*(EPERM|EACCES)`),
        );
        spawnSync('chattr', ['-i', dir]);
      } else assert.match(r.ok ? (r.mended ?? '') : '', /mode was 0500/, 'its owner sets the mode back');
      assert.equal((await checkDir(dir, true)).ok, true);
    },
  );
});

describe('Ring: its directory under a running daemon', () => {
  it('checks every RING_CHECK_MS: a deleted directory is made again, a symbolic link refused (logged once) until removed', async (t) => {
    const root = await home(t);
    const dir = join(root, 'ring', 'abc');
    const clock = new FakeClock();
    const { log, lines } = recordingLog();
    const ring = new Ring('cam', { dir, keepMs: 60_000, maxBytes: 1e8, segmentMs: 2000 }, { clock, log });
    await ring.start();
    t.after(() => ring.stop());
    assert.deepEqual((await readdir(dir)).sort(), ['in-a.fifo', 'in-b.fifo']);
    // Made at the start (a fresh state directory): nothing was changed under Argus.
    const mended = () => lines.filter((l) => l.msg === 'the ring directory was changed under Argus: mended');
    assert.deepEqual(mended(), [], 'made at the start: no warning');
    await rm(join(root, 'ring'), { recursive: true });
    await clock.advance(RING_CHECK_MS);
    await ring.check();
    assert.ok((await lstat(dir)).isDirectory(), 'made again');
    assert.equal(ring.lastFault?.fault, 'ring_removed');
    assert.equal(mended().length, 1, 'removed under Argus: said');
    // A symbolic link in its place: refused, the ring writes nothing and gives ffmpeg no pipe.
    const target = join(root, 'elsewhere');
    await mkdir(target);
    await rm(dir, { recursive: true });
    await symlink(target, dir);
    for (let i = 0; i < 3; i++) {
      await clock.advance(RING_CHECK_MS);
      await ring.check();
    }
    assert.match(ring.unusable ?? '', /is a symbolic link/);
    assert.equal(ring.lastFault?.fault, 'ring_unusable');
    assert.equal(ring.input(), undefined);
    assert.deepEqual(await readdir(target), []);
    const refused = lines.filter(
      (l) => l.msg === "the ring directory cannot be used: this camera's clips are refused",
    );
    assert.equal(refused.length, 1, 'logged once, not at every check');
    await rm(dir);
    await clock.advance(RING_CHECK_MS);
    await ring.check();
    assert.equal(ring.unusable, undefined);
    assert.ok(lines.some((l) => l.msg === 'the ring directory can be used again: clips resume'));
    assert.ok(ring.input()?.startsWith(dir), 'the next run of ffmpeg writes to the ring again');
  });

  it('stops checking at its stop', async (t) => {
    const root = await home(t);
    const dir = join(root, 'abc');
    const clock = new FakeClock();
    const ring = new Ring(
      'cam',
      { dir, keepMs: 60_000, maxBytes: 1e8, segmentMs: 2000 },
      { clock, log: recordingLog().log },
    );
    await ring.start();
    assert.equal(clock.pending, 1);
    await ring.stop();
    assert.equal(clock.pending, 0);
    await rm(dir, { recursive: true });
    await clock.advance(RING_CHECK_MS * 3);
    await ring.check();
    await assert.rejects(lstat(dir), { code: 'ENOENT' }, 'a stopped ring makes nothing');
  });
});
