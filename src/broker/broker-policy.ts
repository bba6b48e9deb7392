import type { Logger } from 'pino';
import type { Clock } from '../core/clock.js';

/**
 * What the embedded broker allows clients other than Argus, as plain logic: the retained
 * messages they may leave behind, and the refusals it logs and counts. src/publish/broker.ts
 * applies them to aedes.
 */

/** Why the embedded broker refused a client or one of its packets. */
export const REFUSALS = [
  'login',
  'clients',
  'client_id',
  'session',
  'will',
  'oversize',
  'inflight',
  'base_topic',
  'control',
  'retained_limit',
  'sys',
  'connecting',
  'connect_timeout',
  'backlog',
  'slow',
] as const;
export type Refusal = (typeof REFUSALS)[number];

const MESSAGES: Record<Refusal, string> = {
  login: 'embedded MQTT broker refused a client: missing or wrong login (mqtt.embedded.username, password)',
  clients: 'embedded MQTT broker refused a client: mqtt.embedded.max_clients are connected',
  client_id: "embedded MQTT broker refused a client that used Argus' own client id",
  session:
    'embedded MQTT broker refused a client that asked for a persistent session (clean: false): it keeps none',
  will: "embedded MQTT broker refused a client whose last will is under Argus' base topic",
  oversize: 'embedded MQTT broker closed a connection that sent a packet over mqtt.embedded.max_message_kb',
  inflight: 'embedded MQTT broker closed a connection that left too many QoS 2 messages unreleased',
  base_topic: "embedded MQTT broker refused a message under Argus' base topic: only Argus publishes there",
  control:
    'embedded MQTT broker refused a control command: only clients logged in with mqtt.embedded.username and password may steer Argus',
  retained_limit:
    "embedded MQTT broker refused a retained message: other clients' retained messages are at mqtt.embedded.max_retained_messages or max_retained_kb",
  sys: 'embedded MQTT broker refused a message to $SYS/: reserved for the broker',
  connecting:
    'embedded MQTT broker closed a new connection: mqtt.embedded.max_connecting connections have not sent their CONNECT yet',
  connect_timeout:
    'embedded MQTT broker closed a connection that sent no CONNECT within mqtt.embedded.connect_timeout_s',
  backlog:
    'embedded MQTT broker dropped a QoS 0 message for a client that does not keep up: more than mqtt.embedded.max_queued_kb wait for it',
  slow: 'embedded MQTT broker disconnected a client that does not keep up: over mqtt.embedded.max_queued_kb for max_behind_s, or over twice max_queued_kb',
};

/** Whether `topic` is a control command's: under `base`, ending in `/set` (src/control/commands.ts). */
export function commandTopic(topic: string, base: string): boolean {
  return topic.startsWith(`${base}/`) && topic.endsWith('/set');
}

/** Whether `topic` is `base` or below it. */
export function underTopic(topic: string, base: string): boolean {
  return topic === base || topic.startsWith(`${base}/`);
}

/**
 * The retained messages of clients other than Argus, by topic: how many and how many bytes
 * (topic and payload), kept within limits. Argus' own retained messages are never counted,
 * never refused.
 */
export class RetainedQuota {
  private sizes = new Map<string, number>();
  private total = 0;

  constructor(
    private readonly maxMessages: number,
    private readonly maxBytes: number,
  ) {}

  /**
   * Whether another client's retained message may be stored; if so it is counted, replacing
   * what that topic held. An empty payload deletes the topic's retained message: always allowed.
   */
  admit(topic: string, payloadBytes: number): boolean {
    if (payloadBytes === 0) {
      this.forget(topic);
      return true;
    }
    const old = this.sizes.get(topic);
    const size = Buffer.byteLength(topic) + payloadBytes;
    const count = this.sizes.size + (old === undefined ? 1 : 0);
    const bytes = this.total - (old ?? 0) + size;
    if (count > this.maxMessages || bytes > this.maxBytes) return false;
    this.sizes.set(topic, size);
    this.total = bytes;
    return true;
  }

  /** The topic's retained message is no longer another client's (Argus replaced it). */
  forget(topic: string): void {
    const old = this.sizes.get(topic);
    if (old === undefined) return;
    this.sizes.delete(topic);
    this.total -= old;
  }

  stats(): { messages: number; bytes: number } {
    return { messages: this.sizes.size, bytes: this.total };
  }
}

/**
 * Refusals, counted by reason and logged at a bounded rate: the first of each reason at once,
 * then at most one line per reason and interval, saying how many refusals went unlogged since
 * the line before. A client that retries in a loop cannot flood the journal; the counts
 * (metrics) include every refusal.
 */
export class RefusalLog {
  private counts = Object.fromEntries(REFUSALS.map((r) => [r, 0])) as Record<Refusal, number>;
  private logged = new Map<Refusal, { at: number; count: number }>();

  constructor(
    private readonly log: Logger,
    private readonly clock: Pick<Clock, 'now'>,
    private readonly intervalMs = 60_000,
  ) {}

  refuse(reason: Refusal, details: Record<string, unknown>): void {
    const count = ++this.counts[reason];
    const now = this.clock.now();
    const last = this.logged.get(reason);
    if (last && now - last.at < this.intervalMs) return;
    this.logged.set(reason, { at: now, count });
    const unlogged = last ? count - last.count - 1 : 0;
    this.log.warn({ reason, ...details, ...(unlogged ? { unlogged } : {}) }, MESSAGES[reason]);
  }

  stats(): Record<Refusal, number> {
    return { ...this.counts };
  }
}
