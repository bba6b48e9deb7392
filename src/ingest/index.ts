/**
 * The ingest stage's public interface: cameras (one supervised ffmpeg each) and images, both
 * turned into letterboxed pictures of the model's size (camera frames with their thumbnails);
 * camera statuses. A clip-keeping camera's ffmpeg also copies its stream to the camera's ring
 * (the `record` stage), which `Ingest` starts and stops with the camera.
 */
export type { CameraError, CameraState, CameraStatus } from './camera.js';
export { buildFfmpegArgs, letterboxFilter, thumbnailFilter, type FfmpegOptionNames } from './ffmpeg-args.js';
export { defaultFfmpegPath, probeOptionNames } from './ffmpeg-process.js';
export { ImageError, loadLetterboxed } from './image.js';
export { Ingest, type IngestConfig, type IngestDeps } from './ingest.js';
export { PnmError, PnmSplitter, type PnmImage } from './pnm.js';
export type { FailureCause } from './stderr.js';
export { keepsClips } from './ingest.js';
