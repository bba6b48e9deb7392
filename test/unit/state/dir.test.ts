import assert from 'node:assert/strict';
import { homedir } from 'node:os';
import { describe, it } from 'node:test';
import { resolveStateDir } from '../../../src/state/index.js';

describe('state directory', () => {
  it("systemd's STATE_DIRECTORY wins (its first path), then the config, then ~/.local/state/argus", () => {
    const env = { STATE_DIRECTORY: '/var/lib/argus:/var/lib/other', XDG_STATE_HOME: '/x' };
    assert.deepEqual(resolveStateDir('/srv/argus', env, '/etc/argus'), {
      dir: '/var/lib/argus',
      from: 'systemd',
    });
    assert.deepEqual(resolveStateDir('state', {}, '/etc/argus'), { dir: '/etc/argus/state', from: 'config' });
    assert.deepEqual(resolveStateDir('/srv/argus', {}, '/etc/argus'), { dir: '/srv/argus', from: 'config' });
    assert.deepEqual(resolveStateDir(undefined, { XDG_STATE_HOME: '/x' }, '/etc'), {
      dir: '/x/argus',
      from: 'default',
    });
    assert.deepEqual(resolveStateDir(undefined, { XDG_STATE_HOME: 'relative' }, '/etc'), {
      dir: `${homedir()}/.local/state/argus`,
      from: 'default',
    });
  });
});
