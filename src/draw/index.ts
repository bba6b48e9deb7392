/**
 * Pictures for people: JPEGs of frames as the model saw them, boxes and labels drawn, and crops
 * of one object. Event snapshots and the live page take them from here.
 */
export {
  annotatedJpeg,
  croppedJpeg,
  cropRegion,
  MAX_WIDTH,
  MIN_WIDTH,
  type AnnotateOptions,
} from './jpeg.js';
