/** MQTT control packet types, by the high four bits of a packet's first byte. */
const PACKET_TYPES = [
  'reserved',
  'connect',
  'connack',
  'publish',
  'puback',
  'pubrec',
  'pubrel',
  'pubcomp',
  'subscribe',
  'suback',
  'unsubscribe',
  'unsuback',
  'pingreq',
  'pingresp',
  'disconnect',
  'auth',
] as const;

export interface Oversize {
  type: (typeof PACKET_TYPES)[number];
  /** The remaining length the packet announced; Infinity when its length field is malformed. */
  bytes: number;
}

/**
 * Follows the packet boundaries of one connection's MQTT byte stream by reading only each
 * packet's fixed header (its type and remaining length, MQTT 3.1.1 §2.2) and skipping the rest,
 * so a packet longer than `maxBytes` is known from its first few bytes, long before its body has
 * arrived. aedes and mqtt-packet have no such limit: their parser buffers a packet whole.
 */
export class PacketSizeGuard {
  /** The first byte of the fixed header being read; -1 between packets. */
  private first = -1;
  private length = 0;
  private lengthBytes = 0;
  /** Bytes of the current packet's body still to come. */
  private skip = 0;

  constructor(private readonly maxBytes: number) {}

  /** Reads the stream's next chunk; returns the first packet in it that is too long. */
  check(chunk: Uint8Array): Oversize | undefined {
    let i = 0;
    while (i < chunk.length) {
      if (this.skip > 0) {
        const n = Math.min(this.skip, chunk.length - i);
        this.skip -= n;
        i += n;
        continue;
      }
      const byte = chunk[i++]!;
      if (this.first < 0) {
        this.first = byte;
        this.length = 0;
        this.lengthBytes = 0;
        continue;
      }
      // The remaining length: 7 bits a byte, least significant first, at most 4 bytes.
      this.length += (byte & 0x7f) * 128 ** this.lengthBytes++;
      const type = PACKET_TYPES[this.first >> 4]!;
      if (byte & 0x80) {
        if (this.lengthBytes === 4) return { type, bytes: Infinity };
        continue;
      }
      this.first = -1;
      if (this.length > this.maxBytes) return { type, bytes: this.length };
      this.skip = this.length;
    }
    return undefined;
  }
}
