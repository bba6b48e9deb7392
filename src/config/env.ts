import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { namedRecord } from '../core/names.js';
import type { Found, PathKey } from './issues.js';

/**
 * Drops keys whose value is null and replaces `${NAME}` with the environment variable NAME in every string value; `$${` is a
 * literal `${`. Adds every value it substituted to `substituted`: each is a secret.
 */
export function substituteEnv(
  value: unknown,
  env: NodeJS.ProcessEnv,
  path: PathKey[],
  issues: Found[],
  substituted: string[],
): unknown {
  if (typeof value === 'string') {
    return value.replace(/\$(\$?)\{([^}]*)\}/g, (whole, escape: string, name: string) => {
      if (escape) return whole.slice(1);
      const credential = /^credential:([A-Za-z0-9_.-]+)$/.exec(name);
      if (credential) {
        // A systemd credential (LoadCredential=), read from $CREDENTIALS_DIRECTORY.
        const dir = env.CREDENTIALS_DIRECTORY;
        if (!dir) {
          issues.push({
            path,
            message: `'\${${name}}' needs a systemd credential, but CREDENTIALS_DIRECTORY is not set`,
          });
          return '';
        }
        try {
          const v = readFileSync(join(dir, credential[1]!), 'utf8').replace(/\r?\n$/, '');
          substituted.push(v);
          return v;
        } catch {
          issues.push({
            path,
            message: `systemd credential ${credential[1]!} cannot be read from CREDENTIALS_DIRECTORY`,
          });
          return '';
        }
      }
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
        issues.push({ path, message: `'\${${name}}' is not a valid environment variable reference` });
        return '';
      }
      const v = env[name];
      if (v === undefined) {
        issues.push({ path, message: `environment variable ${name} is not set` });
        return '';
      }
      substituted.push(v);
      return v;
    });
  }
  if (Array.isArray(value))
    return value.map((v, i) => substituteEnv(v, env, [...path, i], issues, substituted));
  if (value && typeof value === 'object') {
    // No prototype: a key such as `__proto__` is kept as the user's name, not taken as a setter.
    const out = namedRecord<unknown>();
    for (const [k, v] of Object.entries(value)) {
      // `key:` with nothing after it means "not set", as in a section whose keys are all commented out.
      if (v !== null) out[k] = substituteEnv(v, env, [...path, k], issues, substituted);
    }
    return out;
  }
  return value;
}
