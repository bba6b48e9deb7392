import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { readOwnFile } from './atomic.js';
import { readOwner } from './lock.js';
import { CONTROL_FILE, HISTORY_DIR, LINE_COUNTS_FILE } from './layout.js';

/** The most event records read to recognise a config's cameras (a history holds 1000 by default). */
const MAX_RECORDS = 5000;

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** A JSON file's document; undefined when it is missing, a link, unreadable or not JSON. */
async function readJson(path: string): Promise<unknown> {
  const data = await readOwnFile(path).catch(() => undefined);
  if (!data) return undefined;
  try {
    return JSON.parse(data.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * Whether a state directory holds state of any of `cameras`: runtime changes in control.json
 * (`overrides.<camera>`), line counts (`counts.<camera>`), or an event of the history (a record's
 * `camera`). Read leniently (what does not parse says nothing) and bounded (the first 5000
 * records).
 */
export async function holdsCameras(dir: string, cameras: readonly string[]): Promise<string[]> {
  const mine = new Set(cameras);
  const found = new Set<string>();
  const keysOf = (doc: unknown, key: string): void => {
    const v = isObject(doc) ? doc[key] : undefined;
    if (isObject(v)) for (const c of Object.keys(v)) if (mine.has(c)) found.add(c);
  };
  keysOf(await readJson(join(dir, CONTROL_FILE)), 'overrides');
  keysOf(await readJson(join(dir, LINE_COUNTS_FILE)), 'counts');
  const history = join(dir, HISTORY_DIR);
  const names = await readdir(history).catch(() => [] as string[]);
  const records = names.filter((n) => n.endsWith('.json') && !n.startsWith('.')).slice(0, MAX_RECORDS);
  for (const name of records) {
    if (found.size === mine.size) break;
    const doc = await readJson(join(history, name));
    if (isObject(doc) && typeof doc.camera === 'string' && mine.has(doc.camera)) found.add(doc.camera);
  }
  return [...found].sort();
}

/**
 * The state directory of a config without `state_dir` (and without `$STATE_DIRECTORY`): its own
 * (`own`, `<state home>/argus/<name>-<hash>`), except for the config whose state the directory
 * every config shared before (`shared`, `<state home>/argus`) holds, which keeps that one:
 *
 * 1. its own directory, once it exists;
 * 2. else the shared one when its owner record (owner.json, written by each start since) names
 *    this config; another config's: its own;
 * 3. else (a shared directory of an earlier version, without an owner record) the shared one
 *    when it holds state of one of this config's cameras (`holdsCameras`), so that an existing
 *    user's history, line counts and runtime changes stay where they are; its own otherwise.
 *
 * The first config to start that way records itself as the shared directory's owner (lock.ts),
 * so the others get their own from then on.
 */
export async function chooseDefaultDir(
  own: string,
  shared: string,
  realConfig: string,
  cameras: readonly string[],
): Promise<{ dir: string; from: 'default' | 'legacy'; cameras?: string[] }> {
  if (
    await stat(own).then(
      (s) => s.isDirectory(),
      () => false,
    )
  )
    return { dir: own, from: 'default' };
  const owner = await readOwner(shared);
  if (owner !== undefined)
    return owner === realConfig ? { dir: shared, from: 'legacy' } : { dir: own, from: 'default' };
  const held = await holdsCameras(shared, cameras);
  return held.length ? { dir: shared, from: 'legacy', cameras: held } : { dir: own, from: 'default' };
}
