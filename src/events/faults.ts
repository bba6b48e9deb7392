import type { Logger } from 'pino';
import type { Clock } from '../core/clock.js';
import { errorMessage } from '../core/errors.js';

/**
 * The parts of a camera's events path, each run on its own: a fault in one leaves the others
 * publishing. `tracking` (filters and tracker: without it a frame makes no event), `speed` (a
 * calibrated zone's ground plane: the zone runs without speed), `events` (publishing an event),
 * `snapshots`, `clips`, `history`, `line_counts` (a crossing's count), `counts` (objects in view).
 */
export const EVENT_PARTS = [
  'tracking',
  'speed',
  'events',
  'snapshots',
  'clips',
  'history',
  'line_counts',
  'counts',
] as const;
export type EventPart = (typeof EVENT_PARTS)[number];

/** A part of a camera's events path that failed: since when, how often, the last error. */
export interface EventFault {
  part: EventPart;
  /** Faults since it first failed (or since its camera was last reloaded). */
  count: number;
  /** The first and the latest fault's times (ms). */
  since: number;
  last: number;
  message: string;
}

/** After the first fault of a part, at most one summary line a minute says how many followed. */
const SUMMARY_MS = 60_000;

interface FaultRecord extends EventFault {
  /** Faults since the last line logged, and when that was. */
  unlogged: number;
  loggedAt: number;
}

/**
 * Faults of the events path, per camera and part: each caught where it happened, counted (the
 * total for metrics, the current ones for `/healthz` and the camera's status), and logged once,
 * then at most once a minute as a summary.
 */
export class EventFaults {
  private readonly current = new Map<string, Map<EventPart, FaultRecord>>();
  /** Every fault since start, per camera and part (`argus_event_faults_total`). */
  private readonly totals = new Map<string, Map<EventPart, number>>();

  constructor(
    private readonly deps: {
      clock: Clock;
      log: Logger;
      /** A camera's faults changed: one more part failed, or they were forgotten. */
      onChange?: (camera: string) => void;
    },
  ) {}

  /** Runs `fn` for `camera`'s `part`; a throw is recorded and `fallback` returned instead. */
  guard<T>(camera: string, part: EventPart, fn: () => T, fallback: T): T {
    try {
      return fn();
    } catch (err) {
      this.record(camera, part, err);
      return fallback;
    }
  }

  /** Records a fault of `camera`'s `part`. */
  record(camera: string, part: EventPart, err: unknown): void {
    const now = this.deps.clock.now();
    const message = errorMessage(err);
    const totals = this.totals.get(camera) ?? new Map<EventPart, number>();
    this.totals.set(camera, totals.set(part, (totals.get(part) ?? 0) + 1));
    const parts = this.current.get(camera) ?? new Map<EventPart, FaultRecord>();
    this.current.set(camera, parts);
    const r = parts.get(part);
    if (!r) {
      parts.set(part, { part, count: 1, since: now, last: now, message, unlogged: 0, loggedAt: now });
      this.deps.log.error(
        { camera, part, err: message },
        `events: ${part} failed for camera ${camera}; its other parts go on (one line a minute while it keeps failing)`,
      );
      this.deps.onChange?.(camera);
      return;
    }
    r.count++;
    r.last = now;
    r.message = message;
    r.unlogged++;
    if (now - r.loggedAt < SUMMARY_MS) return;
    this.deps.log.error(
      { camera, part, faults: r.unlogged, err: message },
      `events: ${part} failed ${r.unlogged} more times for camera ${camera} since the last line`,
    );
    r.unlogged = 0;
    r.loggedAt = now;
  }

  /** A camera's failed parts now, in the order they first failed. */
  of(camera: string): EventFault[] {
    return [...(this.current.get(camera)?.values() ?? [])].map(({ part, count, since, last, message }) => ({
      part,
      count,
      since,
      last,
      message,
    }));
  }

  /** Every camera with failed parts now. */
  cameras(): string[] {
    return [...this.current.keys()];
  }

  /** Faults since start, per camera and part. */
  total(): { camera: string; part: EventPart; count: number }[] {
    return [...this.totals].flatMap(([camera, parts]) =>
      [...parts].map(([part, count]) => ({ camera, part, count })),
    );
  }

  /** Forgets a camera's current faults (its configuration changed: they may be mended). */
  forget(camera: string): void {
    if (this.current.delete(camera)) this.deps.onChange?.(camera);
  }
}
