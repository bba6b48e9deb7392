/**
 * The ingest stage's public interface: cameras (one supervised ffmpeg each) and images, both
 * turned into letterboxed pictures of the model's size; camera statuses.
 */
export type { CameraError, CameraState, CameraStatus } from './camera.js';
export { buildFfmpegArgs, letterboxFilter } from './ffmpeg-args.js';
export { defaultFfmpegPath, probeRtspTimeoutOption } from './ffmpeg-process.js';
export { FrameSplitter } from './frames.js';
export { ImageError, loadLetterboxed } from './image.js';
export { Ingest, type IngestConfig, type IngestDeps } from './ingest.js';
export type { FailureCause } from './stderr.js';
