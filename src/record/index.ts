/**
 * The recording stage's public interface: each clip-keeping camera's ring of recent video (the
 * stream ffmpeg copies to a named pipe, cut at key frames, stamped by the stream's clock, kept
 * on disk within time and bytes) and the clips made from it (which stretch, and the MP4).
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
export { Ring, ringKey, type RingStats } from './ring.js';
export type { RingFault, RingHold, Segment } from './ring-index.js';
export { StreamClock } from './stream-clock.js';
