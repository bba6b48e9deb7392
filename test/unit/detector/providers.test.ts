import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ProviderName } from '../../../src/config/models.js';
import {
  createWithFallback,
  describeProviderChoice,
  providerOption,
  providerSessionOptions,
  shortReason,
} from '../../../src/detector/providers.js';
import { dumpEngineEntries } from '../../../src/detector/tensorrt.js';

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

  it("stops at once, with the model's own error, when the model is at fault, not the provider", async () => {
    const tried: string[] = [];
    const ofModel = (err: unknown): boolean => (err as Error).message.startsWith('output shape');
    await assert.rejects(
      createWithFallback(
        ['cuda', 'cpu'],
        (p) => {
          tried.push(p);
          return Promise.reject(new Error('output shape [1, 600] is not a YOLO detection output'));
        },
        ofModel,
      ),
      /^Error: output shape \[1, 600\] is not a YOLO detection output$/,
    );
    assert.deepEqual(tried, ['cuda']);
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

describe('what each provider is given', () => {
  const threads = { deviceId: 2, intraOpThreads: 0, interOpThreads: 0, spinning: false };
  const noSpin = { session: { intra_op: { allow_spinning: '0' }, inter_op: { allow_spinning: '0' } } };

  it('gives cuda and tensorrt their device, webgpu and cpu none (the binding reads no other key)', () => {
    const eps = (p: ProviderName): unknown => providerSessionOptions(p, threads).executionProviders;
    assert.deepEqual(eps('cpu'), ['cpu']);
    assert.deepEqual(eps('webgpu'), [{ name: 'webgpu' }]);
    assert.deepEqual(eps('cuda'), [{ name: 'cuda', deviceId: 2 }]);
    assert.deepEqual(eps('tensorrt'), [{ name: 'tensorrt', deviceId: 2 }]);
  });

  it("passes TensorRT's engine dump as session config entries, beside the spinning ones", () => {
    const o = providerSessionOptions('tensorrt', threads, dumpEngineEntries('/state/trt/k/engine_ctx.onnx'));
    assert.deepEqual(o.extra, {
      ...noSpin,
      ep: { context_enable: '1', context_file_path: '/state/trt/k/engine_ctx.onnx', context_embed_mode: '1' },
    });
    assert.equal(o.logSeverityLevel, 4, "a provider that cannot load is told by Argus' fallback line");
    assert.equal(o.graphOptimizationLevel, 'all');
  });

  it('gives threads and spinning only when set', () => {
    const cpu = providerSessionOptions('cpu', { ...threads, intraOpThreads: 2, spinning: true });
    assert.equal(cpu.intraOpNumThreads, 2);
    assert.equal('interOpNumThreads' in cpu, false);
    assert.equal('extra' in cpu, false, 'spinning is ONNX Runtime’s default: no entry');
    assert.equal(cpu.logSeverityLevel, 3);
    assert.deepEqual(providerSessionOptions('cuda', threads).extra, noSpin);
  });
});
