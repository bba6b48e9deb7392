/** What survives a restart: the state directory and crash-safe files in it. */
export { readOwnFile, syncDir, writeAtomic } from './atomic.js';
export {
  configStateName,
  realConfigPath,
  resolveStateDir,
  sharedStateDir,
  stateHome,
  type StateDirSource,
} from './dir.js';
export { JsonFile, type JsonFileOptions } from './json-file.js';
export { CONTROL_FILE, HISTORY_DIR, LINE_COUNTS_FILE, LOCK_FILE, OWNER_FILE } from './layout.js';
export { chooseDefaultDir, holdsCameras } from './legacy.js';
export {
  holderRuns,
  readOwner,
  StateDirInUse,
  StateLock,
  systemProcesses,
  type LockHolder,
  type Processes,
} from './lock.js';
