import { readFile, stat } from 'node:fs/promises';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import { errorMessage } from '../core/errors.js';
import { scrub } from '../redact.js';
import {
  chooseDefaultDir,
  realConfigPath,
  resolveStateDir,
  sharedStateDir,
  type StateDirSource,
} from '../state/index.js';
import { substituteEnv } from './env.js';
import { ConfigError, dottedPath, zodIssues, type Found, type PathKey } from './issues.js';
import { COCO, untrackedLabels } from './labels.js';
import { configSchema, type Config } from './schema.js';
import {
  duplicateKeys,
  firstAliasLine,
  lineOf,
  MAX_ALIASES,
  MAX_DEPTH,
  MAX_NODES,
  tooDeep,
  tooManyNodes,
} from './yaml.js';

export interface LoadedConfig {
  file: string;
  config: Config;
  /**
   * Secret values, for `scrub()`: every value substituted for a `${NAME}` or
   * `${credential:NAME}`, and the passwords of `mqtt` and of the camera and broker URLs.
   */
  secrets: string[];
  /**
   * The line of the key at `path` in the file (`['cameras', 'gate', 'fps']`; `atKey`: of the key
   * itself, not its value), or undefined when the file does not have it: for checks made after
   * loading (`argus validate`'s model and label checks), whose errors name a line too.
   */
  lineOf(path: readonly PathKey[], atKey?: boolean): number | undefined;
  /**
   * Where `config.state_dir` came from, and the config file's real path (which names its own
   * state directory, and which the directory's lock and owner record hold). Absent in a
   * LoadedConfig made by hand (tests).
   */
  state?: { from: StateDirSource; config: string };
}

export interface LoadOptions {
  /**
   * Who says which zones' and lines' labels the cameras do not track (`labels.ts`,
   * `untrackedLabels`): `coco` (the default), the loader, judging typos by the COCO names;
   * `models`, the caller, once it knows each model's labels (`vouchFor`) — the loader then says so
   * only for a file it refuses anyway, so that every problem is still reported at once.
   */
  tracked?: 'coco' | 'models';
}

/** Zones' and lines' labels that no camera's `objects.track` lists, in the file's data (any shape). */
function untrackedIn(data: unknown): Found[] {
  const cameras = data && typeof data === 'object' ? (data as Record<string, unknown>).cameras : undefined;
  if (!cameras || typeof cameras !== 'object' || Array.isArray(cameras)) return [];
  return Object.entries(cameras as Record<string, unknown>).flatMap(([name, cam]) =>
    untrackedLabels(cam, COCO).map((f) => ({ ...f, path: ['cameras', name, ...f.path] })),
  );
}

/** The largest config file read (docs/config.md, "Limits"): bigger files are refused unread. */
export const MAX_CONFIG_BYTES = 4 * 1024 * 1024;

/** Parses and validates config text. Throws ConfigError listing every problem at once. */
export function parseConfig(
  text: string,
  file: string,
  env: NodeJS.ProcessEnv = process.env,
  opts: LoadOptions = {},
): LoadedConfig {
  if (Buffer.byteLength(text) > MAX_CONFIG_BYTES)
    throw new ConfigError(file, [{ path: '', message: tooBig(Buffer.byteLength(text)) }]);
  const many = tooManyNodes(text);
  if (many)
    throw new ConfigError(file, [
      {
        path: '',
        line: many.line,
        message: `YAML: the file holds more than ${MAX_NODES} keys, values and list items (docs/config.md, "Limits")`,
      },
    ]);
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc, prettyErrors: false, uniqueKeys: false });
  const deep = tooDeep(doc, lc);
  if (deep)
    throw new ConfigError(file, [
      { path: '', line: deep.line, message: `YAML: nested more than ${MAX_DEPTH} levels deep` },
    ]);
  const yamlIssues = [
    ...doc.errors.map((e) => ({
      path: '',
      line: lc.linePos(e.pos[0]).line,
      message: `YAML: ${e.message.split('\n')[0] ?? ''}`,
    })),
    ...duplicateKeys(doc, lc),
  ];
  if (yamlIssues.length)
    throw new ConfigError(
      file,
      yamlIssues.sort((a, b) => a.line! - b.line!),
    );
  let raw: unknown;
  try {
    raw = doc.toJS({ maxAliasCount: MAX_ALIASES });
  } catch (err) {
    // The yaml library throws (a ReferenceError) for an alias bomb and an alias before its anchor.
    const message = errorMessage(err);
    const bomb = /excessive alias count/i.test(message);
    throw new ConfigError(file, [
      {
        path: '',
        line: firstAliasLine(doc, lc),
        message: bomb
          ? `YAML: its aliases (*name) expand to more than ${MAX_ALIASES} copies; write the values out, or use fewer aliases`
          : `YAML: ${message}`,
      },
    ]);
  }
  if (raw === null || raw === undefined)
    throw new ConfigError(file, [{ path: '', message: 'the file is empty' }]);
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    throw new ConfigError(file, [
      { path: '', line: 1, message: 'the top level must be a mapping of sections' },
    ]);
  }
  const envIssues: Found[] = [];
  const substituted: string[] = [];
  const data = substituteEnv(raw, env, [], envIssues, substituted);
  const result = configSchema.safeParse(data);
  const untracked = result.success && opts.tracked === 'models' ? [] : untrackedIn(data);
  const found = [...envIssues, ...(result.success ? [] : zodIssues(result.error, data)), ...untracked];
  if (found.length || !result.success) {
    const issues = found
      .map((i) => ({
        path: dottedPath(i.path),
        line: lineOf(doc, lc, i.path, i.atKey),
        message: scrub(i.message, substituted),
      }))
      .sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
    throw new ConfigError(file, issues);
  }
  const config = result.data;
  const base = dirname(resolve(file));
  const abs = (p: string): string => (isAbsolute(p) ? p : resolve(base, p));
  for (const m of Object.values(config.models)) {
    if (m.path) m.path = abs(m.path);
    if (m.labels) m.labels = abs(m.labels);
    if (m.remote?.ca) m.remote.ca = abs(m.remote.ca);
  }
  const realConfig = realConfigPath(file);
  const state = resolveStateDir(config.state_dir, env, base, realConfig);
  config.state_dir = state.dir;
  config.events.clips.ring_dir = config.events.clips.ring_dir
    ? abs(config.events.clips.ring_dir)
    : join(config.state_dir, 'ring');
  if (config.mqtt.tls) {
    for (const k of ['ca', 'cert', 'key'] as const) {
      const p = config.mqtt.tls[k];
      if (p) config.mqtt.tls[k] = abs(p);
    }
  }
  if (config.fleet?.tls) {
    for (const k of ['ca', 'cert', 'key'] as const) {
      const p = config.fleet.tls[k];
      if (p) config.fleet.tls[k] = abs(p);
    }
  }
  const secrets = new Set(substituted);
  if (config.fleet?.password) secrets.add(config.fleet.password);
  if (config.mqtt.password) secrets.add(config.mqtt.password);
  if (config.mqtt.embedded.password) secrets.add(config.mqtt.embedded.password);
  if (config.http.token) secrets.add(config.http.token);
  const remotes = Object.values(config.models).flatMap((m) => (m.remote ? [m.remote] : []));
  // A header (an Authorization token) is a secret even when written in the file.
  for (const r of remotes) for (const v of Object.values<string>(r.headers)) secrets.add(v);
  const urls = [
    config.mqtt.url,
    ...Object.values(config.cameras).map((c) => c.url),
    ...remotes.map((r) => r.url),
  ];
  for (const url of urls) {
    const pw = url === undefined ? '' : new URL(url).password;
    if (pw) secrets.add(decoded(pw));
  }
  secrets.delete('');
  return {
    file,
    config,
    secrets: [...secrets],
    lineOf: (path, atKey = false) => lineOf(doc, lc, path, atKey, true),
    state: { from: state.from, config: realConfig },
  };
}

/** A URL's percent-encoded part, decoded; as it is when it is not valid percent-encoding. */
function decoded(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

const tooBig = (bytes: number): string =>
  `the file is ${(bytes / 1048576).toFixed(1)} MiB; a config may be at most ${MAX_CONFIG_BYTES / 1048576} MiB (docs/config.md, "Limits")`;

export async function loadConfig(
  file: string,
  env: NodeJS.ProcessEnv = process.env,
  opts: LoadOptions = {},
): Promise<LoadedConfig> {
  let text: string;
  try {
    const size = (await stat(file)).size;
    if (size > MAX_CONFIG_BYTES) throw new ConfigError(file, [{ path: '', message: tooBig(size) }]);
    text = await readFile(file, 'utf8');
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EACCES'
          ? 'permission denied'
          : code === 'EISDIR'
            ? 'it is a directory'
            : String(code);
    throw new ConfigError(file, [{ path: '', message: `cannot read the config file (${why})` }]);
  }
  return withDefaultStateDir(parseConfig(text, file, env, opts), env);
}

/**
 * A config without `state_dir` (and without `$STATE_DIRECTORY`) keeps the directory every config
 * shared before each had its own when that one holds its state (state/legacy.ts): `state_dir`,
 * and the clips' ring in it, set to that one.
 */
async function withDefaultStateDir(loaded: LoadedConfig, env: NodeJS.ProcessEnv): Promise<LoadedConfig> {
  const { config, state } = loaded;
  if (state?.from !== 'default') return loaded;
  const own = config.state_dir!;
  const chosen = await chooseDefaultDir(own, sharedStateDir(env), state.config, Object.keys(config.cameras));
  if (chosen.dir === own) return loaded;
  config.state_dir = chosen.dir;
  const clips = config.events.clips;
  if (clips.ring_dir === join(own, 'ring')) clips.ring_dir = join(chosen.dir, 'ring');
  return { ...loaded, state: { ...state, from: chosen.from } };
}
