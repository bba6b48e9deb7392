/** The command line's commands, each owning its output and exit code. */
export { runDetect } from './detect.js';
export { runInstall } from './install.js';
export { inspectModel } from './model.js';
export { runPrepare } from './prepare.js';
export { runDaemon } from './run.js';
export { providerWarning, summarize } from './validate.js';
