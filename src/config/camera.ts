import { z } from 'zod';
import { line, masks, zone } from './geometry.js';
import { cameraHealth } from './health.js';
import { checkTopicWords, topicWord } from './names.js';
import { LIMITS, namedMap, urlWithSchemes } from './primitives.js';
import { cameraSettings } from './runtime.js';

/** GPU decoding presets of a camera (`hwaccel`). */
export const HWACCELS = ['none', 'nvidia', 'vaapi', 'qsv'] as const;
export type HwaccelName = (typeof HWACCELS)[number];

const labelFilter = z.strictObject({
  min_score: z.number().min(0).max(1).default(0),
  /** In source pixels². */
  min_area: z.number().min(0).default(0),
  /** Polygons where this label is dropped before tracking (a car on a poster, a person on a TV). */
  mask: masks,
});

export const camera = z
  .strictObject({
    /** Also `lavfi:<filtergraph>`: a synthetic camera made by ffmpeg (demos, tests). */
    url: urlWithSchemes('camera', ['rtsp', 'rtsps', 'rtmp', 'http', 'https', 'file', 'lavfi']),
    /** Off: its ffmpeg does not run. */
    enabled: cameraSettings.enabled.default(true),
    /** Off: ffmpeg goes on decoding (the live view updates) but no frame reaches the model: no events. */
    detect: cameraSettings.detect.default(true),
    /** Off: its events carry no snapshot (none on MQTT, in the history or over HTTP). */
    snapshots: cameraSettings.snapshots.default(true),
    /**
     * A video clip per event, with pre-roll, from the stream as the camera sends it (absent:
     * `events.clips.enabled`). Not for `lavfi:` cameras, which send no encoded stream.
     */
    clips: z.boolean().optional(),
    /**
     * `events`: the camera's recording keeps what its events' clips need (and `retain_days`);
     * `always`: all of it too, for `record_days` (continuous recording; needs clips on).
     */
    record: z.enum(['events', 'always']).default('events'),
    /** With `record: always`: days of continuous recording kept (the oldest go first; `ring_max_mb`, `max_gb` still bound it). */
    record_days: z.number().positive().max(3650).optional(),
    /** The name of the model that analyses its frames (`default`: `model:`). */
    model: z.string().min(1).default('default'),
    fps: cameraSettings.fps.default(5),
    /** 1..10; higher is served first when the detector is busy. */
    priority: cameraSettings.priority.default(5),
    /** With `fleet:`, the labels a box must have to run this camera (`[gpu]`); absent: any box. */
    requires: z.array(topicWord).min(1).max(32).optional(),
    rtsp_transport: z.enum(['tcp', 'udp']).default('tcp'),
    /** Extra ffmpeg arguments placed before -i. */
    input_args: z.array(z.string()).default([]),
    hwaccel_args: z.array(z.string()).default([]),
    /** GPU decoding preset (docs/operations.md, Hardware decoding); the software path when ffmpeg lacks it. */
    hwaccel: z.enum(HWACCELS).default('none'),
    /** The VAAPI/QSV render node, or the CUDA device index, for `hwaccel`. */
    hwaccel_device: z.string().min(1).optional(),
    objects: z
      .strictObject({
        /** Labels to report; absent means all. */
        track: z.array(topicWord).min(1).optional(),
        filters: namedMap(labelFilter, { max: LIMITS.filters, what: 'filters' }),
        /** Polygons where every label is dropped before tracking. */
        mask: masks,
      })
      .prefault({}),
    /**
     * Polygons the frame cache ignores when it decides whether a frame looks like the last one
     * analysed (a swaying tree, a flag, a fountain, a clock). Detections there are still reported.
     */
    cache_mask: masks,
    zones: namedMap(zone, { max: LIMITS.zones, what: 'zones' }),
    lines: namedMap(line, { max: LIMITS.lines, what: 'lines' }),
    /** Camera health over `health:` (docs/config.md): any of its keys. */
    health: cameraHealth,
  })
  .superRefine((cam, ctx) => {
    if (cam.clips === true && cam.url.toLowerCase().startsWith('lavfi:'))
      ctx.addIssue({
        code: 'custom',
        message: 'a lavfi: camera sends no encoded stream to keep clips of',
        path: ['clips'],
      });
    if (cam.record === 'always' && cam.url.toLowerCase().startsWith('lavfi:'))
      ctx.addIssue({
        code: 'custom',
        message: 'a lavfi: camera sends no encoded stream to record',
        path: ['record'],
      });
    if (cam.record_days !== undefined && cam.record !== 'always')
      ctx.addIssue({
        code: 'custom',
        message:
          'is the retention of record: always; this camera records for its events only (record: events)',
        path: ['record_days'],
      });
    // A zone or line listing a label the camera does not track would never see it: the loader
    // says so (labels.ts, untrackedLabels), where it knows which of the two names is wrong.
  })
  .superRefine((cam, ctx) => checkTopicWords(cam, ctx))
  .superRefine((cam, ctx) => {
    if (cam.hwaccel !== 'none' && cam.hwaccel_args.length > 0)
      ctx.addIssue({ code: 'custom', path: ['hwaccel'], message: 'set hwaccel or hwaccel_args, not both' });
    if (cam.hwaccel === 'none' && cam.hwaccel_device !== undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['hwaccel_device'],
        message: 'needs hwaccel (nvidia, vaapi or qsv)',
      });
  });

export type CameraConfig = z.infer<typeof camera>;

/**
 * The cameras that run now, read where they are needed: the root's RunningConfig holds them
 * (the file's, with the mode and runtime changes on them), and no part keeps a copy.
 */
export type CamerasNow = () => Record<string, CameraConfig>;
