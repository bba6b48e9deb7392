import type { CameraConfig, Config } from './schema.js';

/** How a reloaded camera section differs from the running one, by camera name. */
export interface CameraChanges {
  added: string[];
  removed: string[];
  /** Present in both with different settings: restarted. */
  changed: string[];
  /** Present in both, only their `model` differs: they move to the other model, still streaming. */
  moved: string[];
  unchanged: string[];
}

/** The sections a reload applies at once: cameras, and the models (with `detector:`, their settings). */
const LIVE = ['cameras', 'models', 'detector'] as const;
type Live = (typeof LIVE)[number];

export interface ConfigChanges {
  cameras: CameraChanges;
  /** Other sections that differ: they apply only after a restart. */
  needRestart: Exclude<keyof Config, Live>[];
}

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

export function diffCameras(
  before: Record<string, CameraConfig>,
  after: Record<string, CameraConfig>,
): CameraChanges {
  const names = Object.keys(after);
  const kept = names.filter((n) => n in before);
  const differ = kept.filter((n) => !same(before[n], after[n]));
  const onlyModel = (n: string): boolean => same({ ...before[n], model: '' }, { ...after[n], model: '' });
  return {
    added: names.filter((n) => !(n in before)),
    removed: Object.keys(before).filter((n) => !(n in after)),
    changed: differ.filter((n) => !onlyModel(n)),
    moved: differ.filter(onlyModel),
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
