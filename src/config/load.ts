import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, type Document, type Node } from 'yaml';
import type { z } from 'zod';
import { redactUrl, scrub } from '../redact.js';
import { resolveStateDir } from '../state/index.js';
import { configSchema, type Config } from './schema.js';

export interface ConfigIssue {
  /** Dotted path inside the file, e.g. `cameras.front.fps`; empty for the whole file. */
  path: string;
  line?: number;
  message: string;
}

export class ConfigError extends Error {
  constructor(
    readonly file: string,
    readonly issues: ConfigIssue[],
  ) {
    super(`${file}: ${issues.length} configuration error${issues.length === 1 ? '' : 's'}`);
  }

  /** One line per issue, `file:line: path: message`. */
  format(): string {
    return this.issues
      .map((i) => `${this.file}${i.line ? `:${i.line}` : ''}: ${i.path ? `${i.path}: ` : ''}${i.message}`)
      .join('\n');
  }
}

export interface LoadedConfig {
  file: string;
  config: Config;
  /**
   * Secret values, for `scrub()`: every value substituted for a `${NAME}` or
   * `${credential:NAME}`, and the passwords of `mqtt` and of the camera and broker URLs.
   */
  secrets: string[];
}

type PathKey = string | number;
interface Found {
  path: PathKey[];
  message: string;
  /** Point at the key itself rather than its value. */
  atKey?: boolean;
}

/** The line of the node at `path`, or of its nearest ancestor that exists. */
function lineOf(doc: Document, lc: LineCounter, path: readonly PathKey[], atKey = false): number | undefined {
  let node: Node | null | undefined = doc.contents;
  let line = node?.range ? lc.linePos(node.range[0]).line : undefined;
  for (const [depth, key] of path.entries()) {
    if (isMap(node)) {
      const pair = node.items.find(
        (p) => isPair(p) && isScalar(p.key) && String(p.key.value) === String(key),
      );
      if (!pair) break;
      const keyNode = pair.key as Node;
      if (keyNode.range) line = lc.linePos(keyNode.range[0]).line;
      if (atKey && depth === path.length - 1) break;
      node = pair.value as Node | null;
      if (node?.range) line = lc.linePos(node.range[0]).line;
    } else if (isSeq(node) && typeof key === 'number') {
      node = node.items[key] as Node | undefined;
      if (!node) break;
      if (node.range) line = lc.linePos(node.range[0]).line;
    } else break;
  }
  return line;
}

const dotted = (path: readonly PathKey[]): string =>
  path.map((p, i) => (typeof p === 'number' ? `[${p}]` : `${i ? '.' : ''}${p}`)).join('');

/**
 * Drops keys whose value is null and replaces `${NAME}` with the environment variable NAME in every string value; `$${` is a
 * literal `${`. Adds every value it substituted to `substituted`: each is a secret.
 */
function substituteEnv(
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
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      // `key:` with nothing after it means "not set", as in a section whose keys are all commented out.
      if (v !== null) out[k] = substituteEnv(v, env, [...path, k], issues, substituted);
    }
    return out;
  }
  return value;
}

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a mapping';
  return `a ${typeof v}`;
}

function valueAt(data: unknown, path: readonly PathKey[]): unknown {
  let v = data;
  for (const k of path) v = v && typeof v === 'object' ? (v as Record<PathKey, unknown>)[k] : undefined;
  return v;
}

function expectedName(expected: string): string {
  const names: Record<string, string> = {
    object: 'a mapping',
    record: 'a mapping',
    array: 'a list',
    tuple: 'a pair [x, y]',
  };
  return names[expected] ?? `a ${expected}`;
}

/** A plain-English message for one zod issue. */
function describe(issue: z.core.$ZodIssue, value: unknown): string {
  const unit = (origin: string): string =>
    origin === 'array' ? ' items' : origin === 'string' ? ' characters' : origin === 'set' ? ' items' : '';
  switch (issue.code) {
    case 'invalid_type':
      return value === undefined
        ? 'is required'
        : `must be ${expectedName(issue.expected)}, not ${typeName(value)}`;
    case 'too_big': {
      const u = unit(issue.origin);
      return u
        ? `must have at most ${issue.maximum}${u}`
        : `must be ${issue.inclusive ? 'at most' : 'less than'} ${issue.maximum}`;
    }
    case 'too_small': {
      const u = unit(issue.origin);
      return u
        ? `must have at least ${issue.minimum}${u}`
        : `must be ${issue.inclusive ? 'at least' : 'greater than'} ${issue.minimum}`;
    }
    case 'not_multiple_of':
      return `must be a multiple of ${issue.divisor}`;
    case 'invalid_value':
      return `must be one of ${issue.values.map((v) => String(v)).join(', ')}`;
    case 'invalid_key':
      return `name ${issue.issues.map((i) => i.message).join('; ')}`;
    default:
      return redactUrl(issue.message);
  }
}

function zodIssues(error: z.ZodError, data: unknown): Found[] {
  const out: Found[] = [];
  for (const issue of error.issues) {
    const path = issue.path.filter((p): p is PathKey => typeof p !== 'symbol');
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) out.push({ path: [...path, key], message: 'unknown key', atKey: true });
    } else {
      const atKey =
        issue.code === 'invalid_key' ||
        (issue.code === 'custom' && (issue.params as { atKey?: boolean } | undefined)?.atKey === true);
      out.push({ path, message: describe(issue, valueAt(data, path)), atKey });
    }
  }
  return out;
}

/** Parses and validates config text. Throws ConfigError listing every problem at once. */
export function parseConfig(text: string, file: string, env: NodeJS.ProcessEnv = process.env): LoadedConfig {
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length) {
    throw new ConfigError(
      file,
      doc.errors.map((e) => ({
        path: '',
        line: lc.linePos(e.pos[0]).line,
        message: `YAML: ${e.message.split('\n')[0] ?? ''}`,
      })),
    );
  }
  const raw: unknown = doc.toJS();
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
  const found = [...envIssues, ...(result.success ? [] : zodIssues(result.error, data))];
  if (found.length || !result.success) {
    const issues = found
      .map((i) => ({
        path: dotted(i.path),
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
  config.state_dir = resolveStateDir(config.state_dir, env, base).dir;
  if (config.mqtt.tls) {
    for (const k of ['ca', 'cert', 'key'] as const) {
      const p = config.mqtt.tls[k];
      if (p) config.mqtt.tls[k] = abs(p);
    }
  }
  const secrets = new Set(substituted);
  if (config.mqtt.password) secrets.add(config.mqtt.password);
  if (config.mqtt.embedded.password) secrets.add(config.mqtt.embedded.password);
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
  return { file, config, secrets: [...secrets] };
}

/** A URL's percent-encoded part, decoded; as it is when it is not valid percent-encoding. */
function decoded(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

export async function loadConfig(file: string, env: NodeJS.ProcessEnv = process.env): Promise<LoadedConfig> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : String(code);
    throw new ConfigError(file, [{ path: '', message: `cannot read the config file (${why})` }]);
  }
  return parseConfig(text, file, env);
}
