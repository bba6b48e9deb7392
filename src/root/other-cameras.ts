import type { Logger } from 'pino';

/** What the state directory held at start, by what holds it: history, line counts, control.json. */
export type StoredCameras = Record<'history' | 'line_counts' | 'control', readonly string[]>;

/**
 * The cameras of each kind of state that `cameras` (the config's) does not have; only the kinds
 * that hold any.
 */
export function otherCameras(stored: StoredCameras, cameras: readonly string[]): Partial<StoredCameras> {
  const mine = new Set(cameras);
  const out: Partial<StoredCameras> = {};
  for (const [kind, names] of Object.entries(stored) as [keyof StoredCameras, readonly string[]][]) {
    const others = names.filter((n) => !mine.has(n));
    if (others.length) out[kind] = others;
  }
  return out;
}

/**
 * Warns once, at start, when the state Argus loaded holds cameras the config does not have
 * (another config's, in a state directory they shared, or cameras removed from the file): what
 * becomes of them. Says nothing when there are none.
 */
export function warnOtherCameras(
  log: Logger,
  dir: string | undefined,
  stored: StoredCameras,
  cameras: readonly string[],
): void {
  const others = otherCameras(stored, cameras);
  if (!Object.keys(others).length) return;
  log.warn(
    { state_dir: dir, ...others },
    'the state directory holds cameras this config does not have (another config’s, or cameras removed): ' +
      'their events are kept but not listed (page, /api/events), their line counts are kept, ' +
      'their runtime changes are dropped; give each config its own state_dir (docs/config.md, "state_dir")',
  );
}
