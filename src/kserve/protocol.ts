/**
 * The JSON shapes of the KServe v2 / Open Inference Protocol over HTTP/REST, as its specification
 * writes them (kserve/kserve docs/predict-api/v2/required_api.md, the same text as
 * kserve/open-inference-protocol specification/protocol/inference_rest.md), with the parameters
 * of Triton's binary tensor data extension (triton-inference-server/server
 * docs/protocol/extension_binary_data.md) and the model configuration Triton serves
 * (docs/protocol/extension_model_configuration.md).
 */

/** "Tensor Data Types", with each element's size in bytes (BYTES: variable, length-prefixed). */
export const DATATYPE_SIZES = {
  BOOL: 1,
  UINT8: 1,
  UINT16: 2,
  UINT32: 4,
  UINT64: 8,
  INT8: 1,
  INT16: 2,
  INT32: 4,
  INT64: 8,
  FP16: 2,
  FP32: 4,
  FP64: 8,
  BYTES: 0,
} as const;

export type Datatype = keyof typeof DATATYPE_SIZES;

/** One of DATATYPE_SIZES' own names: `constructor` or `toString`, which `in` finds on any object, is none. */
export const isDatatype = (s: unknown): s is Datatype =>
  typeof s === 'string' && Object.hasOwn(DATATYPE_SIZES, s);

/** `$parameters`: name → string, number or boolean. */
export type Parameters = Record<string, string | number | boolean>;

/** `$metadata_tensor`: variable-size dimensions are -1. */
export interface MetadataTensor {
  name: string;
  datatype: string;
  shape: number[];
}

/** `$metadata_server_response` (GET v2). */
export interface ServerMetadata {
  name: string;
  version: string;
  extensions: string[];
}

/** `$metadata_model_response` (GET v2/models/<m>[/versions/<v>]). */
export interface ModelMetadata {
  name: string;
  versions?: string[];
  platform: string;
  inputs: MetadataTensor[];
  outputs: MetadataTensor[];
}

/** `$request_input`; with the binary extension, `parameters.binary_data_size` replaces `data`. */
export interface RequestInputJson {
  name: string;
  shape: number[];
  datatype: string;
  parameters?: Parameters;
  data?: unknown[];
}

/** `$request_output`; `parameters.binary_data: true` asks for the tensor as binary data. */
export interface RequestOutputJson {
  name: string;
  parameters?: Parameters;
}

/** `$inference_request`; `parameters.binary_data_output: true` asks for every output as binary. */
export interface InferRequestJson {
  id?: string;
  parameters?: Parameters;
  inputs: RequestInputJson[];
  outputs?: RequestOutputJson[];
}

/** `$response_output`. */
export interface ResponseOutputJson {
  name: string;
  shape: number[];
  datatype: string;
  parameters?: Parameters;
  data?: unknown[];
}

/** `$inference_response`. */
export interface InferResponseJson {
  model_name: string;
  model_version?: string;
  id?: string;
  parameters?: Parameters;
  outputs: ResponseOutputJson[];
}

/** The few fields of Triton's ModelConfig (model_config.proto, as JSON) a client needs. */
export interface ModelConfigJson {
  name?: string;
  max_batch_size?: number;
  /** Ultralytics' Triton guide stores the model's metadata under `metadata`. */
  parameters?: Record<string, { string_value?: string }>;
}

/** The header that says how long the JSON part of a body with binary tensors is, as Node reads it (lowercase). */
export const HEADER_LENGTH = 'inference-header-content-length';

/** Binary extension parameter names. */
export const BINARY_DATA_SIZE = 'binary_data_size';
export const BINARY_DATA = 'binary_data';
export const BINARY_DATA_OUTPUT = 'binary_data_output';

/**
 * Argus' own extension (listed in its server metadata): its models' image input also takes UINT8
 * [batch, size, size, 3], the letterboxed RGB24 picture as it is, a quarter of FP32 NCHW's bytes.
 */
export const ARGUS_RGB24 = 'argus_rgb24';
