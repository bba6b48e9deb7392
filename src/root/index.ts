/**
 * The composition root: builds the pipeline in the order frames and commands flow and wires the
 * stages through a typed bus (pipeline.ts, bus.ts); holds the configuration that runs
 * (running-config.ts); applies reloads and runtime changes to the running stages (reload.ts).
 * The daemon (daemon.ts) keeps the lifecycle: start, reload, stop.
 */
export { Bus, Channel, Request } from './bus.js';
export { Parts, reportingParts, type Part, type Reporting, type ReportingDeps } from './parts.js';
export { assemble, type AssemblyEnv, type Pipeline } from './pipeline.js';
export { applyCameras, applyConfig, reloadFile, type Running } from './reload.js';
export { RunningConfig } from './running-config.js';
