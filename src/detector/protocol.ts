import type { ProviderName } from '../config/index.js';
import type { OutputLayout, RawDetection } from './decode.js';
import type { Skipped } from './providers.js';

/** Messages between the detector and its worker threads. */

/** The name each worker thread gives itself (Linux: at most 15 bytes). */
export const THREAD_NAME = 'argus-detector';

export interface WorkerInit {
  modelPath: string;
  inputName: string;
  outputName: string;
  inputSize: number;
  staticBatch: number | null;
  classes: number;
  providers: ProviderName[];
  deviceId: number;
  intraOpThreads: number;
  interOpThreads: number;
  spinning: boolean;
  conf: number;
  iou: number;
  maxDet: number;
  /** cuda, tensorrt and webgpu (with shader-f16) run the model converted to fp16 by Argus (`detector.precision`). */
  precision: 'fp32' | 'fp16';
  /** Where TensorRT engines are kept, and the largest batch their profile must take. */
  engines: EngineSettings | null;
}

export interface EngineSettings {
  stateDir: string;
  maxBatch: number;
}

/** A TensorRT engine's load or build, as the worker tells it (logged by the detector). */
export type EngineEvent =
  | { phase: 'building'; reason: string; dir: string }
  | { phase: 'built'; ms: number; saved: boolean; dir: string }
  | { phase: 'loaded'; ms: number; dir: string };

export interface RunRequest {
  type: 'run';
  id: number;
  /** count pictures of size × size RGB bytes, transferred to the worker and back. */
  input: Uint8Array;
  count: number;
}

export type ToWorker = RunRequest;

export type FromWorker =
  | {
      type: 'ready';
      provider: ProviderName;
      skipped: Skipped[];
      layout: OutputLayout;
      warmupMs: number;
      /** What the session runs: fp16 only where asked for and the provider took it (fp32 when left out). */
      precision?: 'fp32' | 'fp16';
      /** Why fp16, asked for, is not what runs (an adapter without shader-f16). */
      precisionNote?: string;
    }
  | { type: 'init-error'; message: string }
  | { type: 'engine'; event: EngineEvent }
  | { type: 'result'; id: number; input: Uint8Array; detections: RawDetection[][]; inferMs: number }
  | { type: 'run-error'; id: number; input: Uint8Array; message: string };
