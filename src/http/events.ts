import { topicLevelProblem } from '../config/index.js';
import type { EventQuery } from '../events/index.js';
import { HttpError } from './errors.js';

/** The most events one GET /api/events answers, and how many without `limit`. */
export const MAX_LIMIT = 1000;
export const DEFAULT_LIMIT = 100;

/** An ISO 8601 date, or date and time (with seconds, fractions and a zone, or without). */
const ISO_TIME = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/i;

const NAMES = ['camera', 'label', 'zone'] as const;
const PARAMETERS: readonly string[] = [...NAMES, 'after', 'limit'];

/**
 * The query of GET /api/events (docs/http.md) as an EventQuery; an unknown, repeated or bad
 * parameter is an HttpError 400 that names it.
 */
export function parseEventQuery(params: URLSearchParams): EventQuery {
  const bad = (name: string, why: string): HttpError => new HttpError(400, `${name}: ${why}`);
  const seen = new Set<string>();
  for (const name of params.keys()) {
    if (!PARAMETERS.includes(name))
      throw bad(name, `unknown parameter (the parameters are ${PARAMETERS.join(', ')})`);
    if (seen.has(name)) throw bad(name, 'given more than once');
    seen.add(name);
  }
  const query: EventQuery = { limit: DEFAULT_LIMIT };
  for (const name of NAMES) {
    const value = params.get(name);
    if (value === null) continue;
    const problem = topicLevelProblem(value);
    if (problem) throw bad(name, problem);
    query[name] = value;
  }
  const after = params.get('after');
  if (after !== null) {
    // A '+' of a time zone arrives as a space unless it was written %2B.
    const time = after.replace(/ (\d{2}:?\d{2})$/, '+$1');
    const ms = ISO_TIME.test(time) ? Date.parse(time) : NaN;
    if (Number.isNaN(ms)) throw bad('after', 'not an ISO 8601 time, e.g. 2026-11-30T12:00:00Z');
    query.after = ms;
  }
  const limit = params.get('limit');
  if (limit !== null) {
    const n = /^\d{1,7}$/.test(limit) ? Number(limit) : NaN;
    if (!(n >= 1 && n <= MAX_LIMIT)) throw bad('limit', `must be a whole number from 1 to ${MAX_LIMIT}`);
    query.limit = n;
  }
  return query;
}
