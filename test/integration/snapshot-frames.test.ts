import assert from 'node:assert/strict';
import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import sharp from 'sharp';
import { eventKey } from '../../src/events/event-record.js';
import { ringKey } from '../../src/record/index.js';
import type { EventPayload } from '../../src/publish/topics.js';
import { httpBase, startDaemon, writeDaemonConfig } from '../helpers/daemon.js';
import { tempDir, waitFor } from '../helpers/env.js';
import { Subscriber } from '../helpers/mqtt.js';
import { freePort, startRtspServer, type RtspServer } from '../helpers/rtsp.js';
import { squareClip } from '../helpers/square-clip.js';

/**
 * Issue 47 item 1: a recording camera's event snapshot is a frame of its recording, not a second
 * copy on disk. A real RTSP server sends an H.264 clip in which a white square (what the fixture
 * model sees) stands for a while; the real daemon records it (clips on) and publishes the
 * annotated snapshot on MQTT; the history keeps no `<key>.jpg` for it, and GET snapshot.jpg
 * decodes the frame from the recording and draws it as the published one. A camera without
 * recording writes `<key>.jpg` as before. Then, killed and started again on the same state
 * directory, a ring too small
 * for the old footage removes it: the snapshot is written as `<key>.jpg` first and still served;
 * a recording deleted behind Argus' back answers 410 with why.
 */

const STARTED = '"msg":"argus started"';

interface Run {
  sub: Subscriber;
  base: string;
  daemon: ReturnType<typeof startDaemon>;
}

async function run(
  t: TestContext,
  home: string,
  server: RtspServer,
  cameras: Record<string, { mount: string; clips?: boolean }>,
  clips: Record<string, unknown> = {},
): Promise<Run> {
  const port = await freePort();
  const config = await writeDaemonConfig(home, {
    log_level: 'debug',
    mqtt: { embedded: { port } },
    http: { port: 0 },
    events: { end_after_s: 1, clips: { enabled: true, pre_capture_s: 1, post_capture_s: 1, ...clips } },
    cameras: Object.fromEntries(
      Object.entries(cameras).map(([name, c]) => [
        name,
        {
          url: server.url(c.mount),
          rtsp_transport: server.transport,
          fps: 5,
          ...(c.clips === undefined ? {} : { clips: c.clips }),
        },
      ]),
    ),
  });
  const daemon = startDaemon(t, config);
  await waitFor('the daemon to start', () => daemon.output().includes(STARTED), 60_000);
  const sub = new Subscriber(`mqtt://127.0.0.1:${port}`);
  t.after(() => sub.end());
  return { sub, base: await httpBase(daemon.output), daemon };
}

/** Pixels of a JPEG: its size and RGB. */
async function pixels(jpeg: Buffer): Promise<{ w: number; h: number; data: Buffer }> {
  const { data, info } = await sharp(jpeg).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { w: info.width, h: info.height, data };
}

/** The mean absolute difference of two pictures of one size, per channel value (0-255). */
function meanDiff(a: Buffer, b: Buffer): number {
  let d = 0;
  for (let i = 0; i < a.length; i++) d += Math.abs(a[i]! - b[i]!);
  return d / a.length;
}

/** The mean difference inside the box of `box` (source pixels) scaled to the picture: where the box is drawn. */
function boxEdgeDiff(
  a: { w: number; data: Buffer },
  b: Buffer,
  box: number[],
  scale: number,
): { n: number; diff: number } {
  const [x1, y1, x2, y2] = box.map((v) => Math.round(v * scale));
  let d = 0;
  let n = 0;
  for (let x = x1!; x <= x2!; x++)
    for (const y of [y1!, y2!]) {
      const i = (y * a.w + x) * 3;
      for (let c = 0; c < 3; c++) d += Math.abs(a.data[i + c]! - b[i + c]!);
      n += 3;
    }
  return { n, diff: d / Math.max(1, n) };
}

const history = (home: string): string => join(home, 'state', 'events');

describe('event snapshots as frames of the recording (real RTSP, ffmpeg, the fixture model)', () => {
  it("a recording camera's snapshot is drawn from its recording; one without writes <key>.jpg; after a SIGKILL, a segment about to go is rescued first; footage gone answers 410", async (t) => {
    const dir = await tempDir(t);
    const home = join(dir, 'home');
    await mkdir(home);
    await squareClip(join(dir, 'square.mp4'), { bframes: 0, from: 3, to: 8, seconds: 16 });
    // Noise and no square: a high bit rate that fills a 1-MB ring in seconds, and no event.
    await squareClip(join(dir, 'noise.mp4'), { bframes: 0, from: 99, to: 99, seconds: 40, bitrate: '4M' });
    const server = await startRtspServer(t, [
      { name: 'rec', source: { kind: 'clip', path: join(dir, 'square.mp4') } },
      { name: 'gone', source: { kind: 'clip', path: join(dir, 'square.mp4') } },
      { name: 'norec', source: { kind: 'clip', path: join(dir, 'square.mp4') } },
      { name: 'noise', source: { kind: 'clip', path: join(dir, 'noise.mp4') } },
      { name: 'noise2', source: { kind: 'clip', path: join(dir, 'noise.mp4') } },
    ]);
    const r = await run(t, home, server, {
      rec: { mount: 'rec' },
      gone: { mount: 'gone' },
      norec: { mount: 'norec', clips: false },
    });
    const events = (): EventPayload[] => r.sub.json<EventPayload>('argus/events');
    const clipOf = (camera: string): EventPayload | undefined =>
      events().find((e) => e.camera === camera && e.type === 'clip');
    for (const camera of ['rec', 'gone'])
      await r.sub.waitFor(`${camera}'s clip`, () => clipOf(camera) !== undefined, 120_000);
    await r.sub.waitFor(
      "norec's end",
      () => events().some((e) => e.camera === 'norec' && e.type === 'end'),
      120_000,
    );
    const ev = clipOf('rec')!;
    const key = eventKey(ev.id);
    const norec = events().find((e) => e.camera === 'norec' && e.type === 'end')!;
    // The history has written the crop of each, and norec's full-frame snapshot.
    const files = async (): Promise<string[]> => readdir(history(home)).catch(() => []);
    const deadline = Date.now() + 60_000;
    while (
      !(await files()).includes(`${key}.crop.jpg`) ||
      !(await files()).includes(`${eventKey(norec.id)}.jpg`)
    ) {
      assert.ok(
        Date.now() < deadline,
        `the crops and norec's snapshot are written: ${(await files()).join(' ')}`,
      );
      await new Promise((ok) => setTimeout(ok, 200));
    }
    assert.ok(!(await files()).includes(`${key}.jpg`), "no full-frame JPEG for a recording camera's event");
    assert.ok((await files()).includes(`${eventKey(norec.id)}.crop.jpg`));
    const record = JSON.parse(await readFile(join(history(home), `${key}.json`), 'utf8')) as {
      frame?: {
        ts: number;
        w: number;
        h: number;
        srcW: number;
        srcH: number;
        detections: { box: number[] }[];
      };
      event: EventPayload;
    };
    t.diagnostic(`rec's record names its frame: ${JSON.stringify(record.frame)}`);
    assert.ok(record.frame, 'the record says where the frame is');
    assert.deepEqual([record.frame.srcW, record.frame.srcH], [640, 480]);
    assert.equal(record.frame.ts, Date.parse(record.event.snapshot!.ts));

    // Served from the recording: decodes, the published picture's size, the box where it was drawn.
    const url = `${r.base}/api/events/${encodeURIComponent(ev.id)}/snapshot.jpg`;
    const res = await fetch(url);
    assert.equal(res.status, 200, await res.clone().text());
    assert.equal(res.headers.get('content-type'), 'image/jpeg');
    const served = Buffer.from(await res.arrayBuffer());
    const head = await fetch(url, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.headers.get('content-type'), 'image/jpeg');
    assert.deepEqual(
      Buffer.from(await (await fetch(url)).arrayBuffer()),
      served,
      'a repeat is the cached picture',
    );
    // Drawn from the recording (ffmpeg's decode of the kept segments), not a copy held in memory;
    // once: HEAD and the repeat are the cache's.
    const drawn = (): string[] =>
      r.daemon
        .output()
        .split('\n')
        .filter((l) => l.includes("an event's snapshot drawn from its frame of the recording"));
    await waitFor('the draw in the log', () => drawn().length > 0, 10_000);
    t.diagnostic(drawn().join('\n'));
    assert.equal(drawn().length, 1, 'drawn once: the repeats are the cache');
    const topic = r.sub.messages.filter(
      (m) => m.topic.startsWith('argus/cameras/rec/') && m.topic.endsWith('/snapshot'),
    );
    const published = await pixels(topic.at(-1)!.data);
    const mine = await pixels(served);
    assert.deepEqual([mine.w, mine.h], [published.w, published.h], 'the size of the published snapshot');
    assert.deepEqual([mine.w, mine.h], [record.frame.w, record.frame.h]);
    const diff = meanDiff(mine.data, published.data);
    const box = boxEdgeDiff(
      mine,
      published.data,
      record.frame.detections[0]!.box,
      mine.w / record.frame.srcW,
    );
    t.diagnostic(
      `${mine.w}×${mine.h}: ${diff.toFixed(2)} apart from the published JPEG; along the box's edges ${box.diff.toFixed(2)} (${box.n} values)`,
    );
    assert.ok(diff < 4, `within a JPEG generation of the published picture: ${diff.toFixed(2)}`);
    assert.ok(box.diff < 30, `the box is drawn where the published one is: ${box.diff.toFixed(2)}`);
    // A camera without recording: its snapshot is its file, as before.
    const plain = await fetch(`${r.base}/api/events/${encodeURIComponent(norec.id)}/snapshot.jpg`);
    assert.equal(plain.status, 200);
    assert.deepEqual(
      Buffer.from(await plain.arrayBuffer()),
      await readFile(join(history(home), `${eventKey(norec.id)}.jpg`)),
    );
    // The crop is its file.
    assert.equal((await fetch(`${url}?crop=1`)).status, 200);
    assert.equal((await fetch(`${r.base}/api/events/nope/snapshot.jpg`)).status, 404);

    // Killed, not stopped: what is on disk (records naming frames, segments described) is all
    // the next run has, and every snapshot must still be reachable from it.
    r.daemon.child.kill('SIGKILL');
    assert.equal((await r.daemon.exited).signal, 'SIGKILL');
    // gone's recording deleted behind Argus' back: no rescue is possible.
    const goneEv = clipOf('gone')!;
    const goneDir = join(home, 'state', 'ring', ringKey('gone'));
    for (const f of await readdir(goneDir)) if (f.endsWith('.ts')) await rm(join(goneDir, f));

    // Again on the same state directory, rec's ring 1 MB and sent noise: its old footage goes.
    const again = await run(
      t,
      home,
      server,
      { rec: { mount: 'noise' }, gone: { mount: 'noise2' }, norec: { mount: 'norec', clips: false } },
      { ring_max_mb: 1 },
    );
    const ringDir = join(home, 'state', 'ring', ringKey('rec'));
    const oldSegments = (await readdir(ringDir)).filter((f) => /^\d+-\d+\.ts$/.test(f));
    const deadline2 = Date.now() + 90_000;
    while ((await readdir(ringDir)).some((f) => oldSegments.includes(f))) {
      assert.ok(Date.now() < deadline2, `rec's old segments go: ${(await readdir(ringDir)).join(' ')}`);
      await new Promise((ok) => setTimeout(ok, 250));
    }
    const rescued = await readFile(join(history(home), `${key}.jpg`));
    t.diagnostic(`rescued as ${key}.jpg: ${rescued.length} bytes`);
    const after = await fetch(`${again.base}/api/events/${encodeURIComponent(ev.id)}/snapshot.jpg`);
    assert.equal(after.status, 200);
    const kept = await pixels(Buffer.from(await after.arrayBuffer()));
    assert.deepEqual([kept.w, kept.h], [published.w, published.h]);
    assert.ok(meanDiff(kept.data, published.data) < 4, 'the rescued snapshot is the published picture');
    const record2 = JSON.parse(await readFile(join(history(home), `${key}.json`), 'utf8')) as {
      frame?: unknown;
    };
    assert.equal(record2.frame, undefined, 'the record names the file now');
    // gone: 410 and why, not a 500.
    const lost = await fetch(`${again.base}/api/events/${encodeURIComponent(goneEv.id)}/snapshot.jpg`);
    const why = await lost.text();
    t.diagnostic(`footage gone: ${lost.status} ${why.trim()}`);
    assert.equal(lost.status, 410);
    assert.match(why, /frame is gone/);
  });
});
