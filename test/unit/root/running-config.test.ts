import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CameraConfig, LoadedConfig } from '../../../src/config/index.js';
import { RunningConfig } from '../../../src/root/index.js';
import { cameraConfig, config } from '../../helpers/config.js';

function loaded(cameras: Record<string, CameraConfig>): LoadedConfig {
  return { file: 'argus.yaml', config: { ...config(), cameras }, secrets: [], lineOf: () => undefined };
}

describe('RunningConfig (the one store of the configuration that runs, issue 44)', () => {
  it('is read where it is needed, and tells who listens of each change of cameras with what ran before', () => {
    const first = { gate: cameraConfig() };
    const running = new RunningConfig(loaded(first));
    const now = running.cameras; // what a part holds: a reading, not a copy
    const heard: Record<string, CameraConfig>[] = [];
    running.onCameras((before) => heard.push(before));
    assert.equal(now(), first);
    const second = { gate: cameraConfig({ fps: 2 }), yard: cameraConfig() };
    running.set(loaded(second));
    assert.equal(now(), second, 'the reading follows the store');
    assert.deepEqual(heard, [first]);
    // The same cameras with other models or detector settings (a reload that changed only
    // those): nothing for the parts to hear.
    running.set({ ...running.current(), config: { ...running.current().config, cameras: second } });
    assert.equal(heard.length, 1);
  });
});
