import { z } from 'zod';
import { int, LIMITS, namedMap } from './primitives.js';

/**
 * What can change at run time: the camera settings' ranges, what a mode may set on a camera,
 * `modes:` and `control:`.
 */

/**
 * The slowest a camera may run: a frame every 10 s (its stall timeout is then at least 30 s: three
 * frames, `STALL_FRAMES`); a rate of 5e-324 makes ffmpeg's fps filter fail (`Invalid argument`)
 * at every start.
 */
export const FPS_MIN = 0.1;
/** The frame rate and priority a camera runs at; also their ranges at run time (`cameraSettings`). */
export const cameraFps = z.number().min(FPS_MIN).max(60);
export const cameraPriority = int().min(1).max(10);

/**
 * The camera settings that can be changed at run time, each with its one range: the file, a
 * mode, and every runtime path (control topics, PUT /api/control, control.json) check a value
 * with these, so nothing runs that the file could not hold. A zone's or line's `enabled` is a
 * switch too (`z.boolean()`).
 */
export const cameraSettings = {
  enabled: z.boolean(),
  detect: z.boolean(),
  snapshots: z.boolean(),
  fps: cameraFps,
  priority: cameraPriority,
};

/** The mode name that leaves every mode: the file's values (and runtime changes) alone apply. */
export const NO_MODE = 'none';

/** What a mode (or a runtime change) may set on a camera: every key optional. */
const switchable = z.strictObject({
  enabled: cameraSettings.enabled.optional(),
  detect: cameraSettings.detect.optional(),
  snapshots: cameraSettings.snapshots.optional(),
  fps: cameraSettings.fps.optional(),
  priority: cameraSettings.priority.optional(),
  zones: namedMap(z.strictObject({ enabled: z.boolean() }), { max: LIMITS.zones, what: 'zones' }),
  lines: namedMap(z.strictObject({ enabled: z.boolean() }), { max: LIMITS.lines, what: 'lines' }),
});
export type CameraSwitches = z.output<typeof switchable>;

/** Arming modes: named sets of camera settings, one active at a time (`<base>/mode/set`). */
export const mode = z.strictObject({
  cameras: namedMap(switchable, { max: LIMITS.cameras, what: 'cameras' }),
});

/** Steering at run time: control topics, Home Assistant switches, PUT /api/control. */
export const control = z
  .strictObject({
    /** Off: no control topic is heard and every change over HTTP is refused; the file alone rules. */
    enabled: z.boolean().default(true),
  })
  .prefault({});
