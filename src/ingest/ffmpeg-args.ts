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
import type { FfmpegOptionNames } from './ffmpeg-process.js';

/** The camera settings that shape its ffmpeg command line. */
export type CameraArgsConfig = Pick<
  CameraConfig,
  'url' | 'fps' | 'rtsp_transport' | 'input_args' | 'hwaccel_args'
>;

/** What is known only when ffmpeg starts. */
export interface StreamOptions {
  /** The camera URL to open: `camera.url` with its host name resolved to an address. */
  url: string;
  /** Model input size: frames come out size × size. */
  size: number;
  /** The binary's names for options that were renamed. */
  names: FfmpegOptionNames;
  /** With the frame cache on, every frame's thumbnail, and pixels only of frames that changed. */
  cache: Pick<Config['cache'], 'enabled' | 'cell_threshold'>;
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
 * mpdecimate's threshold of a changed 8×8 block (its sum of absolute differences) for the
 * cache's `cell_threshold`: when no block of any plane has changed by more, no cell of the
 * thumbnail has either (a cell's mean change is at most the largest mean change of its blocks),
 * so pixels ffmpeg does not send again differ from the frame's own by less than the cache itself
 * calls a change. ffmpeg's Y has 219 levels for the thumbnail's 255.
 */
export function unchangedBlockSad(cellThreshold: number): number {
  return Math.floor((64 * cellThreshold * 219) / 255);
}

/**
 * The filter graph, and the streams it writes to stdout, in this order, as `image2pipe`
 * images whose headers tell them apart:
 *
 * - `frames`: the model's picture (PPM, size × size). With the cache on, only of frames that
 *   `mpdecimate` finds changed since the last one sent: some 8×8 block of a plane by more than
 *   `unchangedBlockSad` (its rule for a third of the blocks is off). A still camera's pixels are
 *   scaled, converted and sent when its encoder's key frames come out different, not five times
 *   a second.
 * - `thumbs`: every frame's thumbnail (PAM, THUMB_SIZE², RGB), right after the frame's
 *   picture when it has one: a thumbnail ends its frame.
 * - `ticks`: 2×2 grey (PGM), stamped one frame later than the rest, and ignored. They are there
 *   for the muxer: it holds back the packet with the latest time until every stream has a later
 *   one (or one a microsecond later, with `-max_interleave_delta 1`), so without a stream ahead
 *   a frame's thumbnail would wait a whole frame for the next.
 */
function filterGraph(
  head: string,
  size: number,
  cache: StreamOptions['cache'],
): { graph: string; streams: string[] } {
  if (!cache.enabled) return { graph: `[0:v]${head},${letterboxFilter(size)}[frames]`, streams: ['frames'] };
  const sad = unchangedBlockSad(cache.cell_threshold);
  return {
    graph: [
      `[0:v]${head},split=2[live][all]`,
      `[live]mpdecimate=hi=${sad}:lo=${sad}:frac=1,${letterboxFilter(size)}[frames]`,
      `[all]${thumbnailFilter()},split=2[thumbs][next]`,
      '[next]crop=2:2:0:0,format=gray,setpts=PTS+1[ticks]',
    ].join(';'),
    streams: ['frames', 'thumbs', 'ticks'],
  };
}

export function buildFfmpegArgs(
  camera: CameraArgsConfig,
  ffmpeg: Pick<Config['ffmpeg'], 'timeout_s'>,
  stream: StreamOptions,
): FfmpegArgs {
  const scheme = stream.url.slice(0, stream.url.indexOf(':')).toLowerCase();
  const micros = String(Math.round(ffmpeg.timeout_s * 1e6));
  const input = ['-hide_banner', '-nostats', '-loglevel', 'verbose', ...camera.hwaccel_args];
  let url = stream.url;
  const head = [`fps=${camera.fps}`];
  if (scheme === 'lavfi') {
    // A synthetic camera: an ffmpeg filter graph, paced in real time.
    input.push('-re', '-f', 'lavfi');
    url = stream.url.slice('lavfi:'.length);
  } else if (scheme === 'rtsp' || scheme === 'rtsps') {
    input.push('-rtsp_transport', camera.rtsp_transport, `-${stream.names.rtspTimeout}`, micros);
    head.unshift(WALLCLOCK_PTS);
  } else if (scheme === 'http' || scheme === 'https' || scheme === 'rtmp') {
    input.push('-rw_timeout', micros);
  }
  input.push('-fflags', '+genpts+discardcorrupt', ...camera.input_args);
  const { graph, streams } = filterGraph(head.join(','), stream.size, stream.cache);
  const output = ['-filter_complex', graph, ...streams.flatMap((s) => ['-map', `[${s}]`])];
  output.push('-c:v', 'ppm');
  if (stream.cache.enabled) output.push('-c:v:1', 'pam', '-c:v:2', 'pgm', '-max_interleave_delta', '1');
  // Each image once, as it comes (the muxer's constant rate would repeat a picture for every
  // frame mpdecimate dropped before it), and written at once, not when the buffer fills.
  output.push(`-${stream.names.fpsMode}`, 'passthrough', '-flush_packets', '1', '-f', 'image2pipe');
  return { input, url, output };
}
