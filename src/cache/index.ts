/** The cache stage's public interface: per camera, reuse the last result for a frame that looks the same. */
export { FrameCache, type CacheDecision, type MaskSource } from './frame-cache.js';
export { cellMask, type CellMask } from './cache-mask.js';
