import { z } from 'zod';
import { int } from './primitives.js';

/** The sections that tune the pipeline's stages: each camera's ffmpeg, the scheduler, the frame cache. */

export const ffmpeg = z
  .strictObject({
    /** A system ffmpeg (e.g. with NVDEC/VAAPI); default: the one from @ffmpeg-installer/ffmpeg. */
    path: z.string().min(1).optional(),
    /** ffmpeg's own connect and read timeout. */
    timeout_s: z.number().min(1).max(300).default(10),
    /** Threads decoding each camera's stream (-threads); 0: ffmpeg's choice (one per core and more). */
    threads: int().min(0).max(64).default(1),
    /** A camera that sends no frame for this long has its ffmpeg restarted. */
    stall_timeout_s: z.number().min(1).max(600).default(20),
    /** Restart delays grow from the first to the longest, doubling, with jitter. */
    backoff_initial_s: z.number().min(0.1).max(600).default(1),
    backoff_max_s: z.number().min(1).max(3600).default(60),
    /** Consecutive authentication failures before a camera is reported offline. */
    auth_failures_before_offline: int().min(1).max(100).default(3),
    /** Stopping waits this long after 'q', then after SIGTERM, before SIGKILL. */
    stop_grace_s: z.number().min(0.1).max(60).default(2),
  })
  .refine((f) => f.backoff_max_s >= f.backoff_initial_s, {
    message: 'backoff_max_s must not be less than backoff_initial_s',
    path: ['backoff_max_s'],
  })
  .prefault({});

export const scheduler = z
  .strictObject({
    max_batch: int().min(1).max(64).default(4),
    /** How long a partial batch may wait to fill while the detector is busy. */
    max_wait_ms: int().min(0).max(10000).default(50),
    /** Also wait max_wait_ms when the detector is idle (fuller batches, more latency). */
    fill_when_idle: z.boolean().default(false),
    /** Batches running at once; 0 means one per detector worker. */
    max_in_flight: int().min(0).max(64).default(0),
    /** Frames per camera waiting for the detector; when full the oldest is dropped. */
    queue_size: int().min(1).max(64).default(1),
    /** A frame older than this when its turn comes is dropped as stale. */
    max_frame_age_ms: int().min(50).max(60000).default(2000),
    /**
     * A streaming camera whose newest answered frame is this much older than its newest frame is
     * `lagging` (its status says so): the detector cannot keep up with it.
     */
    lagging_after_s: z.number().min(1).max(3600).default(10),
  })
  .prefault({});

export const cache = z
  .strictObject({
    enabled: z.boolean().default(true),
    /** Most cells of the 32×32 frame hash that may change for a frame to count as unchanged. */
    max_distance: int().min(0).max(1024).default(2),
    /** Brightness change (0–255) of a cell that counts as a change. */
    cell_threshold: int().min(1).max(255).default(10),
    /**
     * ffmpeg sends a frame's picture again when some 8×8 block changed by more than this (0–255,
     * the block's mean absolute difference) since the last picture it sent; 0 sends every picture.
     */
    picture_threshold: int().min(0).max(255).default(12),
    /** A cached result is reused for at most this long. */
    max_age_s: z.number().positive().max(3600).default(10),
    /**
     * While the last two analysed frames of a camera show an object moving, analyse every frame
     * (the hash alone can miss a small object moving slowly, and freeze it in place).
     */
    analyse_moving: z.boolean().default(true),
  })
  .prefault({});
