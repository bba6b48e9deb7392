import type { Frame, Result } from '../core/frame.js';
import type { CameraStatus } from '../ingest/index.js';
import type { ModelAvailability } from '../scheduler/index.js';
import type { TrackedResult } from '../track/index.js';

/**
 * One typed channel from the stages that emit to those that listen. Emitters are handed
 * `emit` when they are built; listeners are added once they exist, so the root builds the
 * stages in pipeline order and never names one before it is built. A listener that throws is
 * the emitter's to see: the parts (parts.ts) contain their own.
 */
export class Channel<A extends unknown[]> {
  private readonly listeners: ((...args: A) => void)[] = [];

  /** Hands `args` to every listener, in the order they were added. */
  readonly emit = (...args: A): void => {
    for (const listen of this.listeners) listen(...args);
  };

  on(listen: (...args: A) => void): void {
    this.listeners.push(listen);
  }
}

/**
 * A question one stage asks another that is built later: answered by the one handler set when
 * that stage exists; asked before, it throws (a wiring mistake, not a runtime state).
 */
export class Request<A extends unknown[], R> {
  private handler: ((...args: A) => R) | undefined;

  readonly ask = (...args: A): R => {
    if (!this.handler) throw new Error('no stage answers this request yet');
    return this.handler(...args);
  };

  handle(handler: (...args: A) => R): void {
    this.handler = handler;
  }
}

/** The journeys between the stages (docs/architecture.md): what each stage says, typed. */
export class Bus {
  /** A camera's frame, decoded and letterboxed (ingest → scheduler). */
  readonly frames = new Channel<[Frame]>();
  /** An answered frame (scheduler → the events part, which tracks it, and the parts). */
  readonly results = new Channel<[Result]>();
  /** An answered frame as tracking saw it (the events part → the detections topic, the live view). */
  readonly tracked = new Channel<[TrackedResult]>();
  /** A batch that failed, for one of its cameras, its message scrubbed (scheduler → the parts). */
  readonly detectorErrors = new Channel<[camera: string, message: string]>();
  /** A camera's state changed (ingest → the parts). */
  readonly statuses = new Channel<[CameraStatus]>();
  /** The models the scheduler may use changed (models → scheduler). */
  readonly modelsSwitched = new Channel<[names: readonly string[]]>();
  /** A remote model went away or came back (models → the parts). */
  readonly availability = new Channel<[ModelAvailability]>();
  /** A line's counts back to 0 (control → the events part): false when it runs no such line. */
  readonly lineReset = new Request<[camera: string, line: string], boolean>();
  /** A camera's health references learnt again (control → the health part): false with health off. */
  readonly relearn = new Request<[camera: string], boolean>();
  /** A camera's event faults changed (the events part → the camera statuses). */
  readonly faults = new Channel<[camera: string]>();
  /**
   * With `fleet:`, state that follows a camera changed here: `control` (control) or `line_counts`
   * (the events part) of these cameras (→ the fleet, which writes it to etcd where it owns them).
   */
  readonly cameraState = new Channel<[kind: string, cameras: readonly string[]]>();
  /** With `fleet:`, the mode changed here (control → the fleet, which writes it to etcd). */
  readonly modeChanged = new Channel<[]>();
  /** With `fleet:`, whether this box runs a camera (control, for its states → the fleet). */
  readonly runsHere = new Request<[camera: string], boolean>();
  /** With `fleet:`, a camera's line counts as JSON (the fleet → the events part). */
  readonly lineCountsOf = new Request<[camera: string], string>();
  /** With `fleet:`, a camera's line counts taken from etcd (the fleet → the events part). */
  readonly adoptLineCounts = new Request<[camera: string, json: string], void>();
}
