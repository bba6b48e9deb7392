import type { CameraConfig } from './camera.js';
import type { Config } from './schema.js';

/** How a reloaded camera section differs from the running one, by camera name. */
export interface CameraChanges {
  added: string[];
  removed: string[];
  /** Present in both with different settings: restarted. */
  changed: string[];
  /** Present in both, only their `model` differs: they move to the other model, still streaming. */
  moved: string[];
  /**
   * Present in both, their stream the same (STREAM_KEYS) but other settings not (detection,
   * snapshots, priority, zones, lines, filters): they take them at once, still streaming.
   */
  retuned: string[];
  unchanged: string[];
}

/** The sections a reload applies at once: cameras, and the models (with `detector:`, their settings). */
const LIVE = ['cameras', 'models', 'detector', 'modes'] as const;
type Live = (typeof LIVE)[number];

export interface ConfigChanges {
  cameras: CameraChanges;
  /** Other sections that differ: they apply only after a restart. */
  needRestart: Exclude<keyof Config, Live>[];
}

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/** What a camera's ffmpeg is started with: a change to one of them restarts it. */
export const STREAM_KEYS = [
  'url',
  'enabled',
  'model',
  'fps',
  'rtsp_transport',
  'hwaccel',
  'hwaccel_device',
  'input_args',
  'hwaccel_args',
  'clips',
] as const satisfies readonly (keyof CameraConfig)[];

const streamOf = (c: CameraConfig): unknown => STREAM_KEYS.map((k) => c[k]);

export function diffCameras(
  before: Record<string, CameraConfig>,
  after: Record<string, CameraConfig>,
): CameraChanges {
  const names = Object.keys(after);
  const kept = names.filter((n) => n in before);
  const differ = kept.filter((n) => !same(before[n], after[n]));
  const onlyModel = (n: string): boolean => same({ ...before[n], model: '' }, { ...after[n], model: '' });
  const sameStream = (n: string): boolean => same(streamOf(before[n]!), streamOf(after[n]!));
  return {
    added: names.filter((n) => !(n in before)),
    removed: Object.keys(before).filter((n) => !(n in after)),
    changed: differ.filter((n) => !onlyModel(n) && !sameStream(n)),
    moved: differ.filter(onlyModel),
    retuned: differ.filter((n) => !onlyModel(n) && sameStream(n)),
    unchanged: kept.filter((n) => same(before[n], after[n])),
  };
}

/**
 * What a reload changes: cameras and models (`models:`, `model:`, `detector:`) apply at once
 * (the model registry compares each model's settings); every other section needs a restart.
 */
export function diffConfig(before: Config, after: Config): ConfigChanges {
  const sections = Object.keys(after) as (keyof Config)[];
  return {
    cameras: diffCameras(before.cameras, after.cameras),
    needRestart: sections.filter(
      (k): k is Exclude<keyof Config, Live> =>
        !(LIVE as readonly string[]).includes(k) && !same(before[k], after[k]),
    ),
  };
}
