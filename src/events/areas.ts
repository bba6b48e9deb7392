/** A camera's config as its tracker sees it: its enabled zones (with their ground planes) and lines. */
import { errorMessage } from '../core/errors.js';
import { namedRecord } from '../core/names.js';
import type { CameraConfig } from '../config/index.js';
import {
  groundPlane,
  project,
  SPEED_UNITS,
  type Homography,
  type SpeedUnit,
  type TrackerAreas,
  type ZoneArea,
} from '../track/index.js';

/**
 * A calibrated zone's ground plane, checked: its own corners must land on finite metres (the
 * config refuses degenerate corners and distances; this stands guard should one slip through).
 */
export function checkedGroundPlane(zone: string, z: CameraConfig['zones'][string]): Homography | undefined {
  if (!z.distances) return undefined;
  try {
    const plane = groundPlane(z.points, z.distances);
    if (!z.points.every((p) => project(plane, p).every(Number.isFinite)))
      throw new RangeError('its corners do not map to finite metres');
    return plane;
  } catch (err) {
    throw new RangeError(
      `zone ${zone}'s calibration cannot be used (${errorMessage(err)}): it runs without speed`,
      { cause: err },
    );
  }
}

/**
 * A camera's enabled zones with `loiter_s`, and its enabled lines, for its tracker; `plane`
 * gives each calibrated zone's ground plane (undefined: the zone runs without speed).
 */
export function areasOf(
  cam: CameraConfig | undefined,
  speedUnit: SpeedUnit,
  plane: (zone: string, z: CameraConfig['zones'][string]) => Homography | undefined,
): TrackerAreas {
  const zones = namedRecord<ZoneArea>();
  for (const [name, z] of Object.entries(cam?.zones ?? {})) {
    if (!z.enabled) continue;
    const ground = plane(name, z);
    zones[name] = {
      inertia: z.inertia,
      ...(z.loiter_s === undefined ? {} : { loiterS: z.loiter_s }),
      ...(ground ? { ground } : {}),
      // Without its ground plane a zone with a threshold admits nothing: no speed is over it.
      ...(z.speed_threshold === undefined
        ? {}
        : { speedThreshold: z.speed_threshold / SPEED_UNITS[speedUnit] }),
    };
  }
  const lines = namedRecord<CameraConfig['lines'][string]>();
  for (const [name, l] of Object.entries(cam?.lines ?? {})) if (l.enabled) lines[name] = l;
  return { zones, lines };
}

/** Whether a camera's frames are analysed: it runs and its detection is on. */
export const detecting = (cam: CameraConfig | undefined): boolean => !!cam && cam.enabled && cam.detect;
