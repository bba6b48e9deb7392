import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { letterbox, LETTERBOX_PAD } from '../../../src/core/geometry.js';
import { compare, features, greyOf, residual, uniformity } from '../../../src/health/index.js';
import { picture, scene, SIDE } from './scenes.js';

const s = scene(3);
const ref = features(greyOf(picture(s, { noise: 2, seed: 1 })));
const measure = (o: Parameters<typeof picture>[1]) => compare(features(greyOf(picture(s, o))), ref);

describe('health signals on synthetic pictures', () => {
  it('the grey image leaves the letterbox padding out and averages by a whole step', () => {
    // A 4:3 source in a 160 square: content 160×120 at padTop 20, padding 114 around it.
    const geometry = letterbox(400, 300, SIDE);
    const data = Buffer.alloc(SIDE * SIDE * 3, LETTERBOX_PAD);
    for (let y = geometry.padTop; y < geometry.padTop + geometry.innerH; y++)
      data.fill(10, y * SIDE * 3, (y + 1) * SIDE * 3);
    const g = greyOf({ data, geometry }, 80);
    assert.deepEqual([g.w, g.h], [80, 60]);
    assert.ok(g.luma.every((v) => v === 10));
  });

  it('the same scene, with other sensor noise: nothing lost, as sharp, not shifted', () => {
    const m = measure({ noise: 2, seed: 2 });
    assert.ok(m.blank < 0.05, `blank ${m.blank}`);
    assert.ok(Math.abs(m.sharpness - 1) < 0.15, `sharpness ${m.sharpness}`);
    assert.equal(m.shift, 0);
    assert.ok(m.match0 > 0.8, `match0 ${m.match0}`);
  });

  it('defocus: sharpness falls below half the reference, the view is not called lost', () => {
    const m = measure({ blur: 2, noise: 1 });
    assert.ok(m.sharpness < 0.5, `sharpness ${m.sharpness}`);
    assert.ok(m.blank < 0.5, `blank ${m.blank}`);
  });

  it('covered: 70 % of the view flat and dark is lost detail', () => {
    const m = measure({ noise: 1, patch: { x0: 0, y0: 0, x1: SIDE, y1: 112, v: 30 } });
    assert.ok(m.blank >= 0.5, `blank ${m.blank}`);
  });

  it('moved: registration finds the view shifted by 10 % (not a raw difference)', () => {
    const m = measure({ noise: 2, dx: 16 });
    assert.ok(Math.abs(m.shift - 0.1) <= 0.03, `shift ${m.shift}`);
    assert.ok(m.match > m.match0 + 0.05, `match ${m.match} vs unshifted ${m.match0}`);
  });

  it('night: a third of the light and more noise lose nothing, blur nothing, move nothing', () => {
    const m = measure({ gain: 0.35, noise: 6 });
    assert.ok(m.blank < 0.2, `blank ${m.blank}`);
    assert.ok(m.sharpness > 0.7, `sharpness ${m.sharpness}`);
    assert.equal(m.shift, 0);
  });

  it('one colour: a picture all one colour is uniform, the scene is not', () => {
    assert.equal(uniformity(new Float32Array(300).fill(77)), 1);
    assert.ok(ref.uniformity < 0.75, `scene ${ref.uniformity}`);
  });

  it('residual: the very same picture is 0, sensor noise is not', () => {
    const a = picture(s, { noise: 2, seed: 1 }).data;
    assert.equal(residual(a, Buffer.from(a)), 0);
    assert.ok(residual(a, picture(s, { noise: 2, seed: 9 }).data) > 0.2);
    assert.equal(residual(a, a.subarray(3)), Infinity);
  });
});
