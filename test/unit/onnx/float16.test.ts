import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fromFloat16Bits, toFloat16Bits } from '../../../src/onnx/float16.js';

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
