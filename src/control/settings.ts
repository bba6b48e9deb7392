import { z } from 'zod';
import { cameraSettings, NO_MODE, type CameraConfig, type Config } from '../config/index.js';
import { namedRecord, own } from '../core/names.js';
import {
  NUMBERS,
  parseSettingKey,
  settingKey,
  SWITCHES,
  type SettingKey,
  type SettingRef,
} from '../core/setting-keys.js';

/**
 * The camera settings that can be changed at run time, as plain logic (their names, and the one
 * codec of their keys, topics and paths, are core/setting-keys.ts): how a value
 * is read from and written into a camera's config, and how the file, the active mode and the
 * runtime changes make the cameras that run.
 */

export type SettingValue = boolean | number;

/** A runtime change: its value, and the value file and mode gave the key when it was made. */
export interface Override {
  value: SettingValue;
  base: SettingValue;
}

/** What lasts across restarts (control.json): the active mode and the runtime changes. */
export interface ControlState {
  mode: string;
  /** By camera, then by setting key. */
  overrides: Record<string, Record<string, Override>>;
}

/**
 * A change asked for at run time: a camera setting, the mode, a line's counts back to 0, a
 * camera's health references learnt again.
 */
export type ChangeRequest =
  | { kind: 'set'; camera: string; key: string; value: unknown }
  | { kind: 'mode'; mode: string }
  | { kind: 'reset'; camera: string; line: string }
  | { kind: 'relearn'; camera: string };

export const emptyState = (): ControlState => ({ mode: NO_MODE, overrides: namedRecord() });

/** A setting's value in a camera's config; undefined when the camera has no such zone or line. */
export function readSetting(cam: CameraConfig, ref: SettingRef): SettingValue | undefined {
  if (ref.kind === 'camera') return cam[ref.key];
  return own<{ enabled: boolean }>(cam[ref.kind], ref.name)?.enabled;
}

/** The key's value in a camera's config; undefined when the camera has no such key (a zone gone). */
export function readKey(cam: CameraConfig, key: string): SettingValue | undefined {
  const ref = parseSettingKey(key);
  return ref && readSetting(cam, ref);
}

/** A copy of the camera with the setting set (the config objects are never changed in place). */
export function writeSetting(cam: CameraConfig, ref: SettingRef, value: SettingValue): CameraConfig {
  if (ref.kind === 'camera') return { ...cam, [ref.key]: value };
  const areas = Object.assign(namedRecord<never>(), cam[ref.kind]) as Record<string, { enabled: boolean }>;
  const old = areas[ref.name];
  if (!old) return cam;
  areas[ref.name] = { ...old, enabled: value as boolean };
  return { ...cam, [ref.kind]: areas };
}

/** A copy of the camera with the key set; the camera itself for a key that is no setting. */
export function writeKey(cam: CameraConfig, key: string, value: SettingValue): CameraConfig {
  const ref = parseSettingKey(key);
  return ref ? writeSetting(cam, ref, value) : cam;
}

/** Every setting a camera has, in a stable order: its switches, numbers, zones, lines. */
export function settingsOf(cam: CameraConfig): SettingRef[] {
  return [
    ...[...SWITCHES, ...NUMBERS].map((key) => ({ kind: 'camera', key }) as const),
    ...Object.keys(cam.zones).map((name) => ({ kind: 'zones', name }) as const),
    ...Object.keys(cam.lines).map((name) => ({ kind: 'lines', name }) as const),
  ];
}

/** Every setting key a camera has, in a stable order. */
export const keysOf = (cam: CameraConfig): SettingKey[] => settingsOf(cam).map(settingKey);

/**
 * The one range of a setting, by its key: the schema's own (`cameraSettings`, which the file and
 * the modes use too), a switch for a zone's or line's `enabled`; undefined for no setting at all.
 */
export function settingSchema(key: string): z.ZodBoolean | z.ZodNumber | undefined {
  const ref = parseSettingKey(key);
  if (!ref) return undefined;
  return ref.kind === 'camera' ? cameraSettings[ref.key] : z.boolean();
}

/** What a key takes, read from its schema: `ON or OFF`, `a number from 0.1 to 60`. */
export function rangeOf(schema: z.ZodBoolean | z.ZodNumber): string {
  if (schema instanceof z.ZodBoolean) return 'ON or OFF (true or false in JSON)';
  return `${schema.isInt ? 'a whole number' : 'a number'} from ${schema.minValue} to ${schema.maxValue}`;
}

/** A number as a control topic's payload may write it: decimal, with an exponent at most (no `0x10`). */
const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

/**
 * A value for a key, from a control topic's payload (`ON`/`OFF`, a number as text) or a JSON
 * body (true/false, a number): the value, or what is wrong with it.
 */
export function parseValue(
  cam: CameraConfig,
  key: string,
  raw: unknown,
): { value: SettingValue } | { error: string } {
  const schema = settingSchema(key);
  if (readKey(cam, key) === undefined || !schema) return { error: `no setting '${key}'` };
  let value = raw;
  if (typeof raw === 'string') {
    const text = raw.trim();
    const word = text.toUpperCase();
    if (schema instanceof z.ZodBoolean) value = word === 'ON' ? true : word === 'OFF' ? false : raw;
    else value = DECIMAL.test(text) ? Number(text) : raw;
  }
  const parsed = schema.safeParse(value);
  return parsed.success ? { value: parsed.data } : { error: `${key} takes ${rangeOf(schema)}` };
}

/** A runtime change kept in control.json that its key's range refuses (an edited or older file). */
export interface StoredProblem {
  camera: string;
  key: string;
  value: unknown;
  error: string;
}

/**
 * The state read from control.json less the changes no setting's range takes (`fps` -5 or
 * `true`, `detect` 7, a key that is no setting): each is dropped, so the file ⊕ mode value runs.
 */
export function checkStored(state: ControlState): { state: ControlState; problems: StoredProblem[] } {
  const overrides = namedRecord<Record<string, Override>>();
  const problems: StoredProblem[] = [];
  for (const [camera, keys] of Object.entries(state.overrides)) {
    const kept = namedRecord<Override>();
    for (const [key, o] of Object.entries(keys)) {
      const schema = settingSchema(key);
      if (!schema) problems.push({ camera, key, value: o.value, error: `no setting '${key}'` });
      else if (!schema.safeParse(o.value).success)
        problems.push({ camera, key, value: o.value, error: `${key} takes ${rangeOf(schema)}` });
      else kept[key] = o;
    }
    if (Object.keys(kept).length) overrides[camera] = kept;
  }
  return { state: { mode: state.mode, overrides }, problems };
}

/** The cameras of the file with a mode's settings on them (`none`: the file's). */
export function withMode(
  config: Pick<Config, 'cameras' | 'modes'>,
  mode: string,
): Record<string, CameraConfig> {
  const m = own(config.modes, mode);
  if (!m) return config.cameras;
  const out = namedRecord<CameraConfig>();
  for (const [name, file] of Object.entries(config.cameras)) {
    let cam = file;
    const sw = own(m.cameras, name);
    if (sw) {
      for (const key of [...SWITCHES, ...NUMBERS])
        if (sw[key] !== undefined) cam = writeSetting(cam, { kind: 'camera', key }, sw[key]);
      for (const kind of ['zones', 'lines'] as const)
        for (const [name, { enabled }] of Object.entries(sw[kind]))
          cam = writeSetting(cam, { kind, name }, enabled);
    }
    out[name] = cam;
  }
  return out;
}

/**
 * The cameras that run: the file's, with the active mode on them, then the runtime changes. A
 * change whose base (what file and mode gave its key when it was made) is no longer what they
 * give is dropped: the file (or the mode) was changed since, and the new value wins. Returns the
 * state as it holds now (a mode the file no longer has is left too).
 */
export function effectiveCameras(
  config: Pick<Config, 'cameras' | 'modes'>,
  state: ControlState,
): { cameras: Record<string, CameraConfig>; state: ControlState; dropped: string[] } {
  const mode = own(config.modes, state.mode) ? state.mode : NO_MODE;
  const base = withMode(config, mode);
  const cameras = namedRecord<CameraConfig>();
  const overrides = namedRecord<Record<string, Override>>();
  const dropped: string[] = [];
  for (const [name, cam] of Object.entries(base)) {
    let c = cam;
    for (const [key, o] of Object.entries(own(state.overrides, name) ?? {})) {
      if (readKey(cam, key) !== o.base) {
        dropped.push(`${name}.${key}`);
        continue;
      }
      (overrides[name] ??= namedRecord())[key] = o;
      c = writeKey(c, key, o.value);
    }
    cameras[name] = c;
  }
  for (const [name, keys] of Object.entries(state.overrides))
    if (!own(base, name)) dropped.push(...Object.keys(keys).map((k) => `${name}.${k}`));
  return { cameras, state: { mode, overrides }, dropped };
}
