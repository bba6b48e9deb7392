import assert from 'node:assert/strict';
import { mkdir, readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Ingest } from '../../../src/ingest/ingest.js';
import { FootageRanges, ringKey, type Segment } from '../../../src/record/index.js';
import { cameraConfig, config } from '../../helpers/config.js';
import { tempDir, waitFor } from '../../helpers/env.js';
import { recordingLog, silentLog } from '../../helpers/fakes.js';

const T0 = 1_800_000_000_000;

/** A segment an earlier run left in `dir`: its file and its description, as the ring writes them. */
async function leftSegment(dir: string): Promise<string> {
  await mkdir(dir, { recursive: true, mode: 0o750 });
  const file = join(dir, '1-0.ts');
  const bytes = Buffer.alloc(188 * 10, 0x47);
  await writeFile(file, bytes);
  const described = {
    file,
    run: 1,
    seq: 0,
    start: T0,
    end: T0 + 2000,
    bytes: bytes.length,
    headerBytes: 0,
    keyframes: [{ offset: 0, ts: T0 }],
    codec: 'h264',
    open: false,
  };
  await writeFile(join(dir, '1-0.json'), JSON.stringify(described));
  return file;
}

/** An Ingest of `cameras` with clips on (ring_dir `ringDir`), its state directory `stateDir`. */
function ingestOf(
  cameras: Record<string, ReturnType<typeof cameraConfig>>,
  ringDir: string,
  footage: FootageRanges,
  stateDir?: string,
  log = silentLog,
  configured?: Record<string, ReturnType<typeof cameraConfig>>,
): Ingest {
  const clips = config({ events: { clips: { enabled: true, ring_dir: ringDir } } }).events.clips;
  return new Ingest(
    {
      cameras,
      ffmpeg: config().ffmpeg,
      size: () => 320,
      secrets: [],
      cache: config().cache,
      clips,
      ...(stateDir ? { state_dir: stateDir } : {}),
      ...(configured ? { configured } : {}),
    },
    { log, onFrame: () => undefined, onStatus: () => undefined, footage },
  );
}

describe('Ingest: recordings an earlier run left', () => {
  it('review finding 8a: a camera whose clips were turned off across a restart has its recording retired: listed while events need it, rescued and removed when they let it go', async (t) => {
    const root = await tempDir(t);
    const ringDir = join(root, 'ring');
    const dir = join(ringDir, ringKey('gate'));
    const file = await leftSegment(dir);
    const footage = new FootageRanges();
    footage.set('gate', 'e1', T0 + 500, T0 + 1500); // an event of the history needs it
    const rescued: Segment[][] = [];
    footage.rescue = (camera, segments) => {
      assert.equal(camera, 'gate');
      rescued.push([...segments]);
      return Promise.resolve([]);
    };
    const gate = cameraConfig({ url: 'rtsp://127.0.0.1:9/gate', clips: false, enabled: false });
    const ingest = ingestOf({ gate }, ringDir, footage, root); // ring_dir: the state directory's
    await ingest.start();
    t.after(() => ingest.stop());
    const ring = ingest.ring('gate');
    assert.ok(ring, 'the recording left is listed (its snapshots and clips are drawn from it)');
    await waitFor('retired (stopped, after start-up)', () => ring.isRetired, 5000);
    assert.deepEqual(
      ring.list().map((s) => s.file),
      [file],
    );
    assert.equal(rescued.length, 0, 'nothing removed yet');
    footage.release('e1'); // the event aged out
    await ingest.pruneRetired();
    assert.equal(rescued.length, 1, 'its removal went through the rescue');
    assert.equal(rescued[0]![0]!.file, file);
    assert.equal(ingest.ring('gate'), undefined);
    await assert.rejects(stat(dir), { code: 'ENOENT' }, 'the directory goes with its last segment');
    assert.deepEqual(await readdir(ringDir), []);
  });

  it('second review finding 6: a camera removed from the config across a restart, whose events the history holds, has its recording retired, not leaked', async (t) => {
    const root = await tempDir(t);
    const ringDir = join(root, 'ring');
    const dir = join(ringDir, ringKey('gate'));
    const file = await leftSegment(dir);
    const footage = new FootageRanges();
    footage.set('gate', 'e1', T0 + 500, T0 + 1500);
    footage.cameras = () => ['gate', 'yard']; // the history's cameras ('yard' left no recording)
    const rescued: Segment[][] = [];
    footage.rescue = (camera, segments) => {
      assert.equal(camera, 'gate');
      rescued.push([...segments]);
      return Promise.resolve([]);
    };
    const door = cameraConfig({ url: 'rtsp://127.0.0.1:9/door', clips: false, enabled: false });
    const ingest = ingestOf({ door }, ringDir, footage, root); // ring_dir: the state directory's
    await ingest.start();
    t.after(() => ingest.stop());
    const ring = ingest.ring('gate');
    assert.ok(
      ring,
      "the removed camera's recording is listed: its events' snapshots are drawn from it, not 410",
    );
    await waitFor('retired (stopped, after start-up)', () => ring.isRetired, 5000);
    assert.deepEqual(
      ring.list().map((s) => s.file),
      [file],
    );
    assert.equal(ingest.ring('yard'), undefined);
    footage.release('e1');
    await ingest.pruneRetired();
    assert.equal(rescued.length, 1, 'its removal went through the rescue');
    assert.equal(ingest.ring('gate'), undefined);
    await assert.rejects(stat(dir), { code: 'ENOENT' }, 'its directory goes: not leaked');
    assert.deepEqual(await readdir(ringDir), []);
  });

  it('second review finding 8: start-up does not wait for the rescue of a recording left by an earlier run (it may decode for 30 s a frame)', async (t) => {
    const root = await tempDir(t);
    const ringDir = join(root, 'ring');
    const file = await leftSegment(join(ringDir, ringKey('gate')));
    const footage = new FootageRanges();
    footage.cameras = () => ['gate']; // an event of gate's with its snapshot frame in the segment
    let asked = 0;
    footage.rescue = () => {
      asked++;
      return new Promise<readonly Segment[]>(() => undefined); // a decode that does not end
    };
    const door = cameraConfig({ url: 'rtsp://127.0.0.1:9/door', clips: false, enabled: false });
    const ingest = ingestOf({ door }, ringDir, footage, root);
    let timer: NodeJS.Timeout | undefined;
    const started = await Promise.race([
      ingest.start().then(() => true),
      new Promise<boolean>((r) => (timer = setTimeout(() => r(false), 20_000))),
    ]);
    clearTimeout(timer);
    t.after(() => ingest.stop());
    assert.equal(started, true, 'started, its rescue still running');
    assert.ok(ingest.ring('gate'), 'listed as retired at once: its events are answered from it');
    await waitFor('retired', () => ingest.ring('gate')?.isRetired === true, 5000);
    await waitFor('the rescue asked for', () => asked === 1, 5000);
    assert.equal((await stat(file)).isFile(), true, 'its file waits for the rescue');
  });

  it('a recording left of a camera that does not record and whose events are gone is never started on: removed in the state directory, left and named elsewhere', async (t) => {
    const root = await tempDir(t);
    const door = cameraConfig({ url: 'rtsp://127.0.0.1:9/door', clips: false, enabled: false });
    // Its file being written by another config sharing ring_dir: a `.ts` without description.
    const left = async (ringDir: string): Promise<string> => {
      const dir = join(ringDir, ringKey('door'));
      await leftSegment(dir);
      await writeFile(join(dir, '1-1.ts'), Buffer.alloc(188, 0x47));
      return dir;
    };
    // ring_dir on a tmpfs another config may share: nothing touched, one line says so.
    const shared = join(root, 'tmpfs-ring');
    const dir = await left(shared);
    const { log, lines } = recordingLog();
    const elsewhere = ingestOf({ door }, shared, new FootageRanges(), join(root, 'state'), log);
    await elsewhere.start();
    await elsewhere.stop();
    assert.equal(elsewhere.ring('door'), undefined, "not started on: its files may be another's");
    assert.deepEqual((await readdir(dir)).sort(), ['1-0.json', '1-0.ts', '1-1.ts']);
    assert.ok(
      lines.some((l) => /do not record here \(another config may own them\)/.test(String(l.msg))),
      JSON.stringify(lines),
    );
    // ring_dir in the state directory (this Argus' alone): removed.
    const state = join(root, 'state');
    const own = await left(join(state, 'ring'));
    await mkdir(join(state, 'ring', 'mp4'), { recursive: true }); // the MP4 cache stays
    const ingest = ingestOf({ door }, join(state, 'ring'), new FootageRanges(), state);
    await ingest.start();
    t.after(() => ingest.stop());
    await assert.rejects(stat(own), { code: 'ENOENT' });
    assert.deepEqual(await readdir(join(state, 'ring')), ['mp4']);
  });

  it('third review finding 1: with fleet:, a camera of the config that records is never touched at start, though the fleet has given this box none yet (nor when the history holds its events)', async (t) => {
    const root = await tempDir(t);
    const ringDir = join(root, 'ring');
    const gateDir = join(ringDir, ringKey('gate'));
    const yardDir = join(ringDir, ringKey('yard'));
    await leftSegment(gateDir);
    await leftSegment(yardDir);
    const footage = new FootageRanges();
    footage.cameras = () => ['gate']; // gate's events in the history; yard has none
    footage.rescue = () => Promise.resolve([]);
    const gate = cameraConfig({ url: 'rtsp://127.0.0.1:9/gate' });
    const yard = cameraConfig({ url: 'rtsp://127.0.0.1:9/yard' });
    const ingest = ingestOf({}, ringDir, footage, root, silentLog, { gate, yard });
    await ingest.start();
    t.after(() => ingest.stop());
    assert.equal(ingest.ring('gate'), undefined, 'not retired: the fleet may give it to this box');
    assert.deepEqual((await readdir(gateDir)).sort(), ['1-0.json', '1-0.ts']);
    assert.deepEqual((await readdir(yardDir)).sort(), ['1-0.json', '1-0.ts'], 'not removed');
  });
});
