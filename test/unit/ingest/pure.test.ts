import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { backoffDelay, DEFAULT_BACKOFF } from '../../../src/ingest/backoff.js';
import { buildFfmpegArgs, letterboxFilter, type FfmpegArgsOptions } from '../../../src/ingest/ffmpeg-args.js';
import { FrameSplitter } from '../../../src/ingest/frames.js';
import { resolveUrlHost } from '../../../src/ingest/resolve.js';
import {
  classifyExit,
  lastErrorLine,
  parsePadLine,
  parseScaleLine,
  StderrRing,
} from '../../../src/ingest/stderr.js';

const base: FfmpegArgsOptions = {
  url: 'rtsp://10.0.0.5:554/stream1',
  fps: 5,
  size: 640,
  rtspTransport: 'tcp',
  inputArgs: [],
  hwaccelArgs: [],
  timeoutS: 10,
  rtspTimeoutOption: 'stimeout',
};

describe('ffmpeg argument builder', () => {
  it('builds an RTSP command over TCP with a socket timeout, fps limit, letterbox and raw RGB out', () => {
    const a = buildFfmpegArgs(base);
    assert.equal(a.url, base.url);
    assert.deepEqual(a.input, [
      '-hide_banner',
      '-nostats',
      '-loglevel',
      'verbose',
      '-rtsp_transport',
      'tcp',
      '-stimeout',
      '10000000',
      '-use_wallclock_as_timestamps',
      '1',
      '-fflags',
      '+genpts+discardcorrupt',
    ]);
    assert.deepEqual(a.output, [
      '-an',
      '-sn',
      '-dn',
      '-vf',
      letterboxFilter(5, 640),
      '-pix_fmt',
      'rgb24',
      '-f',
      'rawvideo',
    ]);
  });

  it('uses -timeout for ffmpeg 5+ and UDP on request', () => {
    const a = buildFfmpegArgs({ ...base, rtspTransport: 'udp', rtspTimeoutOption: 'timeout', timeoutS: 2.5 });
    assert.deepEqual(a.input.slice(4, 8), ['-rtsp_transport', 'udp', '-timeout', '2500000']);
  });

  it('puts hwaccel arguments first and the camera input arguments last before -i', () => {
    const a = buildFfmpegArgs({
      ...base,
      hwaccelArgs: ['-hwaccel', 'cuda'],
      inputArgs: ['-analyzeduration', '1000000'],
    });
    assert.deepEqual(a.input.slice(4, 6), ['-hwaccel', 'cuda']);
    assert.deepEqual(a.input.slice(-2), ['-analyzeduration', '1000000']);
  });

  it('uses a read timeout for HTTP and RTMP, none for files', () => {
    assert.ok(buildFfmpegArgs({ ...base, url: 'http://cam/video.mjpg' }).input.includes('-rw_timeout'));
    assert.ok(buildFfmpegArgs({ ...base, url: 'rtmp://cam/live' }).input.includes('-rw_timeout'));
    const file = buildFfmpegArgs({
      ...base,
      url: 'file:///tmp/clip.mp4',
      inputArgs: ['-re', '-stream_loop', '-1'],
    });
    assert.ok(!file.input.includes('-rw_timeout') && !file.input.includes('-rtsp_transport'));
  });

  it('passes values with spaces and shell characters as single arguments', () => {
    const a = buildFfmpegArgs({
      ...base,
      url: 'rtsp://10.0.0.5/a b;rm -rf $HOME',
      inputArgs: ['-user_agent', 'Argus $(x) & y'],
    });
    assert.equal(a.url, 'rtsp://10.0.0.5/a b;rm -rf $HOME');
    assert.deepEqual(a.input.slice(-2), ['-user_agent', 'Argus $(x) & y']);
  });

  it('letterboxes with Ultralytics geometry: fit, bilinear, RGB, centred grey 114', () => {
    assert.equal(
      letterboxFilter(2, 320),
      "fps=2,scale=w='max(1\\,min(320\\,round(iw*min(320/iw\\,320/ih))))':h='max(1\\,min(320\\,round(ih*min(320/iw\\,320/ih))))':flags=bilinear,format=rgb24,pad=w=320:h=320:x='round((320-iw)/2-0.1)':y='round((320-ih)/2-0.1)':color=0x727272",
    );
  });
});

describe('frame splitter', () => {
  const frames = (n: number, size: number): Buffer[] =>
    Array.from({ length: n }, (_, k) =>
      Buffer.from(Array.from({ length: size }, (_, i) => (k * 31 + i) & 255)),
    );

  it('reassembles frames across arbitrary chunk boundaries (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 64 }),
        fc.integer({ min: 0, max: 6 }),
        fc.array(fc.integer({ min: 1, max: 200 }), { minLength: 1, maxLength: 40 }),
        (size, count, cuts) => {
          const src = frames(count, size);
          const stream = Buffer.concat(src);
          const got: Buffer[] = [];
          const s = new FrameSplitter(size, (f) => got.push(Buffer.from(f)));
          let off = 0;
          let i = 0;
          while (off < stream.length) {
            const n = cuts[i++ % cuts.length]!;
            s.push(stream.subarray(off, off + n));
            off += n;
          }
          assert.equal(got.length, count);
          got.forEach((f, k) => assert.ok(f.equals(src[k]!)));
          assert.equal(s.pending, 0);
        },
      ),
    );
  });

  it('hands out views, not copies, of frames that lie inside one chunk', () => {
    const chunk = Buffer.concat(frames(3, 8));
    const got: Buffer[] = [];
    new FrameSplitter(8, (f) => got.push(f)).push(chunk);
    assert.equal(got.length, 3);
    for (const f of got) assert.equal(f.buffer, chunk.buffer);
  });

  it('holds back a partial frame and drops it on reset', () => {
    const got: Buffer[] = [];
    const s = new FrameSplitter(10, (f) => got.push(f));
    s.push(Buffer.alloc(25));
    assert.equal(got.length, 2);
    assert.equal(s.pending, 5);
    s.reset();
    s.push(Buffer.alloc(10));
    assert.equal(got.length, 3);
  });
});

describe('backoff schedule', () => {
  it('doubles from the initial delay up to the cap, with equal jitter', () => {
    const lo = [0, 1, 2, 3, 4, 5, 6, 7, 8].map((n) => backoffDelay(n, DEFAULT_BACKOFF, () => 0));
    assert.deepEqual(lo, [500, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]);
    const hi = [0, 1, 6, 20].map((n) => backoffDelay(n, DEFAULT_BACKOFF, () => 0.999999));
    assert.deepEqual(hi, [1000, 2000, 60000, 60000]);
  });

  it('stays within [base/2, base] for any random value (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 50 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (n, r) => {
          const d = backoffDelay(n, DEFAULT_BACKOFF, () => r);
          const b = Math.min(60000, 1000 * 2 ** n);
          assert.ok(d >= b / 2 && d <= b, `${d} for attempt ${n}`);
        },
      ),
    );
  });
});

describe('ffmpeg stderr', () => {
  it('classifies real ffmpeg failures', () => {
    const c = (lines: string[], code: number | null = 1, signal: string | null = null) =>
      classifyExit(lines, code, signal);
    assert.equal(
      c([
        '[rtsp @ 0x1] method DESCRIBE failed: 401 Unauthorized',
        'rtsp://a:***@h/x: Server returned 401 Unauthorized (authorization failed)',
      ]),
      'auth',
    );
    assert.equal(
      c(['[rtsp @ 0x1] method DESCRIBE failed: 404 Not Found', 'rtsp://h/x: Server returned 404 Not Found']),
      'not_found',
    );
    assert.equal(
      c([
        '[tcp @ 0x1] Connection attempt to 127.0.0.1 port 1 failed: Connection refused',
        'rtsp://h/x: Connection refused',
      ]),
      'unreachable',
    );
    assert.equal(c(['rtsp://10.9.9.9/x: Connection timed out']), 'unreachable');
    assert.equal(c(['rtsp://h/x: Invalid data found when processing input']), 'decode');
    assert.equal(c(['[h264 @ 0x1] error while decoding MB 3 4']), 'decode');
    assert.equal(c([], null, 'SIGSEGV'), 'crashed');
    assert.equal(c([], 139, null), 'crashed');
    assert.equal(c(['Exiting normally, received signal 2.'], 255, null), 'exited');
    assert.equal(
      c(['[AVIOContext @ 0x1] Statistics: 0 seeks, 110 writeouts'], 0, null),
      'unreachable',
      'a live stream that ended',
    );
  });

  it('does not blame an old decoder complaint for a later exit', () => {
    const lines = [
      '[h264 @ 0x1] decode_slice_header error',
      ...Array.from({ length: 8 }, (_, i) => `Output stream #0:0: ${i} frames`),
    ];
    assert.equal(classifyExit(lines, 0, null), 'unreachable');
    assert.equal(classifyExit(lines, 1, null), 'exited');
  });

  it('takes the last matching line as the cause', () => {
    assert.equal(
      classifyExit(['[h264 @ 0x1] error while decoding MB 1 2', 'rtsp://h/x: Connection refused'], 1, null),
      'unreachable',
    );
  });

  it('keeps the last lines only, scrubbed, and reassembles split lines', () => {
    const ring = new StderrRing(3, ['s3cret']);
    assert.deepEqual(ring.push('line one\nline '), ['line one']);
    assert.deepEqual(ring.push('two rtsp://u:pw@h/x\r\n'), ['line two rtsp://u:***@h/x']);
    ring.push('a\nb\nc password s3cret\n');
    assert.deepEqual(ring.get(), ['a', 'b', 'c password ***']);
    assert.equal(lastErrorLine(['x', 'Connection refused', 'Exiting']), 'Connection refused');
  });

  it('reads source and letterbox geometry from the filter log', () => {
    assert.deepEqual(
      parseScaleLine(
        '[Parsed_scale_1 @ 0x3194cfc0] w:810 h:1080 fmt:yuv420p sar:1/1 -> w:240 h:320 fmt:rgb24 sar:1/1 flags:0x2',
      ),
      {
        srcW: 810,
        srcH: 1080,
      },
    );
    assert.equal(
      parseScaleLine(
        "[Parsed_scale_1 @ 0x3194cfc0] w:round(iw*min(320/iw,320/ih)) h:round(ih) flags:'bicubic' interl:0",
      ),
      undefined,
    );
    assert.deepEqual(
      parsePadLine('[Parsed_pad_3 @ 0x3194de40] w:240 h:320 -> w:320 h:320 x:40 y:0 color:0x727272FF'),
      {
        innerW: 240,
        innerH: 320,
        padLeft: 40,
        padTop: 0,
      },
    );
  });
});

describe('host resolution', () => {
  const fake = (h: string): Promise<string> => {
    if (h === 'cam.lan') return Promise.resolve('10.1.2.3');
    if (h === 'v6.lan') return Promise.resolve('fd00::5');
    return Promise.reject(new Error('ENOTFOUND'));
  };
  it('replaces a host name with its address and keeps credentials, port and path', async () => {
    assert.equal(
      await resolveUrlHost('rtsp://u:p@cam.lan:8554/s?x=1', fake),
      'rtsp://u:p@10.1.2.3:8554/s?x=1',
    );
    assert.equal(await resolveUrlHost('rtsp://v6.lan/s', fake), 'rtsp://[fd00::5]/s');
  });
  it('leaves addresses and TLS URLs alone', async () => {
    assert.equal(await resolveUrlHost('rtsp://10.0.0.1/s', fake), 'rtsp://10.0.0.1/s');
    assert.equal(await resolveUrlHost('rtsps://cam.lan/s', fake), 'rtsps://cam.lan/s');
  });
  it('says which host did not resolve', async () => {
    await assert.rejects(resolveUrlHost('rtsp://nope.invalid/s', fake), /cannot resolve host nope\.invalid/);
  });
});
