import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { existsSync } from 'node:fs';
import { buildFfmpegArgs, type FfmpegArgs } from '../../src/ingest/ffmpeg-args.js';
import {
  defaultFfmpegPath,
  fluentSpawner,
  probeOptionNames,
  type FfmpegHandle,
} from '../../src/ingest/ffmpeg-process.js';
import { FrameImages } from '../../src/ingest/frame-images.js';
import { PnmSplitter } from '../../src/ingest/pnm.js';
import { isAlive, waitFor } from '../helpers/env.js';

/** The bundled ffmpeg (4.x) and, when installed, the system's (Debian 12: 5.1). */
async function binaries(): Promise<string[]> {
  return [await defaultFfmpegPath(), ...(existsSync('/usr/bin/ffmpeg') ? ['/usr/bin/ffmpeg'] : [])];
}

const FRAME = 32 * 32 * 3;

/**
 * A synthetic camera: ffmpeg's own test pattern, paced in real time, scaled to 32×32 raw RGB
 * frames, its filter set-up logged (at verbose) on stderr.
 */
function args(source = 'testsrc2=size=64x48:rate=10'): FfmpegArgs {
  return {
    input: ['-hide_banner', '-nostats', '-loglevel', 'verbose', '-re', '-f', 'lavfi'],
    url: source,
    output: ['-an', '-vf', 'scale=32:32,format=rgb24', '-f', 'rawvideo'],
  };
}

interface Run {
  handle: FfmpegHandle;
  stdout: () => number;
  stderr: () => string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null; error: Error | undefined }>;
}

function start(ffmpegPath: string, source?: string): Run {
  let bytes = 0;
  let text = '';
  let handle!: FfmpegHandle;
  const exit = new Promise<Awaited<Run['exit']>>((resolve) => {
    handle = fluentSpawner(ffmpegPath)(args(source), {
      stdout: (chunk) => (bytes += chunk.length),
      stderr: (t) => (text += t),
      exit: (code, signal, error) => resolve({ code, signal, error }),
    });
  });
  return { handle, stdout: () => bytes, stderr: () => text, exit };
}

describe('fluentSpawner runs the real ffmpeg', { timeout: 60_000 }, () => {
  it("streams frames and stderr lines, has a pid, and ends with code 0 on 'q'", async () => {
    const run = start(await defaultFfmpegPath());
    await waitFor('three frames', () => run.stdout() >= 3 * FRAME);
    const pid = run.handle.pid;
    assert.ok(pid !== undefined && isAlive(pid), `pid ${pid}`);
    // Whole lines, as the camera's stderr ring reads them: ffmpeg's verbose filter log.
    assert.match(run.stderr(), /^\[Parsed_scale_\d+ @ [^\]]+\] w:64 h:48 .*\n/m);
    run.handle.quit();
    assert.deepEqual(await run.exit, { code: 0, signal: null, error: undefined });
    assert.ok(!isAlive(pid));
  });

  it('kills with a signal, also when asked before the process has started', async () => {
    const path = await defaultFfmpegPath();
    const early = start(path);
    assert.equal(early.handle.pid, undefined);
    early.handle.kill('SIGKILL');
    assert.deepEqual(await early.exit, { code: null, signal: 'SIGKILL', error: undefined });
    assert.equal(early.stdout(), 0);

    const running = start(path);
    await waitFor('a frame', () => running.stdout() >= FRAME);
    running.handle.kill('SIGKILL');
    assert.deepEqual(await running.exit, { code: null, signal: 'SIGKILL', error: undefined });
  });

  it('tells an ffmpeg that exited non-zero from one that could not start', async () => {
    const failed = start(await defaultFfmpegPath(), 'no_such_filter');
    const exit = await failed.exit;
    assert.equal(exit.error, undefined);
    assert.equal(exit.signal, null);
    assert.ok(exit.code !== null && exit.code > 0, `code ${exit.code}`);
    assert.match(failed.stderr(), /no_such_filter/);

    // After the runs above fluent-ffmpeg has its format list cached, so this reaches spawn().
    const missing = start('/nonexistent/ffmpeg');
    const never = await missing.exit;
    assert.equal(never.code, null);
    assert.equal(never.signal, null);
    assert.match(never.error?.message ?? '', /ENOENT/);
    assert.equal(missing.handle.pid, undefined);
    // Asking it to stop does nothing, and throws nothing.
    missing.handle.quit();
    missing.handle.kill('SIGTERM');
  });

  it("asks each binary for its option names: ffmpeg 4's -stimeout and -vsync, 5.1's -timeout and -fps_mode", async () => {
    const bundled = await defaultFfmpegPath();
    for (const path of await binaries())
      assert.deepEqual(
        await probeOptionNames(path),
        path === bundled
          ? { rtspTimeout: 'stimeout', fpsMode: 'vsync' }
          : { rtspTimeout: 'timeout', fpsMode: 'fps_mode' },
        path,
      );
    assert.deepEqual(await probeOptionNames('/nonexistent/ffmpeg'), {
      rtspTimeout: 'timeout',
      fpsMode: 'fps_mode',
    });
  });

  it("with the cache on, each frame's images arrive together, and a still scene's picture once", async () => {
    for (const path of await binaries()) {
      for (const [scene, source, pictures] of [
        ['moving', 'testsrc2=size=160x120:rate=10', (n: number) => n],
        ['still', 'color=c=0x405060:size=160x120:rate=10', () => 1],
      ] as const) {
        const args = buildFfmpegArgs(
          { url: `lavfi:${source}`, fps: 5, rtsp_transport: 'tcp', input_args: [], hwaccel_args: [] },
          { timeout_s: 10, threads: 1 },
          {
            url: `lavfi:${source}`,
            size: 64,
            names: await probeOptionNames(path),
            cache: { enabled: true, picture_threshold: 12 },
          },
        );
        const images = new FrameImages(64, true);
        const frames: { at: number; data: Buffer }[] = [];
        let picturesAt: number[] = [];
        const splitter = new PnmSplitter(64 * 64 * 3, (image) => {
          if (image.format === 'P6') picturesAt.push(Date.now());
          const frame = images.take(image);
          if (frame) frames.push({ at: Date.now(), data: frame.data });
        });
        const handle = fluentSpawner(path)(args, {
          stdout: (chunk) => splitter.push(chunk),
          stderr: () => undefined,
          exit: () => undefined,
        });
        await waitFor(`${scene}: 6 frames`, () => frames.length >= 6, 20_000);
        handle.kill('SIGKILL');
        const what = `${path}, ${scene}`;
        assert.equal(new Set(frames.map((f) => f.data)).size, pictures(frames.length), what);
        // A frame ends as its picture arrives, not when the next frame comes (200 ms on).
        if (scene === 'moving')
          frames.forEach((f, i) =>
            assert.ok(f.at - picturesAt[i]! < 100, `${what}: ${f.at - picturesAt[i]!} ms`),
          );
        picturesAt = [];
      }
    }
  });
});
