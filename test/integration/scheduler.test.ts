import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import sharp from 'sharp';
import { FrameCache } from '../../src/cache/frame-cache.js';
import { parseConfig } from '../../src/config/load.js';
import { DeadlineError } from '../../src/detector/detector.js';
import { systemClock } from '../../src/ingest/clock.js';
import type { Frame } from '../../src/ingest/frames.js';
import { Ingest } from '../../src/ingest/ingest.js';
import { Scheduler, type Result } from '../../src/scheduler/scheduler.js';
import { fixtureDetector } from '../helpers/detector.js';
import { repoRoot, tempDir, waitFor } from '../helpers/env.js';
import { startRtspServer } from '../helpers/rtsp.js';

const log = pino({ level: process.env.ARGUS_TEST_LOG ?? 'silent' });
describe('detector deadline (real worker threads)', () => {
  it('abandons a batch that misses its deadline, recreates the session, and keeps working', async (t) => {
    const detector = await fixtureDetector(t, log);
    const big = new Float32Array(64 * detector.frameFloats).fill(0.5);
    await assert.rejects(
      detector.detect(big, 64, 1),
      (err: unknown) => err instanceof DeadlineError && /missed its 1 ms deadline/.test(err.message),
    );
    await waitFor(
      'the session to be recreated',
      () => detector.workerCount === 1 && detector.idleWorkers === 1,
    );
    assert.equal(detector.recreated, 1);
    const ok = await detector.detect(new Float32Array(detector.frameFloats), 1, 10_000);
    assert.equal(ok.detections.length, 1);
  });
});

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
      { maxBatch: 4, maxWaitMs: 50, maxInFlight: 1, maxFrameAgeMs: 2000, inferenceTimeoutMs: 10_000 },
      {
        detector,
        cache: new FrameCache({
          enabled: true,
          maxDistance: config.cache.max_distance,
          cellThreshold: config.cache.cell_threshold,
          maxAgeMs: 60_000,
        }),
        clock: systemClock,
        log,
        onResult: (r) => results.push(r),
      },
    );
    for (const [name, c] of Object.entries(config.cameras))
      scheduler.addCamera({ name, priority: c.priority, queueSize: 3 });
    let lastStill: Frame | undefined;
    const ingest = new Ingest(
      { cameras: config.cameras, ffmpeg: config.ffmpeg, size: detector.inputSize, secrets: [] },
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
