import assert from 'node:assert/strict';
import { rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import type { DetectionsPayload, StatsPayload } from '../../src/publish/topics.js';
import { tempDir } from '../helpers/env.js';
import { startBroker, Subscriber } from '../helpers/mqtt.js';
import { startRtspServer } from '../helpers/rtsp.js';
import { startDaemon, writeDaemonConfig } from '../helpers/daemon.js';

/**
 * An 810×1080 JPEG at `path` (written beside it, then renamed over it: the RTSP server's still
 * camera reads its file for every frame, so this changes the scene from one frame to the next):
 * grey, with a white 200×200 square at (400, 600) when `square`.
 */
async function show(path: string, square: boolean): Promise<void> {
  const white = await sharp({ create: { width: 200, height: 200, channels: 3, background: '#ffffff' } })
    .png()
    .toBuffer();
  const jpeg = await sharp({ create: { width: 810, height: 1080, channels: 3, background: '#506070' } })
    .composite(square ? [{ input: white, left: 400, top: 600 }] : [])
    .jpeg({ quality: 95 })
    .toBuffer();
  await writeFile(`${path}.new`, jpeg);
  await rename(`${path}.new`, path);
}

describe('a camera that shows nothing new (real ffmpeg, RTSP, ONNX Runtime, MQTT broker)', () => {
  it('is quiet on its detections topic (a heartbeat) and almost never analysed, yet says a change at once', async (t) => {
    const dir = await tempDir(t);
    const picture = join(dir, 'still.jpg');
    await show(picture, true);
    const broker = await startBroker(t);
    const rtsp = await startRtspServer(t, [
      { name: 'still', source: { kind: 'image', path: picture, fps: 5 } },
    ]);
    const HEARTBEAT_S = 4;
    const config = await writeDaemonConfig(dir, {
      mqtt: { url: broker.url, detections: { heartbeat_s: HEARTBEAT_S } },
      cameras: { still: { url: rtsp.url('still'), rtsp_transport: rtsp.transport, fps: 5 } },
    });
    const sub = new Subscriber(broker.url);
    t.after(() => sub.end());
    const daemon = startDaemon(t, config);
    const detections = () => sub.json<DetectionsPayload>('argus/cameras/still/detections');
    const bright = (d: DetectionsPayload) => d.detections.some((x) => x.label === 'bright');
    await sub.waitFor('the square', () => detections().some(bright), 45_000);

    // A subscriber watches for 20 s: five frames a second, at most one message a heartbeat.
    const from = detections().length;
    const stats0 = sub.on('argus/stats').length;
    const t0 = Date.now();
    await new Promise((r) => setTimeout(r, 20_000));
    const watched = (Date.now() - t0) / 1000;
    const quiet = detections().slice(from);
    assert.ok(
      quiet.length <= Math.ceil(watched / HEARTBEAT_S),
      `${quiet.length} messages in ${watched.toFixed(1)} s (heartbeat ${HEARTBEAT_S} s)`,
    );
    assert.ok(quiet.length >= 3, `the heartbeat: ${quiet.length} messages`);
    assert.ok(quiet.every(bright), 'each says the square is there');
    const stats = sub.json<StatsPayload>('argus/stats').slice(stats0);
    const sum = (k: 'fps_in' | 'fps_analysed') => stats.reduce((a, s) => a + (s.cameras.still?.[k] ?? 0), 0);
    assert.ok(sum('fps_in') / stats.length >= 3, `${(sum('fps_in') / stats.length).toFixed(1)} frames/s`);
    assert.ok(
      sum('fps_analysed') / sum('fps_in') <= 0.05,
      `analysed ${sum('fps_analysed').toFixed(1)} of ${sum('fps_in').toFixed(1)} frames/s`,
    );

    // The square goes: the message saying so comes within a frame or two, not a heartbeat later.
    const before = detections().length;
    const changedAt = Date.now();
    await show(picture, false);
    await sub.waitFor(
      'the square gone',
      () =>
        detections()
          .slice(before)
          .some((d) => !bright(d)),
      10_000,
    );
    const gone = sub
      .on('argus/cameras/still/detections')
      .slice(before)
      .find((m) => !m.payload.includes('bright'))!;
    assert.ok(gone.at - changedAt < HEARTBEAT_S * 1000 - 500, `${gone.at - changedAt} ms after the change`);
    assert.equal((JSON.parse(gone.payload) as DetectionsPayload).cached, false, 'analysed');
    daemon.child.kill('SIGTERM');
    assert.equal((await daemon.exited).code, 0);
  });
});
