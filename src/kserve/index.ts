/**
 * The KServe v2 / Open Inference Protocol stage: remote models as the scheduler's detector (a
 * client for Triton, KServe, OpenVINO Model Server or another Argus), and Argus' own models served
 * over the same protocol.
 */
export { RemoteRequestError, type FailureKind } from './client.js';
export {
  decodeInferRequest,
  decodeInferResponse,
  encodeInferRequest,
  encodeInferResponse,
  type EncodedBody,
  type WireTensor,
} from './codec.js';
export { PlanError, planRemote, type RemotePlan } from './plan.js';
export { ARGUS_RGB24, HEADER_LENGTH, type Datatype } from './protocol.js';
export { RemoteDetector, RemoteUnavailableError } from './remote-detector.js';
export type {
  Availability,
  RemoteDetectorConfig,
  RemoteDetectorDeps,
  RemoteModelOptions,
  RemoteStats,
} from './remote-options.js';
export { RemoteBatchError } from './remote-requests.js';
export { InferenceService, type ServedModel, type ServiceAnswer, type ServiceRequest } from './service.js';
export { ProtocolError, tensorFromBytes, tensorToBytes, type Tensor } from './tensor.js';
