import type { Config } from '../config/index.js';

/** `workers` 0 = choose from the machine; `intra_op_threads` 0 = choose (ONNX Runtime's default). */
export type ThreadSettings = Pick<Config['detector'], 'providers' | 'workers' | 'intra_op_threads'>;

/**
 * How many sessions (worker threads) to run and how many threads each gets. On CPUs, small
 * detection models run more frames per second as several sessions of few threads than as one
 * session spread over every core (measured on 2 cores, yolo11n at 320, 16 saturated cameras:
 * two 1-thread sessions 74.8 analysed frames/s, one 2-thread session 55.3); up to 4 sessions,
 * the cores shared between them. On a GPU, one session per device (`devices` of them).
 */
export function detectorThreads(
  d: ThreadSettings,
  cores: number,
  devices = 1,
): { workers: number; intraOpThreads: number } {
  if (d.workers > 0) return { workers: d.workers, intraOpThreads: d.intra_op_threads };
  if (d.providers[0] !== 'cpu') return { workers: devices, intraOpThreads: d.intra_op_threads };
  const workers = Math.max(1, Math.min(4, cores));
  return { workers, intraOpThreads: d.intra_op_threads || Math.max(1, Math.floor(cores / workers)) };
}
