import type { Logger } from 'pino';
import type { Clock } from '../core/clock.js';
import type { FailureKind } from './client.js';
import type { InputForm, RemotePlan } from './plan.js';

/** What a remote model is given (its entry of `models:`) and what it tells (availability, stats). */

/** `models.<name>.remote`, key for key. */
export interface RemoteModelOptions {
  /** http or https, with the server's port (and path prefix, if it has one). */
  url: string;
  /** The model's name on the server. */
  model: string;
  version?: string | undefined;
  /** Sent with every request (an Authorization token); never logged. */
  headers: Record<string, string>;
  /** PEM file of the CA that signs the server's certificate. */
  ca?: string | undefined;
  /** Deadline of one request. */
  timeout_ms: number;
  /** Further attempts after a connection error or a 502/503/504. */
  retries: number;
  /** Requests outstanding at once (and kept connections). */
  in_flight: number;
}

/** A remote entry of `models:`. */
export interface RemoteDetectorConfig {
  /** Its name under `models:`: in logs, metrics and camera statuses. */
  name: string;
  remote: RemoteModelOptions;
  conf: number;
  iou: number;
  max_detections: number;
  /** Labels file; wins over the class names the server gives. */
  labels?: string | undefined;
  /** The model's input size, known without the server: lets Argus start while it is away. */
  input_size?: number | undefined;
}

/** A change between available and unavailable (one per transition, not per request). */
export interface Availability {
  model: string;
  up: boolean;
  /** Why it is unavailable; null when up. */
  message: string | null;
}

export interface RemoteDetectorDeps {
  log: Logger;
  clock: Clock;
  /** Values to hide in every message (the header values are added to them). */
  secrets?: readonly string[];
  onAvailability?: (change: Availability) => void;
  /** [0, 1): the jitter of retry and probe delays. */
  random?: () => number;
  /** Send FP32 even to a server that takes RGB24 (`argus_rgb24`): the bench compares the two. */
  floatInput?: boolean;
}

export type RemoteState = 'starting' | 'up' | 'down' | 'stopped';

/** A remote model's numbers: its client's view of the server. */
export interface RemoteStats {
  kind: 'remote';
  model: string;
  server: string;
  remoteModel: string;
  state: RemoteState;
  /** When the state last changed (ms since the epoch). */
  since: number;
  lastError: string | null;
  input: InputForm | null;
  output: RemotePlan['output']['kind'] | null;
  /** HTTP inference requests sent (each retry counts), and how many were retries. */
  requests: number;
  retries: number;
  /** Requests that failed, by kind. */
  failures: Record<FailureKind, number>;
  /** Pictures answered. */
  frames: number;
  bytesSent: number;
  bytesReceived: number;
  /** Requests outstanding now, and at most (`remote.in_flight`: its kept connections). */
  inFlight: number;
  connections: number;
}
