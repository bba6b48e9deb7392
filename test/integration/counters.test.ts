import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CameraView } from '../../src/http/index.js';
import type { StatsPayload } from '../../src/publish/index.js';
import { tempDir, waitFor } from '../helpers/env.js';
import { Subscriber } from '../helpers/mqtt.js';
import { freePort } from '../helpers/rtsp.js';
import { httpBase, startDaemon, writeDaemonConfig } from '../helpers/daemon.js';

/** A still scene with a white square: the fixture model sees one `bright` object in it. */
const SQUARE =
  'lavfi:color=c=0x303030:s=640x480:r=5[bg];color=c=white:s=64x64:r=5[box];[bg][box]overlay=x=192:y=112';

/** Every series of `lot` that may only go up: counters and histograms' buckets, sums and counts. */
const MONOTONIC = /^(argus_camera_\w+(?:_total|_bucket|_sum|_count))\{([^}]*camera="lot"[^}]*)\} (\S+)$/gm;

function lotCounters(metrics: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const m of metrics.matchAll(MONOTONIC)) out.set(`${m[1]}{${m[2]}}`, Number(m[3]));
  return out;
}

/**
 * Polls /metrics and /api/cameras until stopped, and fails on the first counter of `lot` that
 * went down between two scrapes and on any rate below 0; the argus/stats messages are checked as
 * they come.
 */
function watch(base: string, sub: Subscriber) {
  const seen = new Map<string, number>();
  const problems: string[] = [];
  let polls = 0;
  let running = true;
  let fpsInWhileOff = -1;
  let detecting = true;
  const poll = async (): Promise<void> => {
    const metrics = await (await fetch(`${base}/metrics`)).text();
    for (const [series, v] of lotCounters(metrics)) {
      const before = seen.get(series);
      if (before !== undefined && v < before) problems.push(`${series} went ${before} → ${v}`);
      seen.set(series, v);
    }
    const cams = (await (await fetch(`${base}/api/cameras`)).json()) as CameraView[];
    for (const c of cams) {
      if (c.fps_in < 0 || c.fps_analysed < 0)
        problems.push(`/api/cameras ${c.camera}: fps_in ${c.fps_in}, fps_analysed ${c.fps_analysed}`);
      if (c.camera === 'lot' && !detecting) fpsInWhileOff = Math.max(fpsInWhileOff, c.fps_in);
    }
    polls++;
  };
  const loop = (async () => {
    while (running) {
      await poll().catch((err: unknown) => problems.push(`scrape: ${String(err)}`));
      await new Promise((r) => setTimeout(r, 200));
    }
  })();
  return {
    seen,
    problems: () => [
      ...problems,
      ...sub.json<StatsPayload>('argus/stats').flatMap((s) =>
        Object.entries(s.cameras)
          .filter(([, c]) => c.fps_in < 0 || c.fps_analysed < 0 || c.fps_cached < 0)
          .map(([n, c]) => `argus/stats ${n}: ${c.fps_in} / ${c.fps_analysed} / ${c.fps_cached}`),
      ),
    ],
    polls: () => polls,
    detection: (on: boolean) => (detecting = on),
    fpsInWhileOff: () => fpsInWhileOff,
    stop: async () => {
      running = false;
      await loop;
    },
  };
}

describe('counters across runtime changes (argus run, real ffmpeg)', () => {
  it('detection off and on, a new fps and a mode: the counters of /metrics never go down, no rate is below 0, and fps_in goes on while detection is off', async (t) => {
    const dir = await tempDir(t);
    const port = await freePort();
    const config = await writeDaemonConfig(dir, {
      mqtt: { embedded: { port }, stats_interval_s: 1 },
      cameras: { lot: { url: SQUARE, fps: 4, objects: { track: ['bright'] } } },
      modes: { slow: { cameras: { lot: { fps: 2, priority: 3 } } } },
    });
    const daemon = startDaemon(t, config);
    const sub = new Subscriber(`mqtt://127.0.0.1:${port}`, 'argus/stats');
    t.after(() => sub.end());
    await waitFor('argus started', () => daemon.output().includes('argus started'), 60_000);
    const base = await httpBase(daemon.output);
    const w = watch(base, sub);
    t.after(() => w.stop());
    const analysed = () => w.seen.get('argus_camera_frames_analysed_total{camera="lot"}') ?? 0;
    const received = () => w.seen.get('argus_camera_frames_received_total{camera="lot"}') ?? 0;
    const cached = () => w.seen.get('argus_camera_frames_cached_total{camera="lot"}') ?? 0;
    /** Waits until the counter has grown past what it is now; fails at once on a problem seen. */
    const grows = async (what: string, read: () => number): Promise<void> => {
      const from = read();
      await waitFor(`${what} past ${from}`, () => read() > from || w.problems().length > 0, 30_000);
      assert.deepEqual(w.problems(), [], what);
    };
    /** Waits for two more stats windows: the rates have been measured across the change. */
    const windows = async (): Promise<void> => {
      await sub.next('argus/stats');
      await sub.next('argus/stats');
    };
    const put = async (path: string, body: string): Promise<void> => {
      const res = await fetch(`${base}/api/control${path}`, { method: 'PUT', body });
      assert.equal(res.status, 200, `PUT ${path} ${body}: ${await res.text()}`);
    };
    /**
     * Makes the change, then waits until the camera streams and is analysed again after it (a
     * camera that left the scheduler or restarted has no cached answer), and for two windows.
     */
    const change = async (what: string, path: string, body: string): Promise<void> => {
      const from = { received: received(), analysed: analysed() };
      await put(path, body);
      await waitFor(
        `frames received and analysed ${what}`,
        () => (received() > from.received && analysed() > from.analysed) || w.problems().length > 0,
        30_000,
      );
      assert.deepEqual(w.problems(), [], what);
      await windows();
    };

    // The scene is still: its first frame is analysed, the next are answered from the cache.
    await waitFor('frames analysed and cached', () => analysed() > 0 && cached() > 3, 60_000);
    await windows();

    // Detection off: ffmpeg streams on, so frames still come in (fps_in); none is analysed.
    await put('/cameras/lot/detect', 'false');
    await windows();
    w.detection(false);
    await grows('frames received with detection off', received);
    await windows();
    w.detection(true);
    assert.ok(w.fpsInWhileOff() > 0, `fps_in while detection is off: ${w.fpsInWhileOff()}`);
    await change('after detection on', '/cameras/lot/detect', 'true');

    // A new fps restarts the camera's ffmpeg; a mode changes its fps (another restart) and priority.
    await change('at 3 fps', '/cameras/lot/fps', '3');
    await change('in mode slow', '/mode', '"slow"');
    await change('in no mode', '/mode', '"none"');

    await w.stop();
    assert.ok(w.polls() > 10, `${w.polls()} scrapes`);
    assert.deepEqual(w.problems(), []);
    daemon.child.kill('SIGTERM');
    assert.equal((await daemon.exited).code, 0, daemon.output());
  });
});
