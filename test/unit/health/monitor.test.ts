import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sectionConfig } from '../../../src/config/schema.js';
import {
  compare,
  features,
  greyOf,
  HealthMonitor,
  isModeSwitch,
  modeOf,
  OTHER_MODE,
  type Features,
  type HealthState,
} from '../../../src/health/index.js';
import { levels, picture, scene, SIDE, tint } from './scenes.js';

const settings = sectionConfig('health', {});
const s = scene(5);
const normal = (seed: number): Features => features(greyOf(picture(s, { noise: 2, seed })));
const covered = features(greyOf(picture(s, { noise: 1, patch: { x0: 0, y0: 0, x1: SIDE, y1: 120, v: 25 } })));
const dark = features(greyOf(picture(s, { gain: 0.35, noise: 6 })));

/** Feeds one sample a second from `t` (s) for `n` seconds; the states seen, by second. */
function feed(
  m: HealthMonitor,
  t: number,
  n: number,
  f: (i: number) => Features,
  res = 1,
  bucket = 2,
): HealthState[] {
  const seen: HealthState[] = [];
  for (let i = 0; i < n; i++) {
    m.observe({ ts: (t + i) * 1000, bucket, features: f(i), residual: res });
    seen.push(m.current().state);
  }
  return seen;
}

describe('HealthMonitor (a fake clock: one sample a second)', () => {
  const learnt = (): HealthMonitor => {
    const m = new HealthMonitor(settings, 0);
    feed(m, 0, settings.learn_s + 1, (i) => normal(i));
    return m;
  };

  it('learns the reference first (learning, only blackout and frozen judged), then is ok', () => {
    const m = new HealthMonitor(settings, 0);
    feed(m, 0, 3, () => covered);
    assert.equal(m.current().learning, true);
    assert.equal(m.current().state, 'ok');
    feed(m, 3, settings.learn_s, (i) => normal(i));
    assert.equal(m.current().learning, false);
  });

  it('covered is said after its window, not one sample sooner; ok again after clear_s', () => {
    const m = learnt();
    const t = settings.learn_s + 1;
    const seen = feed(m, t, 10, () => covered);
    const first = seen.indexOf('covered');
    assert.equal(first, settings.windows.covered, seen.join());
    assert.equal(m.current().since, (t + first) * 1000);
    assert.ok(m.current().measure! >= settings.thresholds.covered);
    const back = feed(m, t + 10, 10, (i) => normal(100 + i));
    assert.equal(back.indexOf('ok'), settings.clear_s, back.join());
  });

  it('a fault that lasts less than its window (headlights, rain for a moment) is never said', () => {
    const m = learnt();
    const t = settings.learn_s + 1;
    const seen = [
      ...feed(m, t, settings.windows.covered - 1, () => covered),
      ...feed(m, t + 10, 5, (i) => normal(200 + i)),
      ...feed(m, t + 20, settings.windows.covered - 1, () => covered),
    ];
    assert.ok(
      seen.every((x) => x === 'ok'),
      seen.join(),
    );
  });

  it('dusk: a third of the light with noise raises nothing', () => {
    const m = learnt();
    const seen = feed(m, settings.learn_s + 1, 30, () => dark);
    assert.ok(
      seen.every((x) => x === 'ok'),
      seen.join(),
    );
  });

  it('frozen: the picture unchanged (residual 0) for its window; never for a still camera', () => {
    const m = learnt();
    const seen = feed(m, settings.learn_s + 1, 12, (i) => normal(i), 0);
    assert.equal(seen.indexOf('frozen'), settings.windows.frozen, seen.join());
    const still = new HealthMonitor({ ...settings, still: true }, 0);
    assert.ok(feed(still, 0, 60, () => normal(1), 0).every((x) => x === 'ok'));
  });

  it('another time of day learns its own reference; reset forgets them all', () => {
    const m = learnt();
    feed(m, 100, 2, (i) => normal(i), 1, 3);
    assert.equal(m.current().learning, true, 'the night bucket learns');
    assert.deepEqual([...m.references().keys()], [2]);
    const day = learnt();
    const change = day.reset(200_000);
    assert.equal(change?.report.learning, true, 'a learnt camera learns again');
    assert.equal(day.references().size, 0);
  });

  describe('an IR day/night switch (issue 49 item 3): a reference per mode', () => {
    const colour = (seed: number): Features => features(greyOf(tint(picture(s, { noise: 2, seed }))));
    // IR: every block grey, contrast to a third and brighter: the structure kept.
    const ir = (seed: number): Features =>
      features(greyOf(levels(picture(s, { noise: 2, seed }), (v) => 160 + 0.3 * (v - 110))));
    const learntInColour = (): HealthMonitor => {
      const m = new HealthMonitor(settings, 0);
      feed(m, 0, settings.learn_s + 1, (i) => colour(i));
      return m;
    };

    it('the whole picture turned grey with its structure kept learns a monochrome reference, never covered', () => {
      const m = learntInColour();
      const t = settings.learn_s + 1;
      const seen = feed(m, t, settings.learn_s + 20, (i) => ir(300 + i));
      assert.ok(
        seen.every((x) => x === 'ok'),
        seen.join(),
      );
      assert.deepEqual(
        [...m.references().keys()].sort((a, b) => a - b),
        [2, 2 + OTHER_MODE],
      );
      assert.equal(m.current().learning, false);
      // Back to colour: judged at once against the colour reference, still ok.
      feed(m, t + 100, 3, (i) => colour(400 + i));
      assert.equal(m.current().learning, false);
      assert.equal(m.current().state, 'ok');
    });

    it('faults other than blackout and frozen wait while the new mode learns; frozen is still said', () => {
      const m = learntInColour();
      const seen = feed(m, settings.learn_s + 1, 12, (i) => ir(300 + i), 0);
      assert.equal(m.current().learning, true);
      assert.equal(seen.indexOf('frozen'), settings.windows.frozen, seen.join());
    });

    it('a grey cloth over the whole view (structure gone) is still covered', () => {
      const m = learntInColour();
      const cloth = features(
        greyOf(picture(s, { noise: 2, patch: { x0: 0, y0: 0, x1: SIDE, y1: SIDE, v: 90 } })),
      );
      const seen = feed(m, settings.learn_s + 1, 10, () => cloth);
      assert.equal(seen.indexOf('covered'), settings.windows.covered, seen.join());
      assert.equal(m.current().learning, false, 'no monochrome reference learnt from a cloth');
    });

    it('the rule itself: a switch needs every block grey, a clearly coloured reference and the structure kept', () => {
      const ref = colour(1);
      const t = settings.thresholds;
      const pic = ir(2);
      assert.ok(modeOf(pic) === 'monochrome' && modeOf(ref) === 'colour');
      assert.equal(isModeSwitch(compare(pic, ref), pic, ref, t), true);
      const flat = features(
        greyOf(picture(s, { noise: 2, patch: { x0: 0, y0: 0, x1: SIDE, y1: SIDE, v: 90 } })),
      );
      assert.equal(isModeSwitch(compare(flat, ref), flat, ref, t), false, 'structure gone');
      const tinted = colour(3);
      assert.equal(isModeSwitch(compare(tinted, ref), tinted, ref, t), false, 'still coloured');
    });
  });

  describe('moved against covered (issue 49 item 4): covered judged with the shift compensated', () => {
    // A view whose only detail lies along its top edge (a car park's lines), the rest flat.
    const top = (x: number, y: number): number => (y < 50 ? s(x, y) : 100);
    const view = (seed: number, dy = 0): Features => features(greyOf(picture(top, { noise: 2, seed, dy })));

    it('tilted so the detail leaves the view: moved, never covered', () => {
      const m = new HealthMonitor(settings, 0);
      feed(m, 0, settings.learn_s + 1, (i) => view(i));
      const tilted = view(500, 35);
      const plain = compare(tilted, m.references().get(2)!.features);
      assert.ok(plain.blank >= settings.thresholds.covered, `blank in place ${plain.blank}`);
      assert.ok(plain.blankShifted < settings.thresholds.covered, `blank shifted ${plain.blankShifted}`);
      const seen = feed(m, settings.learn_s + 1, 12, (i) => view(600 + i, 35));
      assert.ok(!seen.includes('covered'), seen.join());
      assert.equal(seen.indexOf('moved'), settings.windows.moved, seen.join());
    });

    it('a cover stays covered: without a shift found, blank is judged in place', () => {
      const m = new HealthMonitor(settings, 0);
      feed(m, 0, settings.learn_s + 1, (i) => view(i));
      const cloth = features(
        greyOf(picture(top, { noise: 2, patch: { x0: 0, y0: 0, x1: SIDE, y1: 60, v: 40 } })),
      );
      const seen = feed(m, settings.learn_s + 1, 10, () => cloth);
      assert.equal(seen.indexOf('covered'), settings.windows.covered, seen.join());
    });
  });
});
