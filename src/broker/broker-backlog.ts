/**
 * How far a client other than Argus may fall behind on the embedded broker, as plain logic. A
 * client's backlog is the bytes waiting in its socket for the kernel to take (its
 * `writableLength`: what it has not read yet beyond what the kernel's buffers hold), and the
 * messages let through to it that aedes has not written yet. src/publish/broker.ts asks before
 * each message to the client and once a second.
 *
 * - At most `maxBytes`, or nothing in its socket (the kernel takes all it is given): every message
 *   is sent.
 * - Over `maxBytes`: QoS 0 messages to it are dropped; QoS 1 and 2 messages (which may not be)
 *   are still sent, until its backlog is over twice `maxBytes`: then it is disconnected.
 * - Over `maxBytes` at every look for `maxBehindMs`: it is disconnected.
 */
export interface BacklogLimits {
  maxBytes: number;
  maxBehindMs: number;
}

/** What to do with a message to a client: send it, drop it (for that client), or disconnect the client. */
export type Verdict = 'send' | 'drop' | 'close';

/** One client's backlog: what waits for it, and since when it has been over the limit. */
export class Backlog {
  private behindSince: number | undefined;
  /** Bytes of messages sent to it that are not in its socket yet (aedes writes them a moment later). */
  private pending = 0;

  constructor(private readonly limits: BacklogLimits) {}

  /**
   * Before a message of `bytes` and `qos` to the client, whose socket holds `socketBytes`. A
   * message sent counts as waiting until `written`.
   */
  admit(socketBytes: number, bytes: number, qos: number, now: number): Verdict {
    if (this.tooLong(socketBytes, now)) return 'close';
    if (this.behind(socketBytes)) {
      if (qos === 0) return 'drop';
      if (this.overflowing(socketBytes)) return 'close';
    }
    this.pending += bytes;
    return 'send';
  }

  /** What waits for the client, in bytes, when its socket holds `socketBytes`. */
  queued(socketBytes: number): number {
    return socketBytes + this.pending;
  }

  /** A message `admit` let through is in the socket now (or was never written). */
  written(bytes: number): void {
    this.pending -= bytes;
  }

  /**
   * Whether the client is over the limit. A client whose socket holds nothing keeps up (the
   * kernel took all it was given), however much was let through to it a moment ago.
   */
  behind(socketBytes: number): boolean {
    return socketBytes > 0 && this.queued(socketBytes) > this.limits.maxBytes;
  }

  /** Whether the client has been over the limit for `maxBehindMs` (looked at now). */
  tooLong(socketBytes: number, now: number): boolean {
    if (!this.behind(socketBytes)) {
      this.behindSince = undefined;
      return false;
    }
    this.behindSince ??= now;
    return now - this.behindSince >= this.limits.maxBehindMs;
  }

  /** Whether what waits for the client is over twice the limit: nothing more may be queued for it. */
  overflowing(socketBytes: number): boolean {
    return this.queued(socketBytes) > 2 * this.limits.maxBytes;
  }
}
