import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import { pino } from 'pino';
import type { Frame } from '../../src/core/frame.js';
import { letterbox } from '../../src/core/geometry.js';
import { parseConfig } from '../../src/config/index.js';
import { defaultFfmpegPath, Ingest, type CameraStatus } from '../../src/ingest/index.js';
import { fixtureDetector } from '../helpers/detector.js';
import { hasShared, isAlive, repoRoot, shared, tempDir, waitFor } from '../helpers/env.js';
import { boxIou } from '../helpers/images.js';
import { freePort, hasGstreamer, pictureTypes, startRtspServer, type RtspServer } from '../helpers/rtsp.js';

const SIZE = 320;
const log = pino({ level: process.env.ARGUS_TEST_LOG ?? 'silent' });

if (!hasGstreamer()) {
  process.stderr.write(
    'ingest tests: GStreamer RTSP server not installed (apt packages, see .ci/run); using the npm rtsp-streaming-server over UDP\n',
  );
}

/** A camera section for the given URLs, through the real config parser. */
function camerasConfig(server: RtspServer, cams: Record<string, { url: string; fps?: number }>, extra = '') {
  const lines = [
    'model:',
    '  path: m.onnx',
    'ffmpeg:',
    '  timeout_s: 3',
    '  stall_timeout_s: 10',
    '  backoff_initial_s: 0.5',
    '  backoff_max_s: 2',
    '  stop_grace_s: 1',
    extra,
    'cameras:',
  ];
  for (const [name, c] of Object.entries(cams)) {
    lines.push(
      `  ${name}:`,
      `    url: "${c.url}"`,
      `    fps: ${c.fps ?? 5}`,
      `    rtsp_transport: ${server.transport}`,
    );
  }
  return parseConfig(lines.join('\n'), join(repoRoot, 'test.yaml'), {});
}

class Recorder {
  frames: Frame[] = [];
  statuses: CameraStatus[] = [];
  framesOf = (cam: string): Frame[] => this.frames.filter((f) => f.camera === cam);
  last = (cam: string): CameraStatus | undefined => this.statuses.filter((s) => s.camera === cam).at(-1);
  statesOf = (cam: string): string[] => this.statuses.filter((s) => s.camera === cam).map((s) => s.state);
}

async function runIngest(
  t: { after: (fn: () => Promise<void>) => void },
  server: RtspServer,
  cams: Record<string, { url: string; fps?: number }>,
) {
  const { config, secrets } = camerasConfig(server, cams);
  const rec = new Recorder();
  const ingest = new Ingest(
    { cameras: config.cameras, ffmpeg: config.ffmpeg, size: () => SIZE, secrets, cache: config.cache },
    { log, onFrame: (f) => rec.frames.push(f), onStatus: (s) => rec.statuses.push(s) },
  );
  await ingest.start();
  t.after(() => ingest.stop());
  return { ingest, rec };
}

/** How many frames each camera delivers in the same `ms` window, from now. */
async function framesIn(rec: Recorder, cams: string[], ms: number): Promise<[string, number][]> {
  const before = cams.map((c) => rec.framesOf(c).length);
  await new Promise((r) => setTimeout(r, ms));
  return cams.map((c, i) => [c, rec.framesOf(c).length - before[i]!]);
}

/** An 810×1080 portrait JPEG: grey, with a white 200×200 square at (400, 600). */
async function portraitJpeg(dir: string): Promise<string> {
  const path = join(dir, 'portrait.jpg');
  const raw = Buffer.alloc(810 * 1080 * 3, 114);
  for (let y = 600; y < 800; y++)
    for (let x = 400; x < 600; x++) raw.fill(255, (y * 810 + x) * 3, (y * 810 + x) * 3 + 3);
  await writeFile(
    path,
    await sharp(raw, { raw: { width: 810, height: 1080, channels: 3 } })
      .jpeg({ quality: 95 })
      .toBuffer(),
  );
  return path;
}

describe('ingest against a real RTSP server and ffmpeg', () => {
  it('delivers frames at the configured fps and size, letterboxed, with the source geometry', async (t) => {
    const server = await startRtspServer(t, [
      { name: 'ball', source: { kind: 'ball', width: 640, height: 480, fps: 15 } },
    ]);
    const { rec } = await runIngest(t, server, { ball: { url: server.url('ball'), fps: 5 } });
    await waitFor('streaming', () => rec.last('ball')?.state === 'streaming');
    const first = rec.framesOf('ball').length;
    const t0 = Date.now();
    await new Promise((r) => setTimeout(r, 4000));
    const got = rec.framesOf('ball').slice(first);
    const fps = (got.length * 1000) / (Date.now() - t0);
    // A 15 fps source limited to 5: far from 15, near 5 (loose bounds: shared, noisy machine).
    assert.ok(fps > 3 && fps < 7.5, `measured ${fps.toFixed(1)} frames/s`);
    const f = got.at(-1)!;
    assert.equal(f.data.length, SIZE * SIZE * 3);
    assert.deepEqual(f.geometry, letterbox(640, 480, SIZE));
    assert.deepEqual(rec.last('ball')!.source, { width: 640, height: 480 });
    // Rows above the picture are letterbox grey 114.
    assert.deepEqual([...f.data.subarray(0, 6)], [114, 114, 114, 114, 114, 114]);
    for (let i = 1; i < got.length; i++) assert.equal(got[i]!.seq, got[i - 1]!.seq + 1);
  });

  it('delivers a High-profile H.264 stream with B-frames at the configured fps, not the source rate', async (t) => {
    const server = await startRtspServer(t, [
      { name: 'bframes', source: { kind: 'ball', width: 320, height: 240, fps: 30, bframes: 3 } },
    ]);
    const types = await pictureTypes(server.url('bframes'), server.transport);
    assert.ok(types.B >= 10, `the source sends B-frames: ${JSON.stringify(types)}`);
    const { rec } = await runIngest(t, server, { cam: { url: server.url('bframes'), fps: 5 } });
    // Pacing by -use_wallclock_as_timestamps decoded nothing here: 'stall', never 'streaming'.
    await waitFor('streaming', () => rec.last('cam')?.state === 'streaming');
    // 5/s for 5 s; loose bounds on a noisy machine, and far below the source's 150 frames.
    for (const [c, n] of await framesIn(rec, ['cam'], 5000))
      assert.ok(n >= 10 && n <= 40, `${c}: ${n} frames in 5 s`);
  });

  it('keeps cameras with wrong clocks at the configured fps', async (t) => {
    const cam = (setpts: string) => ({ kind: 'ball' as const, width: 320, height: 240, fps: 30, setpts });
    // Wrong RTP timestamps need an ffmpeg publisher: the npm server, whatever is installed.
    const server = await startRtspServer(
      t,
      [
        { name: 'jumps', source: cam('PTS+floor(N/60)*3600/TB') }, // an hour ahead every 2 s
        { name: 'slow', source: cam('PTS/4') }, // a quarter of real time
      ],
      { kind: 'npm' },
    );
    const { rec } = await runIngest(t, server, {
      jumps: { url: server.url('jumps'), fps: 5 },
      slow: { url: server.url('slow'), fps: 5 },
    });
    await waitFor('both streaming', () => ['jumps', 'slow'].every((c) => rec.last(c)?.state === 'streaming'));
    // By the cameras' clocks: thousands of repeated frames from 'jumps', about 6 from 'slow'.
    for (const [c, n] of await framesIn(rec, ['jumps', 'slow'], 5000))
      assert.ok(n >= 10 && n <= 40, `${c}: ${n} frames in 5 s`);
  });

  it('letterboxes a portrait still camera and maps the fixture model boxes back to source pixels', async (t) => {
    const dir = await tempDir(t);
    const image = await portraitJpeg(dir);
    const server = await startRtspServer(t, [
      { name: 'still', source: { kind: 'image', path: image, fps: 5 } },
    ]);
    const { rec } = await runIngest(t, server, { still: { url: server.url('still'), fps: 5 } });
    await waitFor('ten frames', () => rec.framesOf('still').length >= 10);
    const frames = rec.framesOf('still');
    const frame = frames.at(-1)!;
    // Each frame has its thumbnail; the picture, unchanged, was sent once (or again for a key
    // frame that came out a little different), not with every frame.
    for (const f of frames) assert.equal(f.thumb?.length, 32 * 32 * 3);
    const pictures = new Set(frames.map((f) => f.data)).size;
    assert.ok(pictures <= frames.length / 2, `${pictures} pictures for ${frames.length} frames`);
    // The thumbnail is the frame letterboxed at 32: its first 4 columns (40 px of 320) are grey too.
    assert.deepEqual([...frame.thumb!.subarray(0, 6)], [114, 114, 114, 114, 114, 114]);
    assert.deepEqual(frame.geometry, letterbox(810, 1080, SIZE));
    assert.equal(frame.geometry.padLeft, 40);
    // Pillarbox: the left 40 columns are grey.
    assert.deepEqual([...frame.data.subarray(0, 3)], [114, 114, 114]);
    const detector = await fixtureDetector(t, log);
    const dets = (await detector.detect([frame])).detections[0]!;
    // The square covers fixture cells whose union, mapped back, is the square (cells are 108 source px).
    const bright = dets.filter((d) => d.label === 'bright');
    assert.ok(bright.length >= 1, JSON.stringify(dets));
    const union = [
      Math.min(...bright.map((d) => d.box[0])),
      Math.min(...bright.map((d) => d.box[1])),
      Math.max(...bright.map((d) => d.box[2])),
      Math.max(...bright.map((d) => d.box[3])),
    ];
    assert.ok(boxIou(union, [400, 600, 600, 800]) > 0.5, `union of bright cells ${JSON.stringify(union)}`);
    for (const d of bright)
      assert.ok(boxIou(d.box, [400, 600, 600, 800]) > 0, `${JSON.stringify(d.box)} lies on the square`);
  });

  it(
    'passes a real clip through',
    { skip: hasShared ? false : '../shared not found: real clip test skipped' },
    async (t) => {
      const server = await startRtspServer(t, [
        { name: 'clip', source: { kind: 'clip', path: shared('media/vtest.mp4') } },
      ]);
      const { rec } = await runIngest(t, server, { clip: { url: server.url('clip'), fps: 5 } });
      await waitFor('frames', () => rec.framesOf('clip').length >= 3);
      assert.deepEqual(rec.framesOf('clip').at(-1)!.geometry, letterbox(480, 360, SIZE));
    },
  );

  it('goes to backoff when the server dies and back to streaming when it returns', async (t) => {
    const server = await startRtspServer(t, [
      { name: 'ball', source: { kind: 'ball', width: 320, height: 240, fps: 10 } },
    ]);
    const { rec } = await runIngest(t, server, { cam: { url: server.url('ball'), fps: 5 } });
    await waitFor('streaming', () => rec.last('cam')?.state === 'streaming');
    await server.kill();
    await waitFor('backoff after the server died', () => rec.last('cam')?.state === 'backoff');
    const failed = rec.last('cam')!;
    assert.ok(
      ['stall', 'unreachable'].includes(failed.lastError!.cause),
      `cause ${failed.lastError!.cause}: ${failed.lastError!.message}`,
    );
    await server.start();
    const before = rec.framesOf('cam').length;
    await waitFor(
      'streaming again',
      () => rec.last('cam')?.state === 'streaming' && rec.framesOf('cam').length > before,
      45_000,
    );
    assert.ok(rec.last('cam')!.restarts >= 1);
  });

  it('classifies a bad host, a refused connection, a frozen server and an unknown mount, without disturbing a good camera', async (t) => {
    const server = await startRtspServer(t, [
      { name: 'ball', source: { kind: 'ball', width: 320, height: 240, fps: 10 } },
    ]);
    const closed = await freePort();
    // A server that takes the connection and never says a word.
    const held = new Set<Socket>();
    const frozen = createServer((socket) => held.add(socket));
    await new Promise<void>((r) => frozen.listen(0, '127.0.0.1', r));
    t.after(() => {
      // Stop listening first, so that no new connection keeps close() waiting.
      const closed = new Promise<void>((r) => frozen.close(() => r()));
      for (const socket of held) socket.destroy();
      return closed;
    });
    const frozenPort = (frozen.address() as AddressInfo).port;
    const { rec } = await runIngest(t, server, {
      good: { url: server.url('ball') },
      nohost: { url: 'rtsp://camera.invalid/stream' },
      refused: { url: `rtsp://127.0.0.1:${closed}/stream` },
      frozen: { url: `rtsp://127.0.0.1:${frozenPort}/stream` },
      nomount: { url: server.url('no-such-mount') },
    });
    const causeOf = (cam: string) =>
      rec.statuses.find((s) => s.camera === cam && s.state === 'backoff')?.lastError?.cause;
    await waitFor('four failures and a stream', () =>
      Boolean(
        causeOf('nohost') &&
        causeOf('refused') &&
        causeOf('frozen') &&
        causeOf('nomount') &&
        rec.last('good')?.state === 'streaming',
      ),
    );
    assert.equal(causeOf('nohost'), 'unreachable');
    assert.match(
      rec.statuses.find((s) => s.camera === 'nohost' && s.lastError)!.lastError!.message,
      /cannot resolve host camera\.invalid/,
    );
    assert.equal(causeOf('refused'), 'unreachable');
    assert.match(
      rec.statuses.find((s) => s.camera === 'refused' && s.lastError)!.lastError!.message,
      /Connection refused/,
    );
    assert.equal(causeOf('frozen'), 'unreachable');
    assert.match(
      rec.statuses.find((s) => s.camera === 'frozen' && s.lastError)!.lastError!.message,
      /accepted the connection but sent no answer it could read \(timeout 3 s\)/,
    );
    if (server.kind === 'gstreamer') assert.equal(causeOf('nomount'), 'not_found');
    // The good camera kept streaming throughout: no restart, frames still coming.
    const n = rec.framesOf('good').length;
    await waitFor('more frames from the good camera', () => rec.framesOf('good').length > n + 3);
    assert.equal(rec.last('good')!.restarts, 0);
    assert.deepEqual(rec.statesOf('good'), ['connecting', 'streaming']);
  });

  it(
    'reports refused credentials as auth, never showing the password, then offline',
    { skip: hasGstreamer() ? false : 'needs the GStreamer RTSP server (auth); .ci/run installs it' },
    async (t) => {
      const server = await startRtspServer(
        t,
        [{ name: 'ball', source: { kind: 'ball', width: 320, height: 240, fps: 10 } }],
        { auth: 'admin:right-pass' },
      );
      const lines: string[] = [];
      const { config, secrets } = parseConfig(
        [
          'model:',
          '  path: m.onnx',
          'ffmpeg:',
          '  backoff_initial_s: 0.2',
          '  backoff_max_s: 1',
          'cameras:',
          '  locked:',
          `    url: "${server.url('ball', 'admin:${CAM_PASS}')}"`,
          '  open:',
          `    url: "${server.url('ball', 'admin:right-pass')}"`,
        ].join('\n'),
        'test.yaml',
        { CAM_PASS: 'wrong-pass' },
      );
      const rec = new Recorder();
      const ingest = new Ingest(
        { cameras: config.cameras, ffmpeg: config.ffmpeg, size: () => SIZE, secrets, cache: config.cache },
        {
          log: pino({ level: 'debug' }, { write: (l: string) => void lines.push(l) }),
          onFrame: (f) => rec.frames.push(f),
          onStatus: (s) => rec.statuses.push(s),
        },
      );
      await ingest.start();
      t.after(() => ingest.stop());
      await waitFor('offline', () => rec.last('locked')?.state === 'offline');
      assert.equal(rec.last('locked')!.lastError!.cause, 'auth');
      await waitFor('the other camera streams', () => rec.last('open')?.state === 'streaming');
      const everything = JSON.stringify(rec.statuses) + lines.join('');
      assert.doesNotMatch(everything, /wrong-pass/);
      assert.doesNotMatch(everything, /right-pass/);
      assert.match(lines.join(''), /401 Unauthorized/);
    },
  );
});

describe('a stream that changes resolution', () => {
  it('reports the new source geometry from the frame it changes on', async (t) => {
    const dir = await tempDir(t);
    const ffmpeg = await defaultFfmpegPath();
    // Two MPEG-TS segments of different sizes, back to back: a camera switching resolution.
    const seg = (name: string, size: string) => {
      const path = join(dir, name);
      execFileSync(ffmpeg, [
        '-y',
        '-loglevel',
        'error',
        '-f',
        'lavfi',
        '-i',
        `testsrc=s=${size}:r=10:d=3`,
        '-c:v',
        'libx264',
        '-preset',
        'ultrafast',
        '-pix_fmt',
        'yuv420p',
        '-f',
        'mpegts',
        path,
      ]);
      return readFileSync(path);
    };
    const file = join(dir, 'switch.ts');
    await writeFile(file, Buffer.concat([seg('a.ts', '320x240'), seg('b.ts', '480x640')]));
    const { config } = parseConfig(
      [
        'model:',
        '  path: m.onnx',
        'cameras:',
        '  cam:',
        `    url: "file://${file}"`,
        '    input_args: [-re]',
        '    fps: 5',
      ].join('\n'),
      join(repoRoot, 'test.yaml'),
      {},
    );
    const rec = new Recorder();
    const ingest = new Ingest(
      { cameras: config.cameras, ffmpeg: config.ffmpeg, size: () => SIZE, secrets: [], cache: config.cache },
      { log, onFrame: (f) => rec.frames.push(f), onStatus: (s) => rec.statuses.push(s) },
    );
    await ingest.start();
    t.after(() => ingest.stop());
    await waitFor('frames of both sizes', () => rec.frames.some((f) => f.geometry.srcW === 480), 20_000);
    const first = rec.frames[0]!.geometry;
    const last = rec.frames.at(-1)!.geometry;
    assert.deepEqual(first, letterbox(320, 240, SIZE));
    assert.deepEqual(last, letterbox(480, 640, SIZE));
    assert.ok(
      rec.statuses.some((s) => s.source?.width === 480 && s.source.height === 640),
      'the status carries the new source size',
    );
  });
});

describe('ffmpeg children never outlive their process', () => {
  async function startHarness(t: { after: (fn: () => Promise<void>) => void }) {
    // One mount per camera, and quick restarts: the test is about the children, not the server.
    const server = await startRtspServer(t, [
      { name: 'a', source: { kind: 'ball', width: 320, height: 240, fps: 10 } },
      { name: 'b', source: { kind: 'ball', width: 320, height: 240, fps: 10 } },
    ]);
    const dir = await tempDir(t);
    const cfg = join(dir, 'argus.yaml');
    await writeFile(
      cfg,
      [
        'model:',
        '  path: m.onnx',
        'ffmpeg:',
        '  stall_timeout_s: 5',
        '  backoff_initial_s: 0.5',
        '  backoff_max_s: 2',
        'cameras:',
        ...['a', 'b'].flatMap((n) => [
          `  ${n}:`,
          `    url: "${server.url(n)}"`,
          `    rtsp_transport: ${server.transport}`,
        ]),
      ].join('\n'),
    );
    const child = spawn(process.execPath, [join(repoRoot, 'dist/test/helpers/ingest-harness.js'), cfg], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    t.after(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      return Promise.resolve();
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    t.after(() => {
      if (!/"type":"pids"/.test(out))
        process.stderr.write(`harness output:\n${out}\nharness stderr:\n${err}\n`);
      return Promise.resolve();
    });
    let pids: number[] = [];
    const streamed = new Set<string>();
    await waitFor(
      'both cameras streaming',
      () => {
        // Complete lines only; the latest pid list wins (a camera may have restarted).
        for (const line of out.slice(0, out.lastIndexOf('\n') + 1).split('\n')) {
          if (!line.startsWith('{')) continue;
          const msg = JSON.parse(line) as { type: string; pids?: number[]; camera?: string; state?: string };
          if (msg.type === 'pids') pids = msg.pids!;
          if (msg.type === 'status' && msg.state === 'streaming') streamed.add(msg.camera!);
        }
        return streamed.size === 2 && pids.length === 2;
      },
      60_000,
    );
    const exited = new Promise<{ code: number | null; signal: string | null }>((r) =>
      child.on('exit', (code, signal) => r({ code, signal })),
    );
    return { child, pids, exited, output: () => out };
  }

  it('SIGTERM stops every ffmpeg and exits 0', async (t) => {
    const h = await startHarness(t);
    assert.ok(h.pids.every(isAlive));
    h.child.kill('SIGTERM');
    const { code } = await h.exited;
    assert.equal(code, 0);
    assert.match(h.output(), /"type":"stopped"/);
    assert.deepEqual(h.pids.filter(isAlive), [], 'no ffmpeg left running');
  });

  it('SIGKILL leaves no ffmpeg behind: each sees its closed pipe and exits', async (t) => {
    const h = await startHarness(t);
    h.child.kill('SIGKILL');
    await h.exited;
    await waitFor('ffmpeg processes to exit', () => h.pids.every((p) => !isAlive(p)), 15_000);
  });
});

describe("frames' times follow the stream, not Node's event loop", () => {
  it("keeps a 5 frames/s camera's frames 200 ms apart across a 500 ms busy wait", async (t) => {
    const { config } = parseConfig(
      [
        'model:',
        '  path: m.onnx',
        'cameras:',
        '  cam:',
        '    url: "lavfi:testsrc2=size=320x240:rate=5"',
        '    fps: 5',
      ].join('\n'),
      join(repoRoot, 'test.yaml'),
      {},
    );
    const frames: { ts: number; read: number }[] = [];
    const ingest = new Ingest(
      { cameras: config.cameras, ffmpeg: config.ffmpeg, size: () => SIZE, secrets: [], cache: config.cache },
      { log, onFrame: (f) => frames.push({ ts: f.ts, read: Date.now() }), onStatus: () => undefined },
    );
    await ingest.start();
    t.after(() => ingest.stop());
    // The least delay is found in the first frames; then Node is kept busy for 500 ms.
    await waitFor('3 s of frames', () => frames.length >= 15, 20_000);
    const before = frames.length;
    const end = Date.now() + 500;
    while (Date.now() < end);
    await waitFor('2 s more', () => frames.length >= before + 10, 10_000);
    const reads = frames.slice(before - 1).map((f, i, a) => (i === 0 ? 0 : f.read - a[i - 1]!.read));
    assert.ok(Math.max(...reads) >= 400, `the busy wait held frames back: read ${reads.join(', ')} ms apart`);
    const gaps = frames.slice(5).map((f, i) => f.ts - frames[i + 4]!.ts);
    assert.ok(
      gaps.every((g) => Math.abs(g - 200) <= 25),
      `frame times ${gaps.map((g) => g.toFixed(0)).join(', ')} ms apart`,
    );
  });
});
