import type { Logger } from 'pino';
import type { Clock } from '../core/clock.js';
import type { EngineSettings } from '../detector/index.js';

/** What a model's stage is made with, beside its settings. */
export interface ModelContext {
  /** The model's own logger (`model: <name>` on every line). */
  log: Logger;
  clock: Clock;
  /** Values to hide from every message (the config's secrets; they grow on reload). */
  secrets: readonly string[];
  /** The model became unavailable or available again (`availability()` says which, why and since when). */
  onAvailability?: () => void;
  /** Where a local model keeps its TensorRT engines (the state directory), and the largest batch. */
  engines?: EngineSettings | undefined;
}
