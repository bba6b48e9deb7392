import type { Box, Letterbox } from './geometry.js';

/**
 * What flows down the pipeline: pictures the model can take (letterboxed RGB with the geometry
 * to map boxes back), frames (a picture from a camera, numbered and timed), detections, and
 * results (a frame with its detections).
 */

/** A model-ready picture: `geometry.dstW`×`geometry.dstH` RGB24 bytes, letterboxed. */
export interface Picture {
  data: Buffer;
  /** Maps boxes back to the source pixels of the image or stream at that moment. */
  geometry: Letterbox;
}

/** Whether a picture is what a model of input `size` takes: size × size RGB24. */
export function fitsModel(p: Picture, size: number): boolean {
  return p.geometry.dstW === size && p.geometry.dstH === size && p.data.length === 3 * size * size;
}

/**
 * Side of a frame's thumbnail: the frame letterboxed to THUMB_SIZE × THUMB_SIZE RGB24, one pixel
 * per cell of the frame cache's hash grid.
 */
export const THUMB_SIZE = 32;

/**
 * One picture from a camera. With the frame cache on, ffmpeg sends a frame's pixels only when
 * they differ from the last pixels it sent (its `mpdecimate` filter): a frame it found the same
 * carries those last pixels, the very same buffer, and its own thumbnail.
 */
export interface Frame extends Picture {
  camera: string;
  /** 1, 2, 3… per camera, across ffmpeg restarts. */
  seq: number;
  /**
   * When the camera took the picture (ms since the epoch): its time on the stream's own clock,
   * mapped to the wall clock by the least delay seen (ingest/stamps.ts); when ffmpeg gave no time,
   * when its last byte arrived (from the injected clock). Never earlier than the frame before.
   */
  ts: number;
  /**
   * Its time for intervals (ms, any origin): between frames of one connection, the stream's own
   * interval, whatever delay each came with (ingest/stamps.ts `SteadyTime`); speeds are measured
   * on it. Absent (a fake, a test), `ts` serves.
   */
  steady?: number;
  /** This frame's own thumbnail (THUMB_SIZE² RGB24), when ingest made one (the cache is on). */
  thumb?: Uint8Array;
}

/** A detection as Argus reports it: a label, a score and a box in source pixels. */
export interface Detection {
  label: string;
  score: number;
  box: Box;
}

/** One answered frame: analysed by the model, or answered from the cache. */
export interface Result extends Frame {
  cached: boolean;
  detections: Detection[];
}
