import assert from 'node:assert/strict';
import { rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import sharp from 'sharp';
import { blockDistance, blockHash, GRID } from '../../src/cache/block-hash.js';
import { FrameCache } from '../../src/cache/index.js';
import { systemClock } from '../../src/core/clock.js';
import type { Frame, Result } from '../../src/core/frame.js';
import { parseConfig } from '../../src/config/index.js';
import { Ingest } from '../../src/ingest/index.js';
import { Scheduler } from '../../src/scheduler/index.js';
import { fixtureDetector } from '../helpers/detector.js';
import { onlyModel } from '../helpers/fake-detector.js';
import { repoRoot, tempDir, waitFor } from '../helpers/env.js';
import { startRtspServer } from '../helpers/rtsp.js';

const log = pino({ level: process.env.ARGUS_TEST_LOG ?? 'silent' });
describe('cache on real camera frames', () => {
  it('a still camera is almost all cache hits, a moving one is not, and a change in the stream is analysed at its first frame', async (t) => {
    const dir = await tempDir(t);
    const still = join(dir, 'still.jpg');
    // The server's still camera reads its picture file for every frame: a file renamed over it
    // changes the scene from one frame to the next, as a light switched on does.
    const show = async (rgb: { r: number; g: number; b: number }, square: boolean): Promise<void> => {
      const white = { r: 255, g: 255, b: 255 };
      const squareImage = await sharp({ create: { width: 200, height: 200, channels: 3, background: white } })
        .png()
        .toBuffer();
      const jpeg = await sharp({ create: { width: 810, height: 1080, channels: 3, background: rgb } })
        .composite(square ? [{ input: squareImage, left: 400, top: 600 }] : [])
        .jpeg()
        .toBuffer();
      await writeFile(`${still}.new`, jpeg);
      await rename(`${still}.new`, still);
    };
    await show({ r: 90, g: 120, b: 60 }, true);
    const server = await startRtspServer(t, [
      { name: 'still', source: { kind: 'image', path: still, fps: 5 } },
      { name: 'ball', source: { kind: 'ball', width: 640, height: 480, fps: 10 } },
    ]);
    const detector = await fixtureDetector(t, log);
    const { config } = parseConfig(
      [
        'model:',
        '  path: m.onnx',
        'cameras:',
        ...['still', 'ball'].flatMap((n) => [
          `  ${n}:`,
          `    url: "${server.url(n)}"`,
          '    fps: 5',
          `    rtsp_transport: ${server.transport}`,
        ]),
      ].join('\n'),
      join(repoRoot, 'test.yaml'),
      {},
    );
    const results: Result[] = [];
    const scheduler = new Scheduler(
      { ...config.scheduler, max_batch: 4, max_wait_ms: 50, max_in_flight: 1, queue_size: 3 },
      config.cameras,
      {
        models: onlyModel(detector),
        cache: new FrameCache({ ...config.cache, max_age_s: 60 }),
        clock: systemClock,
        log,
        onResult: (r) => results.push(r),
      },
    );
    scheduler.start();
    const stillFrames: Frame[] = [];
    const ingest = new Ingest(
      {
        cameras: config.cameras,
        ffmpeg: config.ffmpeg,
        size: () => detector.inputSize,
        secrets: [],
        cache: config.cache,
      },
      {
        log,
        onFrame: (f) => {
          if (f.camera === 'still') stillFrames.push(f);
          scheduler.push(f);
        },
        onStatus: () => undefined,
      },
    );
    await ingest.start();
    t.after(async () => {
      await ingest.stop();
      await scheduler.stop();
    });
    const of = (cam: string) => results.filter((r) => r.camera === cam);
    await waitFor(
      '30 answered frames from each camera',
      () => of('still').length >= 30 && of('ball').length >= 30,
      60_000,
    );
    const ratio = (cam: string) => of(cam).filter((r) => r.cached).length / of(cam).length;
    assert.ok(ratio('still') >= 0.9, `still camera hit ratio ${ratio('still').toFixed(2)}`);
    assert.ok(ratio('ball') <= 0.2, `moving camera hit ratio ${ratio('ball').toFixed(2)}`);
    assert.ok(
      of('still').some((r) => r.detections.some((d) => d.label === 'bright')),
      'the still scene has its detection, cached results included',
    );
    assert.ok(
      of('still')
        .filter((r) => r.cached)
        .every((r) => r.detections.length > 0),
    );

    // Each change in the stream, the lights going on (every pixel brighter), then the square
    // going away: the first frame that shows it is analysed, on its own new pixels.
    const hashOf = (f: Frame): Uint8Array => blockHash(f.thumb!, GRID);
    for (const [what, rgb, square] of [
      ['lights on', { r: 130, g: 150, b: 100 }, true],
      ['square gone', { r: 130, g: 150, b: 100 }, false],
    ] as const) {
      const before = stillFrames.at(-1)!;
      await show(rgb, square);
      const after = (): Frame[] => stillFrames.slice(stillFrames.indexOf(before) + 1);
      const changed = (f: Frame): boolean => blockDistance(hashOf(f), hashOf(before), 10) > 2;
      await waitFor(`the frame showing '${what}'`, () => after().some(changed), 10_000);
      const first = after().find(changed)!;
      await waitFor(`its answer`, () => of('still').some((r) => r.seq === first.seq), 10_000);
      const answer = of('still').find((r) => r.seq === first.seq)!;
      assert.equal(answer.cached, false, `${what}: analysed`);
      assert.notEqual(answer.data, before.data, `${what}: its own pixels`);
      const bright = answer.detections.some((d) => d.label === 'bright');
      assert.equal(bright, square, `${what}: ${JSON.stringify(answer.detections)}`);
    }
  });
});
