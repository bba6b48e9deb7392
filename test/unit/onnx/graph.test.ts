import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AttrType, decodeModel, fromFloat16Bits, toFloat16Bits } from '../../../src/onnx/graph.js';
import { ProtoWriter } from '../../../src/onnx/proto.js';

describe('decoding', () => {
  it('reads int and ints attributes as signed int64', () => {
    const attr = (name: string, type: number, set: (w: ProtoWriter) => ProtoWriter): ProtoWriter =>
      set(new ProtoWriter().string(1, name)).varint(20, type);
    const node = new ProtoWriter()
      .string(1, 'x')
      .string(2, 'y')
      .string(4, 'Transpose')
      .message(
        5,
        attr('axis', AttrType.INT, (w) => w.varint(3, -1)),
      )
      .message(
        5,
        attr('perm', AttrType.INTS, (w) => w.packedInt64(8, [-1, 0, 2])),
      );
    const bytes = new ProtoWriter().message(7, new ProtoWriter().message(1, node)).finish();
    const [axis, perm] = decodeModel(bytes).graph.nodes[0]!.attributes;
    assert.equal(axis!.int, -1n);
    assert.deepEqual(perm!.ints, [-1n, 0n, 2n]);
  });
});

describe('float16 rounding', () => {
  it('rounds to nearest even and handles the edges', () => {
    const cases: [number, number][] = [
      [1, 0x3c00],
      [-2, 0xc000],
      [65504, 0x7bff],
      [65520, 0x7c00], // rounds up past the largest half: infinity
      [2 ** -24, 0x0001], // smallest subnormal
      [2 ** -26, 0x0000], // below half of it: zero
      [1 + 2 ** -11, 0x3c00], // a tie rounds to even
      [1 + 3 * 2 ** -11, 0x3c02],
      [-0, 0x8000],
      [Infinity, 0x7c00],
      [0.1, 0x2e66],
    ];
    const bits = toFloat16Bits(Float32Array.from(cases.map(([v]) => v)));
    cases.forEach(([v, want], i) => assert.equal(bits[i], want, `${v}`));
    assert.ok((toFloat16Bits(Float32Array.of(NaN))[0]! & 0x7fff) > 0x7c00, 'NaN stays NaN');
  });

  it('every half value survives half → float → half', () => {
    const all = Uint16Array.from({ length: 65536 }, (_, i) => i).filter(
      (h) => (h & 0x7c00) !== 0x7c00 || (h & 0x3ff) === 0,
    );
    const back = toFloat16Bits(fromFloat16Bits(all));
    for (let i = 0; i < all.length; i++)
      if (back[i] !== all[i]) assert.fail(`0x${all[i]!.toString(16)} became 0x${back[i]!.toString(16)}`);
  });
});
