import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CameraConfig } from '../../../src/config/index.js';
import { planCameras } from '../../../src/models/plan.js';
import { cameraConfig } from '../../helpers/config.js';
import { named, SPECIAL_NAMES } from '../../helpers/names.js';

const sizes =
  (s: Record<string, number>) =>
  (model: string): number | undefined =>
    s[model];

describe('planCameras (which camera changes a reload applies, once the models switched)', () => {
  it('moves a camera to a model of the same size without a restart; another size restarts it', () => {
    const running = { a: cameraConfig(), b: cameraConfig(), c: cameraConfig(), d: cameraConfig() };
    const wanted = {
      a: cameraConfig({ model: 'plates' }),
      b: cameraConfig({ model: 'big' }),
      c: cameraConfig(),
      d: cameraConfig({ fps: 2 }),
    };
    const plan = planCameras(
      running,
      wanted,
      sizes({ default: 320 }),
      sizes({ default: 320, plates: 320, big: 640 }),
    );
    assert.deepEqual(plan.changes, {
      added: [],
      removed: [],
      changed: ['d', 'b'],
      moved: ['a'],
      retuned: [],
      unchanged: ['c'],
    });
    assert.deepEqual(plan.held, []);
    assert.deepEqual(plan.cameras, named(wanted));
  });

  it("restarts the cameras of a model swapped for one of another size: ffmpeg letterboxes to the model's size", () => {
    const running = { a: cameraConfig(), b: cameraConfig({ model: 'plates' }) };
    const plan = planCameras(
      running,
      running,
      sizes({ default: 320, plates: 320 }),
      sizes({ default: 640, plates: 320 }),
    );
    assert.deepEqual([plan.changes.changed, plan.changes.unchanged], [['a'], ['b']]);
  });

  it('keeps the running settings of a camera whose new model did not load, and starts no new camera on it', () => {
    const running = { a: cameraConfig(), gone: cameraConfig({ model: 'old' }) };
    const wanted = {
      a: cameraConfig({ model: 'plates', fps: 2 }),
      gone: cameraConfig({ model: 'plates' }),
      fresh: cameraConfig({ model: 'plates' }),
    };
    // plates failed to load; old was removed by the same reload.
    const plan = planCameras(running, wanted, sizes({ default: 320, old: 320 }), sizes({ default: 320 }));
    assert.deepEqual(plan.held, ['a', 'gone', 'fresh']);
    assert.deepEqual(plan.cameras, named({ a: running.a }));
    assert.deepEqual(plan.changes, {
      added: [],
      removed: ['gone'],
      changed: [],
      moved: [],
      retuned: [],
      unchanged: ['a'],
    });
  });
});

describe('planCameras: names a user chose', () => {
  it('plans cameras named __proto__, constructor, toString, hasOwnProperty, valueOf as any other', () => {
    const running = named(SPECIAL_NAMES.map((n): [string, CameraConfig] => [n, cameraConfig()]));
    // A new file: `constructor` moves to plates, `toString` is gone, `__proto__` takes another fps.
    const wanted = named(
      SPECIAL_NAMES.filter((n) => n !== 'toString').map((n): [string, CameraConfig] => [
        n,
        n === 'constructor'
          ? cameraConfig({ model: 'plates' })
          : n === '__proto__'
            ? cameraConfig({ fps: 2 })
            : running[n]!,
      ]),
    );
    const plan = planCameras(running, wanted, sizes({ default: 320 }), sizes({ default: 320, plates: 320 }));
    assert.deepEqual(plan.cameras, wanted);
    assert.deepEqual(plan.changes, {
      added: [],
      removed: ['toString'],
      changed: ['__proto__'],
      moved: ['constructor'],
      retuned: [],
      unchanged: ['hasOwnProperty', 'valueOf'],
    });
    // The plan's cameras are the next reload's running ones: nothing in them is taken for a camera.
    const next = planCameras(
      plan.cameras,
      named<CameraConfig>(),
      sizes({ default: 320 }),
      sizes({ default: 320 }),
    );
    assert.deepEqual(next.changes.removed, ['__proto__', 'constructor', 'hasOwnProperty', 'valueOf']);
  });
});
