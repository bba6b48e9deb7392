import { createHash } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, extname, isAbsolute, join, resolve } from 'node:path';

/**
 * Where the state directory came from: systemd's `$STATE_DIRECTORY`, the config's `state_dir`,
 * the config's own default directory, or the directory every config shared before each had its
 * own (`legacy`, kept for the config whose state it holds: legacy.ts).
 */
export type StateDirSource = 'systemd' | 'config' | 'default' | 'legacy';

/** `$XDG_STATE_HOME` when it is an absolute path, else `~/.local/state`. */
export function stateHome(env: NodeJS.ProcessEnv): string {
  const xdg = env.XDG_STATE_HOME;
  return xdg && isAbsolute(xdg) ? xdg : join(homedir(), '.local', 'state');
}

/** The directory every config without `state_dir` shared before each had its own: `<state home>/argus`. */
export function sharedStateDir(env: NodeJS.ProcessEnv): string {
  return join(stateHome(env), 'argus');
}

/** The most characters of the config file's name kept in its directory's name. */
const MAX_NAME = 40;

/**
 * The name of a config's own state directory: the config file's name without `.yaml`/`.yml`
 * (characters other than letters, digits, `.`, `_` and `-` made `_`, at most 40), a dash, and the
 * first 8 hex digits of the SHA-256 of its real path (`/etc/argus/argus.yaml` →
 * `argus-1f0c3a9b`): two files of one name in two folders get two directories, and the name
 * says which file it is for.
 */
export function configStateName(realConfigPath: string): string {
  const file = basename(realConfigPath);
  const ext = extname(file).toLowerCase();
  const stem = ext === '.yaml' || ext === '.yml' ? file.slice(0, -ext.length) : file;
  const name =
    stem
      .replace(/[^A-Za-z0-9._-]/g, '_')
      .replace(/^\.+/, '')
      .slice(0, MAX_NAME) || 'config';
  const hash = createHash('sha256').update(realConfigPath).digest('hex').slice(0, 8);
  return `${name}-${hash}`;
}

/**
 * The config file's real path (links resolved), which names its state directory and which the
 * state directory's lock and owner record hold; its absolute path when it cannot be resolved
 * (a file not on disk: tests, `parseConfig` of text).
 */
export function realConfigPath(file: string): string {
  try {
    return realpathSync.native(file);
  } catch {
    return resolve(file);
  }
}

/**
 * Where Argus keeps what must survive a restart (line counts, the event history, control.json,
 * TensorRT engines, the clips' ring): systemd's `$STATE_DIRECTORY` when the unit sets
 * `StateDirectory=argus` (the first path when it lists several), else the config's `state_dir`
 * (relative to the config file), else the config's own directory in `$XDG_STATE_HOME/argus`
 * (i.e. `~/.local/state/argus/<name>-<hash>`, `configStateName`). Which of the last two a
 * config that used the shared `~/.local/state/argus` keeps is legacy.ts's to say.
 */
export function resolveStateDir(
  configured: string | undefined,
  env: NodeJS.ProcessEnv,
  base: string,
  realConfig: string,
): { dir: string; from: StateDirSource } {
  const systemd = env.STATE_DIRECTORY?.split(':')[0];
  if (systemd) return { dir: resolve(systemd), from: 'systemd' };
  if (configured)
    return { dir: isAbsolute(configured) ? configured : resolve(base, configured), from: 'config' };
  return { dir: join(sharedStateDir(env), configStateName(realConfig)), from: 'default' };
}
