import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildFfmpegArgs, letterboxFilter } from '../../../src/ingest/ffmpeg-args.js';

const URL = 'rtsp://10.0.0.5:554/stream1';

interface Over {
  url?: string;
  fps?: number;
  size?: number;
  rtsp_transport?: 'tcp' | 'udp';
  input_args?: string[];
  hwaccel_args?: string[];
  timeout_s?: number;
  rtspTimeoutOption?: 'stimeout' | 'timeout';
}

/** The command line for a camera at URL (5 fps, 640, TCP, 10 s timeout, ffmpeg 4's -stimeout). */
const args = (o: Over = {}) =>
  buildFfmpegArgs(
    {
      url: o.url ?? URL,
      fps: o.fps ?? 5,
      rtsp_transport: o.rtsp_transport ?? 'tcp',
      input_args: o.input_args ?? [],
      hwaccel_args: o.hwaccel_args ?? [],
    },
    { timeout_s: o.timeout_s ?? 10 },
    { url: o.url ?? URL, size: o.size ?? 640, rtspTimeoutOption: o.rtspTimeoutOption ?? 'stimeout' },
  );

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
      '-fflags',
      '+genpts+discardcorrupt',
    ]);
    assert.deepEqual(a.output, [
      '-an',
      '-sn',
      '-dn',
      '-vf',
      `setpts='(RTCTIME-RTCSTART)/(TB*1000000)',${letterboxFilter(5, 640)}`,
      '-pix_fmt',
      'rgb24',
      '-f',
      'rawvideo',
    ]);
  });

  it('paces RTSP by the wall clock after decoding, keeping the stream timestamps for the decoder', () => {
    // -use_wallclock_as_timestamps with +genpts decodes nothing from a B-frame stream (ffmpeg 4).
    for (const url of [URL, 'rtsps://10.0.0.5:322/stream1']) {
      const a = args({ url });
      assert.ok(!a.input.includes('-use_wallclock_as_timestamps'), url);
      const vf = a.output[a.output.indexOf('-vf') + 1]!;
      assert.match(vf, /^setpts='\(RTCTIME-RTCSTART\)\/\(TB\*1000000\)',fps=5,scale=/, url);
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
      assert.equal(a.output[a.output.indexOf('-vf') + 1], letterboxFilter(5, 640), url);
      assert.ok(!a.input.includes('-use_wallclock_as_timestamps'), url);
    }
  });

  it('uses -timeout for ffmpeg 5+ and UDP on request', () => {
    const a = args({ rtsp_transport: 'udp', rtspTimeoutOption: 'timeout', timeout_s: 2.5 });
    assert.deepEqual(a.input.slice(4, 8), ['-rtsp_transport', 'udp', '-timeout', '2500000']);
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

  it('letterboxes with Ultralytics geometry: fit, bilinear, RGB, centred grey 114', () => {
    assert.equal(
      letterboxFilter(2, 320),
      "fps=2,scale=w='max(1\\,min(320\\,round(iw*min(320/iw\\,320/ih))))':h='max(1\\,min(320\\,round(ih*min(320/iw\\,320/ih))))':flags=bilinear,format=rgb24,pad=w=320:h=320:x='round((320-iw)/2-0.1)':y='round((320-ih)/2-0.1)':color=0x727272",
    );
  });
});
