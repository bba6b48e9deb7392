import type { Output } from '../../src/publish/mqtt-output.js';

/** Records what would be published, by kind: per-frame detections, events, retained states. */
export class FakeOutput implements Output {
  sent: { kind: string; topic: string; payload: string }[] = [];
  detection(topic: string, payload: string): void {
    this.sent.push({ kind: 'detection', topic, payload });
  }
  event(topic: string, payload: string): void {
    this.sent.push({ kind: 'event', topic, payload });
  }
  state(topic: string, payload: string): void {
    this.sent.push({ kind: 'state', topic, payload });
  }
  of(kind: string) {
    return this.sent.filter((s) => s.kind === kind);
  }
}
