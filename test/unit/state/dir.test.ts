import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  configStateName,
  realConfigPath,
  resolveStateDir,
  sharedStateDir,
} from '../../../src/state/index.js';
import { tempDir } from '../../helpers/env.js';

const hash8 = (s: string): string => createHash('sha256').update(s).digest('hex').slice(0, 8);

describe('state directory', () => {
  it("systemd's STATE_DIRECTORY wins (its first path), then the config, then the config's own directory", () => {
    const env = { STATE_DIRECTORY: '/var/lib/argus:/var/lib/other', XDG_STATE_HOME: '/x' };
    const config = '/etc/argus/argus.yaml';
    assert.deepEqual(resolveStateDir('/srv/argus', env, '/etc/argus', config), {
      dir: '/var/lib/argus',
      from: 'systemd',
    });
    assert.deepEqual(resolveStateDir(undefined, env, '/etc/argus', config), {
      dir: '/var/lib/argus',
      from: 'systemd',
    });
    assert.deepEqual(resolveStateDir('state', {}, '/etc/argus', config), {
      dir: '/etc/argus/state',
      from: 'config',
    });
    assert.deepEqual(resolveStateDir('/srv/argus', {}, '/etc/argus', config), {
      dir: '/srv/argus',
      from: 'config',
    });
    assert.deepEqual(resolveStateDir(undefined, { XDG_STATE_HOME: '/x' }, '/etc/argus', config), {
      dir: `/x/argus/argus-${hash8(config)}`,
      from: 'default',
    });
    assert.deepEqual(resolveStateDir(undefined, { XDG_STATE_HOME: 'relative' }, '/etc/argus', config), {
      dir: `${homedir()}/.local/state/argus/argus-${hash8(config)}`,
      from: 'default',
    });
    assert.equal(sharedStateDir({ XDG_STATE_HOME: '/x' }), '/x/argus');
  });

  it("names a config's own directory by its file's name and a hash of its real path", () => {
    assert.equal(configStateName('/home/me/demo.yaml'), `demo-${hash8('/home/me/demo.yaml')}`);
    assert.equal(configStateName('/home/me/demo.YML'), `demo-${hash8('/home/me/demo.YML')}`);
    assert.equal(configStateName('/home/me/cams.conf'), `cams.conf-${hash8('/home/me/cams.conf')}`);
    // Two files of one name in two folders: two directories.
    assert.notEqual(configStateName('/a/argus.yaml'), configStateName('/b/argus.yaml'));
    // Odd characters, a leading dot and a long name make a plain, bounded directory name.
    assert.equal(configStateName('/c/my cams é.yaml'), `my_cams__-${hash8('/c/my cams é.yaml')}`);
    assert.equal(configStateName('/c/.hidden.yaml'), `hidden-${hash8('/c/.hidden.yaml')}`);
    assert.equal(configStateName('/c/....yaml'), `config-${hash8('/c/....yaml')}`);
    const long = `/c/${'x'.repeat(100)}.yaml`;
    assert.equal(configStateName(long), `${'x'.repeat(40)}-${hash8(long)}`);
  });

  it('derives it from the real path: a link to the file is the same config; a missing file its absolute path', async (t) => {
    const dir = await tempDir(t);
    await mkdir(join(dir, 'etc'));
    const file = join(dir, 'etc', 'argus.yaml');
    await writeFile(file, 'cameras: {}\n');
    await symlink(file, join(dir, 'link.yaml'));
    const real = realConfigPath(file);
    assert.equal(realConfigPath(join(dir, 'link.yaml')), real);
    assert.equal(realConfigPath(join(dir, 'etc', '..', 'etc', 'argus.yaml')), real);
    assert.equal(realConfigPath('/no/such/argus.yaml'), '/no/such/argus.yaml');
  });
});
