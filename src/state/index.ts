/**
 * What survives a restart: the state directory and crash-safe JSON documents in it.
 */
export { resolveStateDir } from './dir.js';
export { JsonFile, type JsonFileOptions } from './json-file.js';
