/** The cache stage's public interface: per camera, reuse the last result for a frame that looks the same. */
export { FrameCache, type CacheDecision } from './frame-cache.js';
