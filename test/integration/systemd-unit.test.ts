import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { repoRoot } from '../helpers/env.js';

const unitFile = join(repoRoot, 'systemd/argus.service');
const unit = readFileSync(unitFile, 'utf8');
const values = (key: string): string[] =>
  [...unit.matchAll(new RegExp(`^${key}=(.*)$`, 'gm'))].map((m) => m[1]!.trim());

const hasAnalyze = spawnSync('systemd-analyze', ['--version']).status === 0;
const needsAnalyze = hasAnalyze
  ? false
  : 'systemd-analyze not found (.ci/run installs the systemd package): unit check skipped';

describe('systemd/argus.service', () => {
  it('passes systemd-analyze verify', { skip: needsAnalyze }, () => {
    const r = spawnSync('systemd-analyze', ['verify', unitFile], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
  });

  it(
    'has an overall exposure of at most 2.0 (systemd-analyze security --offline)',
    { skip: needsAnalyze },
    () => {
      const r = spawnSync('systemd-analyze', ['security', '--offline=yes', '--threshold=20', unitFile], {
        encoding: 'utf8',
      });
      const open = r.stdout.split('\n').filter((l) => l.startsWith('✗'));
      const level = /Overall exposure level for argus\.service: (\d+\.\d+)/.exec(r.stdout);
      assert.ok(level, r.stdout + r.stderr);
      assert.ok(Number(level[1]) <= 2.0, `exposure ${level[1]}:\n${open.join('\n')}`);
      assert.equal(r.status, 0, `--threshold=20 failed:\n${open.join('\n')}`);
    },
  );

  it('keeps what the daemon needs while sandboxed', () => {
    // The daemon's sd_notify messages come from a child systemd-notify: `main` would drop them.
    assert.deepEqual(values('NotifyAccess'), ['all']);
    assert.deepEqual(values('Type'), ['notify']);
    // V8's JIT maps writable code.
    assert.deepEqual(values('MemoryDenyWriteExecute'), []);
    // GPUs: the host's /dev, NVIDIA and DRM devices allowed; no PrivateDevices=yes, which hides them.
    assert.deepEqual(values('PrivateDevices'), []);
    assert.deepEqual(values('DevicePolicy'), ['closed']);
    assert.deepEqual(values('DeviceAllow'), ['char-nvidia* rw', 'char-drm rw']);
    assert.deepEqual(values('RestrictAddressFamilies'), ['AF_INET AF_INET6 AF_UNIX']);
    assert.deepEqual(values('CapabilityBoundingSet'), ['']);
  });
});
