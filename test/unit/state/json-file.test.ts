import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { lstat, mkdir, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { JsonFile } from '../../../src/state/index.js';
import { systemClock } from '../../../src/core/clock.js';
import { repoRoot, tempDir } from '../../helpers/env.js';
import { FakeClock, recordingLog } from '../../helpers/fakes.js';

interface Doc {
  n: number;
}
const parse = (d: unknown): Doc => {
  if (typeof d !== 'object' || d === null || typeof (d as Doc).n !== 'number')
    throw new Error('n is not a number');
  return d as Doc;
};

describe('state file', () => {
  it('reads nothing from a missing file, writes after the delay, and reads back what it wrote', async (t) => {
    const dir = await tempDir(t);
    const clock = new FakeClock();
    const { log } = recordingLog();
    const file = new JsonFile(join(dir, 'sub', 'a.json'), {
      parse,
      maxBytes: 1000,
      delayMs: 1000,
      clock,
      log,
    });
    assert.equal(await file.load(), undefined);
    file.save({ n: 1 });
    file.save({ n: 2 });
    await clock.advance(999);
    await assert.rejects(readFile(file.path), /ENOENT/, 'not before the delay');
    await clock.advance(1);
    await file.flush();
    assert.deepEqual(JSON.parse(await readFile(file.path, 'utf8')), { n: 2 }, 'the latest value, once');
    assert.deepEqual(await readdir(join(dir, 'sub')), ['a.json'], 'no temporary file left');
    assert.deepEqual(await file.load(), { n: 2 });
  });

  it('keeps a corrupt or invalid file aside and reads nothing', async (t) => {
    const dir = await tempDir(t);
    const { log, lines } = recordingLog();
    const opts = { parse, maxBytes: 1000, delayMs: 10, clock: new FakeClock(), log };
    for (const [name, text] of [
      ['truncated.json', '{"n": 1'],
      ['wrong.json', '{"n": "one"}'],
      ['empty.json', ''],
    ] as const) {
      await writeFile(join(dir, name), text);
      assert.equal(await new JsonFile(join(dir, name), opts).load(), undefined, name);
      assert.equal(await readFile(join(dir, `${name}.corrupt`), 'utf8'), text);
    }
    assert.equal(lines.filter((l) => l.msg.includes('corrupt')).length, 3);
    assert.match(lines[1]!.err!, /n is not a number/);
  });

  it('never throws on a write that fails or is too big: logs once, writes again when it can', async (t) => {
    const dir = await tempDir(t);
    const { log, lines } = recordingLog();
    await writeFile(join(dir, 'blocker'), 'a file where the directory should be');
    const blocked = new JsonFile(join(dir, 'blocker', 'a.json'), {
      parse,
      maxBytes: 1000,
      delayMs: 10,
      clock: new FakeClock(),
      log,
    });
    blocked.save({ n: 1 });
    await blocked.flush();
    blocked.save({ n: 2 });
    await blocked.flush();
    assert.equal(lines.filter((l) => l.msg.startsWith('cannot write')).length, 1, 'logged once');

    const small = new JsonFile(join(dir, 'small.json'), {
      parse,
      maxBytes: 8,
      delayMs: 10,
      clock: new FakeClock(),
      log,
    });
    small.save({ n: 123456789 });
    await small.flush();
    await assert.rejects(readFile(small.path), /ENOENT/);
    assert.ok(lines.some((l) => l.err?.includes('over the limit of 8')));
    small.save({ n: 1 });
    await small.flush();
    assert.deepEqual(await small.load(), { n: 1 });
  });

  it('writes a value whose write failed at the next flush, once the cause is gone', async (t) => {
    const dir = await tempDir(t);
    const { log } = recordingLog();
    const blocker = join(dir, 'sub');
    await writeFile(blocker, 'a file where the directory should be');
    const file = new JsonFile(join(blocker, 'a.json'), {
      parse,
      maxBytes: 1000,
      delayMs: 10,
      clock: new FakeClock(),
      log,
    });
    file.save({ n: 7 });
    await file.flush();
    await rm(blocker);
    await file.flush(); // at stop, with no change since the failure
    assert.deepEqual(await file.load(), { n: 7 });
  });

  it('never writes over a file it could not read; keeps an oversize file aside; removes temporary leftovers', async (t) => {
    const dir = await tempDir(t);
    const { log, lines } = recordingLog();
    const opts = { parse, maxBytes: 100, delayMs: 10, clock: new FakeClock(), log };
    await mkdir(join(dir, 'dir.json')); // reading it fails with EISDIR
    const unreadable = new JsonFile(join(dir, 'dir.json'), opts);
    assert.equal(await unreadable.load(), undefined);
    unreadable.save({ n: 1 });
    await unreadable.flush();
    assert.ok((await stat(join(dir, 'dir.json'))).isDirectory(), 'left as it was');
    assert.ok(lines.some((l) => l.msg.includes('in memory only')));
    assert.ok(!lines.some((l) => l.msg.startsWith('cannot write')));

    await writeFile(join(dir, 'big.json'), JSON.stringify({ n: 1, pad: 'x'.repeat(200) }));
    await writeFile(join(dir, '.big.json.4242.tmp'), '{"n": 2, "pa');
    assert.equal(await new JsonFile(join(dir, 'big.json'), opts).load(), undefined);
    assert.match(await readFile(join(dir, 'big.json.corrupt'), 'utf8'), /^\{"n":1/);
    assert.deepEqual((await readdir(dir)).sort(), ['big.json.corrupt', 'dir.json']);
  });

  it('a symbolic link in its place is not read through, written through or replaced', async (t) => {
    const dir = await tempDir(t);
    const { log, lines } = recordingLog();
    const opts = { parse, maxBytes: 100, delayMs: 10, clock: new FakeClock(), log };
    await writeFile(join(dir, 'target.json'), '{"n": 7}');
    await symlink(join(dir, 'target.json'), join(dir, 'counts.json'));
    await symlink(join(dir, 'target.json'), join(dir, '.counts.json.99.tmp'));
    const file = new JsonFile(join(dir, 'counts.json'), opts);
    assert.equal(await file.load(), undefined, 'not read through');
    assert.ok(
      lines.some((l) => l.msg.includes('in memory only') && (l as { code?: string }).code === 'ELOOP'),
    );
    file.save({ n: 1 });
    await file.flush();
    assert.equal(await readFile(join(dir, 'target.json'), 'utf8'), '{"n": 7}');
    assert.ok((await lstat(join(dir, 'counts.json'))).isSymbolicLink());
    assert.ok(
      (await lstat(join(dir, '.counts.json.99.tmp'))).isSymbolicLink(),
      'a link is not removed as a leftover',
    );
  });

  it('a process killed while writing leaves the old document or the new one, never a mix', async (t) => {
    const dir = await tempDir(t);
    const path = join(dir, 'doc.json');
    // A child rewriting a 300 kB document as fast as it can, with the real module.
    const child = `
      import { JsonFile } from ${JSON.stringify(join(repoRoot, 'dist/src/state/index.js'))};
      import { pino } from 'pino';
      const clock = { now: Date.now, setTimeout, clearTimeout };
      const f = new JsonFile(${JSON.stringify(path)}, { parse: (d) => d, maxBytes: 1e7, delayMs: 0, clock, log: pino({ level: 'silent' }) });
      for (let n = 0; ; n++) { f.save({ n, pad: String(n % 10).repeat(300000) }); await f.flush(); if (n === 0) process.stdout.write('ready\\n'); }
    `;
    await mkdir(dir, { recursive: true });
    for (let round = 0; round < 6; round++) {
      const p = spawn(process.execPath, ['--input-type=module', '-e', child], {
        cwd: repoRoot,
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      await new Promise<void>((resolve) => p.stdout.once('data', () => resolve()));
      await new Promise((r) => setTimeout(r, 20 + round * 37));
      p.kill('SIGKILL');
      await new Promise((r) => p.once('exit', r));
      const doc = JSON.parse(await readFile(path, 'utf8')) as { n: number; pad: string };
      assert.equal(doc.pad, String(doc.n % 10).repeat(300000), `round ${round}: document ${doc.n} whole`);
    }
    const { log } = recordingLog();
    const back = await new JsonFile(path, {
      parse: (d) => d,
      maxBytes: 1e7,
      delayMs: 0,
      clock: systemClock,
      log,
    }).load();
    assert.ok(back);
  });
});
