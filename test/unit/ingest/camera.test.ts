import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Frame } from '../../../src/core/frame.js';
import {
  Camera,
  receivedCounts,
  type CameraSettings,
  type CameraStatus,
  type LocalRelay,
  type ReceivedCounts,
} from '../../../src/ingest/camera.js';
import type { RelayFailure } from '../../../src/ingest/rtsp-relay.js';
import { cameraConfig, config } from '../../helpers/config.js';
import { FakeClock, FakeFfmpeg, flush, silentLog } from '../../helpers/fakes.js';
import { pnm } from '../../helpers/pnm.js';

const SIZE = 4;
const FRAME = SIZE * SIZE * 3;
/** One frame's picture on ffmpeg's stdout (a PPM of the model's size). */
const picture = (fill = 0): Buffer => pnm('P6', SIZE, fill);
const thumbnail = (fill = 0): Buffer => pnm('P7', 32, fill);
const tick = (): Buffer => pnm('P5', 2);

/** The gate camera: 10 s stall timeout, backoff 1 s doubling to 60 s, offline after 3 bad logins. */
function settings(camera: Record<string, unknown> = {}): CameraSettings {
  return {
    name: 'gate',
    camera: cameraConfig({ url: 'rtsp://viewer:s3cret@10.0.0.5/stream', ...camera }),
    ffmpeg: {
      ...config().ffmpeg,
      timeout_s: 5,
      stall_timeout_s: 10,
      backoff_initial_s: 1,
      backoff_max_s: 60,
      auth_failures_before_offline: 3,
      stop_grace_s: 2,
    },
    size: SIZE,
    names: { rtspTimeout: 'stimeout', fpsMode: 'vsync' },
    secrets: ['s3cret'],
    cache: { enabled: false, picture_threshold: 12 },
  };
}

/** With `cached`, the frame cache is on: ffmpeg sends thumbnails and only changed pictures. */
function setup(camera: Record<string, unknown> = {}, cached = false, counts?: ReceivedCounts) {
  const clock = new FakeClock();
  const ff = new FakeFfmpeg();
  const frames: Frame[] = [];
  const statuses: CameraStatus[] = [];
  const cam = new Camera(
    { ...settings(camera), cache: { enabled: cached, picture_threshold: 12 } },
    {
      spawn: ff.spawn,
      clock,
      random: () => 0,
      resolveHost: (url) => Promise.resolve(url),
      log: silentLog,
      onFrame: (f) => frames.push(f),
      onStatus: (s) => statuses.push(s),
      ...(counts && { counts }),
    },
  );
  const states = () => statuses.map((s) => s.state);
  return { clock, ff, frames, statuses, cam, states };
}

const GEOMETRY_LOG =
  '[scale@model @ 0x1] w:8 h:6 fmt:yuv420p sar:1/1 -> w:4 h:3 fmt:rgb24 sar:1/1 flags:0x2\n[pad@model @ 0x2] w:4 h:3 -> w:4 h:4 x:0 y:0 color:0x727272FF\n';

describe('camera supervisor', () => {
  it('a disabled camera never starts ffmpeg', async () => {
    const { cam, ff, states } = setup({ enabled: false });
    cam.start();
    await flush();
    assert.deepEqual(states(), ['disabled']);
    assert.equal(ff.procs.length, 0);
  });

  it('goes connecting → streaming on the first frame, with seq, time and geometry on every frame', async () => {
    const { cam, ff, frames, states, clock, statuses } = setup();
    cam.start();
    await flush();
    assert.deepEqual(states(), ['connecting']);
    assert.equal(ff.last.args.url, 'rtsp://viewer:s3cret@10.0.0.5/stream');
    ff.last.handlers.stderr(GEOMETRY_LOG);
    // One and a half frames, then the rest: the split frame is reassembled.
    const two = Buffer.concat([picture(7), picture(9)]);
    ff.last.handlers.stdout(two.subarray(0, two.length - FRAME / 2));
    await clock.advance(200);
    ff.last.handlers.stdout(two.subarray(two.length - FRAME / 2));
    assert.deepEqual(states(), ['connecting', 'streaming']);
    assert.deepEqual(
      frames.map((f) => [f.camera, f.seq, f.data.length]),
      [
        ['gate', 1, FRAME],
        ['gate', 2, FRAME],
      ],
    );
    assert.equal(frames[1]!.ts - frames[0]!.ts, 200);
    assert.deepEqual(frames[0]!.geometry, {
      srcW: 8,
      srcH: 6,
      dstW: 4,
      dstH: 4,
      scale: 0.5,
      innerW: 4,
      innerH: 3,
      padLeft: 0,
      padTop: 0,
    });
    assert.deepEqual(statuses.at(-1)!.source, { width: 8, height: 6 });
    assert.equal(cam.snapshot().framesReceived, 2);
    assert.equal(cam.snapshot().bytesReceived, two.length);
    assert.deepEqual([frames[0]!.data[0], frames[1]!.data[0], frames[1]!.thumb], [7, 9, undefined]);
  });

  it('with the cache on: a thumbnail ends each frame, carrying the last picture ffmpeg sent', async () => {
    const { cam, ff, frames } = setup({}, true);
    cam.start();
    await flush();
    // Frame 1 changed (its picture comes first), frames 2 and 3 did not, frame 4 did; ticks
    // (one frame late) are ignored. Split anywhere, one byte at a time at the end.
    const out = Buffer.concat([
      picture(1),
      thumbnail(11),
      thumbnail(12),
      tick(),
      thumbnail(13),
      tick(),
      picture(4),
      thumbnail(14),
    ]);
    ff.last.handlers.stdout(out.subarray(0, 100));
    for (let i = 100; i < out.length; i++) ff.last.handlers.stdout(out.subarray(i, i + 1));
    assert.deepEqual(
      frames.map((f) => [f.seq, f.data[0], f.thumb?.length, f.thumb?.[0]]),
      [
        [1, 1, 32 * 32 * 3, 11],
        [2, 1, 32 * 32 * 3, 12],
        [3, 1, 32 * 32 * 3, 13],
        [4, 4, 32 * 32 * 3, 14],
      ],
    );
    assert.equal(frames[1]!.data, frames[0]!.data, 'the same buffer: nothing new to look at');
    assert.equal(cam.snapshot().framesReceived, 4);
  });

  it('restarts ffmpeg when its output cannot be read', async () => {
    const { cam, ff, frames, statuses, clock } = setup({}, true);
    cam.start();
    await flush();
    ff.last.handlers.stdout(Buffer.concat([picture(1), thumbnail(), pnm('P6', 8)]));
    assert.deepEqual(ff.last.signals, ['SIGTERM']);
    ff.last.handlers.stdout(Buffer.concat([picture(2), thumbnail()]));
    await flush();
    assert.equal(frames.length, 1, 'nothing more is read from that run');
    assert.equal(statuses.at(-1)!.lastError?.cause, 'exited');
    assert.equal(
      statuses.at(-1)!.lastError?.message,
      "ffmpeg's output could not be read: unexpected P6 image of 8x8",
    );
    await clock.advance(statuses.at(-1)!.retryAt! - clock.now());
    ff.last.handlers.stdout(Buffer.from('not an image at all'));
    await flush();
    assert.match(statuses.at(-1)!.lastError!.message, /could not be read: not a PNM image/);
  });

  it('follows a change of stream resolution', async () => {
    const { cam, ff, frames } = setup();
    cam.start();
    await flush();
    ff.last.handlers.stderr(GEOMETRY_LOG);
    ff.last.handlers.stdout(picture());
    ff.last.handlers.stderr(
      '[scale@model @ 0x1] w:6 h:8 fmt:yuv420p sar:1/1 -> w:3 h:4 fmt:rgb24\n[pad@model @ 0x2] w:3 h:4 -> w:4 h:4 x:0 y:0 color:0x727272FF\n',
    );
    ff.last.handlers.stdout(picture());
    assert.deepEqual([frames[0]!.geometry.srcW, frames[1]!.geometry.srcW], [8, 6]);
    assert.deepEqual(cam.snapshot().source, { width: 6, height: 8 });
  });

  it('on exit goes to backoff with the classified cause, then reconnects after the delay', async () => {
    const { cam, ff, clock, states, statuses } = setup();
    cam.start();
    await flush();
    ff.last.handlers.stderr(
      '[tcp @ 0x1] Connection attempt failed: Connection refused\nrtsp://viewer:s3cret@10.0.0.5/stream: Connection refused\n',
    );
    ff.last.exit(1);
    const s = statuses.at(-1)!;
    assert.equal(s.state, 'backoff');
    assert.equal(s.lastError?.cause, 'unreachable');
    assert.equal(
      s.lastError?.message,
      'rtsp://viewer:***@10.0.0.5/stream: Connection refused',
      'password scrubbed',
    );
    assert.equal(s.retryAt! - clock.now(), 500);
    await clock.advance(499);
    assert.equal(ff.procs.length, 1);
    await clock.advance(1);
    assert.equal(ff.procs.length, 2);
    assert.deepEqual(states(), ['connecting', 'backoff', 'connecting']);
    assert.equal(cam.snapshot().restarts, 1);
  });

  it('backs off exponentially up to the cap while failures continue', async () => {
    const { cam, ff, clock, statuses } = setup();
    cam.start();
    await flush();
    const delays: number[] = [];
    for (let i = 0; i < 9; i++) {
      ff.last.handlers.stderr('rtsp://h/x: Server returned 404 Not Found\n');
      ff.last.exit(1);
      const s = statuses.at(-1)!;
      assert.equal(s.lastError?.cause, 'not_found');
      delays.push(s.retryAt! - clock.now());
      await clock.advance(s.retryAt! - clock.now());
    }
    assert.deepEqual(delays, [500, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]);
  });

  it('restarts the backoff after a stream that ran stably', async () => {
    const { cam, ff, clock, statuses } = setup();
    cam.start();
    await flush();
    for (let i = 0; i < 3; i++) {
      ff.last.exit(1);
      await clock.advance(statuses.at(-1)!.retryAt! - clock.now());
    }
    ff.last.handlers.stdout(picture());
    for (let t = 0; t < 31; t++) {
      await clock.advance(1000);
      ff.last.handlers.stdout(picture());
    }
    ff.last.exit(1);
    assert.equal(statuses.at(-1)!.retryAt! - clock.now(), 500);
  });

  it('restarts a stalled ffmpeg: no frame for the stall timeout → SIGTERM → backoff (stall)', async () => {
    const { cam, ff, clock, statuses, states } = setup();
    cam.start();
    await flush();
    ff.last.handlers.stdout(picture());
    await clock.advance(9_999);
    assert.deepEqual(ff.last.signals, []);
    await clock.advance(1);
    assert.deepEqual(ff.last.signals, ['SIGTERM']);
    await flush();
    assert.deepEqual(states(), ['connecting', 'streaming', 'backoff']);
    assert.equal(statuses.at(-1)!.lastError?.cause, 'stall');
    assert.equal(statuses.at(-1)!.lastError?.message, 'no frame for 10 s');
  });

  it('waits at least three frame intervals before a stall: a camera at 0.1 fps is not restarted after 10 s', async () => {
    const { cam, ff, clock, statuses } = setup({ fps: 0.1 });
    cam.start();
    await flush();
    ff.last.handlers.stdout(picture());
    await clock.advance(10_000);
    ff.last.handlers.stdout(picture());
    await clock.advance(29_999);
    assert.deepEqual(ff.last.signals, [], 'the stall timeout (10 s) is three frames (30 s) at 0.1 fps');
    await clock.advance(1);
    assert.deepEqual(ff.last.signals, ['SIGTERM']);
    await flush();
    assert.equal(statuses.at(-1)!.lastError?.message, 'no frame for 30 s');
  });

  it('also times out a connection that never produces a frame', async () => {
    const { cam, ff, clock, statuses } = setup();
    cam.start();
    await flush();
    await clock.advance(10_000);
    await flush();
    assert.equal(statuses.at(-1)!.lastError?.message, 'no frame within 10 s of starting');
    assert.equal(ff.procs.length, 1);
  });

  it('kills a stalled ffmpeg that ignores SIGTERM', async () => {
    const { cam, ff, clock, statuses } = setup();
    ff.obeys = new Set();
    cam.start();
    await flush();
    await clock.advance(10_000);
    await clock.advance(2_000);
    assert.deepEqual(ff.last.signals, ['SIGTERM', 'SIGKILL']);
    await flush();
    assert.equal(statuses.at(-1)!.state, 'backoff');
  });

  it('goes offline after repeated authentication failures, retrying at the longest interval', async () => {
    const { cam, ff, clock, statuses } = setup();
    cam.start();
    await flush();
    const auth =
      'rtsp://viewer:s3cret@10.0.0.5/stream: Server returned 401 Unauthorized (authorization failed)\n';
    for (let i = 0; i < 2; i++) {
      ff.last.handlers.stderr(auth);
      ff.last.exit(1);
      assert.equal(statuses.at(-1)!.state, 'backoff');
      await clock.advance(statuses.at(-1)!.retryAt! - clock.now());
    }
    ff.last.handlers.stderr(auth);
    ff.last.exit(1);
    const s = statuses.at(-1)!;
    assert.equal(s.state, 'offline');
    assert.equal(s.lastError?.cause, 'auth');
    assert.doesNotMatch(s.lastError?.message ?? '', /s3cret/);
    assert.equal(s.retryAt! - clock.now(), 60_000);
    await clock.advance(60_000);
    assert.equal(statuses.at(-1)!.state, 'connecting', 'still retried');
  });

  it('reports an unresolvable host as unreachable without starting ffmpeg', async () => {
    const clock = new FakeClock();
    const ff = new FakeFfmpeg();
    const statuses: CameraStatus[] = [];
    const cam = new Camera(settings(), {
      spawn: ff.spawn,
      clock,
      random: () => 0,
      resolveHost: () => Promise.reject(new Error('cannot resolve host cam.invalid')),
      log: silentLog,
      onFrame: () => undefined,
      onStatus: (s) => statuses.push(s),
    });
    cam.start();
    await flush();
    assert.equal(ff.procs.length, 0);
    assert.deepEqual(statuses.at(-1)!.lastError?.cause, 'unreachable');
    assert.equal(statuses.at(-1)!.lastError?.message, 'cannot resolve host cam.invalid');
  });

  it("scrubs secrets from every error it reports, also the resolver's and the spawn's", async () => {
    const clock = new FakeClock();
    const ff = new FakeFfmpeg();
    const statuses: CameraStatus[] = [];
    let resolves = false;
    const cam = new Camera(
      {
        ...settings({ url: 'rtsp://viewer:s3cret@cam-17.internal/stream' }),
        secrets: ['s3cret', 'cam-17.internal'],
      },
      {
        spawn: ff.spawn,
        clock,
        random: () => 0,
        resolveHost: (url) =>
          resolves ? Promise.resolve(url) : Promise.reject(new Error('cannot resolve host cam-17.internal')),
        log: silentLog,
        onFrame: () => undefined,
        onStatus: (s) => statuses.push(s),
      },
    );
    cam.start();
    await flush();
    assert.equal(statuses.at(-1)!.lastError?.message, 'cannot resolve host ***');
    resolves = true;
    await clock.advance(500);
    ff.last.handlers.exit(
      null,
      null,
      new Error('spawn failed for rtsp://viewer:s3cret@cam-17.internal/stream'),
    );
    assert.equal(
      statuses.at(-1)!.lastError?.message,
      'ffmpeg could not start: spawn failed for rtsp://viewer:***@***/stream',
    );
    await cam.stop();
  });

  it('stops politely: q first, and ends in stopped without a restart', async () => {
    const { cam, ff, clock, states } = setup();
    cam.start();
    await flush();
    ff.last.handlers.stdout(picture());
    await cam.stop();
    assert.deepEqual(ff.last.signals, ['q']);
    assert.deepEqual(states(), ['connecting', 'streaming', 'stopped']);
    await clock.advance(120_000);
    assert.equal(ff.procs.length, 1);
    assert.equal(clock.pending, 0, 'no timer left behind');
  });

  it('escalates q → SIGTERM → SIGKILL when ffmpeg ignores each', async () => {
    const { cam, ff, clock } = setup();
    cam.start();
    await flush();
    ff.obeys = new Set();
    const stopping = cam.stop();
    await flush();
    assert.deepEqual(ff.last.signals, ['q']);
    await clock.advance(2000);
    assert.deepEqual(ff.last.signals, ['q', 'SIGTERM']);
    await clock.advance(2000);
    assert.deepEqual(ff.last.signals, ['q', 'SIGTERM', 'SIGKILL']);
    await stopping;
    assert.equal(cam.snapshot().state, 'stopped');
  });

  it('stopping during backoff cancels the retry', async () => {
    const { cam, ff, clock } = setup();
    cam.start();
    await flush();
    ff.last.exit(1);
    await cam.stop();
    await clock.advance(120_000);
    assert.equal(ff.procs.length, 1);
    assert.equal(cam.snapshot().state, 'stopped');
  });

  it('keeps frame numbers increasing across restarts', async () => {
    const { cam, ff, clock, frames, statuses } = setup();
    cam.start();
    await flush();
    ff.last.handlers.stdout(Buffer.concat([picture(), picture()]));
    ff.last.exit(1);
    await clock.advance(statuses.at(-1)!.retryAt! - clock.now());
    ff.last.handlers.stdout(picture());
    assert.deepEqual(
      frames.map((f) => f.seq),
      [1, 2, 3],
    );
  });
});

describe('camera supervisor: counts kept across its restarts (issue 44)', () => {
  it("a camera made again with its counts (a new fps, enabled off and on) goes on from its earlier runs' totals", async () => {
    const counts = receivedCounts();
    const one = setup({}, false, counts);
    one.cam.start();
    await flush();
    one.ff.last.handlers.stdout(Buffer.concat([picture(1), picture(2)]));
    one.ff.last.exit(1);
    assert.deepEqual(
      [one.cam.snapshot().framesReceived, one.cam.snapshot().restarts],
      [2, 1],
      'two frames, one failure',
    );
    await one.cam.stop();
    const two = setup({ fps: 3 }, false, counts);
    assert.deepEqual(
      [two.cam.snapshot().framesReceived, two.cam.snapshot().bytesReceived, two.cam.snapshot().restarts],
      [2, 2 * picture().length, 1],
      'before it starts: the totals so far',
    );
    two.cam.start();
    await flush();
    two.ff.last.handlers.stdout(picture(3));
    assert.deepEqual(
      [two.cam.snapshot().framesReceived, two.cam.snapshot().bytesReceived],
      [3, 3 * picture().length],
    );
    assert.equal(one.cam.snapshot().framesReceived, 3, 'one set of counts, whichever camera object reads it');
    await two.cam.stop();
    assert.equal(setup().cam.snapshot().framesReceived, 0, 'without counts given, a camera starts at 0');
  });
});

describe('a camera through its relay', () => {
  /** A relay that records what it was asked; `failStart` makes its start fail once. */
  class FakeRelay implements LocalRelay {
    targets: string[] = [];
    stopped = false;
    constructor(
      readonly onFailure: (f: RelayFailure) => void,
      private readonly failStart: boolean,
    ) {}
    start(): Promise<void> {
      return this.failStart ? Promise.reject(new Error('EMFILE: too many open files')) : Promise.resolve();
    }
    target(url: string): string {
      this.targets.push(url);
      return 'rtsp://127.0.0.1:4555/stream';
    }
    stop(): Promise<void> {
      this.stopped = true;
      return Promise.resolve();
    }
  }

  function relayed(url = 'rtsp://viewer:s3cret@cam.lan/stream', failFirstStart = false) {
    const clock = new FakeClock();
    const ff = new FakeFfmpeg();
    const statuses: CameraStatus[] = [];
    const relays: FakeRelay[] = [];
    const cam = new Camera(settings({ url }), {
      spawn: ff.spawn,
      clock,
      random: () => 0,
      resolveHost: (u) => Promise.resolve(u.replace('cam.lan', '10.0.0.5')),
      log: silentLog,
      onFrame: () => undefined,
      onStatus: (s) => statuses.push(s),
      relay: (_log, onFailure) => {
        const r = new FakeRelay(onFailure, failFirstStart && relays.length === 0);
        relays.push(r);
        return r;
      },
    });
    return { cam, ff, clock, statuses, relays };
  }

  it("gives ffmpeg the relay's URL, the relay the resolved camera URL, and stops the relay with the camera", async () => {
    const { cam, ff, clock, relays } = relayed();
    cam.start();
    await flush();
    assert.equal(ff.last.args.url, 'rtsp://127.0.0.1:4555/stream');
    assert.deepEqual(relays[0]!.targets, ['rtsp://viewer:s3cret@10.0.0.5/stream']);
    assert.doesNotMatch(
      JSON.stringify(ff.last.args),
      /s3cret|viewer/,
      'nothing of the credentials on the command line',
    );
    assert.ok(ff.last.args.input.includes('-rtsp_transport'), 'still an RTSP input to ffmpeg');
    ff.last.exit(1);
    await clock.advance(1_000);
    await flush();
    assert.equal(relays.length, 1, 'one relay for the camera, across its restarts');
    assert.equal(relays[0]!.targets.length, 2);
    await cam.stop();
    assert.equal(relays[0]!.stopped, true);
  });

  it('takes the relay’s failure as the run’s cause: refused credentials count towards offline', async () => {
    const { cam, ff, clock, statuses, relays } = relayed();
    cam.start();
    await flush();
    for (let i = 0; i < 3; i++) {
      relays[0]!.onFailure({
        cause: 'auth',
        message:
          'rtsp://viewer:s3cret@10.0.0.5/stream: the camera refused the credentials (401 Unauthorized to Digest authentication)',
      });
      ff.last.handlers.stderr('[rtsp @ 0x1] method DESCRIBE failed: 401 Unauthorized\n');
      ff.last.exit(1);
      if (i < 2) await clock.advance(statuses.at(-1)!.retryAt! - clock.now());
      await flush();
    }
    const s = statuses.at(-1)!;
    assert.equal(s.state, 'offline');
    assert.equal(s.lastError?.cause, 'auth');
    assert.equal(
      s.lastError?.message,
      'rtsp://viewer:***@10.0.0.5/stream: the camera refused the credentials (401 Unauthorized to Digest authentication)',
    );
  });

  it('a camera it cannot reach: unreachable, from the relay, not what ffmpeg made of the closed connection', async () => {
    const { cam, ff, statuses, relays } = relayed();
    cam.start();
    await flush();
    relays[0]!.onFailure({
      cause: 'unreachable',
      message: 'rtsp://viewer:***@10.0.0.5/stream: Connection refused',
    });
    ff.last.handlers.stderr('rtsp://127.0.0.1:4555/stream: Invalid data found when processing input\n');
    ff.last.exit(1);
    assert.deepEqual(
      [statuses.at(-1)!.lastError?.cause, statuses.at(-1)!.lastError?.message],
      ['unreachable', 'rtsp://viewer:***@10.0.0.5/stream: Connection refused'],
    );
  });

  it('a relay that cannot start is a failure of the run, and the next try makes a new one', async () => {
    const { cam, ff, clock, statuses, relays } = relayed(undefined, true);
    cam.start();
    await flush();
    assert.equal(ff.procs.length, 0, 'no ffmpeg without its relay');
    assert.deepEqual(
      [statuses.at(-1)!.state, statuses.at(-1)!.lastError?.message],
      ['backoff', 'the camera relay could not start: EMFILE: too many open files'],
    );
    await clock.advance(statuses.at(-1)!.retryAt! - clock.now());
    await flush();
    assert.equal(relays.length, 2);
    assert.equal(ff.last.args.url, 'rtsp://127.0.0.1:4555/stream');
  });

  it('a camera without credentials, and one that is not RTSP, get no relay', async () => {
    for (const url of ['rtsp://10.0.0.5/stream', 'http://viewer:s3cret@10.0.0.5/video.mjpg']) {
      const { cam, ff, relays } = relayed(url);
      cam.start();
      await flush();
      assert.equal(relays.length, 0, url);
      assert.equal(ff.last.args.url, url);
      await cam.stop();
    }
  });
});
