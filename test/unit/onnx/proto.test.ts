import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ProtoWriter, readFields } from '../../../src/onnx/proto.js';

describe('protobuf wire codec', () => {
  it('round-trips varints (including negative int64), strings, floats and nested messages', () => {
    const inner = new ProtoWriter().string(1, 'héllo').float(2, 1.5);
    const buf = new ProtoWriter()
      .varint(1, 300)
      .varint(2, -1)
      .message(3, inner)
      .packedInt64(4, [1, 2, 300])
      .finish();
    const fields = [...readFields(buf)];
    assert.equal(fields[0]!.varint, 300n);
    assert.equal(BigInt.asIntN(64, fields[1]!.varint!), -1n);
    const nested = [...readFields(fields[2]!.bytes!)];
    assert.equal(new TextDecoder().decode(nested[0]!.bytes), 'héllo');
    assert.equal(nested[1]!.fixed32, 1.5);
    assert.deepEqual([...fields[3]!.bytes!], [1, 2, 0xac, 0x02], 'packed varints');
  });

  it('rejects truncated input', () => {
    const buf = new ProtoWriter().string(1, 'abcdef').finish();
    assert.throws(() => [...readFields(buf.subarray(0, 4))], /runs past the end/);
  });
});
