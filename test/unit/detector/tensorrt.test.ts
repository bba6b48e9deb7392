import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  checkEngine,
  dumpEngineEntries,
  engineDir,
  engineDirName,
  ENGINE_FILE,
  gpuIdentity,
  MANIFEST_FILE,
  openEngine,
  recordEngine,
  tensorrtProviderLibrary,
  tensorrtVersion,
  warmupBatches,
  type EngineKey,
} from '../../../src/detector/tensorrt.js';
import type { EngineEvent } from '../../../src/detector/protocol.js';
import { tempDir } from '../../helpers/env.js';

const key: EngineKey = {
  modelSha256: 'ab'.repeat(32),
  gpu: 'NVIDIA GeForce RTX 3060 GPU-1234; driver 550.54',
  deviceId: 0,
  onnxruntime: '1.30.0',
  tensorrt: '10.3.0',
  precision: 'fp32',
  inputSize: 640,
  maxBatch: 8,
};

/** An engine directory as a finished build leaves it: the engine, then its manifest. */
async function built(stateDir: string, k: EngineKey, engine = 'serialised engine'): Promise<string> {
  const dir = engineDir(stateDir, k);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, ENGINE_FILE), engine);
  assert.equal(await recordEngine(dir, k, 123_456), true);
  return dir;
}

describe('TensorRT engine cache: keying', () => {
  it('names the directory after the model hash, GPU, device, versions, precision, size and batch', () => {
    const name = engineDirName(key);
    assert.match(
      name,
      /^abababababababab-nvidia-geforce-rtx-3060-gpu-1234-d0-ort1.30.0-trt10.3.0-fp32-s640-b8-[0-9a-f]{8}$/,
    );
    assert.equal(engineDirName({ ...key }), name, 'the same key, the same directory');
    assert.equal(engineDir('/var/lib/argus', key), `/var/lib/argus/trt/${name}`);
  });

  it('gives every change of the key its own directory', () => {
    const changes: Partial<EngineKey>[] = [
      { modelSha256: 'ab'.repeat(31) + 'cd' }, // the model's hash differs after its 16th character
      { gpu: 'NVIDIA GeForce RTX 3060 GPU-1234; driver 555.42' }, // a driver update
      { gpu: 'NVIDIA GeForce RTX 3060 GPU-5678; driver 550.54' }, // another card of the same model
      { deviceId: 1 },
      { onnxruntime: '1.31.0' },
      { tensorrt: '10.4.0' },
      { precision: 'fp16' },
      { inputSize: 320 },
      { maxBatch: 16 },
    ];
    const names = new Set([engineDirName(key), ...changes.map((c) => engineDirName({ ...key, ...c }))]);
    assert.equal(names.size, changes.length + 1);
  });

  it('asks ONNX Runtime for an EP context model with the engine embedded, at the given path', () => {
    assert.deepEqual(dumpEngineEntries('/s/trt/x/engine_ctx.onnx'), {
      ep: { context_enable: '1', context_file_path: '/s/trt/x/engine_ctx.onnx', context_embed_mode: '1' },
    });
  });

  it('warms a dynamic-batch TensorRT session up at batch 1 and at max_batch, others at one size', () => {
    assert.deepEqual(warmupBatches(null, 8, true), [1, 8], 'the profile then spans 1..8');
    assert.deepEqual(warmupBatches(null, 1, true), [1]);
    assert.deepEqual(warmupBatches(null, 8, false), [1], 'cpu and cuda have no engine to build');
    assert.deepEqual(warmupBatches(4, 8, true), [4], 'a static batch has one shape');
  });
});

describe('TensorRT engine cache: what is loaded and what is rebuilt', () => {
  it('finds nothing in a new state directory, and makes the engine directory', async (t) => {
    const state = await tempDir(t);
    const found = await checkEngine(engineDir(state, key), key);
    assert.deepEqual(found, {
      state: 'build',
      engine: join(engineDir(state, key), ENGINE_FILE),
      reason: 'no engine cached',
    });
    assert.ok(existsSync(engineDir(state, key)));
  });

  it('loads an engine whose manifest matches its key and its bytes', async (t) => {
    const state = await tempDir(t);
    const dir = await built(state, key);
    const manifest = JSON.parse(await readFile(join(dir, MANIFEST_FILE), 'utf8')) as Record<string, unknown>;
    assert.deepEqual(manifest.key, key);
    assert.equal(manifest.bytes, 'serialised engine'.length);
    assert.equal(manifest.buildMs, 123_456);
    assert.deepEqual(await checkEngine(dir, key), { state: 'cached', engine: join(dir, ENGINE_FILE) });
    assert.equal(await readFile(join(dir, ENGINE_FILE), 'utf8'), 'serialised engine', 'left as it was');
  });

  const stale: [string, (dir: string) => Promise<void>, RegExp][] = [
    [
      'an engine without a manifest (the build was cut short)',
      (dir) => rm(join(dir, MANIFEST_FILE)),
      /without its manifest/,
    ],
    [
      'a corrupt manifest',
      (dir) => writeFile(join(dir, MANIFEST_FILE), '{"version": 1, "key": '),
      /corrupt manifest/,
    ],
    [
      'an engine whose bytes changed (a torn write, a disk error)',
      (dir) => writeFile(join(dir, ENGINE_FILE), 'serialised engin3'),
      /does not match its manifest/,
    ],
    [
      'a truncated engine',
      (dir) => writeFile(join(dir, ENGINE_FILE), 'serialised'),
      /does not match its manifest/,
    ],
    ['a manifest without its engine', (dir) => rm(join(dir, ENGINE_FILE)), /without its engine/],
    [
      "a manifest of another version of Argus' format",
      async (dir) => {
        const m = JSON.parse(await readFile(join(dir, MANIFEST_FILE), 'utf8')) as Record<string, unknown>;
        await writeFile(join(dir, MANIFEST_FILE), JSON.stringify({ ...m, version: 0 }));
      },
      /other settings/,
    ],
  ];
  for (const [what, damage, reason] of stale)
    it(`deletes and rebuilds ${what}`, async (t) => {
      const state = await tempDir(t);
      const dir = await built(state, key);
      await writeFile(join(dir, 'leftover.tmp'), 'x');
      await damage(dir);
      const found = await checkEngine(dir, key);
      assert.equal(found.state, 'build');
      assert.match(found.state === 'build' ? found.reason : '', reason);
      assert.deepEqual(await readdir(dir), [], 'nothing of the old build is kept');
    });

  it('does not trust a manifest written for another key in this directory', async (t) => {
    const state = await tempDir(t);
    const dir = await built(state, key);
    // As if the directory had been renamed or copied: its manifest says fp16, the key fp32.
    const other = { ...key, precision: 'fp16' as const };
    const m = JSON.parse(await readFile(join(dir, MANIFEST_FILE), 'utf8')) as Record<string, unknown>;
    await writeFile(join(dir, MANIFEST_FILE), JSON.stringify({ ...m, key: other }));
    const found = await checkEngine(dir, key);
    assert.equal(found.state, 'build');
    assert.match(found.state === 'build' ? found.reason : '', /other settings/);
    // Nor one with a key field more or less.
    const dir2 = await built(state, key);
    await writeFile(join(dir2, MANIFEST_FILE), JSON.stringify({ ...m, key: { ...key, extra: 1 } }));
    assert.equal((await checkEngine(dir2, key)).state, 'build');
  });

  it('records no manifest when ONNX Runtime wrote no engine', async (t) => {
    const state = await tempDir(t);
    const dir = engineDir(state, key);
    await mkdir(dir, { recursive: true });
    assert.equal(await recordEngine(dir, key, 1000), false);
    await writeFile(join(dir, ENGINE_FILE), '');
    assert.equal(await recordEngine(dir, key, 1000), false, 'an empty engine file is no engine');
    assert.deepEqual(await readdir(dir), [ENGINE_FILE]);
  });
});

describe('what identifies the GPUs and TensorRT', () => {
  it("reads each GPU's model and UUID and the driver's version from the NVIDIA driver's /proc files", async (t) => {
    const root = await tempDir(t);
    for (const [bus, model, uuid] of [
      ['0000:02:00.0', 'NVIDIA GeForce RTX 3060', 'GPU-bbbb'],
      ['0000:01:00.0', 'Tesla T4', 'GPU-aaaa'],
    ]) {
      await mkdir(join(root, 'gpus', bus!), { recursive: true });
      await writeFile(
        join(root, 'gpus', bus!, 'information'),
        `Model: \t\t ${model}\nIRQ:   \t\t 130\nGPU UUID: \t ${uuid}\nVideo BIOS: \t ??.??.??.??.??\n`,
      );
    }
    await writeFile(
      join(root, 'version'),
      'NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.14  Thu Feb 22 01:44:30 UTC 2024\nGCC version:  gcc 12\n',
    );
    assert.equal(
      await gpuIdentity(root),
      'Tesla T4 GPU-aaaa, NVIDIA GeForce RTX 3060 GPU-bbbb; driver 550.54.14',
    );
  });

  it("is 'none' without the driver", async (t) => {
    assert.equal(await gpuIdentity(join(await tempDir(t), 'nvidia')), 'none');
  });

  it("takes TensorRT's version from the newest libnvinfer file in the first directory that has one", async (t) => {
    const a = await tempDir(t);
    const b = join(a, 'b');
    await mkdir(b);
    for (const f of [
      'libnvinfer.so',
      'libnvinfer.so.10',
      'libnvinfer.so.10.3.0',
      'libnvinfer.so.8.6.1',
      'libnvinfer_plugin.so.10.9.0',
    ])
      await writeFile(join(b, f), '');
    assert.equal(
      await tensorrtVersion([join(a, 'missing'), a, b]),
      '10.3.0',
      'compared as numbers, not text',
    );
    assert.equal(await tensorrtVersion([join(a, 'missing')]), 'unknown');
  });
});

describe("ONNX Runtime's TensorRT provider library", () => {
  it("is looked for beside onnxruntime-node's binding, where its install script puts it", () => {
    assert.equal(
      tensorrtProviderLibrary('/opt/argus/node_modules/onnxruntime-node', 'linux', 'x64'),
      '/opt/argus/node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime_providers_tensorrt.so',
    );
  });
});

describe('opening a TensorRT session through the engine cache (fake sessions)', () => {
  type Source = Parameters<Parameters<typeof openEngine>[2]>[0];
  /** A fake `create`: records what it was asked to open, fails for engines when told. */
  function fake(opts: { engineFails?: boolean } = {}) {
    const opened: Source[] = [];
    const events: EngineEvent[] = [];
    const create = (source: Source): Promise<string> => {
      opened.push(source);
      if ('engine' in source && opts.engineFails)
        return Promise.reject(
          new Error('/onnxruntime/x.cc:12 TensorRT EP could not deserialize engine from cache'),
        );
      return Promise.resolve('engine' in source ? 'session from the engine' : 'session from the model');
    };
    return { opened, events, create, event: (e: EngineEvent) => void events.push(e) };
  }
  let clock = 0;
  const now = (): number => (clock += 1000);

  it('builds when nothing is kept, asking the provider to write the engine into the directory', async (t) => {
    const dir = engineDir(await tempDir(t), key);
    const f = fake();
    const r = await openEngine(dir, key, f.create, f.event, now);
    assert.equal(r.session, 'session from the model');
    assert.equal(typeof r.built, 'number');
    assert.deepEqual(f.opened, [{ model: true, entries: dumpEngineEntries(join(dir, ENGINE_FILE)) }]);
    assert.deepEqual(f.events, [{ phase: 'building', reason: 'no engine cached', dir }]);
  });

  it('loads a kept engine, and builds nothing', async (t) => {
    const state = await tempDir(t);
    const dir = await built(state, key);
    const f = fake();
    const r = await openEngine(dir, key, f.create, f.event, now);
    assert.deepEqual([r.session, r.built], ['session from the engine', null]);
    assert.deepEqual(f.opened, [{ engine: join(dir, ENGINE_FILE) }]);
    assert.deepEqual(f.events, [{ phase: 'loaded', ms: 1000, dir }]);
  });

  it('deletes a kept engine that does not load, and builds again', async (t) => {
    const state = await tempDir(t);
    const dir = await built(state, key);
    const f = fake({ engineFails: true });
    const r = await openEngine(dir, key, f.create, f.event, now);
    assert.equal(r.session, 'session from the model');
    assert.deepEqual(
      f.opened.map((s) => ('engine' in s ? 'engine' : 'model')),
      ['engine', 'model'],
    );
    assert.deepEqual(f.events, [
      {
        phase: 'building',
        reason: 'the cached engine did not load (TensorRT EP could not deserialize engine from cache)',
        dir,
      },
    ]);
    assert.deepEqual(await readdir(dir), [], 'the engine and its manifest are gone before the build');
  });

  it('does not load an engine whose bytes changed: it builds, without trying it', async (t) => {
    const state = await tempDir(t);
    const dir = await built(state, key);
    await writeFile(join(dir, ENGINE_FILE), 'bit rot');
    const f = fake();
    await openEngine(dir, key, f.create, f.event, now);
    assert.deepEqual(
      f.opened.map((s) => ('engine' in s ? 'engine' : 'model')),
      ['model'],
    );
    assert.match(f.events[0]!.phase === 'building' ? f.events[0]!.reason : '', /does not match its manifest/);
  });
});
