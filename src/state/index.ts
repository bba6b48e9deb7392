/**
 * What survives a restart: the state directory, crash-safe JSON documents in it, and the event
 * history.
 */
export { resolveStateDir } from './dir.js';
export {
  EventStore,
  type EventQuery,
  type EventStoreLimits,
  type Snapshot,
  type StoredEvent,
} from './event-store.js';
export { JsonFile, type JsonFileOptions } from './json-file.js';
