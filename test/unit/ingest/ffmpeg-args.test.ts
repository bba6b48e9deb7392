import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  buildFfmpegArgs,
  letterboxFilter,
  thumbnailFilter,
  pictureBlockSad,
  type FfmpegOptionNames,
} from '../../../src/ingest/ffmpeg-args.js';

const URL = 'rtsp://10.0.0.5:554/stream1';

interface Over {
  url?: string;
  fps?: number;
  size?: number;
  rtsp_transport?: 'tcp' | 'udp';
  input_args?: string[];
  hwaccel_args?: string[];
  timeout_s?: number;
  names?: FfmpegOptionNames;
  cache?: boolean;
  threads?: number;
  pictureThreshold?: number;
  ring?: string;
}

/**
 * The command line for a camera at URL (5 fps, 640, TCP, 10 s timeout, one thread, ffmpeg 4's
 * options, cache on, pictures again past 12 levels).
 */
const args = (o: Over = {}) =>
  buildFfmpegArgs(
    {
      url: o.url ?? URL,
      fps: o.fps ?? 5,
      rtsp_transport: o.rtsp_transport ?? 'tcp',
      input_args: o.input_args ?? [],
      hwaccel_args: o.hwaccel_args ?? [],
    },
    { timeout_s: o.timeout_s ?? 10, threads: o.threads ?? 1 },
    {
      url: o.url ?? URL,
      size: o.size ?? 640,
      names: o.names ?? { rtspTimeout: 'stimeout', fpsMode: 'vsync' },
      cache: { enabled: o.cache ?? true, picture_threshold: o.pictureThreshold ?? 12 },
      ring: o.ring,
    },
  );

const WALLCLOCK = "setpts='(RTCTIME-RTCSTART)/(TB*1000000)'";
/** A frame-time probe's branch. */
const probe = (name: string): string => `[${name}]crop=2:2:0:0,showinfo@${name},nullsink`;
/** An RTSP camera's head at 5 fps: the stream's time, the wall-clock time fps paces by, each output's slot. */
const RTSP_HEAD = [
  '[0:v]split=2[decoded][source]',
  probe('source'),
  `[decoded]${WALLCLOCK},split=2[walled][paced]`,
  probe('paced'),
  '[walled]fps=5,split=2[head][frame]',
  probe('frame'),
];
/** The filter graph of a command line. */
const graph = (a: { output: string[] }): string => a.output[a.output.indexOf('-filter_complex') + 1]!;

describe('ffmpeg argument builder', () => {
  it('builds an RTSP command over TCP with a socket timeout, wall-clock fps limit, letterbox and raw RGB out', () => {
    const a = args();
    assert.equal(a.url, URL);
    assert.deepEqual(a.input, [
      '-hide_banner',
      '-nostats',
      '-loglevel',
      'verbose',
      '-rtsp_transport',
      'tcp',
      '-stimeout',
      '10000000',
      '-threads',
      '1',
      '-fflags',
      '+genpts+discardcorrupt',
    ]);
    assert.deepEqual(a.output, [
      '-filter_complex',
      [
        ...RTSP_HEAD,
        '[head]split=2[live][all]',
        `[live]mpdecimate=hi=768:lo=768:frac=1,${letterboxFilter(640)}[frames]`,
        `[all]${thumbnailFilter()},split=2[thumbs][next]`,
        '[next]crop=2:2:0:0,format=gray,setpts=PTS+1[ticks]',
      ].join(';'),
      '-map',
      '[frames]',
      '-map',
      '[thumbs]',
      '-map',
      '[ticks]',
      '-c:v',
      'ppm',
      '-c:v:1',
      'pam',
      '-c:v:2',
      'pgm',
      '-max_interleave_delta',
      '1',
      '-vsync',
      'passthrough',
      '-flush_packets',
      '1',
      '-f',
      'image2pipe',
    ]);
  });

  it("with a ring, also copies the camera's video as sent, in MPEG-TS, to the ring's pipe (first output)", () => {
    const a = args({ ring: '/var/lib/argus/ring/ab/in-a.fifo' });
    const plain = args();
    const at = a.output.indexOf('file:/var/lib/argus/ring/ab/in-a.fifo');
    assert.deepEqual(a.output.slice(at - 9, at + 1), [
      '-y',
      '-map',
      '0:v:0',
      '-c:v',
      'copy',
      '-f',
      'mpegts',
      '-flush_packets',
      '1',
      'file:/var/lib/argus/ring/ab/in-a.fifo',
    ]);
    // The images' output is as without the ring, after it: its target (pipe:1) ends the line.
    assert.deepEqual(a.output.slice(at + 1), plain.output.slice(2));
    assert.deepEqual(a.input, plain.input);
    // A lavfi camera sends no encoded stream: no ring output.
    const lavfi = args({ url: 'lavfi:testsrc', ring: '/r/in-a.fifo' });
    assert.ok(!lavfi.output.some((x) => x.startsWith('file:')));
  });

  it('without the frame cache sends every frame as a picture, and no thumbnails', () => {
    const a = args({ cache: false });
    assert.deepEqual(a.output, [
      '-filter_complex',
      [...RTSP_HEAD, `[head]${letterboxFilter(640)}[frames]`].join(';'),
      '-map',
      '[frames]',
      '-c:v',
      'ppm',
      '-vsync',
      'passthrough',
      '-flush_packets',
      '1',
      '-f',
      'image2pipe',
    ]);
  });

  it('paces RTSP by the wall clock after decoding, keeping the stream timestamps for the decoder', () => {
    // -use_wallclock_as_timestamps with +genpts decodes nothing from a B-frame stream (ffmpeg 4).
    for (const url of [URL, 'rtsps://10.0.0.5:322/stream1']) {
      const a = args({ url });
      assert.ok(!a.input.includes('-use_wallclock_as_timestamps'), url);
      assert.ok(graph(a).startsWith(RTSP_HEAD.join(';')), url);
    }
  });

  it('keeps the source timestamps of files, HTTP, RTMP and lavfi: no wall-clock restamping', () => {
    for (const url of [
      'file:///tmp/clip.mp4',
      'http://cam/video.mjpg',
      'rtmp://cam/live',
      'lavfi:testsrc2',
    ]) {
      const a = args({ url });
      assert.ok(
        graph(a).startsWith(
          [
            '[0:v]split=2[decoded][source]',
            probe('source'),
            '[decoded]fps=5,split=2[head][frame]',
            probe('frame'),
            '[head]split=2[live][all]',
          ].join(';'),
        ),
        url,
      );
      assert.ok(!a.input.includes('-use_wallclock_as_timestamps'), url);
    }
  });

  it("logs each frame's time with showinfo on 2×2 crops only, which it sends nowhere", () => {
    for (const cache of [true, false]) {
      const g = graph(args({ cache }));
      assert.equal(g.match(/showinfo/g)?.length, 3, g);
      assert.equal(g.match(/showinfo@\w+,nullsink/g)?.length, 3, g);
      assert.equal(g.match(/crop=2:2:0:0,showinfo/g)?.length, 3, g);
    }
  });

  it("uses ffmpeg 5's option names, and UDP on request", () => {
    const a = args({
      rtsp_transport: 'udp',
      names: { rtspTimeout: 'timeout', fpsMode: 'fps_mode' },
      timeout_s: 2.5,
    });
    assert.deepEqual(a.input.slice(4, 8), ['-rtsp_transport', 'udp', '-timeout', '2500000']);
    assert.deepEqual(a.output.slice(-6, -4), ['-fps_mode', 'passthrough']);
  });

  it('sends a picture again only when a block changed by more than picture_threshold a pixel', () => {
    // 64 pixels to a block: mpdecimate's own default hi is 64 × 12.
    assert.equal(pictureBlockSad(12), 768);
    assert.equal(pictureBlockSad(1), 64);
    assert.ok(
      graph(args({ pictureThreshold: 3 })).includes('[live]mpdecimate=hi=192:lo=192:frac=1,scale@model'),
    );
    // 0: every frame's picture, as without the cache, and still every frame's thumbnail.
    const every = graph(args({ pictureThreshold: 0 }));
    assert.ok(!every.includes('mpdecimate'), every);
    assert.ok(every.includes(`[live]${letterboxFilter(640)}[frames]`), every);
    assert.ok(every.includes('[thumbs]'), every);
  });

  it('decodes on `threads` threads; 0 leaves the number to ffmpeg', () => {
    assert.deepEqual(args({ threads: 2 }).input.slice(-4, -2), ['-threads', '2']);
    assert.ok(!args({ threads: 0 }).input.includes('-threads'));
  });

  it('puts hwaccel arguments first and the camera input arguments last before -i', () => {
    const a = args({ hwaccel_args: ['-hwaccel', 'cuda'], input_args: ['-analyzeduration', '1000000'] });
    assert.deepEqual(a.input.slice(4, 6), ['-hwaccel', 'cuda']);
    assert.deepEqual(a.input.slice(-2), ['-analyzeduration', '1000000']);
  });

  it('uses a read timeout for HTTP and RTMP, none for files', () => {
    assert.ok(args({ url: 'http://cam/video.mjpg' }).input.includes('-rw_timeout'));
    assert.ok(args({ url: 'rtmp://cam/live' }).input.includes('-rw_timeout'));
    const file = args({ url: 'file:///tmp/clip.mp4', input_args: ['-re', '-stream_loop', '-1'] });
    assert.ok(!file.input.includes('-rw_timeout') && !file.input.includes('-rtsp_transport'));
  });

  it('passes values with spaces and shell characters as single arguments', () => {
    const a = args({
      url: 'rtsp://10.0.0.5/a b;rm -rf $HOME',
      input_args: ['-user_agent', 'Argus $(x) & y'],
    });
    assert.equal(a.url, 'rtsp://10.0.0.5/a b;rm -rf $HOME');
    assert.deepEqual(a.input.slice(-2), ['-user_agent', 'Argus $(x) & y']);
  });

  it('letterboxes with Ultralytics geometry: fit, bilinear, RGB, centred grey 114, named for the log', () => {
    assert.equal(
      letterboxFilter(320),
      "scale@model=w='max(1\\,min(320\\,round(iw*min(320/iw\\,320/ih))))':h='max(1\\,min(320\\,round(ih*min(320/iw\\,320/ih))))':flags=bilinear,format=rgb24,pad@model=w=320:h=320:x='round((320-iw)/2-0.1)':y='round((320-ih)/2-0.1)':color=0x727272",
    );
  });

  it('makes thumbnails by the same letterbox at 32, each pixel the mean of its source pixels', () => {
    assert.equal(
      thumbnailFilter(),
      "scale=w='max(1\\,min(32\\,round(iw*min(32/iw\\,32/ih))))':h='max(1\\,min(32\\,round(ih*min(32/iw\\,32/ih))))':flags=area,format=rgb24,pad=w=32:h=32:x='round((32-iw)/2-0.1)':y='round((32-ih)/2-0.1)':color=0x727272",
    );
  });
});
