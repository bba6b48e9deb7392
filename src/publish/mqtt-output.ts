import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';
import { readFileSync } from 'node:fs';
import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import { backoffDelay } from '../backoff.js';
import { redactUrl, scrub } from '../redact.js';
import { classifyMqttError, type MqttFailure } from './mqtt-errors.js';

export interface OutputStats {
  connected: boolean;
  reconnects: number;
  detectionsDropped: number;
  eventsDropped: number;
  buffered: number;
  /** Why the last connection attempt failed; null once connected. */
  lastError: { cause: MqttFailure; message: string; at: number } | null;
  /** Failed connection attempts, by cause. */
  failures: Record<MqttFailure, number>;
}

/** The longest wait between connection attempts while the broker keeps refusing or is away. */
const RECONNECT_MAX_MS = 60_000;

/** What the reporter publishes through: the MQTT connection, or a fake in tests. */
export interface Output {
  /** Per-frame data: sent at QoS 0 when connected, dropped (and counted) otherwise. */
  detection(topic: string, payload: string): void;
  /** Must arrive: QoS 1; kept in a bounded buffer while the broker is away. */
  event(topic: string, payload: string): void;
  /** Retained state: only the latest value per topic matters; QoS 1. A Buffer is sent as it is (a JPEG). */
  state(topic: string, payload: string | Buffer): void;
}

/** Messages other clients publish, for the parts of Argus that listen (Home Assistant's status). */
export interface Inbox {
  /**
   * Calls `onMessage` with every message on a topic `filter` matches (`+` stands for one level,
   * a last `#` for any below), retained ones included, from now on, across reconnections.
   */
  subscribe(filter: string, onMessage: OnMessage): void;
}

/** A message heard: `retained` when the broker sent it from its store (at subscribing). */
export type OnMessage = (payload: string, topic: string, retained: boolean) => void;

/** Whether `topic` matches the subscription `filter`, as a broker decides. */
export function topicMatches(filter: string, topic: string): boolean {
  const f = filter.split('/');
  const t = topic.split('/');
  if (t[0]?.startsWith('$') && (f[0] === '+' || f[0] === '#')) return false;
  for (let i = 0; i < f.length; i++) {
    if (f[i] === '#') return true;
    if (i >= t.length || (f[i] !== '+' && f[i] !== t[i])) return false;
  }
  return f.length === t.length;
}

/**
 * The MQTT connection (mqtt.js). Reconnecting is mqtt.js's job, also after the broker refused
 * a login (`reconnectOnConnackError`): this class watches its events, records why an attempt
 * failed, and spaces the attempts out (`reconnectPeriod` grows from `reconnect_period_s`,
 * doubling with jitter up to a minute, and is reset by a connection). While the broker is
 * away, detections are dropped and counted, events wait in a bounded buffer (oldest dropped
 * beyond it, counted), and retained states keep their latest value; all are delivered on
 * reconnect. The last will sets `<base>/status` to `offline`.
 */
export class MqttOutput implements Output, Inbox {
  private client: MqttClient | undefined;
  private readonly listeners = new Map<string, OnMessage>();
  private events: { topic: string; payload: string }[] = [];
  private states = new Map<string, string | Buffer>();
  private reconnects = 0;
  private detectionsDropped = 0;
  private eventsDropped = 0;
  private everConnected = false;
  /** Connections that ended or failed since the last success: the backoff step. */
  private attempts = 0;
  private lastError: OutputStats['lastError'] = null;
  private failures: Record<MqttFailure, number> = { auth: 0, refused: 0, unreachable: 0, tls: 0, error: 0 };

  constructor(
    private readonly url: string,
    private readonly cfg: Config['mqtt'],
    private readonly statusTopic: string,
    private readonly log: Logger,
    /** Values to scrub from connection errors besides URL passwords (`LoadedConfig.secrets`). */
    private readonly secrets: readonly string[] = [],
  ) {}

  private options(): IClientOptions {
    const c = this.cfg;
    const opts: IClientOptions = {
      clientId: c.client_id ?? `argus_${Math.random().toString(16).slice(2, 10)}`,
      keepalive: c.keepalive_s,
      reconnectPeriod: c.reconnect_period_s * 1000,
      reconnectOnConnackError: true,
      connectTimeout: 10_000,
      clean: true,
      queueQoSZero: false,
      will: { topic: this.statusTopic, payload: Buffer.from('offline'), qos: 1, retain: true },
    };
    if (c.username !== undefined) opts.username = c.username;
    if (c.password !== undefined) opts.password = c.password;
    if (c.tls) {
      if (c.tls.ca) opts.ca = readFileSync(c.tls.ca);
      if (c.tls.cert) opts.cert = readFileSync(c.tls.cert);
      if (c.tls.key) opts.key = readFileSync(c.tls.key);
      opts.rejectUnauthorized = c.tls.reject_unauthorized;
    }
    return opts;
  }

  /** Starts connecting; does not wait for the broker (a broker outage never stops Argus). */
  start(): void {
    const broker = redactUrl(this.url);
    const client = mqtt.connect(this.url, this.options());
    this.client = client;
    client.on('connect', () => {
      this.log.info(
        { broker, reconnects: this.reconnects },
        this.everConnected ? 'reconnected to the MQTT broker' : 'connected to the MQTT broker',
      );
      this.everConnected = true;
      this.attempts = 0;
      this.lastError = null;
      client.options.reconnectPeriod = this.cfg.reconnect_period_s * 1000;
      this.flush();
    });
    // One backoff step per failed attempt; mqtt.js schedules the next attempt after the 'error'
    // of a refused login, or after the 'close' of a lost or failed socket, with this period.
    let stepped = false;
    const backOff = (): void => {
      if (stepped) return;
      stepped = true;
      const initialMs = this.cfg.reconnect_period_s * 1000;
      const policy = { initialMs, maxMs: Math.max(initialMs, RECONNECT_MAX_MS), factor: 2 };
      client.options.reconnectPeriod = backoffDelay(this.attempts++, policy);
    };
    client.on('reconnect', () => {
      stepped = false;
      this.reconnects++;
      this.log.debug({ broker }, 'reconnecting to the MQTT broker');
    });
    client.on('message', (topic, payload, packet) => {
      for (const [filter, onMessage] of this.listeners)
        if (topicMatches(filter, topic)) onMessage(payload.toString(), topic, packet.retain);
    });
    for (const filter of this.listeners.keys()) this.subscribeTo(client, filter);
    client.on('close', backOff);
    client.on('offline', () => this.log.warn({ broker }, 'MQTT broker unreachable; buffering events'));
    client.on('error', (err) => {
      backOff();
      const cause = classifyMqttError(err);
      this.failures[cause]++;
      this.lastError = { cause, message: scrub(err.message, this.secrets), at: Date.now() };
      this.log.warn(
        { broker, cause, err: err.message, retryInMs: client.options.reconnectPeriod },
        `MQTT connection failed (${cause}): ${err.message}`,
      );
    });
  }

  private get connected(): boolean {
    return this.client?.connected === true;
  }

  /**
   * Sessions are clean, so the broker forgets subscriptions when a connection ends: mqtt.js
   * (`resubscribe`, on by default) subscribes again after each reconnection. A subscription made
   * while the broker is away is sent once connected.
   */
  subscribe(filter: string, onMessage: OnMessage): void {
    this.listeners.set(filter, onMessage);
    if (this.client) this.subscribeTo(this.client, filter);
  }

  private subscribeTo(client: MqttClient, filter: string): void {
    client.subscribe(filter, { qos: 1 }, (err, granted) => {
      // A connection lost before the SUBACK: mqtt.js subscribes again on the next one.
      if (err) this.log.debug({ filter, err: err.message }, 'subscription not acknowledged');
      // A broker's ACL refuses a subscription with the return code 128.
      else if (granted?.some((g) => g.qos === 128))
        this.log.warn({ filter }, `the MQTT broker refused Argus' subscription to ${filter}`);
    });
  }

  private send(topic: string, payload: string | Buffer, qos: 0 | 1, retain: boolean): void {
    this.client?.publish(topic, payload, { qos, retain }, (err) => {
      if (err) this.log.debug({ topic, err: err.message }, 'publish failed');
    });
  }

  private flush(): void {
    this.send(this.statusTopic, 'online', 1, true);
    for (const [topic, payload] of this.states) this.send(topic, payload, 1, true);
    this.states.clear();
    for (const e of this.events.splice(0)) this.send(e.topic, e.payload, 1, false);
  }

  detection(topic: string, payload: string): void {
    if (this.connected) this.send(topic, payload, 0, false);
    else this.detectionsDropped++;
  }

  event(topic: string, payload: string): void {
    if (this.connected) return this.send(topic, payload, 1, false);
    this.events.push({ topic, payload });
    if (this.events.length > this.cfg.buffer_size) {
      this.events.shift();
      this.eventsDropped++;
    }
  }

  state(topic: string, payload: string | Buffer): void {
    if (this.connected) this.send(topic, payload, 1, true);
    else {
      // Sent at the reconnection in the order last written (a mode after the settings it brought).
      this.states.delete(topic);
      this.states.set(topic, payload);
    }
  }

  stats(): OutputStats {
    return {
      connected: this.connected,
      reconnects: this.reconnects,
      detectionsDropped: this.detectionsDropped,
      eventsDropped: this.eventsDropped,
      buffered: this.events.length + this.states.size,
      lastError: this.lastError && { ...this.lastError },
      failures: { ...this.failures },
    };
  }

  /** Publishes `offline` (when connected), waits for what is in flight, and disconnects. */
  async stop(timeoutMs = 3000): Promise<void> {
    const client = this.client;
    if (!client) return;
    this.client = undefined;
    if (client.connected) {
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, timeoutMs);
        client.publish(this.statusTopic, 'offline', { qos: 1, retain: true }, () => {
          clearTimeout(t);
          resolve();
        });
      });
    }
    await Promise.race([client.endAsync(), new Promise((r) => setTimeout(r, timeoutMs))]);
    if (client.connected) client.end(true);
  }
}
