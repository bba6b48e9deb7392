import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import sharp from 'sharp';
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
  it('a still camera is almost all cache hits, a moving one is not, and a sudden change is analysed at once', async (t) => {
    const dir = await tempDir(t);
    const still = join(dir, 'still.jpg');
    await writeFile(
      still,
      await sharp({ create: { width: 810, height: 1080, channels: 3, background: { r: 90, g: 120, b: 60 } } })
        .composite([
          {
            input: await sharp({
              create: { width: 200, height: 200, channels: 3, background: { r: 255, g: 255, b: 255 } },
            })
              .png()
              .toBuffer(),
            left: 400,
            top: 600,
          },
        ])
        .jpeg()
        .toBuffer(),
    );
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
    let lastStill: Frame | undefined;
    const ingest = new Ingest(
      { cameras: config.cameras, ffmpeg: config.ffmpeg, size: () => detector.inputSize, secrets: [] },
      {
        log,
        onFrame: (f) => {
          if (f.camera === 'still') lastStill = f;
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

    // The lights go on: every pixel brighter. The very next frame is analysed, not cached.
    await ingest.stop();
    const before = of('still').length;
    const f = lastStill!;
    const lit = Buffer.from(f.data.map((v) => Math.min(255, v + 70)));
    scheduler.push({ ...f, seq: f.seq + 1, ts: Date.now(), data: lit });
    await waitFor('the changed frame to be answered', () => of('still').length > before, 10_000);
    assert.equal(of('still').at(-1)!.cached, false);
  });
});
