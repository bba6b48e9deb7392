/**
 * The ffmpeg command line for one camera, as a pure function: decode the stream, limit the
 * frame rate (for RTSP cameras, by the wall clock), scale and letterbox to the model's input
 * size (Ultralytics' geometry: centred, grey 114, bilinear), and write the frames to stdout as
 * PPM images. With the frame cache on, stdout also carries every frame's thumbnail, and a frame's
 * pixels only when they changed (see `buildFfmpegArgs`). No shell is ever involved: each
 * argument is passed to the process as it is.
 */
import { THUMB_SIZE } from '../core/frame.js';
import type { CameraConfig, Config } from '../config/index.js';
import { decodePreset } from './hwaccel.js';

/** The camera settings that shape its ffmpeg command line. */
export type CameraArgsConfig = Pick<
  CameraConfig,
  'url' | 'fps' | 'rtsp_transport' | 'input_args' | 'hwaccel_args'
> &
  Partial<Pick<CameraConfig, 'hwaccel' | 'hwaccel_device'>>;

/** Option names that differ between ffmpeg versions, as the binary in use spells them. */
export interface FfmpegOptionNames {
  /** The RTSP socket timeout: ffmpeg 4.x has `-stimeout`; 5.0+ renamed it `-timeout` (which 4.x uses for something else). */
  rtspTimeout: 'stimeout' | 'timeout';
  /** Frames written as they come: `-vsync` until ffmpeg 5.1 added `-fps_mode` (9 removed `-vsync`). */
  fpsMode: 'vsync' | 'fps_mode';
}

/** What is known only when ffmpeg starts. */
export interface StreamOptions {
  /** The camera URL to open: `camera.url` with its host name resolved to an address. */
  url: string;
  /** Model input size: frames come out size × size. */
  size: number;
  /** The binary's names for options that were renamed. */
  names: FfmpegOptionNames;
  /** With the frame cache on, every frame's thumbnail, and pixels only of frames that changed. */
  cache: Pick<Config['cache'], 'enabled' | 'picture_threshold'>;
  /** The named pipe of the camera's ring (clips): the stream, copied as sent, goes there too. */
  ring?: string | undefined;
}

export interface FfmpegArgs {
  /** Options before -i. */
  input: string[];
  url: string;
  /** Options after -i, ending before the output target (pipe:1). */
  output: string[];
}

/**
 * Restamps each decoded frame with the wall-clock time it reached the filter graph
 * (microseconds since the graph started, in the stream's time base), so that the fps filter
 * after it counts real seconds, whatever the camera's clock says. Camera clocks are often
 * wrong: with its own timestamps, a camera whose clock jumps an hour ahead makes the fps
 * filter fill the hour with copies of one frame (thousands per second), and one whose clock
 * runs at a quarter of real speed yields a quarter of the frames.
 *
 * It runs after decoding, so the demuxer and decoder keep the stream's own timestamps, which
 * B-frame reordering needs, and frames are already in display order when restamped. Stamping
 * packets on arrival instead (`-use_wallclock_as_timestamps 1`, what Argus did first) gives
 * every packet pts = dts, in decode order. When B-frames need a reorder depth of 2 (x264's
 * `-bf 3`; vtest.mp4's depth of 1 decodes), the bundled ffmpeg 4 then drops the first packet's
 * pts, and `+genpts` waits for a later packet with pts ≠ dts to supply it; none ever comes,
 * so ffmpeg reads forever, decodes nothing, and the camera stalls. Measured with ffmpeg 4
 * and 5.1: B-frame, plain, 60 fps and wrong-clock (jumping, quarter- and quadruple-speed)
 * RTSP streams all give the configured fps this way.
 */
const WALLCLOCK_PTS = "setpts='(RTCTIME-RTCSTART)/(TB*1000000)'";

/** The instance names of the model picture's scale and pad filters, whose log lines give the geometry. */
export const MODEL_FILTER = 'model';

/** Scale to fit `size` keeping the aspect ratio (at least 1 pixel), then pad to size × size, centred. */
function fitAndPad(size: number, flags: string, name?: string): string {
  const s = size;
  const fit = `min(${s}/iw\\,${s}/ih)`;
  const at = name ? `@${name}` : '';
  return [
    `scale${at}=w='max(1\\,min(${s}\\,round(iw*${fit})))':h='max(1\\,min(${s}\\,round(ih*${fit})))':flags=${flags}`,
    'format=rgb24',
    // Ultralytics rounds (pad/2 - 0.1): an odd remainder puts the extra pixel after.
    `pad${at}=w=${s}:h=${s}:x='round((${s}-iw)/2-0.1)':y='round((${s}-ih)/2-0.1)':color=0x727272`,
  ].join(',');
}

/** The model's picture: aspect-preserving bilinear scale to `size`, RGB, centred grey padding. */
export function letterboxFilter(size: number): string {
  return fitAndPad(size, 'bilinear', MODEL_FILTER);
}

/**
 * The frame's thumbnail: the same letterbox at THUMB_SIZE, each pixel the mean of the source
 * pixels it covers (`area`), so one pixel is one cell of the frame cache's hash grid.
 */
export function thumbnailFilter(): string {
  return fitAndPad(THUMB_SIZE, 'area');
}

/**
 * mpdecimate's threshold of a changed 8×8 block (its sum of absolute differences) for
 * `cache.picture_threshold`, a mean difference per pixel. mpdecimate compares a frame with the
 * last one it let through, so a slow change adds up until it is sent.
 *
 * The threshold is not the cache's `cell_threshold`: a cell of the hash is the mean of some
 * fifteen blocks, in which an encoder's noise cancels out, while a block's sum of absolute
 * differences adds it up. A still camera's key frame, coded afresh every GOP, differs from the
 * frame before it by 9–11 levels in its worst block (bus.jpg through x264 at 5 frames/s), so
 * at the cache's 10 (8.6 in ffmpeg's Y) a quarter of a still camera's pictures were sent; at
 * mpdecimate's own default, 12, one in fifty. What the threshold lets pass is what a frame's
 * picture may differ from its own pixels; the cache still judges each frame by its own thumbnail.
 */
export function pictureBlockSad(pictureThreshold: number): number {
  return 64 * pictureThreshold;
}

/**
 * The probes that tell Argus each frame's time: a `showinfo` logs every frame that passes it,
 * `n:` (its count since the graph was configured) and `pts:` (in the time base it logs once as
 * `config in time_base:`), on stderr at info level. Each taps its own branch, cropped to 2×2
 * (crop only moves pointers): showinfo's checksums and statistics of a whole decoded 1080p frame
 * cost 2.8 ms (7 % of a core at 25 frames/s, per probe), of 2×2 pixels nothing measurable.
 *
 * - `source`: every decoded frame, with the stream's own timestamp (for RTSP the camera's, from
 *   its RTP time), before anything restamps it;
 * - `paced`: RTSP only, every decoded frame again, with the wall-clock time the fps filter paces by;
 * - `frame`: every frame the fps filter lets out (one per frame Argus reads), on its output clock.
 *
 * `stamps.ts` finds which decoded frame each output frame is (fps keeps the last frame whose
 * rounded time is not past the output's slot), and so its timestamp on the stream's clock. A GPU
 * decoder's frames stay on the GPU until after fps, where a probe cannot read them: such a
 * camera has only the `frame` probe, and its frames are timed by their fps slot.
 */
export const STAMP_PROBES = ['source', 'paced', 'frame'] as const;
export type StampProbe = (typeof STAMP_PROBES)[number];

/** A probe's branch: its input, cropped to 2×2, logged, and dropped. */
function probe(name: StampProbe): string {
  return `crop=2:2:0:0,showinfo@${name},nullsink`;
}

/**
 * The head of the graph as chains: probes, the wall-clock restamp (RTSP), fps, a GPU decoder's
 * download, and the `frame` probe; its output is `[head]`.
 */
function headChains(fps: number, restamp: boolean, decodeFilters: string[]): string[] {
  const chains: string[] = [];
  const cpuFrames = decodeFilters.length === 0;
  let from = '[0:v]';
  let filters: string[] = [];
  const tap = (name: StampProbe, out: string): void => {
    chains.push(`${from}${[...filters, `split=2[${out}][${name}]`].join(',')}`, `[${name}]${probe(name)}`);
    from = `[${out}]`;
    filters = [];
  };
  if (cpuFrames) tap('source', 'decoded');
  if (restamp) {
    filters.push(WALLCLOCK_PTS);
    if (cpuFrames) tap('paced', 'walled');
  }
  filters.push(`fps=${fps}`, ...decodeFilters);
  tap('frame', 'head');
  return chains;
}

/**
 * The filter graph, and the streams it writes to stdout, in this order, as `image2pipe`
 * images whose headers tell them apart:
 *
 * - `frames`: the model's picture (PPM, size × size). With the cache on, only of frames that
 *   `mpdecimate` finds changed since the last one sent: some 8×8 block of a plane by more than
 *   `pictureBlockSad` (its rule for a third of the blocks is off); every frame's with
 *   `picture_threshold` 0. A still camera's pixels are scaled, converted and sent once, not five
 *   times a second.
 * - `thumbs`: every frame's thumbnail (PAM, THUMB_SIZE², RGB), right after the frame's
 *   picture when it has one: a thumbnail ends its frame.
 * - `ticks`: 2×2 grey (PGM), stamped one frame later than the rest, and ignored. They are there
 *   for the muxer: it holds back the packet with the latest time until every stream has a later
 *   one (or one a microsecond later, with `-max_interleave_delta 1`), so without a stream ahead
 *   a frame's thumbnail would wait a whole frame for the next.
 *
 * Before them, `headChains`: the probes of each frame's time.
 */
function filterGraph(
  head: string[],
  size: number,
  cache: StreamOptions['cache'],
): { graph: string; streams: string[] } {
  if (!cache.enabled)
    return { graph: [...head, `[head]${letterboxFilter(size)}[frames]`].join(';'), streams: ['frames'] };
  const sad = pictureBlockSad(cache.picture_threshold);
  const changed = sad > 0 ? `mpdecimate=hi=${sad}:lo=${sad}:frac=1,` : '';
  return {
    graph: [
      ...head,
      '[head]split=2[live][all]',
      `[live]${changed}${letterboxFilter(size)}[frames]`,
      `[all]${thumbnailFilter()},split=2[thumbs][next]`,
      '[next]crop=2:2:0:0,format=gray,setpts=PTS+1[ticks]',
    ].join(';'),
    streams: ['frames', 'thumbs', 'ticks'],
  };
}

export function buildFfmpegArgs(
  camera: CameraArgsConfig,
  ffmpeg: Pick<Config['ffmpeg'], 'timeout_s' | 'threads'>,
  stream: StreamOptions,
): FfmpegArgs {
  const scheme = stream.url.slice(0, stream.url.indexOf(':')).toLowerCase();
  const micros = String(Math.round(ffmpeg.timeout_s * 1e6));
  // A GPU decoder's frames stay on the GPU until fps has dropped the ones not kept.
  const decode = decodePreset(camera.hwaccel ?? 'none', camera.hwaccel_device);
  const input = ['-hide_banner', '-nostats', '-loglevel', 'verbose', ...camera.hwaccel_args, ...decode.input];
  let url = stream.url;
  let restamp = false;
  if (scheme === 'lavfi') {
    // A synthetic camera: an ffmpeg filter graph, paced in real time.
    input.push('-re', '-f', 'lavfi');
    url = stream.url.slice('lavfi:'.length);
  } else if (scheme === 'rtsp' || scheme === 'rtsps') {
    input.push('-rtsp_transport', camera.rtsp_transport, `-${stream.names.rtspTimeout}`, micros);
    restamp = true;
  } else if (scheme === 'http' || scheme === 'https' || scheme === 'rtmp') {
    input.push('-rw_timeout', micros);
  }
  // One decoding thread costs less CPU than several (7 % less for 8 still 810×1080 cameras at
  // 5 frames/s); a box of cameras spreads its ffmpeg processes over its cores.
  if (ffmpeg.threads > 0) input.push('-threads', String(ffmpeg.threads));
  input.push('-fflags', '+genpts+discardcorrupt', ...camera.input_args);
  const { graph, streams } = filterGraph(
    headChains(camera.fps, restamp, decode.filters),
    stream.size,
    stream.cache,
  );
  const output = ['-filter_complex', graph];
  // The ring's output first (the images' target, pipe:1, ends the command line): the video as the
  // camera sent it, no decode or encode, in MPEG-TS (Argus cuts it at key frames), written at once.
  // `-y`: the pipe exists, and ffmpeg would ask before writing to an existing file.
  if (stream.ring && scheme !== 'lavfi')
    output.push(
      '-y',
      '-map',
      '0:v:0',
      '-c:v',
      'copy',
      '-f',
      'mpegts',
      '-flush_packets',
      '1',
      `file:${stream.ring}`,
    );
  output.push(...streams.flatMap((s) => ['-map', `[${s}]`]));
  output.push('-c:v', 'ppm');
  if (stream.cache.enabled) output.push('-c:v:1', 'pam', '-c:v:2', 'pgm', '-max_interleave_delta', '1');
  // Each image once, as it comes (the muxer's constant rate would repeat a picture for every
  // frame mpdecimate dropped before it), and written at once, not when the buffer fills.
  output.push(`-${stream.names.fpsMode}`, 'passthrough', '-flush_packets', '1', '-f', 'image2pipe');
  return { input, url, output };
}
