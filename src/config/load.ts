import { readFileSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import {
  CST,
  isAlias,
  Lexer,
  isMap,
  isPair,
  isScalar,
  isSeq,
  LineCounter,
  parseDocument,
  visit,
  type Document,
  type Node,
  type Pair,
  type YAMLMap,
} from 'yaml';
import type { z } from 'zod';
import { errorMessage } from '../core/errors.js';
import { namedRecord } from '../core/names.js';
import { redactUrl, scrub } from '../redact.js';
import { resolveStateDir } from '../state/index.js';
import { configSchema, type Config } from './schema.js';

export type PathKey = string | number;

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
  /**
   * The line of the key at `path` in the file (`['cameras', 'gate', 'fps']`; `atKey`: of the key
   * itself, not its value), or undefined when the file does not have it: for checks made after
   * loading (`argus validate`'s model and label checks), whose errors name a line too.
   */
  lineOf(path: readonly PathKey[], atKey?: boolean): number | undefined;
}

interface Found {
  path: PathKey[];
  message: string;
  /** Point at the key itself rather than its value. */
  atKey?: boolean;
}

/** The largest config file read (docs/config.md, "Limits"): bigger files are refused unread. */
export const MAX_CONFIG_BYTES = 4 * 1024 * 1024;
/** YAML aliases resolved at most (each counted once per use, as the yaml library counts them). */
const MAX_ALIASES = 100;

/**
 * The most YAML nodes (keys, values, lists, mappings, list items) a file may hold (docs/config.md,
 * "Limits"): a thousand cameras take about 20,000. The YAML parser keeps some 1.5 KB for each, so
 * a 100,000-point mask cost 500 MB to refuse (at this limit, about 150 MB); they are counted first, by the lexer, which keeps
 * nothing.
 */
export const MAX_NODES = 50_000;

/** The token types of the lexer that each begin a node. */
const NODE_TOKENS = new Set<string | null>([
  'scalar',
  'single-quoted-scalar',
  'double-quoted-scalar',
  'flow-seq-start',
  'flow-map-start',
  'seq-item-ind',
  'alias',
]);

/** The lexer's markers, which stand for no text of the file. */
const MARKERS = new Set([CST.DOCUMENT, CST.FLOW_END, CST.SCALAR]);

/** The line where the file's nodes pass MAX_NODES, or undefined while they do not. */
function tooManyNodes(text: string): { line: number } | undefined {
  let nodes = 0;
  let offset = 0;
  for (const token of new Lexer().lex(text)) {
    if (NODE_TOKENS.has(CST.tokenType(token)) && ++nodes > MAX_NODES) {
      let line = 1;
      for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) line++;
      return { line };
    }
    if (!MARKERS.has(token)) offset += token.length;
  }
  return undefined;
}

/** Mappings and lists inside one another at most this deep (a config needs about 8). */
const MAX_DEPTH = 64;

/**
 * Where the document nests deeper than MAX_DEPTH, or undefined when it does not. Walked with a stack of
 * its own: the yaml library's recursive walks overflow Node's stack on a deep enough file.
 */
function tooDeep(doc: Document, lc: LineCounter): { line?: number } | undefined {
  const stack: [unknown, number][] = [[doc.contents, 0]];
  while (stack.length) {
    const [node, depth] = stack.pop()!;
    if (!isMap(node) && !isSeq(node)) continue;
    if (depth >= MAX_DEPTH) return { line: node.range ? lc.linePos(node.range[0]).line : undefined };
    for (const item of node.items)
      if (isPair(item)) stack.push([item.key, depth + 1], [item.value, depth + 1]);
      else stack.push([item, depth + 1]);
  }
  return undefined;
}

/** A mapping's pairs by key, built once per mapping so that locating n issues stays linear. */
const pairsByKey = new WeakMap<YAMLMap, Map<string, Pair>>();
function pairOf(map: YAMLMap, key: PathKey): Pair | undefined {
  let index = pairsByKey.get(map);
  if (!index) {
    index = new Map();
    for (const p of map.items) if (isPair(p) && isScalar(p.key)) index.set(String(p.key.value), p);
    pairsByKey.set(map, index);
  }
  return index.get(String(key));
}

/** The line of the node at `path`, or of its nearest ancestor that exists (`exact`: or undefined). */
function lineOf(
  doc: Document,
  lc: LineCounter,
  path: readonly PathKey[],
  atKey = false,
  exact = false,
): number | undefined {
  let node: Node | null | undefined = doc.contents;
  let line = node?.range ? lc.linePos(node.range[0]).line : undefined;
  for (const [depth, key] of path.entries()) {
    if (isMap(node)) {
      const pair = pairOf(node, key);
      if (!pair) return exact ? undefined : line;
      const keyNode = pair.key as Node;
      if (keyNode.range) line = lc.linePos(keyNode.range[0]).line;
      if (atKey && depth === path.length - 1) break;
      node = pair.value as Node | null;
      if (node?.range) line = lc.linePos(node.range[0]).line;
    } else if (isSeq(node) && typeof key === 'number') {
      node = node.items[key] as Node | undefined;
      if (!node) return exact ? undefined : line;
      if (node.range) line = lc.linePos(node.range[0]).line;
    } else return exact ? undefined : line;
  }
  return line;
}

/**
 * Keys given twice in one mapping, found with one set per mapping: the yaml library's own
 * `uniqueKeys` compares each key with every earlier one, which takes minutes for 100,000 cameras.
 */
function duplicateKeys(doc: Document, lc: LineCounter): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  visit(doc, {
    Map(_, map) {
      const seen = new Map<string, number | undefined>();
      for (const p of map.items) {
        if (!isScalar(p.key)) {
          const key = p.key as Node | null;
          issues.push({
            path: '',
            line: key?.range ? lc.linePos(key.range[0]).line : undefined,
            message: 'a key must be a plain name, not a list or a mapping',
          });
          continue;
        }
        const key = String(p.key.value);
        const line = p.key.range ? lc.linePos(p.key.range[0]).line : undefined;
        if (seen.has(key)) {
          const first = seen.get(key);
          issues.push({
            path: '',
            line,
            message: `'${key}' is given twice in one mapping${first ? ` (first on line ${first})` : ''}`,
          });
        } else seen.set(key, line);
      }
    },
  });
  return issues;
}

/** The line of the first alias (`*name`) in the document, where an alias bomb is reported. */
function firstAliasLine(doc: Document, lc: LineCounter): number | undefined {
  let line: number | undefined;
  visit(doc, {
    Alias(_, node) {
      if (isAlias(node) && node.range) line = lc.linePos(node.range[0]).line;
      return visit.BREAK;
    },
  });
  return line;
}

/** `['cameras', 'gate', 'zones', 'z', 'points', 0]` as `cameras.gate.zones.z.points[0]`. */
export const dottedPath = (path: readonly PathKey[]): string =>
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
  const found = [...envIssues, ...(result.success ? [] : zodIssues(result.error, data))];
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
  config.state_dir = resolveStateDir(config.state_dir, env, base).dir;
  config.events.clips.ring_dir = config.events.clips.ring_dir
    ? abs(config.events.clips.ring_dir)
    : join(config.state_dir, 'ring');
  if (config.mqtt.tls) {
    for (const k of ['ca', 'cert', 'key'] as const) {
      const p = config.mqtt.tls[k];
      if (p) config.mqtt.tls[k] = abs(p);
    }
  }
  const secrets = new Set(substituted);
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

export async function loadConfig(file: string, env: NodeJS.ProcessEnv = process.env): Promise<LoadedConfig> {
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
  return parseConfig(text, file, env);
}
