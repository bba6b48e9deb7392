/**
 * The ffmpeg command line for one camera, as a pure function: decode the stream, limit the
 * frame rate (for RTSP cameras, by the wall clock), scale and letterbox to the model's input
 * size (Ultralytics' geometry: centred, grey 114, bilinear), and write raw RGB24 frames to
 * stdout. No shell is ever involved: each argument is passed to the process as it is.
 */
import type { CameraConfig, Config } from '../config/index.js';

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
  /** ffmpeg 4.x calls the RTSP socket timeout `-stimeout`; 5.0 and later `-timeout`. */
  rtspTimeoutOption: 'stimeout' | 'timeout';
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

/** The video filter: fps limit, aspect-preserving scale, RGB, then centred padding. */
export function letterboxFilter(fps: number, size: number): string {
  const s = size;
  const fit = `min(${s}/iw\\,${s}/ih)`;
  return [
    `fps=${fps}`,
    `scale=w='max(1\\,min(${s}\\,round(iw*${fit})))':h='max(1\\,min(${s}\\,round(ih*${fit})))':flags=bilinear`,
    'format=rgb24',
    // Ultralytics rounds (pad/2 - 0.1): an odd remainder puts the extra pixel after.
    `pad=w=${s}:h=${s}:x='round((${s}-iw)/2-0.1)':y='round((${s}-ih)/2-0.1)':color=0x727272`,
  ].join(',');
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
  const filters = [letterboxFilter(camera.fps, stream.size)];
  if (scheme === 'lavfi') {
    // A synthetic camera: an ffmpeg filter graph, paced in real time.
    input.push('-re', '-f', 'lavfi');
    url = stream.url.slice('lavfi:'.length);
  } else if (scheme === 'rtsp' || scheme === 'rtsps') {
    input.push('-rtsp_transport', camera.rtsp_transport, `-${stream.rtspTimeoutOption}`, micros);
    filters.unshift(WALLCLOCK_PTS);
  } else if (scheme === 'http' || scheme === 'https' || scheme === 'rtmp') {
    input.push('-rw_timeout', micros);
  }
  input.push('-fflags', '+genpts+discardcorrupt', ...camera.input_args);
  const output = ['-an', '-sn', '-dn', '-vf', filters.join(','), '-pix_fmt', 'rgb24', '-f', 'rawvideo'];
  return { input, url, output };
}
