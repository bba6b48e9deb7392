/**
 * The names Argus gives what it keeps in the state directory, in one place: the owner of each
 * (named beside it) says what it holds. legacy.ts reads the first three to recognise a config's
 * cameras in the directory every config shared before each had its own.
 */

/** The mode and runtime changes (control/control.ts). */
export const CONTROL_FILE = 'control.json';
/** The line crossing counts (events/line-counts.ts). */
export const LINE_COUNTS_FILE = 'line-counts.json';
/** The event history's folder: one record per event, with its snapshots and clip (events/event-store.ts). */
export const HISTORY_DIR = 'events';
/** Which running Argus holds the directory, while it runs (lock.ts). */
export const LOCK_FILE = 'argus.lock';
/** Which config's state the directory holds: the config that last ran with it (lock.ts). */
export const OWNER_FILE = 'owner.json';
