import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { providerWarning } from '../../../src/commands/index.js';
import type { ProviderName } from '../../../src/config/index.js';
import { config } from '../../helpers/config.js';

describe('argus validate: the GPU provider warning (issue 46)', () => {
  it('names each configured GPU provider that cannot load here, with why, in one line; none when all load', async () => {
    const asked: ProviderName[] = [];
    const probe = (why: Partial<Record<ProviderName, string>>) => (p: ProviderName) => {
      asked.push(p);
      return Promise.resolve(why[p] ?? null);
    };
    const cfg = config({ detector: { providers: ['tensorrt', 'webgpu', 'cpu'] } });
    assert.equal(
      await providerWarning(
        cfg,
        probe({ tensorrt: 'Failed to load shared library', webgpu: 'No supported adapters' }),
      ),
      'warning: configured GPU providers cannot load on this machine: tensorrt (Failed to load shared library), webgpu (No supported adapters); the daemon would fall back along the providers list here',
    );
    assert.deepEqual(asked, ['tensorrt', 'webgpu'], 'the CPU is never probed');
    assert.equal(
      await providerWarning(cfg, probe({ webgpu: 'No supported adapters' })),
      'warning: a configured GPU provider cannot load on this machine: webgpu (No supported adapters); the daemon would fall back along the providers list here',
    );
    assert.equal(await providerWarning(cfg, probe({})), null);
    assert.equal(
      await providerWarning(config({ detector: { providers: ['cpu'] } }), probe({ cpu: 'x' })),
      null,
    );
  });
});
