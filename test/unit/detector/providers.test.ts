import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ProviderName } from '../../../src/config/schema.js';
import {
  createWithFallback,
  describeProviderChoice,
  providerOption,
  shortReason,
} from '../../../src/detector/providers.js';

describe('provider fallback', () => {
  it('uses the first provider that loads and records why the others were skipped', async () => {
    const tried: ProviderName[] = [];
    const result = await createWithFallback(['tensorrt', 'cuda', 'webgpu', 'cpu'], (p) => {
      tried.push(p);
      if (p === 'webgpu' || p === 'cpu') return Promise.resolve(`session:${p}`);
      return Promise.reject(
        new Error(`OrtSessionOptionsAppendExecutionProvider_${p}: Failed to load shared library`),
      );
    });
    assert.deepEqual(tried, ['tensorrt', 'cuda', 'webgpu'], 'stops at the first that works');
    assert.equal(result.session, 'session:webgpu');
    assert.equal(result.provider, 'webgpu');
    assert.deepEqual(
      result.skipped.map((s) => s.provider),
      ['tensorrt', 'cuda'],
    );
    assert.match(
      describeProviderChoice(result.provider, result.skipped),
      /^using execution provider webgpu; skipped tensorrt \(.*Failed to load shared library\), cuda/,
    );
  });

  it('fails with every reason when nothing loads', async () => {
    await assert.rejects(
      createWithFallback(['cuda', 'cpu'], (p) => Promise.reject(new Error(`${p} broke`))),
      /no execution provider could load the model \(cuda: cuda broke; cpu: cpu broke\)/,
    );
  });

  it('says plainly when the first choice worked', () => {
    assert.equal(describeProviderChoice('cpu', []), 'using execution provider cpu');
  });

  it('builds onnxruntime-node provider options', () => {
    assert.equal(providerOption('cpu', 0), 'cpu');
    assert.deepEqual(providerOption('cuda', 1), { name: 'cuda', deviceId: 1 });
    assert.deepEqual(providerOption('tensorrt', 2), { name: 'tensorrt', deviceId: 2 });
    assert.deepEqual(providerOption('webgpu', 0), { name: 'webgpu' });
  });

  it('shortens ONNX Runtime errors to their reason', () => {
    const webgpu = new Error(
      '/onnxruntime_src/onnxruntime/core/providers/webgpu/webgpu_context.cc:136 onnxruntime::webgpu::WebGpuContext::Initialize(const onnxruntime::webgpu::WebGpuContextConfig&)::<lambda()> adapter_result.status == wgpu::RequestAdapterStatus::Success was false. Failed to get a WebGPU adapter: No supported adapters',
    );
    assert.equal(shortReason(webgpu), 'Failed to get a WebGPU adapter: No supported adapters');
    assert.equal(shortReason(new Error('plain\nsecond line')), 'plain');
  });
});
