/** Our ONNX codec: read a model's signature and metadata, edit its graph, build the test fixture. */
export { buildFixtureModel, DEFAULT_FIXTURE, type FixtureOptions } from './fixture.js';
export { fromFloat16Bits, toFloat16Bits } from './float16.js';
export { decodeModel, encodeModel, GraphEditError } from './graph.js';
export {
  ModelFormatError,
  parseModelInfo,
  parseUltralyticsImgsz,
  parseUltralyticsNames,
  quantizationOf,
  type OnnxModelInfo,
} from './model-info.js';
export { prepareModel, type Precision, type PrepareOptions } from './prepare.js';
