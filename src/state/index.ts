/** What survives a restart: the state directory and crash-safe files in it. */
export { readOwnFile, syncDir, writeAtomic } from './atomic.js';
export { resolveStateDir } from './dir.js';
export { JsonFile, type JsonFileOptions } from './json-file.js';
