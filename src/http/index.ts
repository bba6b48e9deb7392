/** The HTTP surface: health, metrics, the cameras, the live page, image detection. */
export { createMetrics } from './metrics.js';
export { HttpError } from './errors.js';
export { HttpServer } from './server.js';
export { type Health, type HttpSource } from './source.js';
export { LiveView, type CameraView, type ViewSources } from './view.js';
