import type { CameraConfig, LoadedConfig } from '../config/index.js';

/**
 * The one place that holds the configuration that runs: the file as loaded, its cameras passed
 * through the mode and the runtime changes (Control), as the last start, reload or change left
 * it. Whoever needs it reads `current()`; it is `set` at the start (the file through Control) and
 * then by the daemon's queue alone (reloads, runtime changes), and those that keep what they
 * derived from it may hear of it (`onChange`).
 */
export class RunningConfig {
  private readonly listeners: ((next: LoadedConfig) => void)[] = [];

  constructor(private loaded: LoadedConfig) {}

  current(): LoadedConfig {
    return this.loaded;
  }

  /** The cameras that run now. */
  cameras(): Record<string, CameraConfig> {
    return this.loaded.config.cameras;
  }

  set(next: LoadedConfig): void {
    this.loaded = next;
    for (const listen of this.listeners) listen(next);
  }

  onChange(listen: (next: LoadedConfig) => void): void {
    this.listeners.push(listen);
  }
}
