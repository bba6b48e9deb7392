/**
 * The model registry's public interface: the named models (local ONNX sessions or remote
 * servers), each built, started, swapped on reload and stopped as one stage; and the check that a
 * config's models can be read and name the labels it uses (`vouchFor`), before any of that.
 */
export { buildModel, modelSpec, type BuildModel } from './build.js';
export type { ModelContext } from './context.js';
export { planCameras, type CameraPlan, type Sizes } from './plan.js';
export { ModelRegistry, type NamedModelStats, type RegistryDeps, type SwapResult } from './registry.js';
export { createRemoteModel, type RemoteModel } from './remote.js';
export { providerOf, readySessions, type ModelStage, type ModelStats } from './stage.js';
export { loadVouchedConfig, nearest, vouchFor } from './vouch.js';
