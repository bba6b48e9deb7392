import type { z } from 'zod';
import { redactUrl } from '../redact.js';

/**
 * A config's problems as the user reads them: each at its dotted path (and line), zod's issues
 * put in plain English.
 */

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

/** A problem found at a path of the file's data, before it is given its line. */
export interface Found {
  path: PathKey[];
  message: string;
  /** Point at the key itself rather than its value. */
  atKey?: boolean;
}

/** `['cameras', 'gate', 'zones', 'z', 'points', 0]` as `cameras.gate.zones.z.points[0]`. */
export const dottedPath = (path: readonly PathKey[]): string =>
  path.map((p, i) => (typeof p === 'number' ? `[${p}]` : `${i ? '.' : ''}${p}`)).join('');

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

export function zodIssues(error: z.ZodError, data: unknown): Found[] {
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
