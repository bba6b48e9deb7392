import { z } from 'zod';
import { namedRecord } from '../core/names.js';

/**
 * The schema's building blocks, shared by its sections: integers, names that are topic levels,
 * the limits on how many entries a file may hold, maps of named entries, URLs.
 */

/** Why a name cannot be one level of an MQTT topic (or a URL path segment), or undefined if it can. */
export function topicLevelProblem(name: string): string | undefined {
  if (name.length === 0) return 'must not be empty';
  if (name.length > 64) return 'must be at most 64 characters';
  if (/[/+#]/.test(name)) return "must not contain '/', '+' or '#' (it is used as an MQTT topic level)";
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(name)) return 'must not contain control characters';
  if (name.startsWith('$')) return "must not start with '$' (reserved for broker topics)";
  if (name === '.' || name === '..') return "must not be '.' or '..'";
  if (name.trim() !== name) return 'must not start or end with spaces';
  return undefined;
}

export const topicLevel = z.string().superRefine((s, ctx) => {
  const problem = topicLevelProblem(s);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

/** Topic levels separated by '/', without wildcards: the start of a family of topics. */
export const topicPrefix = z.string().superRefine((s, ctx) => {
  for (const level of s.split('/')) {
    const problem = topicLevelProblem(level);
    if (problem) ctx.addIssue({ code: 'custom', message: `each level ${problem}` });
  }
});

/**
 * The most entries of each kind a file may hold (docs/config.md, "Limits"): far above what one
 * box can run (each camera is an ffmpeg), and low enough that a mistaken or hostile file is
 * refused at once instead of taking minutes and gigabytes.
 */
export const LIMITS = {
  cameras: 1000,
  models: 64,
  zones: 100,
  lines: 100,
  filters: 1000,
  headers: 64,
  points: 1000,
  modes: 64,
};

interface NamedMapOptions {
  /** Entries allowed; more is one error, and the entries are then not checked one by one. */
  max: number;
  /** What the entries are, for that error: `cameras`. */
  what: string;
  nameProblem?: (name: string) => string | undefined;
}

const namedMapValues = new WeakMap<z.core.$ZodType, z.core.$ZodType>();
/** The schema of a `namedMap`'s values, for code that walks the schema (the example's key check). */
export const namedMapValue = (schema: z.core.$ZodType): z.core.$ZodType | undefined =>
  namedMapValues.get(schema);

/** A YAML mapping as the loader hands it over: an object that is not a list. */
const isMapping = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A mapping whose keys are names a user chose (cameras, models, zones, lines, labels). The result
 * has no prototype, so no name is special: `__proto__`, `constructor` or `toString` is a name like
 * any other (zod's record drops `__proto__` unchecked, and a plain object answers `constructor`
 * for a name it does not hold). Each value is checked with `value`, and each name with
 * `nameProblem` beside it (not as a record key, which would leave a badly named entry's value
 * unchecked), so every error is reported at once.
 */
export function namedMap<V extends z.ZodType>(
  value: V,
  { max, what, nameProblem = topicLevelProblem }: NamedMapOptions,
) {
  // Typed by what it holds, checked by hand below.
  const holder = z.custom<Record<string, z.input<V>>>(() => true).optional();
  const map = holder.transform((input: unknown, ctx): Record<string, z.output<V>> => {
    const out = namedRecord<z.output<V>>();
    if (input === undefined) return out;
    if (!isMapping(input)) {
      ctx.issues.push({ code: 'invalid_type', expected: 'record', input, message: 'must be a mapping' });
      return out;
    }
    const names = Object.keys(input);
    if (names.length > max) {
      ctx.issues.push({
        code: 'custom',
        input,
        message: `has ${names.length} ${what}; at most ${max} are allowed (docs/config.md, "Limits")`,
        params: { atKey: true },
      });
      return out;
    }
    for (const name of names) {
      const problem = nameProblem(name);
      if (problem)
        ctx.issues.push({
          code: 'custom',
          path: [name],
          input: name,
          message: `name ${problem}`,
          params: { atKey: true },
          // As a refinement's issue: the checks across sections still run.
          continue: true,
        });
      // As zod's record runs its values (its own internal step, which `safeParse` would finalize):
      // each issue keeps its `continue`, so a value of the wrong type stops the checks across
      // sections, as in a record, while a refinement's issue lets them run.
      const result = value._zod.run({ value: input[name], issues: [] }, { async: false });
      if (result instanceof Promise) throw new Error('namedMap: asynchronous schemas are not supported');
      for (const issue of result.issues) ctx.issues.push({ ...issue, path: [name, ...(issue.path ?? [])] });
      out[name] = result.value as z.output<V>;
    }
    return out;
  });
  namedMapValues.set(map, value);
  return map;
}

export function urlWithSchemes(what: string, schemes: readonly string[]) {
  return z.string().superRefine((s, ctx) => {
    let u: URL;
    try {
      u = new URL(s);
    } catch {
      // Never echo the value: URLs carry passwords.
      ctx.addIssue({
        code: 'custom',
        message: `not a valid ${what} URL (expected ${schemes[0]}://host[:port]/...)`,
      });
      return;
    }
    const scheme = u.protocol.slice(0, -1);
    if (!schemes.includes(scheme)) {
      ctx.addIssue({
        code: 'custom',
        message: `${what} URL scheme '${scheme}' is not one of ${schemes.join(', ')}`,
      });
    } else if (scheme !== 'file' && scheme !== 'lavfi' && !u.hostname) {
      ctx.addIssue({ code: 'custom', message: `${what} URL has no host` });
    }
  });
}

export const int = () => z.number().int();
