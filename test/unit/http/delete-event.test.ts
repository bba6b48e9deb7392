import assert from 'node:assert/strict';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { cacheDir } from '../../../src/events/clips.js';
import { EventStore, ObjectEvents } from '../../../src/events/index.js';
import { topics } from '../../../src/publish/topics.js';
import type { Ring } from '../../../src/record/index.js';
import { cameraConfig, config } from '../../helpers/config.js';
import { tempDir } from '../../helpers/env.js';
import { FakeOutput } from '../../helpers/fake-output.js';
import { FakeClock, silentLog } from '../../helpers/fakes.js';
import { liveView, serveHttp } from '../../helpers/live-view.js';
import { segment } from '../../helpers/segment.js';

/**
 * DELETE /api/events/<id> through the daemon's own parts (the HTTP server, the live view, the
 * event history, object events with their clips and MP4 cache); only the camera's ring is a
 * stand-in, and ffmpeg a script whose every MP4 differs from the one before.
 */
describe('DELETE /api/events/<id>: the MP4 made on request', () => {
  it("leaves the clip cache with its event; another event's cached MP4 stays and is served again, a new event's is made", async (t) => {
    const dir = await tempDir(t);
    const ffmpeg = join(dir, 'ffmpeg');
    // Its last argument is the output.
    await writeFile(ffmpeg, '#!/bin/sh\nfor last; do :; done\nhead -c 64 /dev/urandom > "$last"\n', {
      mode: 0o755,
    });
    // The ring holds one segment of 90–110 s (since the epoch) with one key frame.
    const seg = segment('h264', join(dir, '1-0.ts'));
    await writeFile(seg.file, Buffer.alloc(1000));
    const ring = { list: () => [seg], settle: () => Promise.resolve() } as unknown as Ring;

    const ringDir = join(dir, 'ring');
    const cameras = { door: cameraConfig() };
    const history = new EventStore(join(dir, 'events'), { maxEvents: 10, maxBytes: 1 << 20 }, silentLog);
    const events = new ObjectEvents(
      () => cameras,
      config({ events: { clips: { enabled: true, ring_dir: ringDir } } }).events,
      {
        out: new FakeOutput(),
        topics: topics('argus'),
        clock: new FakeClock(),
        log: silentLog,
        history,
        clipSource: () => ({ ring: () => ring, ffmpeg }),
      },
    );
    await events.start();
    t.after(() => events.stop());
    /** An event of `door` whose clip, ready, is `from`–`to` s of the recording. */
    const add = (id: string, from: number, to: number): void =>
      history.add({
        id,
        camera: 'door',
        label: 'person',
        zones: [],
        start: from * 1000,
        event: {
          id,
          camera: 'door',
          clip: {
            state: 'ready',
            path: `/api/events/${id}/clip.mp4`,
            start: new Date(from * 1000).toISOString(),
            end: new Date(to * 1000).toISOString(),
          },
        },
      });
    add('e1', 95, 106);
    add('e2', 96, 104);

    const base = await serveHttp(t, liveView({ cameras: () => cameras, history, clips: events }));
    const clip = async (id: string): Promise<[number, Buffer]> => {
      const r = await fetch(`${base}/api/events/${id}/clip.mp4`);
      return [r.status, Buffer.from(await r.arrayBuffer())];
    };
    const cached = async (): Promise<string[]> =>
      (await readdir(cacheDir(ringDir))).filter((n) => n.endsWith('.mp4')).sort();

    const [s1, first] = await clip('e1');
    assert.equal(s1, 200);
    assert.equal(first.length, 64);
    const [e1File] = await cached();
    assert.ok(e1File, 'the MP4 made for e1 is cached');
    const [s2, second] = await clip('e2');
    assert.equal(s2, 200);
    const e2File = (await cached()).find((n) => n !== e1File);
    assert.ok(e2File, 'the MP4 made for e2 is cached beside it');

    const del = await fetch(`${base}/api/events/e1`, { method: 'DELETE' });
    assert.equal(del.status, 204);
    assert.deepEqual(await cached(), [e2File], "e1's MP4 is gone from the cache at once, e2's stays");
    assert.equal(events.clipCacheStats().bytes, 64, "the cache counts e2's bytes only");
    assert.equal((await clip('e1'))[0], 404);

    const made = events.clipCacheStats().made;
    assert.deepEqual(await clip('e2'), [200, second], "e2's MP4 is served again from the cache");
    assert.equal(events.clipCacheStats().made, made, 'not made again');
    add('e3', 95, 106);
    const [s3, third] = await clip('e3');
    assert.equal(s3, 200);
    assert.equal(third.length, 64);
    assert.equal((await cached()).length, 2, "a new event's MP4 is made and cached");
  });
});
