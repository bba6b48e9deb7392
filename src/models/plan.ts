import { diffCameras, type CameraChanges, type CameraConfig } from '../config/index.js';
import { namedRecord, own } from '../core/names.js';

/** The input size of each model running, by name; undefined for a model that is not. */
export type Sizes = (model: string) => number | undefined;

export interface CameraPlan {
  /** The camera section that runs: the file's, but for cameras whose model is not running. */
  cameras: Record<string, CameraConfig>;
  changes: CameraChanges;
  /** Cameras of the file not run as it says: their model failed to load (see `cameras`). */
  held: string[];
}

/**
 * Which camera changes a reload applies once the models have switched (`before` and `after`:
 * the models' input sizes then and now). A camera whose model is not running (it failed to load)
 * keeps its running settings, or does not start when it is new; and a camera that keeps
 * streaming (unchanged, or moved to another model) restarts when its model's input size
 * changed, since its ffmpeg letterboxes frames to that size.
 */
export function planCameras(
  running: Record<string, CameraConfig>,
  wanted: Record<string, CameraConfig>,
  before: Sizes,
  after: Sizes,
): CameraPlan {
  // Without a prototype, as the loader's: diffCameras compares the next reload's with `in`.
  const cameras = namedRecord<CameraConfig>();
  const held: string[] = [];
  for (const [name, cam] of Object.entries(wanted)) {
    if (after(cam.model) !== undefined) {
      cameras[name] = cam;
      continue;
    }
    held.push(name);
    const old = own(running, name);
    if (old && after(old.model) !== undefined) cameras[name] = old;
  }
  const diff = diffCameras(running, cameras);
  const resized = (n: string): boolean => before(running[n]!.model) !== after(cameras[n]!.model);
  const restarted = [...diff.moved, ...diff.retuned, ...diff.unchanged].filter(resized);
  return {
    cameras,
    held,
    changes: {
      ...diff,
      changed: [...diff.changed, ...restarted],
      moved: diff.moved.filter((n) => !restarted.includes(n)),
      retuned: diff.retuned.filter((n) => !restarted.includes(n)),
      unchanged: diff.unchanged.filter((n) => !restarted.includes(n)),
    },
  };
}
