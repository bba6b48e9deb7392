import { createConnection, type Socket } from 'node:net';
import { wire } from './mqtt.js';

/** SUBSCRIBE (MQTT 3.1.1) to one filter at `qos`. */
export function subscribePacket(filter: string, qos: 0 | 1 | 2, id = 1): Buffer {
  const f = Buffer.from(filter);
  const body = Buffer.concat([
    Buffer.from([id >> 8, id & 0xff, f.length >> 8, f.length & 0xff]),
    f,
    Buffer.from([qos]),
  ]);
  return Buffer.concat([Buffer.from([0x82, body.length]), body]);
}

export interface StalledSubscriber {
  socket: Socket;
  /** Resolves when the broker closed the connection. */
  closed: Promise<void>;
  /** Bytes read before it stopped reading (CONNACK, SUBACK, perhaps a message or two). */
  read: number;
}

/**
 * A subscriber that stops reading: a raw TCP socket that sends CONNECT and SUBSCRIBE by hand,
 * reads until its SUBACK, then pauses, so the kernel's buffers fill and the broker's writes
 * to it queue up (issue 24's attack).
 */
export async function stalledSubscriber(
  port: number,
  filter: string,
  opts: { clientId?: string; qos?: 0 | 1 } = {},
): Promise<StalledSubscriber> {
  const socket = createConnection(port, '127.0.0.1');
  socket.on('error', () => undefined); // the broker is expected to cut it off
  const closed = new Promise<void>((r) => socket.once('close', () => r()));
  let data = Buffer.alloc(0);
  const sub: StalledSubscriber = { socket, closed, read: 0 };
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no SUBACK: ${data.toString('hex')}`)), 10_000);
    const onData = (d: Buffer): void => {
      data = Buffer.concat([data, d]);
      sub.read = data.length;
      // CONNACK (4 bytes), then SUBACK (0x90, length 3, id, granted QoS).
      if (data.length >= 9 && data[4] === 0x90) {
        clearTimeout(timer);
        socket.off('data', onData);
        socket.pause();
        resolve();
      }
    };
    socket.on('data', onData);
    socket.once('connect', () => {
      socket.write(wire.connect(opts.clientId ?? 'stalled'));
      socket.write(subscribePacket(filter, opts.qos ?? 0));
    });
    void closed.then(() => reject(new Error('the broker closed the connection before SUBACK')));
  });
  return sub;
}
