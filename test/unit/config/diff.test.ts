import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { diffCameras, diffConfig } from '../../../src/config/diff.js';
import { cameraConfig, config } from '../../helpers/config.js';

describe('config diff (reload)', () => {
  it('sorts cameras into added, removed, changed, moved, retuned and unchanged', () => {
    const a = cameraConfig({ url: 'rtsp://h/a' });
    const b = cameraConfig({ url: 'rtsp://h/b' });
    assert.deepEqual(
      diffCameras(
        { a, b, c: a, m: a, n: a, r: a, z: a },
        {
          a,
          b: { ...b, fps: 2 },
          d: b,
          m: { ...a, model: 'plates' },
          n: { ...a, model: 'plates', fps: 1 },
          r: { ...a, detect: false, priority: 9, snapshots: false },
          z: { ...a, enabled: false, detect: false },
        },
      ),
      {
        added: ['d'],
        removed: ['c'],
        changed: ['b', 'n', 'z'],
        moved: ['m'],
        retuned: ['r'],
        unchanged: ['a'],
      },
      'a camera whose model alone changed moves; whose stream is the same is retuned; else it restarts',
    );
  });

  it('names the other sections that changed: they need a restart', () => {
    const before = config({ cameras: { a: { url: 'rtsp://h/a' } } });
    const after = config({
      cameras: { a: { url: 'rtsp://h/a', priority: 9 } },
      scheduler: { max_batch: 8 },
      mqtt: { base_topic: 'site' },
    });
    const changes = diffConfig(before, after);
    assert.deepEqual(changes.cameras.changed, []);
    assert.deepEqual(changes.cameras.retuned, ['a'], 'a priority needs no new ffmpeg');
    assert.deepEqual(changes.needRestart.sort(), ['mqtt', 'scheduler']);
    assert.deepEqual(diffConfig(before, before).needRestart, []);
  });

  it('applies models and detector settings at once: they need no restart', () => {
    const before = config({});
    const after = config({
      model: undefined,
      models: { default: { path: 'other.onnx' }, plates: { remote: { url: 'http://gpu:8000', model: 'p' } } },
      detector: { workers: 1 },
    });
    assert.deepEqual(diffConfig(before, after).needRestart, []);
  });
});
