import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmod, mkdir, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import { annotatedJpeg, croppedJpeg } from '../../../src/draw/index.js';
import {
  EventStore,
  RESCUE_RETRY_MS,
  SnapshotFrames,
  type SnapshotFrame,
  type StoredEvent,
} from '../../../src/events/index.js';
import { eventKey, parseRecord, recordText } from '../../../src/events/event-record.js';
import { FRAME_REQUESTS_WAITING } from '../../../src/events/snapshot-frames.js';
import { defaultFfmpegPath } from '../../../src/ingest/ffmpeg-process.js';
import { planFrame, type Segment } from '../../../src/record/index.js';
import { tempDir } from '../../helpers/env.js';
import { recordingLog } from '../../helpers/fakes.js';

/**
 * Issue 47 item 1: snapshots kept as frames of the camera's recording. A real H.264 segment
 * (ffmpeg's testsrc, whose picture changes every frame, 10 frames/s, one key frame at its start)
 * stands for a ring's; the history draws the snapshot from it on request, rescues it as
 * `<key>.jpg` before the segment goes, or says the frame is gone.
 */

const T0 = 1_800_000_000_000;
const W = 160;
const H = 120;

/** A 2-s segment of the ring, its first key frame at T0 (whole file, no header split). */
async function segmentFile(dir: string): Promise<Segment> {
  const file = join(dir, '0-0.ts');
  const r = spawnSync(await defaultFfmpegPath(), [
    ...['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', 'testsrc=size=320x240:rate=10'],
    ...['-t', '2', '-c:v', 'libx264', '-bf', '0', '-g', '100', '-pix_fmt', 'yuv420p', '-f', 'mpegts', file],
  ]);
  assert.equal(r.status, 0, r.stderr.toString());
  const bytes = (await stat(file)).size;
  return {
    file,
    run: 0,
    seq: 0,
    start: T0,
    end: T0 + 1900,
    bytes,
    headerBytes: 0,
    keyframes: [{ offset: 0, ts: T0 }],
    codec: 'h264',
    open: false,
    described: true,
  };
}

/** The frame `ms` after the file's start, `W`×`H` RGB, as ffmpeg decodes it directly. */
async function frameAt(file: string, ms: number): Promise<Buffer> {
  const r = spawnSync(
    await defaultFfmpegPath(),
    [
      ...['-hide_banner', '-loglevel', 'error', '-i', file, '-ss', (ms / 1000).toFixed(3), '-frames:v', '1'],
      ...['-vf', `scale=${W}:${H}:flags=bilinear,format=rgb24`, '-f', 'rawvideo', 'pipe:1'],
    ],
    { maxBuffer: 1 << 24 },
  );
  assert.equal(r.status, 0, r.stderr.toString());
  return r.stdout;
}

const frame = (ts: number): SnapshotFrame => ({
  ts,
  srcW: 320,
  srcH: 240,
  w: W,
  h: H,
  quality: 80,
  detections: [{ label: 'person', score: 0.9, box: [40, 40, 200, 180] }],
});

const ev = (n: number): StoredEvent => ({
  id: `e${n}`,
  camera: 'gate',
  label: 'person',
  zones: [],
  start: T0 + n,
  event: { type: 'new', n },
});

const geometry = {
  srcW: 320,
  srcH: 240,
  dstW: W,
  dstH: H,
  scale: 0.5,
  innerW: W,
  innerH: H,
  padLeft: 0,
  padTop: 0,
};

async function rgb(jpeg: Buffer): Promise<{ w: number; h: number; data: Buffer }> {
  const { data, info } = await sharp(jpeg).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { w: info.width, h: info.height, data };
}

const meanDiff = (a: Buffer, b: Buffer): number => {
  let d = 0;
  for (let i = 0; i < a.length; i++) d += Math.abs(a[i]! - b[i]!);
  return d / a.length;
};

async function setUp(t: Parameters<typeof tempDir>[0], now: () => number = Date.now) {
  const dir = await tempDir(t);
  const seg = await segmentFile(dir);
  const segments: Segment[] = [seg];
  const ffmpeg = await defaultFfmpegPath();
  const { log, lines } = recordingLog();
  const frames = new SnapshotFrames({
    source: () => ({ ffmpeg, ring: () => ({ list: () => segments }) }),
    log,
  });
  const history = join(dir, 'history');
  const store = new EventStore(history, { maxEvents: 100, maxBytes: 1e7 }, log, now);
  await store.load();
  store.useFrames(frames);
  return { dir, seg, segments, frames, store, history, lines, ffmpeg };
}

/** Events `ns`, each with its snapshot ("published n") kept as the frame at `at(n)`, ended. */
function endedEvents(store: EventStore, ns: readonly number[], at: (n: number) => number): void {
  for (const n of ns) {
    store.add(ev(n));
    store.setSnapshot(
      `e${n}`,
      Promise.resolve({ full: Buffer.from(`published ${n}`), crop: Buffer.from('crop') }),
      {},
      frame(at(n)),
    );
    store.update({ ...ev(n), event: { type: 'end', n } });
  }
}

/** Event 1 with its snapshot (a published JPEG `full`) kept as the frame at `ts`, ended. */
async function framed(store: EventStore, ts: number, full = Buffer.from('published')): Promise<void> {
  store.add(ev(1));
  store.setSnapshot(
    'e1',
    Promise.resolve({ full, crop: Buffer.from('crop') }),
    { snapshot: { ts } },
    frame(ts),
  );
  store.update({ ...ev(1), event: { type: 'end', n: 1 } });
  await store.flush();
}

/** A history in `bounded/` whose snapshot frames rescue one at a time (a queue of one), at `now`. */
async function oneRescueAtATime(t: Parameters<typeof tempDir>[0], now: () => number = Date.now) {
  const { seg, ffmpeg, dir } = await setUp(t);
  const frames = new SnapshotFrames(
    { source: () => ({ ffmpeg, ring: () => ({ list: () => [seg] }) }), log: recordingLog().log },
    undefined,
    undefined,
    1,
  );
  const history = join(dir, 'bounded');
  const store = new EventStore(history, { maxEvents: 100, maxBytes: 1e7 }, recordingLog().log, now);
  await store.load();
  store.useFrames(frames);
  return { seg, frames, store, history };
}

describe('snapshots as frames of the recording', () => {
  it('plans the frame of a time: from the key frame at or before it; none outside the segments', async (t) => {
    const { seg } = await setUp(t);
    assert.equal(planFrame([seg], T0 + 700)?.start, T0);
    assert.equal(planFrame([seg], T0 + 1900 + 500)?.start, T0, 'within the slack after its last frame');
    assert.equal(planFrame([seg], T0 - 500), undefined, 'before its key frame');
    assert.equal(planFrame([seg], T0 + 5000), undefined, 'long after');
  });

  it("writes no <key>.jpg for a recording camera's event; serves the frame drawn as the published one, cached", async (t) => {
    const { store, history, seg, frames, lines } = await setUp(t);
    await framed(store, T0 + 700);
    const key = eventKey('e1');
    assert.deepEqual((await readdir(history)).sort(), [`${key}.crop.jpg`, `${key}.json`]);
    const record = JSON.parse(await readFile(join(history, `${key}.json`), 'utf8')) as { frame: unknown };
    assert.deepEqual(record.frame, frame(T0 + 700));
    const jpeg = await store.snapshot('e1', 'full');
    assert.ok(jpeg, JSON.stringify(lines));
    // The frame at 0.7 s drawn with annotatedJpeg: the picture published had it been this frame.
    const expected = await rgb(
      await annotatedJpeg(await frameAt(seg.file, 700), geometry, frame(0).detections, { quality: 80 }),
    );
    const got = await rgb(jpeg);
    assert.deepEqual([got.w, got.h], [W, H]);
    const diff = meanDiff(got.data, expected.data);
    t.diagnostic(`${diff.toFixed(2)} apart from the frame drawn directly`);
    assert.ok(diff < 2, `the frame at its time, drawn the same: ${diff.toFixed(2)}`);
    // Another frame (testsrc changes each frame) is farther.
    const other = await rgb(
      await annotatedJpeg(await frameAt(seg.file, 1500), geometry, frame(0).detections, { quality: 80 }),
    );
    assert.ok(meanDiff(got.data, other.data) > diff + 1, 'not another frame');
    assert.deepEqual(await store.snapshot('e1', 'full'), jpeg);
    assert.deepEqual(frames.counts, { drawn: 1, hits: 1, rescued: 0, gone: 0, rescuing: 0, deferred: 0 });
    assert.deepEqual(await store.snapshot('e1', 'crop'), Buffer.from('crop'));
  });

  it("tells the frame by its crop when the camera's frame time and the recording's differ (the decode's delay)", async (t) => {
    const { store, seg, frames } = await setUp(t);
    // The frame analysed was the one at 0.5 s; its time as the camera's clock gave it, 0.7 s.
    const crop = await croppedJpeg(await frameAt(seg.file, 500), geometry, frame(0).detections[0]!.box, 80);
    store.add(ev(1));
    store.setSnapshot('e1', Promise.resolve({ full: Buffer.from('published'), crop }), {}, frame(T0 + 700));
    store.update({ ...ev(1), event: { type: 'end', n: 1 } });
    await store.flush();
    const got = await rgb((await store.snapshot('e1', 'full'))!);
    const at = async (ms: number): Promise<number> =>
      meanDiff(
        got.data,
        (
          await rgb(
            await annotatedJpeg(await frameAt(seg.file, ms), geometry, frame(0).detections, { quality: 80 }),
          )
        ).data,
      );
    const [d500, d700] = [await at(500), await at(700)];
    t.diagnostic(`${d500.toFixed(2)} from the frame at 0.5 s, ${d700.toFixed(2)} from 0.7 s`);
    assert.ok(d500 < 1, `the frame its crop shows: ${d500.toFixed(2)}`);
    assert.ok(d700 > d500 + 1, 'not the one at its time');
    assert.equal(frames.counts.drawn, 1);
  });

  it('with outlive_footage false, a snapshot goes with its footage: no rescue, nothing written; 410 once the recording no longer holds it, the crop kept', async (t) => {
    const { store, history, seg, segments, frames } = await setUp(t);
    store.useFrames(frames, { outliveFootage: false });
    await framed(store, T0 + 700);
    const key = eventKey('e1');
    assert.equal(store.rescueFrames('gate', [seg], []), undefined, 'no rescue');
    segments.length = 0; // the segment gone
    const why = await store.snapshotOrWhy('e1', 'full');
    assert.ok(why && !Buffer.isBuffer(why));
    assert.equal(why.status, 410);
    assert.match(why.error, /no longer holds/);
    assert.deepEqual((await readdir(history)).sort(), [`${key}.crop.jpg`, `${key}.json`], 'no <key>.jpg');
    assert.deepEqual(await store.snapshot('e1', 'crop'), Buffer.from('crop'));
  });

  it('rescues a snapshot before its segment goes: <key>.jpg written, the record names the file, served after the segment is gone and after a restart', async (t) => {
    const { store, history, seg, segments, frames } = await setUp(t);
    await framed(store, T0 + 700);
    const key = eventKey('e1');
    // A segment that does not hold it: nothing to do.
    assert.equal(
      store.rescueFrames(
        'gate',
        [{ ...seg, keyframes: [{ offset: 0, ts: T0 + 60_000 }], end: T0 + 62_000 }],
        segments,
      ),
      undefined,
    );
    assert.equal(store.rescueFrames('yard', [seg], []), undefined, "another camera's");
    const work = store.rescueFrames('gate', [seg], []);
    assert.ok(work, 'the frame lies in the segment: a rescue');
    await work;
    assert.ok(
      (await readdir(history)).includes(`${key}.jpg`),
      '<key>.jpg is written before the rescue resolves',
    );
    await store.flush();
    const record = JSON.parse(await readFile(join(history, `${key}.json`), 'utf8')) as { frame?: unknown };
    assert.equal(record.frame, undefined);
    await rm(seg.file);
    segments.length = 0;
    const file = await readFile(join(history, `${key}.jpg`));
    assert.deepEqual(await store.snapshot('e1', 'full'), file);
    assert.equal(frames.counts.rescued, 1);
    const again = new EventStore(history, { maxEvents: 100, maxBytes: 1e7 }, recordingLog().log);
    await again.load();
    assert.deepEqual(await again.snapshot('e1', 'full'), file);
    assert.equal(store.rescueFrames('gate', [seg], []), undefined, 'rescued once');
  });

  it('a frame whose segment cannot be read is marked gone, with why, across a restart: 410, not a 500', async (t) => {
    const { store, history, seg, segments, frames } = await setUp(t);
    await framed(store, T0 + 700);
    await rm(seg.file);
    await store.rescueFrames('gate', [seg], []);
    assert.equal(frames.counts.gone, 1);
    const why = await store.snapshotOrWhy('e1', 'full');
    assert.ok(why && !Buffer.isBuffer(why));
    assert.equal(why.status, 410);
    assert.match(why.error, /frame is gone: its segment of the recording was removed and could not be read/);
    await store.flush();
    segments.length = 0;
    const again = new EventStore(history, { maxEvents: 100, maxBytes: 1e7 }, recordingLog().log);
    await again.load();
    const after = await again.snapshotOrWhy('e1', 'full');
    assert.ok(after && !Buffer.isBuffer(after) && after.status === 410, JSON.stringify(after));
    assert.equal(after.error, why.error);
  });

  it('footage gone with no rescue (the ring no longer holds the time) answers 410 saying so', async (t) => {
    const { store, segments } = await setUp(t);
    await framed(store, T0 + 700);
    segments.length = 0;
    const why = await store.snapshotOrWhy('e1', 'full');
    assert.ok(why && !Buffer.isBuffer(why));
    assert.equal(why.status, 410);
    assert.match(why.error, /the recording of gate no longer holds/);
  });

  it("an old state directory's <key>.jpg is served as it is (written before snapshots were frames)", async (t) => {
    const { history, frames } = await setUp(t);
    const key = eventKey('e9');
    const record = {
      version: 1,
      id: 'e9',
      camera: 'gate',
      label: 'person',
      zones: [],
      start: T0,
      event: { type: 'end' },
    };
    await mkdir(history, { recursive: true });
    await writeFile(join(history, `${key}.json`), `${JSON.stringify(record)}\n`);
    await writeFile(join(history, `${key}.jpg`), Buffer.from('old snapshot'));
    const store = new EventStore(history, { maxEvents: 100, maxBytes: 1e7 }, recordingLog().log);
    await store.load();
    store.useFrames(frames);
    assert.deepEqual(await store.snapshot('e9', 'full'), Buffer.from('old snapshot'));
    assert.equal(frames.counts.drawn, 0);
  });

  it('review finding 1: a rescued snapshot the history cannot write keeps its segment and is tried again; written once it can be', async (t) => {
    const { store, history, seg, segments, frames } = await setUp(t);
    await framed(store, T0 + 700);
    const key = eventKey('e1');
    // <key>.jpg cannot be written: a folder in its place (as a full disk or a read-only directory).
    await mkdir(join(history, `${key}.jpg`));
    const stay = await store.rescueFrames('gate', [seg], []);
    assert.deepEqual(stay, [seg], 'its segment stays (the ring lists it again, its files kept)');
    assert.deepEqual(frames.counts, { drawn: 0, hits: 0, rescued: 0, gone: 0, rescuing: 0, deferred: 0 });
    await store.flush();
    const record = JSON.parse(await readFile(join(history, `${key}.json`), 'utf8')) as { frame?: unknown };
    assert.deepEqual(record.frame, frame(T0 + 700), 'the record still names the frame, not gone');
    // Listed again by its ring: still drawn from the recording.
    assert.ok(Buffer.isBuffer(await store.snapshot('e1', 'full')));
    await rm(join(history, `${key}.jpg`), { recursive: true });
    assert.deepEqual(await store.rescueFrames('gate', [seg], segments), [], 'written: the segment may go');
    assert.equal(frames.counts.rescued, 1);
    assert.ok((await stat(join(history, `${key}.jpg`))).isFile());
    await store.flush();
    const after = JSON.parse(await readFile(join(history, `${key}.json`), 'utf8')) as { frame?: unknown };
    assert.equal(after.frame, undefined);
  });

  it('review finding 1: a rescue the history still cannot write after RESCUE_RETRY_MS marks the frame gone with the error code, and its segment goes', async (t) => {
    let now = T0;
    const { store, history, seg, dir } = await setUp(t, () => now);
    await framed(store, T0 + 700);
    const key = eventKey('e1');
    await mkdir(join(history, `${key}.jpg`));
    assert.deepEqual(await store.rescueFrames('gate', [seg], []), [seg]);
    now += RESCUE_RETRY_MS - 1;
    assert.deepEqual(await store.rescueFrames('gate', [seg], []), [seg], 'within the bound: kept');
    now += 1;
    assert.deepEqual(await store.rescueFrames('gate', [seg], []), [], 'past it: the segment goes');
    const why = await store.snapshotOrWhy('e1', 'full');
    assert.ok(why && !Buffer.isBuffer(why), 'no snapshot');
    assert.equal(why.status, 410);
    assert.equal(
      why.error,
      "the snapshot's frame is gone: it could not be written to the event history (EISDIR)",
    );
    assert.ok(!why.error.includes(dir), 'no path of the state directory');
  });

  it('third review finding 5: a rescue of segments that go whatever (short of their bytes) whose write fails marks the frame gone: nothing held, no JPEG kept in memory', async (t) => {
    const { store, history, seg, frames } = await setUp(t);
    await framed(store, T0 + 700);
    await mkdir(join(history, `${eventKey('e1')}.jpg`)); // it cannot be written
    assert.deepEqual(await store.rescueFrames('gate', [seg], [], true), [], 'nothing held');
    assert.equal(frames.counts.gone, 1);
    const why = await store.snapshotOrWhy('e1', 'full');
    assert.ok(why && !Buffer.isBuffer(why), 'not served from a JPEG kept for a retry that never comes');
    assert.equal(why.status, 410);
    assert.match(why.error, /could not be written to the event history \(EISDIR\)/);
  });

  it('review finding 1: a history that is a symbolic link (not used) makes a rescue fail at once: the frame is marked gone (REFUSED), its segment goes', async (t) => {
    const { dir, seg, frames } = await setUp(t);
    const real = join(dir, 'elsewhere');
    await mkdir(real);
    const history = join(dir, 'linked');
    await symlink(real, history);
    const store = new EventStore(history, { maxEvents: 100, maxBytes: 1e7 }, recordingLog().log);
    await store.load();
    store.useFrames(frames);
    await framed(store, T0 + 700);
    assert.deepEqual(await store.rescueFrames('gate', [seg], []), [], 'not kept for a retry');
    assert.equal(frames.counts.rescued, 0);
    assert.equal(frames.counts.gone, 1);
    assert.deepEqual(await store.snapshotOrWhy('e1', 'full'), {
      status: 410,
      error: "the snapshot's frame is gone: it could not be written to the event history (REFUSED)",
    });
    assert.deepEqual(await readdir(real), [], 'nothing written where the link points');
  });

  for (const [name, recording] of [
    [
      'a frame the recording does not hold when the snapshot is saved (segments lost to a full disk)',
      (segments: Segment[]): void => void (segments.length = 0),
    ],
    [
      'review finding 2: a frame in the segment still being written (no description yet: lost to a kill)',
      (segments: Segment[]): void => void (segments[0] = { ...segments[0]!, open: true }),
    ],
    [
      'second review finding 5: a frame in a segment closed but not yet described (its description being written)',
      (segments: Segment[]): void => void (segments[0] = { ...segments[0]!, described: false }),
    ],
  ] as const)
    it(`${name} is written as <key>.jpg`, async (t) => {
      const { store, history, segments } = await setUp(t);
      recording(segments);
      await framed(store, T0 + 700, Buffer.from('published'));
      const key = eventKey('e1');
      assert.deepEqual((await readdir(history)).sort(), [`${key}.crop.jpg`, `${key}.jpg`, `${key}.json`]);
      const record = JSON.parse(await readFile(join(history, `${key}.json`), 'utf8')) as { frame?: unknown };
      assert.equal(record.frame, undefined);
      assert.deepEqual(await store.snapshot('e1', 'full'), Buffer.from('published'));
    });

  it('review finding 4: requests waiting for a snapshot whose decode fails get the same 503, not a rejection', async (t) => {
    const { frames, seg, dir } = await setUp(t);
    await rm(seg.file);
    const [a, b] = await Promise.all([
      frames.view('k', 'gate', frame(T0 + 700)),
      frames.view('k', 'gate', frame(T0 + 700)),
    ]);
    assert.deepEqual(a, { status: 503, error: 'the snapshot could not be made from the recording (ENOENT)' });
    assert.deepEqual(b, a);
    assert.equal(frames.counts.hits, 1, 'the second waited for the first');
    // Review finding 5: the body names no path of the state directory (the log has the message).
    assert.ok(!a.error.includes(dir));
  });

  it('review finding 5: a frame marked gone keeps and serves a reason and a code, not the paths in the error', async (t) => {
    const { store, history, seg, dir } = await setUp(t);
    await framed(store, T0 + 700);
    await rm(seg.file);
    await store.rescueFrames('gate', [seg], []);
    await store.flush();
    const key = eventKey('e1');
    const record = JSON.parse(await readFile(join(history, `${key}.json`), 'utf8')) as {
      frame: { gone: string };
    };
    assert.equal(
      record.frame.gone,
      'its segment of the recording was removed and could not be read (ENOENT)',
    );
    const why = await store.snapshotOrWhy('e1', 'full');
    assert.ok(why && !Buffer.isBuffer(why));
    assert.equal(why.status, 410);
    assert.ok(!why.error.includes(dir) && !why.error.includes(seg.file), why.error);
  });

  it('review finding 6: a snapshot asked for while its rescue runs (its segment off the list) is served from the rescue, not 410', async (t) => {
    const { store, history, seg, segments } = await setUp(t);
    await framed(store, T0 + 700);
    const rescue = store.rescueFrames('gate', [seg], []);
    assert.ok(rescue);
    segments.length = 0; // the ring took it off its list; its files wait for the rescue
    const jpeg = await store.snapshotOrWhy('e1', 'full');
    assert.ok(Buffer.isBuffer(jpeg), JSON.stringify(jpeg));
    await rescue;
    assert.deepEqual(jpeg, await readFile(join(history, `${eventKey('e1')}.jpg`)));
  });

  it('second review finding 2: a snapshot asked for while its rescue runs, whose write fails, is served from the JPEG drawn, not 410', async (t) => {
    const { store, history, seg, segments } = await setUp(t);
    await framed(store, T0 + 700);
    await mkdir(join(history, `${eventKey('e1')}.jpg`)); // it cannot be written
    const rescue = store.rescueFrames('gate', [seg], []);
    assert.ok(rescue);
    segments.length = 0; // off the ring's list, and not yet listed again when the request looks
    const jpeg = await store.snapshotOrWhy('e1', 'full');
    assert.ok(Buffer.isBuffer(jpeg), JSON.stringify(jpeg));
    assert.deepEqual(await rescue, [seg], 'kept for a retry');
    segments.push(seg);
    assert.deepEqual(await store.snapshotOrWhy('e1', 'full'), jpeg, 'the same snapshot');
  });

  it(
    "second review finding 4: a request waits for its own snapshot's rescue, not the rest of its batch",
    { timeout: 20_000 },
    async (t) => {
      const { store, history, seg, segments } = await setUp(t);
      endedEvents(store, [1, 2], (n) => T0 + 300 * n);
      await store.flush();
      // e2's writes wait (a snapshot still being made): its rescue cannot be written until then.
      let release: () => void = () => undefined;
      const made = new Promise<never>((_, reject) => (release = () => reject(new Error('no snapshot'))));
      store.setSnapshot('e2', made, {}, frame(T0 + 600));
      const rescue = store.rescueFrames('gate', [seg], []);
      assert.ok(rescue);
      segments.length = 0; // off the ring's list
      // Without one wait an event, this waits for e2's write, released only after it: it never ends.
      const jpeg = await store.snapshotOrWhy('e1', 'full');
      assert.ok(Buffer.isBuffer(jpeg), JSON.stringify(jpeg));
      assert.deepEqual(jpeg, await readFile(join(history, `${eventKey('e1')}.jpg`)));
      release();
      assert.deepEqual(await rescue, []);
      assert.ok(Buffer.isBuffer(await store.snapshot('e2', 'full')));
    },
  );

  it("review finding 8b (second review 1): rescues past the queue's bound are put off, their segment kept, unless their JPEG is in memory; the queue is counted", async (t) => {
    const { seg, frames, store, history } = await oneRescueAtATime(t);
    // e1 and e3 ended (their snapshots saved: only the recording has them); e2 goes on, its
    // snapshot still in memory.
    for (const n of [1, 2, 3]) {
      store.add(ev(n));
      store.setSnapshot(
        `e${n}`,
        Promise.resolve({ full: Buffer.from(`published ${n}`), crop: Buffer.from('crop') }),
        {},
        frame(T0 + 100 * n),
      );
      if (n !== 2) store.update({ ...ev(n), event: { type: 'end', n } });
    }
    // Their writes done: the snapshot made, then (queued by it) saved.
    for (let i = 0; i < 2; i++)
      await Promise.all(['e1', 'e2', 'e3'].map((id) => store.snapshotOrWhy(id, 'crop')));
    assert.deepEqual(
      (await readdir(history)).filter((f) => f.endsWith('.crop.jpg')).length,
      2,
      'e1 and e3 saved, e2 in memory',
    );
    const work = store.rescueFrames('gate', [seg], []);
    assert.ok(work);
    assert.equal(frames.counts.rescuing, 1, "one waits for its decode: the queue's bound");
    assert.deepEqual(await work, [seg], "e3's segment stays, listed again, for a later removal");
    assert.equal(frames.counts.rescuing, 0);
    assert.equal(frames.counts.rescued, 2, 'e1 decoded, e2 from memory');
    assert.equal(frames.counts.gone, 0, 'none lost for the queue');
    assert.equal(frames.counts.deferred, 1);
    assert.deepEqual(await store.snapshot('e2', 'full'), Buffer.from('published 2'));
    assert.ok(Buffer.isBuffer(await store.snapshot('e1', 'full')));
    assert.ok(Buffer.isBuffer(await store.snapshot('e3', 'full')), 'still drawn from the recording');
    assert.deepEqual(await store.rescueFrames('gate', [seg], []), [], 'rescued at the next removal');
    assert.equal(frames.counts.rescued, 3);
    assert.ok((await stat(join(history, `${eventKey('e3')}.jpg`))).isFile());
  });

  it('second review finding 10: a rescue of an event deleted meanwhile counts nothing: neither rescued nor lost, and holds no segment', async (t) => {
    const { store, seg, frames, history } = await setUp(t);
    await framed(store, T0 + 700);
    await mkdir(join(history, `${eventKey('e1')}.jpg`)); // had it been kept, its write would fail
    const work = store.rescueFrames('gate', [seg], []);
    assert.ok(work);
    await store.remove('e1'); // deleted while its frame is decoded
    assert.deepEqual(await work, [], 'no segment held for it');
    assert.equal(frames.counts.gone, 0, 'not lost: deleted');
    assert.equal(frames.counts.rescued, 0, 'not rescued either');
  });

  it(
    'second review finding 10: a request queued for a decode whose segment goes meanwhile, its snapshot rescued as <key>.jpg, gets the file, not 503',
    { timeout: 60_000 },
    async (t) => {
      const { seg, ffmpeg, dir } = await setUp(t);
      // Each decode's ffmpeg starts 2 s late: the order of what happens is set by the queue.
      const slow = join(dir, 'slow-ffmpeg');
      await writeFile(slow, `#!/bin/sh\nsleep 2\nexec '${ffmpeg}' "$@"\n`, { mode: 0o755 });
      const listed = [seg];
      const frames = new SnapshotFrames(
        { source: () => ({ ffmpeg: slow, ring: () => ({ list: () => listed }) }), log: recordingLog().log },
        undefined,
        1,
      );
      const history = join(dir, 'queued');
      const store = new EventStore(history, { maxEvents: 100, maxBytes: 1e7 }, recordingLog().log);
      await store.load();
      store.useFrames(frames);
      endedEvents(store, [1, 2], (n) => T0 + 300 * n);
      await store.flush();
      const jpg = join(history, `${eventKey('e1')}.jpg`);
      await mkdir(jpg); // the first rescue's write fails: e1's snapshot kept in memory
      const first = store.rescueFrames('gate', [seg], []); // decodes e1 (the one place)
      const other = store.snapshotOrWhy('e2', 'full'); // queued next
      const asked = store.snapshotOrWhy('e1', 'full'); // queued after it: no JPEG in memory yet
      assert.deepEqual(await first, [seg], 'held for a retry');
      await rm(jpg, { recursive: true });
      // The retry writes e1 from memory (no decode); then the segment goes, before the queued
      // request's decode opens it.
      assert.deepEqual(
        await store.rescueFrames('gate', [seg], []),
        [],
        'e1 kept (e2 was rescued in the first removal)',
      );
      await rm(seg.file);
      listed.length = 0;
      assert.ok(Buffer.isBuffer(await other));
      const got = await asked;
      assert.ok(Buffer.isBuffer(got), JSON.stringify(got));
      assert.deepEqual(got, await readFile(jpg));
    },
  );

  it('a rescue put off (the queue full) for RESCUE_RETRY_MS is then lost as rescue_busy: the segments it holds are not kept without end', async (t) => {
    let now = T0;
    const { seg, frames, store } = await oneRescueAtATime(t, () => now);
    endedEvents(store, [1, 2, 3, 4], (n) => T0 + 200 * n);
    await store.flush();
    assert.deepEqual(await store.rescueFrames('gate', [seg], []), [seg], 'e2, e3 and e4 put off');
    assert.equal(frames.counts.deferred, 3);
    now += RESCUE_RETRY_MS - 1;
    assert.deepEqual(
      await store.rescueFrames('gate', [seg], []),
      [seg],
      'e2 rescued; e3 and e4 put off again',
    );
    assert.equal(frames.counts.deferred, 3, 'each counted once, however often it is put off');
    now += 1; // every later removal found the queue full (here: e3 takes its one place)
    assert.deepEqual(
      await store.rescueFrames('gate', [seg], []),
      [],
      'e4 not put off again: the segment goes',
    );
    assert.equal(frames.counts.rescued, 3, 'e1, e2, then e3');
    assert.equal(frames.counts.gone, 1);
    assert.deepEqual(await store.snapshotOrWhy('e4', 'full'), {
      status: 410,
      error:
        "the snapshot's frame is gone: its segment of the recording was removed while the rescues were busy (rescue_busy)",
    });
  });

  it('second review finding 1: one removal holding more frames than the rescue queue (65) loses none; the 65th is rescued at the next', async (t) => {
    const { store, seg, frames, history } = await setUp(t);
    const n = 65;
    for (let i = 1; i <= n; i++) {
      store.add(ev(i));
      store.setSnapshot(
        `e${i}`,
        Promise.resolve({ full: Buffer.from(`published ${i}`), crop: Buffer.from('crop') }),
        {},
        frame(T0 + 100 + (i % 15) * 100),
      );
      store.update({ ...ev(i), event: { type: 'end', n: i } });
    }
    await store.flush();
    assert.equal((await readdir(history)).filter((f) => f.endsWith('.crop.jpg')).length, n, 'all saved');
    assert.deepEqual(
      await store.rescueFrames('gate', [seg], []),
      [seg],
      'the segment stays for the one put off',
    );
    assert.equal(frames.counts.gone, 0, 'none marked gone for the queue');
    assert.equal(frames.counts.rescued, 64);
    assert.equal(frames.counts.deferred, 1);
    assert.deepEqual(await store.rescueFrames('gate', [seg], []), [], 'the rest rescued at the next removal');
    assert.equal(frames.counts.rescued, n);
    assert.equal((await readdir(history)).filter((f) => /^[^.]+\.jpg$/.test(f)).length, n);
  });

  it('second review finding 3: a record whose frame is larger than 4096 a side loads, its frame marked gone (the record, crop and clip kept)', async (t) => {
    const stored = (w: number): StoredEvent => ({ ...ev(1), frame: { ...frame(T0), w, h: 120 } });
    assert.equal(parseRecord(recordText(stored(4096)), eventKey('e1')).frame?.gone, undefined);
    assert.match(
      parseRecord(recordText(stored(1_000_000)), eventKey('e1')).frame?.gone ?? '',
      /frame_too_large/,
    );
    const { frames, dir, seg, ffmpeg } = await setUp(t);
    const history = join(dir, 'large');
    const key = eventKey('e1');
    await mkdir(history, { recursive: true });
    await writeFile(join(history, `${key}.json`), recordText(stored(5120)));
    await writeFile(join(history, `${key}.crop.jpg`), Buffer.from('crop'));
    await writeFile(join(history, `${key}.mp4`), Buffer.from('clip'));
    const store = new EventStore(history, { maxEvents: 100, maxBytes: 1e7 }, recordingLog().log);
    await store.load();
    store.useFrames(frames);
    assert.deepEqual(await store.snapshotOrWhy('e1', 'full'), {
      status: 410,
      error:
        "the snapshot's frame is gone: its size (5120×120) is past what is drawn from the recording, 4096 a side (frame_too_large)",
    });
    assert.deepEqual(await store.snapshot('e1', 'crop'), Buffer.from('crop'));
    await store.flush();
    assert.deepEqual(
      (await readdir(history)).sort(),
      [`${key}.crop.jpg`, `${key}.json`, `${key}.mp4`],
      'nothing deleted',
    );
    assert.equal(frames.counts.drawn, 0, 'no decode');
    // The decode itself refuses such a size before it allocates the frame.
    const { decodeFrame } = await import('../../../src/record/index.js');
    await assert.rejects(decodeFrame(ffmpeg, [seg], T0, 5120, 120), { code: 'FRAME_TOO_LARGE' });
  });

  it('second review finding 3: a snapshot whose picture is larger than 4096 a side is written as <key>.jpg, not kept as a frame', async (t) => {
    const { store, history } = await setUp(t);
    store.add(ev(1));
    store.setSnapshot(
      'e1',
      Promise.resolve({ full: Buffer.from('published'), crop: Buffer.from('crop') }),
      {},
      {
        ...frame(T0 + 700),
        w: 5120,
        h: 2880,
      },
    );
    store.update({ ...ev(1), event: { type: 'end', n: 1 } });
    await store.flush();
    const key = eventKey('e1');
    assert.deepEqual(await readFile(join(history, `${key}.jpg`)), Buffer.from('published'));
    const record = JSON.parse(await readFile(join(history, `${key}.json`), 'utf8')) as { frame?: unknown };
    assert.equal(record.frame, undefined);
  });

  it('review finding 8c: decodes start in the order asked: one asked as another ends waits behind those already waiting', async () => {
    const frames = new SnapshotFrames({ source: () => undefined, log: recordingLog().log }, undefined, 1);
    // The decodes' queue itself (private): the moment it is about is one turn of the event loop.
    const limitOf = (
      frames as unknown as { limit<T>(kind: string, work: () => Promise<T>): Promise<T> }
    ).limit.bind(frames);
    const limit = <T>(work: () => Promise<T>): Promise<T> => limitOf('request', work);
    const started: string[] = [];
    let endA: () => void = () => undefined;
    const a = limit(() => {
      started.push('a');
      return new Promise<void>((r) => (endA = r));
    });
    const b = limit(() => Promise.resolve(void started.push('b')));
    let d: Promise<void> | undefined;
    endA();
    // Asked after A's end is queued, before B (woken by it) runs.
    queueMicrotask(() => {
      d = limit(() => Promise.resolve(void started.push('d')));
    });
    await Promise.all([a, b]);
    await d;
    assert.deepEqual(started, ['a', 'b', 'd']);
  });

  it('third review finding 6: rescues waiting for a decode go before requests; a request past FRAME_REQUESTS_WAITING is answered 503 at once', async (t) => {
    const { seg, ffmpeg } = await setUp(t);
    const frames = new SnapshotFrames(
      { source: () => ({ ffmpeg, ring: () => ({ list: () => [seg] }) }), log: recordingLog().log },
      undefined,
      1,
    );
    const limit = (
      frames as unknown as { limit<T>(kind: string, work: () => Promise<T>): Promise<T> }
    ).limit.bind(frames);
    const started: string[] = [];
    let endA: () => void = () => undefined;
    const a = limit('request', () => {
      started.push('a');
      return new Promise<void>((r) => (endA = r));
    });
    const waiting = Array.from({ length: FRAME_REQUESTS_WAITING }, (_, i) =>
      limit('request', () => Promise.resolve(void started.push(`r${i}`))),
    );
    const rescue = limit('rescue', () => Promise.resolve(void started.push('rescue')));
    const busy = await frames.view('k', 'gate', frame(T0 + 700));
    assert.ok(!Buffer.isBuffer(busy));
    assert.equal(busy.status, 503);
    assert.match(busy.error, /16 are waiting to be decoded \(busy\)/);
    endA();
    await Promise.all([a, rescue, ...waiting]);
    assert.deepEqual(started.slice(0, 3), ['a', 'rescue', 'r0'], 'the rescue first, though asked last');
    assert.ok(
      Buffer.isBuffer(await frames.view('k', 'gate', frame(T0 + 700))),
      'served once the queue is short',
    );
  });

  it('draws at most two frames at a time and keeps the cache within its bytes', async (t) => {
    const { seg, ffmpeg, dir } = await setUp(t);
    // ffmpeg behind a script that notes when each run starts and ends (and takes 0.3 s longer).
    const runs = join(dir, 'runs.log');
    const wrapper = join(dir, 'ffmpeg.sh');
    await writeFile(
      wrapper,
      `#!/bin/sh\necho s >> '${runs}'\nsleep 0.3\n'${ffmpeg}' "$@"\nrc=$?\necho e >> '${runs}'\nexit $rc\n`,
    );
    await chmod(wrapper, 0o755);
    const frames = new SnapshotFrames(
      { source: () => ({ ffmpeg: wrapper, ring: () => ({ list: () => [seg] }) }), log: recordingLog().log },
      5000,
    );
    const views = await Promise.all(
      [100, 200, 300, 400, 500, 600].map((ms, i) => frames.view(`k${i}`, 'gate', frame(T0 + ms))),
    );
    assert.ok(views.every((v) => Buffer.isBuffer(v)));
    let now = 0;
    let most = 0;
    for (const line of (await readFile(runs, 'utf8')).trim().split('\n')) {
      now += line === 's' ? 1 : -1;
      most = Math.max(most, now);
    }
    assert.equal(most, 2, 'two decodes at a time, never more');
    const biggest = Math.max(...views.map((v) => v.length));
    t.diagnostic(`${frames.stats().snapshots} cached, ${frames.stats().bytes} bytes (each ~${biggest})`);
    assert.ok(frames.stats().bytes <= 5000 + biggest, 'within its bytes (the newest stays however big)');
    assert.ok(frames.stats().snapshots < 6, 'the least recently used went');
  });
});
