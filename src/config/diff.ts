import type { CameraConfig, Config } from './schema.js';

/** How a reloaded camera section differs from the running one, by camera name. */
export interface CameraChanges {
  added: string[];
  removed: string[];
  /** Present in both with different settings: restarted. */
  changed: string[];
  unchanged: string[];
}

export interface ConfigChanges {
  cameras: CameraChanges;
  /** Other sections that differ: they apply only after a restart. */
  needRestart: Exclude<keyof Config, 'cameras'>[];
}

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

export function diffCameras(
  before: Record<string, CameraConfig>,
  after: Record<string, CameraConfig>,
): CameraChanges {
  const names = Object.keys(after);
  return {
    added: names.filter((n) => !(n in before)),
    removed: Object.keys(before).filter((n) => !(n in after)),
    changed: names.filter((n) => n in before && !same(before[n], after[n])),
    unchanged: names.filter((n) => n in before && same(before[n], after[n])),
  };
}

/** What a reload changes: cameras apply at once, every other section needs a restart. */
export function diffConfig(before: Config, after: Config): ConfigChanges {
  const sections = Object.keys(after) as (keyof Config)[];
  return {
    cameras: diffCameras(before.cameras, after.cameras),
    needRestart: sections.filter(
      (k): k is Exclude<keyof Config, 'cameras'> => k !== 'cameras' && !same(before[k], after[k]),
    ),
  };
}
