/**
 * The recording stage's public interface: each clip-keeping camera's one recording, its ring (the
 * stream ffmpeg copies to a named pipe, cut at key frames, stamped by the stream's clock, kept
 * on disk while events' footage needs it, within time and bytes), the ranges events need
 * (`FootageRanges`), and the clips made from it on request (which stretch, the MP4, its cache).
 */
export {
  BROWSER_CODECS,
  MP4_CODECS,
  planClip,
  remuxClip,
  type ClipPart,
  type ClipPlan,
  type ClipShortfall,
} from './clip.js';
export { ClipCache, DROPPED, type CachedClip } from './clip-cache.js';
export { FootageRanges, type Rescue } from './footage.js';
export {
  decodeFrame,
  FRAME_AFTER_MS,
  frameFits,
  MAX_FRAME_SIDE,
  FRAME_BEFORE_MS,
  FRAME_SLACK_MS,
  planFrame,
} from './frame.js';
export { keptRanges, JOIN_MS, type KeptOptions, type KeptRange, type KeptReason } from './kept.js';
export { Ring, ringKey, type RingStats } from './ring.js';
export type { RingFault, RingHold, Segment, TimeRange } from './ring-index.js';
export { StreamClock } from './stream-clock.js';
