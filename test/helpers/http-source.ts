import { HttpError } from '../../src/http/errors.js';
import type { HttpSource } from '../../src/http/source.js';

/**
 * A whole fake HTTP source: one camera, `gate`, in backoff, no detector ready, no events,
 * no frames; `over` replaces any part of it.
 */
export function httpSource(over: Partial<HttpSource> = {}): HttpSource {
  return {
    health: () => ({
      ok: false,
      detector: { ready_workers: 0, provider: null },
      models: { default: { ready_workers: 0, provider: null } },
      mqtt: { connected: true, last_error: null },
      cameras: { gate: 'backoff' },
      event_faults: {},
    }),
    cameras: () => [],
    cameraNames: () => ['gate'],
    modelNames: () => ['default', 'plates'],
    latestJpeg: () => Promise.resolve(undefined),
    metrics: () => Promise.resolve({ contentType: 'text/plain', body: '' }),
    detect: () => Promise.reject(new HttpError(503, 'the detector is busy')),
    events: () => [],
    hasEvent: () => false,
    eventSnapshot: () => Promise.resolve(undefined),
    eventClip: () => Promise.resolve(undefined),
    deleteEvent: () => Promise.resolve(false),
    servedModels: () => [],
    control: () => undefined,
    ...over,
  };
}
