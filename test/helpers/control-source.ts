import type { ControlApi } from '../../src/http/control.js';
import type { HttpSource } from '../../src/http/source.js';

/** An HTTP source with runtime settings only: every other route throws (not in the test). */
export function controlSource(control: ControlApi | undefined): HttpSource {
  const none = (): never => {
    throw new Error('not in this test');
  };
  return {
    health: none,
    cameras: none,
    cameraNames: none,
    modelNames: none,
    latestJpeg: none,
    metrics: none,
    detect: none,
    events: none,
    hasEvent: none,
    eventSnapshot: none,
    eventClip: none,
    deleteEvent: none,
    servedModels: () => [],
    control: () => control,
  };
}
