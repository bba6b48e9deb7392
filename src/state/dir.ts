import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';

/**
 * Where Argus keeps what must survive a restart (line counts; later the event history):
 * systemd's `$STATE_DIRECTORY` when the unit sets `StateDirectory=argus` (the first path when it
 * lists several), else the config's `state_dir` (relative to the config file), else
 * `$XDG_STATE_HOME/argus`, i.e. `~/.local/state/argus`.
 */
export function resolveStateDir(
  configured: string | undefined,
  env: NodeJS.ProcessEnv,
  base: string,
): { dir: string; from: 'systemd' | 'config' | 'default' } {
  const systemd = env.STATE_DIRECTORY?.split(':')[0];
  if (systemd) return { dir: resolve(systemd), from: 'systemd' };
  if (configured)
    return { dir: isAbsolute(configured) ? configured : resolve(base, configured), from: 'config' };
  const xdg =
    env.XDG_STATE_HOME && isAbsolute(env.XDG_STATE_HOME)
      ? env.XDG_STATE_HOME
      : join(homedir(), '.local', 'state');
  return { dir: join(xdg, 'argus'), from: 'default' };
}
