import { topicMatches, type Inbox, type OnMessage, type Output } from '../../src/publish/mqtt-output.js';

/**
 * Records what would be published, by kind: per-frame detections, events, retained states.
 * A binary payload (a JPEG) is kept in `data`, its `payload` being its latin1 text.
 */
export class FakeOutput implements Output {
  sent: { kind: string; topic: string; payload: string; data?: Buffer }[] = [];
  detection(topic: string, payload: string): void {
    this.sent.push({ kind: 'detection', topic, payload });
  }
  event(topic: string, payload: string): void {
    this.sent.push({ kind: 'event', topic, payload });
  }
  state(topic: string, payload: string | Buffer): void {
    if (typeof payload === 'string') this.sent.push({ kind: 'state', topic, payload });
    else this.sent.push({ kind: 'state', topic, payload: payload.toString('latin1'), data: payload });
  }
  of(kind: string) {
    return this.sent.filter((s) => s.kind === kind);
  }
}

/** Records retained states like FakeOutput, and lets a test deliver messages to subscribers. */
export class FakeMqtt extends FakeOutput implements Inbox {
  readonly listeners = new Map<string, OnMessage>();
  subscribe(filter: string, onMessage: OnMessage): void {
    this.listeners.set(filter, onMessage);
  }
  deliver(topic: string, payload: string, retained = false): void {
    for (const [filter, onMessage] of this.listeners)
      if (topicMatches(filter, topic)) onMessage(payload, topic, retained);
  }
  /** Retained states published since the last call, topic → payload. */
  take(): Map<string, string> {
    const states = this.of('state').map((s) => [s.topic, s.payload] as const);
    this.sent = [];
    return new Map(states);
  }
}
