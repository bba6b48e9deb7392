/**
 * The runtime settings' names, and the one codec between a setting (`SettingRef`) and each way it
 * is written: the flat key of control.json and `GET /api/control` (`zones.front.door.enabled`),
 * the levels of its MQTT topics under `<base>/cameras/<camera>/` (`zones/front.door/enabled`,
 * which Home Assistant's discovery configs name too) and the segments of its HTTP path under
 * `/api/control/cameras/<camera>/` (each percent-encoded). A zone's or line's name may hold any
 * character the schema allows in a topic level (config `topicLevelProblem`: no `/`, `+`, `#`,
 * so each name is exactly one level); dots included. Imports nothing: the page may ship it.
 */

/** A camera switch: the camera as a whole (its ffmpeg), its detection, its snapshots. */
export const SWITCHES = ['enabled', 'detect', 'snapshots'] as const;
export type Switch = (typeof SWITCHES)[number];
/** A camera number: its frame rate, its priority at the detector. */
export const NUMBERS = ['fps', 'priority'] as const;
export type NumberKey = (typeof NUMBERS)[number];
export type CameraKey = Switch | NumberKey;

/** A camera's zones or lines, as the config names them (`cam.zones`, `cam.lines`). */
export type AreaKind = 'zones' | 'lines';

/** One setting of a camera: a camera-wide key, or a zone's or line's `enabled`. */
export type SettingRef = { kind: 'camera'; key: CameraKey } | { kind: AreaKind; name: string };

/**
 * What a control topic or path names: a setting, a line's counts back to 0 (a button), or the
 * camera's health references learnt again (a button: `health/reset`).
 */
export type ControlRef = SettingRef | { kind: 'reset'; line: string } | { kind: 'relearn' };

/** A setting's flat key: `detect`, `fps`, `zones.<zone>.enabled`, `lines.<line>.enabled`. */
export type SettingKey = CameraKey | `zones.${string}.enabled` | `lines.${string}.enabled`;

const CAMERA_KEYS: readonly string[] = [...SWITCHES, ...NUMBERS];
const isCameraKey = (key: string): key is CameraKey => CAMERA_KEYS.includes(key);
const ENABLED = 'enabled';
const RESET = 'reset';
const HEALTH = 'health';

/** Whether a setting is a number (`fps`, `priority`); every other one is a switch. */
export const isNumber = (ref: SettingRef): boolean =>
  ref.kind === 'camera' && (NUMBERS as readonly string[]).includes(ref.key);

/** The flat key of a setting; a name is kept as it is, dots and all. */
export function settingKey(ref: SettingRef): SettingKey {
  return ref.kind === 'camera' ? ref.key : `${ref.kind}.${ref.name}.${ENABLED}`;
}

/**
 * The setting a flat key names, or undefined. A zone's or line's name is everything between the
 * first `zones.` (or `lines.`) and the last `.enabled`: `zones.a.enabled.enabled` is the zone
 * `a.enabled`, so every name round-trips.
 */
export function parseSettingKey(key: string): SettingRef | undefined {
  if (isCameraKey(key)) return { kind: 'camera', key };
  for (const kind of ['zones', 'lines'] as const) {
    const head = `${kind}.`;
    const tail = `.${ENABLED}`;
    if (key.length > head.length + tail.length && key.startsWith(head) && key.endsWith(tail))
      return { kind, name: key.slice(head.length, -tail.length) };
  }
  return undefined;
}

/** The topic levels (or path segments) after `cameras/<camera>/`: `['zones', 'front.door', 'enabled']`. */
export function controlLevels(ref: ControlRef): string[] {
  if (ref.kind === 'camera') return [ref.key];
  if (ref.kind === 'reset') return ['lines', ref.line, RESET];
  if (ref.kind === 'relearn') return [HEALTH, RESET];
  return [ref.kind, ref.name, ENABLED];
}

/** What the levels after `cameras/<camera>/` name, or undefined for none (an empty name too). */
export function parseControlLevels(levels: readonly string[]): ControlRef | undefined {
  const [a, name, end] = levels;
  if (levels.length === 1 && a !== undefined && isCameraKey(a)) return { kind: 'camera', key: a };
  if (levels.length === 2 && a === HEALTH && name === RESET) return { kind: 'relearn' };
  if (levels.length !== 3 || !name) return undefined;
  if ((a === 'zones' || a === 'lines') && end === ENABLED) return { kind: a, name };
  if (a === 'lines' && end === RESET) return { kind: 'reset', line: name };
  return undefined;
}

/**
 * A setting's path under `/api/control`: `/cameras/<camera>/` then its levels, each
 * percent-encoded (`/cameras/gate/zones/front.door/enabled`; a space is `%20`).
 */
export function controlPath(camera: string, ref: ControlRef): string {
  return ['', 'cameras', camera, ...controlLevels(ref)].map(encodeURIComponent).join('/');
}

/**
 * What the decoded segments after `/api/control/cameras/<camera>/` name: its levels
 * (`zones/front.door/enabled`, `lines/gate/reset`), or one segment holding a flat key
 * (`zones.front.door.enabled`, as `GET /api/control` lists them), `health/reset`; undefined for none.
 */
export function parseControlPath(segments: readonly string[]): ControlRef | undefined {
  if (segments.length === 1) return parseSettingKey(segments[0]!);
  return parseControlLevels(segments);
}
