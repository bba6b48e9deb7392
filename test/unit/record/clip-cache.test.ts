import assert from 'node:assert/strict';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ClipCache } from '../../../src/record/index.js';
import { tempDir } from '../../helpers/env.js';

/** A remux stand-in: writes `bytes` bytes of `fill` to the path it is given. */
const writes =
  (bytes: number, fill = 1) =>
  (tmp: string): Promise<void> =>
    writeFile(tmp, Buffer.alloc(bytes, fill));

/** Opens `key` (made by `make` for `tag`), reads it whole and closes it; with whether it was made. */
async function read(
  cache: ClipCache,
  key: string,
  make: (tmp: string) => Promise<void>,
  tag?: string,
): Promise<{ data: Buffer; made: boolean }> {
  const c = await cache.open(key, make, tag);
  try {
    return { data: await c.file.readFile(), made: c.made };
  } finally {
    await c.file.close();
  }
}

describe('ClipCache.drop (an event deleted)', () => {
  it("removes every MP4 made for the tag, and only those: another tag's and untagged ones are served again", async (t) => {
    const dir = await tempDir(t);
    const cache = new ClipCache(dir, 1 << 20);
    await cache.start();
    await read(cache, 'aaaaaaaa', writes(100), 'e1');
    await read(cache, 'bbbbbbbb', writes(200), 'e1');
    await read(cache, 'cccccccc', writes(300, 3), 'e2');
    await read(cache, 'dddddddd', writes(400, 4));
    assert.equal(cache.bytes, 1000);
    await cache.drop('e1');
    assert.deepEqual((await readdir(dir)).sort(), ['cccccccc.mp4', 'dddddddd.mp4']);
    assert.equal(cache.bytes, 700);
    const never = (): Promise<void> => Promise.reject(new Error('made again'));
    assert.deepEqual(await read(cache, 'cccccccc', never, 'e2'), { data: Buffer.alloc(300, 3), made: false });
    assert.deepEqual(await read(cache, 'dddddddd', never), { data: Buffer.alloc(400, 4), made: false });
    await cache.drop('e3');
    assert.equal(cache.bytes, 700, 'a tag with nothing cached: nothing removed');
  });

  it('an MP4 being made when its tag is dropped is removed once made; its requests are refused, saying why', async (t) => {
    const dir = await tempDir(t);
    const cache = new ClipCache(dir, 1 << 20);
    await cache.start();
    let started!: () => void;
    const making = new Promise<void>((ok) => (started = ok));
    let finish!: () => void;
    const finished = new Promise<void>((ok) => (finish = ok));
    const slow = async (tmp: string): Promise<void> => {
      started();
      await finished;
      await writeFile(tmp, Buffer.alloc(100));
    };
    const first = cache.open('aaaaaaaa', slow, 'e1');
    await making;
    // A second request for it waits on the same remux.
    const second = cache.open('aaaaaaaa', slow, 'e1');
    await cache.drop('e1');
    finish();
    await Promise.all(
      [first, second].map((p) => assert.rejects(p, /its event was deleted while the clip was made/)),
    );
    assert.deepEqual(await readdir(dir), [], 'neither the MP4 nor its temporary file is left');
    assert.equal(cache.bytes, 0);
    // Asked for again afterwards, it is made: the drop refused only what was being made then.
    assert.equal((await read(cache, 'aaaaaaaa', writes(50), 'e1')).made, true);
    assert.equal(cache.bytes, 50);
  });

  it('one waiting its turn to be made when its tag is dropped is never made', async (t) => {
    const dir = await tempDir(t);
    const cache = new ClipCache(dir, 1 << 20);
    await cache.start();
    let finish!: () => void;
    const finished = new Promise<void>((ok) => (finish = ok));
    let begun = 0;
    const slow = async (tmp: string): Promise<void> => {
      begun++;
      await finished;
      await writeFile(tmp, Buffer.alloc(10));
    };
    // Two remuxes at once at most: these two hold both turns.
    const busy = [cache.open('aaaaaaaa', slow, 'e2'), cache.open('bbbbbbbb', slow)];
    let asked = false;
    const waiting = cache.open(
      'cccccccc',
      () => {
        asked = true;
        return writeFile(join(dir, 'never'), '');
      },
      'e1',
    );
    while (begun < 2) await new Promise((r) => setImmediate(r));
    await cache.drop('e1');
    finish();
    await assert.rejects(waiting, /its event was deleted while the clip was made/);
    for (const c of await Promise.all(busy)) await c.file.close();
    assert.equal(asked, false, 'its remux never ran');
    assert.deepEqual((await readdir(dir)).sort(), ['aaaaaaaa.mp4', 'bbbbbbbb.mp4']);
  });
  it('a drop that comes once the MP4 is made (its request not yet answered) refuses no later make of it', async (t) => {
    const dir = await tempDir(t);
    const cache = new ClipCache(dir, 1 << 20);
    await cache.start();
    // The request's own code resumes a few microtasks after the make ends: a drop in between
    // found the make still listed and marked its key, so the next make of it was refused.
    const inner = cache as unknown as { make: (...a: unknown[]) => Promise<void> };
    const make = inner.make.bind(cache);
    let drops = 0;
    inner.make = async (...a: unknown[]): Promise<void> => {
      await make(...a);
      if (drops++ === 0) await cache.drop('e1');
    };
    // The drop removed what was made; the request makes it again, and it is served.
    const got = await read(cache, 'aaaaaaaa', writes(100, 7), 'e1');
    assert.deepEqual(got, { data: Buffer.alloc(100, 7), made: true });
    assert.deepEqual(await readdir(dir), ['aaaaaaaa.mp4']);
  });
});
