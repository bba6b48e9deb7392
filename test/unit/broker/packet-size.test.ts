import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { PacketSizeGuard } from '../../../src/broker/packet-size.js';

/** An MQTT packet of `type` (high four bits of its first byte) with a body of `length` bytes. */
function packet(type: number, length: number): Buffer {
  const len: number[] = [];
  let n = length;
  do {
    const byte = n % 128;
    n = Math.floor(n / 128);
    len.push(n > 0 ? byte | 0x80 : byte);
  } while (n > 0);
  return Buffer.concat([Buffer.from([type << 4, ...len]), Buffer.alloc(length, 0xab)]);
}

/** `data` cut at the given offsets, as a socket might deliver it. */
function chunks(data: Buffer, cuts: number[]): Buffer[] {
  const at = [...new Set(cuts.map((c) => c % (data.length + 1)))].sort((a, b) => a - b);
  return [0, ...at].map((from, i) => data.subarray(from, [...at, data.length][i]));
}

describe('PacketSizeGuard', () => {
  it('knows a packet is too long from its header, before its body', () => {
    const guard = new PacketSizeGuard(1000);
    assert.equal(guard.check(packet(3, 1000)), undefined, 'exactly the limit passes');
    // A 100 MB publish: only its first five bytes are needed.
    const big = packet(3, 100 * 1024 * 1024).subarray(0, 5);
    assert.deepEqual(guard.check(big), { type: 'publish', bytes: 100 * 1024 * 1024 });
    assert.deepEqual(new PacketSizeGuard(10).check(packet(1, 11).subarray(0, 2)), {
      type: 'connect',
      bytes: 11,
    });
  });

  it('reads a length field split across chunks, and skips bodies split across chunks', () => {
    const guard = new PacketSizeGuard(20_000);
    const header = packet(8, 20_001).subarray(0, 4); // 0x80, then three length bytes
    assert.equal(guard.check(packet(12, 0)), undefined, 'a PINGREQ has no body');
    const body = packet(3, 300);
    assert.equal(guard.check(body.subarray(0, 2)), undefined);
    assert.equal(guard.check(body.subarray(2, 150)), undefined);
    assert.equal(guard.check(Buffer.concat([body.subarray(150), header.subarray(0, 2)])), undefined);
    assert.deepEqual(guard.check(header.subarray(2)), { type: 'subscribe', bytes: 20_001 });
  });

  it('calls a length field of more than four bytes malformed', () => {
    const guard = new PacketSizeGuard(Number.MAX_SAFE_INTEGER);
    assert.deepEqual(guard.check(Buffer.from([0x30, 0xff, 0xff, 0xff, 0xff])), {
      type: 'publish',
      bytes: Infinity,
    });
  });

  it('lets any stream of packets within the limit through, however it is cut, and finds the first one over it (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 1, max: 14 }), fc.integer({ min: 0, max: 300 })), {
          maxLength: 20,
        }),
        fc.integer({ min: 301, max: 300_000 }),
        fc.array(fc.nat(), { maxLength: 10 }),
        (fitting, over, cuts) => {
          const guard = new PacketSizeGuard(300);
          const stream = Buffer.concat([...fitting.map(([t, n]) => packet(t, n)), packet(3, over)]);
          const found = chunks(stream, cuts)
            .map((c) => guard.check(c))
            .filter((f) => f !== undefined);
          assert.deepEqual(found[0], { type: 'publish', bytes: over });
        },
      ),
    );
  });
});
