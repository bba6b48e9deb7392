import { parseControlLevels, settingKey } from '../core/setting-keys.js';
import type { ChangeRequest } from './settings.js';

/**
 * Control topics as plain logic: the filters Argus subscribes to and what a message on one asks
 * for. Every command topic is under the base topic and ends in `/set`; its state is the same
 * topic ending in `/state`. A setting's levels (after `cameras/<camera>/`) are read by the one
 * codec, core/setting-keys.ts, as publish/topics.ts writes them.
 */

/** What Argus subscribes to for commands (with an external broker). */
export const commandFilters = (base: string): string[] => [
  `${base}/mode/set`,
  `${base}/cameras/+/+/set`,
  `${base}/cameras/+/health/reset/set`,
  `${base}/cameras/+/+/+/+/set`,
];

/**
 * What a message on `topic` asks for; `{ error }` for a command topic Argus has no such command
 * on, or a payload it cannot take; undefined for a topic that is not a command's.
 */
export function parseCommand(
  base: string,
  topic: string,
  payload: string,
): ChangeRequest | { error: string } | undefined {
  if (!topic.startsWith(`${base}/`) || !topic.endsWith('/set')) return undefined;
  const levels = topic.slice(base.length + 1, -'/set'.length).split('/');
  if (levels.length === 1 && levels[0] === 'mode') {
    const mode = payload.trim();
    return mode ? { kind: 'mode', mode } : { error: 'an empty mode name' };
  }
  if (levels[0] !== 'cameras' || levels.length < 3) return { error: 'no such command topic' };
  const camera = levels[1]!;
  const ref = parseControlLevels(levels.slice(2));
  if (!ref) return { error: 'no such command topic' };
  if (ref.kind === 'relearn') {
    if (payload.trim().toUpperCase() !== 'PRESS') return { error: 'a health reset takes PRESS' };
    return { kind: 'relearn', camera };
  }
  if (ref.kind !== 'reset') return { kind: 'set', camera, key: settingKey(ref), value: payload };
  if (payload.trim().toUpperCase() !== 'PRESS') return { error: 'a line reset takes PRESS' };
  return { kind: 'reset', camera, line: ref.line };
}
