import type { CameraConfig } from '../../src/config/index.js';

/** What hears of a change of the cameras that run (a part). */
interface Hears {
  camerasChanged?(before: Record<string, CameraConfig>): void;
}

/**
 * The cameras that run, held as the root's RunningConfig holds them, for a test: the parts read
 * them through `now` (their CamerasNow), and `set` tells those given what ran before, as a reload
 * or a runtime change does.
 */
export class CamerasBox {
  constructor(private value: Record<string, CameraConfig>) {}

  readonly now = (): Record<string, CameraConfig> => this.value;

  set(next: Record<string, CameraConfig>, ...parts: Hears[]): void {
    const before = this.value;
    this.value = next;
    for (const p of parts) p.camerasChanged?.(before);
  }
}
