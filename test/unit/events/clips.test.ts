import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { cacheDir, Clips, type ClipSource } from '../../../src/events/clips.js';
import type { EventStore } from '../../../src/events/index.js';
import type { Ring, RingFault, Segment } from '../../../src/record/index.js';
import type { ClipPayload } from '../../../src/publish/index.js';
import type { ObjectEvent } from '../../../src/track/index.js';
import type { Logger } from 'pino';
import { FakeClock, objectEvent, recordingLog, silentLog } from '../../helpers/fakes.js';
import { segment } from '../../helpers/segment.js';

const CFG = {
  enabled: true,
  pre_capture_s: 5,
  post_capture_s: 5,
  max_clip_s: 60,
  ring_max_mb: 256,
  retain_days: 7,
  record_days: 1,
  max_gb: 0,
  cache_mb: 16,
};

const event = (type: ObjectEvent['type'], startTs: number, endTs: number | null = null): ObjectEvent =>
  objectEvent(type, { id: 'e1', camera: 'door', score: 0.9, box: [0, 0, 10, 10], startTs, endTs });

/** A ring that holds `segments`, whose last loss was `fault`. */
function fakeRing(segments: Segment[], fault?: RingFault): Ring {
  const ring = {
    lastFault: fault && { fault, at: 0, message: 'no space' },
    list: () => segments,
    settle: () => Promise.resolve(),
    closed: () => Promise.resolve(),
  };
  return ring as unknown as Ring;
}

function setup(
  o: {
    ring?: Ring;
    keeps?: boolean;
    history?: boolean;
    log?: Logger;
    has?: (id: string) => boolean;
  } = {},
) {
  const clock = new FakeClock();
  const done: [string, ClipPayload][] = [];
  const fields: [string, Record<string, unknown>][] = [];
  const history = {
    setFields: (id: string, f: Record<string, unknown>) => fields.push([id, f]),
    has: o.has ?? (() => true),
  };
  const source: ClipSource = { ring: () => o.ring, ffmpeg: '/nonexistent/ffmpeg' };
  const clips = new Clips(CFG, {
    clock,
    log: o.log ?? silentLog,
    history: o.history === false ? undefined : (history as unknown as EventStore),
    source: () => source,
    keeps: () => o.keeps ?? true,
    done: (id, clip) => done.push([id, clip]),
  });
  return { clock, clips, done, fields };
}

/** The clip of an event that ended, once made, with `ring` as the camera's. */
async function endedClip(ring: Ring | undefined): Promise<ClipPayload> {
  const { clips, done } = setup({ ring });
  clips.onEvent(event('new', 100_000));
  clips.onEvent(event('end', 100_000, 101_000));
  clips.tick(200_000);
  await settle();
  return done[0]![1];
}

const reasonsOf = (clip: ClipPayload): unknown => clip.state === 'failed' && clip.reasons;

/** Lets the clip queue run. */
const settle = (): Promise<void> => new Promise((r) => setTimeout(r, 10));

/**
 * A stand-in for ffmpeg in `dir` (each MP4 it makes, after `sleepS`, differs from the one before:
 * its last argument is the output) and one h264 segment of the camera's ring.
 */
async function standIn(dir: string, sleepS = 0): Promise<{ ffmpeg: string; seg: Segment }> {
  const ffmpeg = join(dir, 'ffmpeg');
  const sleep = sleepS > 0 ? `sleep ${sleepS}\n` : '';
  await writeFile(ffmpeg, `#!/bin/sh\nfor last; do :; done\n${sleep}head -c 64 /dev/urandom > "$last"\n`, {
    mode: 0o755,
  });
  const seg = segment('h264', join(dir, '1-0.ts'));
  await writeFile(seg.file, Buffer.alloc(1000));
  return { ffmpeg, seg };
}

/**
 * Clips whose ring directory is in `dir`, started, with `standIn`'s ffmpeg (each MP4 made after
 * `sleepS`) and segment, and a history whose every event's clip is 95–106 s of `door`, holding
 * the events `has` says (all, unless told). Its segment is returned to be changed.
 */
async function cachedClips(
  dir: string,
  o: { has?: (id: string) => boolean; log?: Logger; clock?: FakeClock; sleepS?: number } = {},
): Promise<{ clips: Clips; seg: Segment }> {
  const { ffmpeg, seg } = await standIn(dir, o.sleepS);
  const history = {
    clipRange: (id: string) => ({ id, camera: 'door', from: 95_000, to: 106_000 }),
    clipRanges: () => [],
    has: o.has ?? (() => true),
    setFields: () => undefined,
  };
  const source: ClipSource = { ring: () => fakeRing([seg]), ffmpeg };
  const clips = new Clips(
    { ...CFG, ring_dir: join(dir, 'ring') },
    {
      clock: o.clock ?? new FakeClock(),
      log: o.log ?? silentLog,
      history: history as unknown as EventStore,
      source: () => source,
      keeps: () => true,
      done: () => undefined,
    },
  );
  await clips.start();
  return { clips, seg };
}

describe('Clips', () => {
  it("asks the camera's ring what it keeps with that camera's events' footage only, by id; nothing without a ring", () => {
    const asked: unknown[][] = [];
    const ring = {
      kept: (footage: Iterable<unknown>, from?: number, to?: number) => {
        asked.push([[...footage], from, to]);
        return [];
      },
    } as unknown as Ring;
    const { clips } = setup({ ring });
    clips.onEvent(event('new', 100_000));
    clips.footage.set('yard', 'other', 0, 50_000);
    assert.deepEqual(clips.kept('door', 1, 2), []);
    assert.deepEqual(asked, [[[{ id: 'e1', camera: 'door', range: [95_000, Infinity] }], 1, 2]]);
    assert.equal(setup().clips.kept('door'), undefined);
  });

  it('says nothing of clips for a camera that keeps none, or without a history', () => {
    assert.equal(setup({ keeps: false }).clips.onEvent(event('new', 10_000)), null);
    assert.equal(setup({ history: false }).clips.onEvent(event('new', 10_000)), null);
  });

  it("keeps the recording from the pre-roll at `new`; describes the clip once the post-roll and the ring's settling time have passed", async () => {
    const ring = fakeRing([]);
    const { clips, done, fields } = setup({ ring });
    assert.deepEqual(clips.onEvent(event('new', 100_000)), { state: 'recording' });
    assert.deepEqual([...clips.footage.of('door')], [[95_000, Infinity]]);
    assert.deepEqual(clips.onEvent(event('end', 100_000, 104_000)), { state: 'recording' });
    assert.deepEqual([...clips.footage.of('door')], [[95_000, 109_000]]);
    clips.tick(109_000 + 1499); // the post-roll ends at 109 s; the ring has 1.5 s more
    await settle();
    assert.equal(done.length, 0);
    clips.tick(109_000 + 1500);
    await settle();
    // The ring holds nothing of that time: the event says so, in the history too.
    assert.equal(done.length, 1);
    const [id, clip] = done[0]!;
    assert.equal(id, 'e1');
    assert.equal(clip.state, 'failed');
    assert.deepEqual(clip.state === 'failed' && clip.reasons, ['not_recorded_yet']);
    assert.deepEqual(fields, [['e1', { clip }]]);
    assert.equal(clips.footage.size, 0, 'no clip: its footage is not kept');
  });

  it('describes a clip only once the segment holding its end is closed and described (a kill loses none of it); waits 15 s at most', async () => {
    const asked: number[] = [];
    let close = (): void => undefined;
    const ring = {
      ...(fakeRing([]) as unknown as Record<string, unknown>),
      closed: (ts: number) => (asked.push(ts), new Promise<void>((r) => (close = r))),
    } as unknown as Ring;
    const { clips, done, clock } = setup({ ring });
    clips.onEvent(event('new', 100_000));
    clips.onEvent(event('end', 100_000, 104_000));
    clips.tick(109_000 + 1500);
    await settle();
    assert.deepEqual(asked, [109_000], 'the ring is asked for the clip end');
    assert.equal(done.length, 0, 'not described while its last segment is open');
    close();
    await settle();
    assert.equal(done.length, 1);
    // A ring whose segment never closes (a camera that stopped sending): described after 15 s.
    clips.onEvent({ ...event('new', 200_000), id: 'e2' });
    clips.onEvent({ ...event('end', 200_000, 204_000), id: 'e2' });
    clips.tick(209_000 + 1500);
    await settle();
    assert.equal(done.length, 1);
    await clock.advance(14_999);
    await settle();
    assert.equal(done.length, 1);
    await clock.advance(1);
    await settle();
    assert.deepEqual(
      done.map(([id]) => id),
      ['e1', 'e2'],
    );
  });

  it("names the ring's fault, a missing ring, or a codec an MP4 cannot hold", async () => {
    assert.deepEqual(reasonsOf(await endedClip(fakeRing([], 'disk_full'))), ['disk_full']);
    assert.deepEqual(reasonsOf(await endedClip(undefined)), ['no_ring']);
    const seg = segment('type 0x6');
    // The ring knows the codec from the stream's tables, with or without a segment kept; else
    // its segments say it.
    const codec = { codec: 'type 0x6' };
    for (const ring of [
      Object.assign(fakeRing([seg]), codec),
      Object.assign(fakeRing([]), codec),
      fakeRing([seg]),
    ]) {
      const clip = await endedClip(ring);
      assert.equal(clip.state, 'failed');
      assert.match(clip.state === 'failed' ? clip.error : '', /type 0x6 cannot be copied into an MP4/);
      assert.deepEqual(reasonsOf(clip), ['codec']);
    }
  });

  it("a ring whose directory cannot be used, or was removed, names it in the clip's error", async () => {
    const unusable = Object.assign(fakeRing([], 'ring_unusable'), {
      unusable: 'the ring directory /ring/abc is a symbolic link: Argus does not follow it',
    });
    const refused = await endedClip(unusable);
    assert.deepEqual(reasonsOf(refused), ['ring_unusable']);
    assert.match(
      refused.state === 'failed' ? refused.error : '',
      /ring directory \/ring\/abc is a symbolic link/,
    );
    const removed = fakeRing([], 'ring_removed');
    removed.lastFault!.message = 'the ring directory /ring/abc was removed or replaced under Argus';
    const lost = await endedClip(removed);
    assert.deepEqual(reasonsOf(lost), ['ring_removed']);
    assert.match(
      lost.state === 'failed' ? lost.error : '',
      /no video of this time: the ring directory \/ring\/abc was removed/,
    );
    // Other faults keep the short error.
    const full = await endedClip(fakeRing([], 'disk_full'));
    assert.equal(full.state === 'failed' && full.error, 'the ring holds no video of this time');
  });

  it('failed clips are logged once a minute per camera: the first, then a count of the others', async () => {
    const { log, lines } = recordingLog();
    const rings: Record<string, Ring> = { door: fakeRing([], 'disk_full'), yard: fakeRing([], 'disk_full') };
    const clock = new FakeClock();
    const clips = new Clips(CFG, {
      clock,
      log,
      history: { setFields: () => undefined, has: () => true } as unknown as EventStore,
      source: () => ({ ring: (c) => rings[c], ffmpeg: '/nonexistent/ffmpeg' }),
      keeps: () => true,
      done: () => undefined,
    });
    const fail = async (id: string, camera: string): Promise<void> => {
      const start = clock.now() - 20_000;
      clips.onEvent({ ...event('new', start), id, camera });
      clips.onEvent({ ...event('end', start, start + 1000), id, camera });
      clips.tick(clock.now());
      await settle();
    };
    const warned = () => lines.filter((l) => l.msg === 'no clip for this event');
    const counted = () => lines.filter((l) => l.msg === 'more clips failed since the last warning');
    for (let i = 0; i < 5; i++) await fail(`d${i}`, 'door');
    await fail('y0', 'yard');
    assert.equal(warned().length, 2, 'the first of each camera');
    assert.equal(counted().length, 0);
    await clock.advance(59_999);
    clips.tick(clock.now());
    assert.equal(counted().length, 0, 'not before the minute is over');
    await clock.advance(1);
    clips.tick(clock.now());
    assert.equal(counted().length, 1, 'door: the others counted; yard had none more');
    assert.deepEqual(
      [counted()[0]].map((l) => [(l as { camera?: string }).camera, (l as { clips?: number }).clips]),
      [['door', 4]],
    );
    // A new minute: the next failure is logged again.
    await fail('d5', 'door');
    assert.equal(warned().length, 3);
    await fail('d6', 'door');
    await clips.stop();
    assert.equal(counted().length, 2, 'what is counted at a stop is said');
  });

  it('caps a long event at max_clip_s from the pre-roll; the event carries the result until its end', async () => {
    const { clips, done } = setup({ ring: fakeRing([]) });
    clips.onEvent(event('new', 100_000));
    clips.tick(95_000 + 60_000 + 1500 - 1);
    await settle();
    assert.equal(done.length, 0);
    clips.tick(95_000 + 60_000 + 1500);
    await settle();
    assert.equal(done.length, 1, 'made while the event goes on');
    const made = done[0]![1];
    assert.deepEqual(clips.onEvent(event('update', 100_000)), made);
    assert.deepEqual(clips.onEvent(event('end', 100_000, 300_000)), made);
    clips.tick(1e9);
    await settle();
    assert.equal(done.length, 1, 'made once');
    // Forgotten after its end: another event of the same id would start again.
    assert.equal(clips.onEvent(event('update', 100_000)), null);
  });

  it('a clip is a range of the recording, from the key frame at or before the pre-roll: described, not copied; its footage kept', async () => {
    const { clips, done, fields } = setup({ ring: fakeRing([segment('h264')]) });
    clips.onEvent(event('new', 96_000));
    clips.onEvent(event('end', 96_000, 100_000));
    clips.tick(200_000);
    await settle();
    const clip = done[0]![1];
    assert.deepEqual(clip, {
      state: 'ready',
      path: '/api/events/e1/clip.mp4',
      start: new Date(90_000).toISOString(),
      end: new Date(105_000).toISOString(),
      duration_s: 15,
      codec: 'h264',
      browser_plays: true,
    });
    assert.deepEqual(fields, [['e1', { clip }]]);
    assert.deepEqual([...clips.footage.of('door')], [[90_000, 105_000]]);
  });

  it('the footage is freed once its event leaves the history, or is past retain_days', async () => {
    let kept = new Set(['a', 'b']);
    const { clips, clock } = setup({ ring: fakeRing([segment('h264')]), has: (id) => kept.has(id) });
    for (const id of ['a', 'b']) {
      clips.onEvent({ ...event('new', 96_000), id });
      clips.onEvent({ ...event('end', 96_000, 100_000), id });
    }
    clips.tick(clock.now());
    await settle();
    assert.equal(clips.footage.size, 2);
    kept = new Set(['b']);
    clips.tick(clock.now() + 10_000);
    assert.deepEqual(
      [...clips.footage.entries()].map((e) => e.id),
      ['b'],
      'a left the history',
    );
    clips.tick(105_000 + 7 * 86_400_000 + 20_000);
    assert.equal(clips.footage.size, 0, 'b is past retain_days');
  });

  it('at shutdown, ended events and those going on are described from what was recorded; the rest is named stream_ended, with both ends', async () => {
    // The stream stopped at 110 s (the ring's last segment ends there); Argus stops at 1000 s.
    const { clips, done } = setup({ ring: fakeRing([segment('h264')]) });
    clips.onEvent({ ...event('new', 100_000), id: 'ended' });
    clips.onEvent({ ...event('end', 100_000, 108_000), id: 'ended' });
    clips.onEvent({ ...event('new', 100_000), id: 'going' });
    await clips.stop();
    const byId = Object.fromEntries(done);
    const ended = byId['ended']!;
    assert.equal(ended.state, 'ready', JSON.stringify(ended));
    assert.deepEqual(ended.state === 'ready' && ended.missing, {
      start_s: 0,
      end_s: 3,
      reasons: ['stream_ended'],
    });
    const going = byId['going']!;
    assert.equal(going.state, 'ready', JSON.stringify(going));
    assert.equal(going.state === 'ready' && going.capped, true, 'asked to max_clip_s: its end is not known');
    assert.deepEqual(going.state === 'ready' && going.missing, {
      start_s: 0,
      end_s: 45,
      reasons: ['stream_ended'],
    });
  });
});

describe('Clips.open: the cache', () => {
  it("serves an event's clip as the same MP4 on every request, after the ring stamped its segments again", async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'argus-clips-open-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    // A stand-in for ffmpeg: each MP4 it makes differs from the one before (its last argument is the output).
    const { clips, seg } = await cachedClips(dir);
    const read = async (): Promise<Buffer> => {
      const opened = await clips.open('e1');
      assert.ok('file' in opened, JSON.stringify(opened));
      try {
        return await opened.file.readFile();
      } finally {
        await opened.file.close();
      }
    };
    const first = await read();
    // The stream's clock found a smaller delay: the segment's times move by milliseconds.
    seg.start -= 4;
    seg.end -= 4;
    seg.keyframes = [{ offset: 376, ts: seg.start }];
    assert.deepEqual(await read(), first);
    assert.deepEqual(clips.cacheStats().made, 1);
  });

  it("an event that leaves the history by its own limits takes its cached MP4 along; another's stays", async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'argus-clips-prune-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    const kept = new Set(['a', 'b']);
    const clock = new FakeClock();
    const { clips } = await cachedClips(dir, { has: (id) => kept.has(id), clock });
    for (const id of ['a', 'b']) {
      clips.onEvent({ ...event('new', 96_000), id });
      clips.onEvent({ ...event('end', 96_000, 100_000), id });
      const opened = await clips.open(id);
      assert.ok('file' in opened, JSON.stringify(opened));
      await opened.file.close();
    }
    clips.tick(clock.now());
    await settle();
    const mp4s = async (): Promise<number> =>
      (await readdir(cacheDir(join(dir, 'ring')))).filter((n) => n.endsWith('.mp4')).length;
    assert.equal(await mp4s(), 2);
    kept.delete('a');
    clips.tick(clock.now() + 60_000);
    await settle();
    assert.equal(await mp4s(), 1, "a's MP4 left with it");
    assert.equal(clips.cacheStats().made, 2);
    const again = await clips.open('b');
    assert.ok('file' in again);
    await again.file.close();
    assert.equal(clips.cacheStats().made, 2, "b's is served from the cache still");
    // b's footage goes first (past retain_days), then b leaves the history: its MP4 goes too.
    clips.tick(105_000 + 7 * 86_400_000 + 20_000);
    assert.equal(clips.footage.size, 0);
    assert.equal(await mp4s(), 1);
    kept.delete('b');
    clips.tick(105_000 + 7 * 86_400_000 + 90_000);
    await settle();
    assert.equal(await mp4s(), 0, "b's MP4 left with it, its footage gone before");
  });

  it('a request for a clip whose event is deleted while it is made is answered 404, not logged as a failure', async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'argus-clips-drop-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    const { log, lines } = recordingLog();
    const { clips } = await cachedClips(dir, { log, sleepS: 0.3 });
    const asked = clips.open('e1');
    await new Promise((ok) => setTimeout(ok, 100));
    await clips.dropEvent('e1');
    const answer = await asked;
    assert.deepEqual(answer, { status: 404, error: 'no clip for this event: it was deleted' });
    assert.deepEqual(
      lines.filter((l) => l.msg === 'a clip could not be made'),
      [],
    );
  });
});
