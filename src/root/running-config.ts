import type { CameraConfig, LoadedConfig } from '../config/index.js';

/**
 * The one place that holds the configuration that runs: the file as loaded, its cameras passed
 * through the mode and the runtime changes (Control), as the last start, reload or change left
 * it. Whoever needs it reads it here (`current()`, `cameras()`; the parts through a CamerasNow
 * that reads `cameras()`), and none keeps a copy. It is `set` at the start (the file through
 * Control) and then only where a reload or a runtime change is applied (reload.ts), on the
 * daemon's queue; those that keep what they derived from the cameras (trackers, retained topics,
 * discovery's entities) hear of each change with what ran before (`onCameras`).
 */
export class RunningConfig {
  private readonly listeners: ((before: Record<string, CameraConfig>) => void)[] = [];

  constructor(private loaded: LoadedConfig) {}

  current(): LoadedConfig {
    return this.loaded;
  }

  /** The cameras that run now. */
  readonly cameras = (): Record<string, CameraConfig> => this.loaded.config.cameras;

  /**
   * What runs from now on. Those listening hear of it when its cameras are not the ones that ran
   * (the same section again, as a reload's models-only change leaves it, tells no one).
   */
  set(next: LoadedConfig): void {
    const before = this.loaded.config.cameras;
    this.loaded = next;
    if (next.config.cameras === before) return;
    for (const listen of this.listeners) listen(before);
  }

  /** Hears of each change of the cameras that run, with those that ran before it. */
  onCameras(listen: (before: Record<string, CameraConfig>) => void): void {
    this.listeners.push(listen);
  }
}
