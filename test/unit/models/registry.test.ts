import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FrameCache } from '../../../src/cache/index.js';
import type { Frame, Result } from '../../../src/core/frame.js';
import { letterbox } from '../../../src/core/geometry.js';
import { modelConfig, sectionConfig, type ModelConfig } from '../../../src/config/index.js';
import { ModelRegistry } from '../../../src/models/registry.js';
import { Scheduler, type ModelAvailability } from '../../../src/scheduler/index.js';
import { cameraConfig } from '../../helpers/config.js';
import { FakeModel } from '../../helpers/fake-model.js';
import { FakeClock, flush, FrameSequence, recordingLog, silentLog } from '../../helpers/fakes.js';
import { named, SPECIAL_NAMES } from '../../helpers/names.js';

const detector = sectionConfig('detector', {});
const local = (path: string, over: Partial<ModelConfig> = {}): ModelConfig => modelConfig({ path, ...over });

/**
 * A registry whose models are FakeModels, made in the order a test lists them for each name
 * (`stages.default = [old, new]`: the first build of `default` gives `old`, the next `new`), and
 * a scheduler on it, as the daemon wires them.
 */
function setup(stages: Record<string, FakeModel[]>, models: Record<string, ModelConfig>) {
  const clock = new FakeClock();
  const built: string[] = [];
  const { log, lines } = recordingLog();
  const results: Result[] = [];
  const registry: ModelRegistry = new ModelRegistry(models, detector, {
    log,
    build: (name) => {
      const next = stages[name]?.shift();
      if (!next) return Promise.reject(new Error(`no stage for ${name}`));
      built.push(`${name}:${next.id}`);
      return Promise.resolve(next);
    },
    spec: (m) => Promise.resolve(JSON.stringify(m)),
    onSwitch: (names) => scheduler.modelsChanged(names),
  });
  const scheduler: Scheduler = new Scheduler(
    sectionConfig('scheduler', { max_batch: 2, max_wait_ms: 20, queue_size: 8, max_frame_age_ms: 60_000 }),
    {},
    {
      models: registry,
      cache: new FrameCache(sectionConfig('cache', { enabled: false })),
      clock,
      log: silentLog,
      onResult: (r) => results.push(r),
    },
  );
  const frames = new FrameSequence(clock, 32, (seq) => seq & 255);
  const frame = (camera: string): Frame => frames.next(camera);
  return { clock, registry, scheduler, results, frame, frames, built, lines };
}

/**
 * Runs `ms` of traffic: each camera sends a frame every 100 ms, and every stage that has started
 * answers each of its batches 30 ms after it was sent.
 */
async function traffic(
  s: ReturnType<typeof setup>,
  cams: string[],
  ms: number,
  stages: FakeModel[],
): Promise<void> {
  const sentAt = new Map<object, number>();
  for (let t = 0; t < ms; t += 10) {
    if (t % 100 === 0) for (const cam of cams) s.scheduler.push(s.frame(cam));
    for (const stage of stages)
      for (const call of stage.pending) {
        const at = sentAt.get(call) ?? s.clock.now();
        sentAt.set(call, at);
        if (s.clock.now() - at >= 30) call.resolve();
      }
    await s.clock.advance(10);
  }
}

describe('model registry', () => {
  it('starts every model, and fails start-up naming the model that did not load (stopping the others)', async () => {
    const ok = new FakeModel('ok');
    const bad = new FakeModel('bad', { held: true });
    const s = setup(
      { default: [ok], plates: [bad] },
      { default: local('/m/a.onnx'), plates: local('/m/p.onnx') },
    );
    const starting = s.registry.start();
    bad.release(new Error('/m/p.onnx: cannot read the model file (no such file)'));
    await assert.rejects(starting, {
      message: 'model plates: /m/p.onnx: cannot read the model file (no such file)',
    });
    assert.equal(ok.stopped, true, 'the model that had loaded is stopped again');
    assert.equal(s.registry.detector('default'), undefined);
  });

  it('swaps a model under load: the new one loads beside the old, takes over at once, the old finishes its batches and stops; no frame is lost', async () => {
    const old = new FakeModel('old');
    const next = new FakeModel('new', { held: true });
    const s = setup({ default: [old, next] }, { default: local('/m/a.onnx') });
    await s.registry.start();
    s.scheduler.start();
    s.scheduler.setCameras(
      { a: cameraConfig(), b: cameraConfig() },
      { added: ['a', 'b'], removed: [], changed: [], unchanged: [] },
    );
    await traffic(s, ['a', 'b'], 1000, [old, next]);
    const before = s.results.length;

    // A reload changes the model: the new stage loads slowly while frames keep flowing.
    const swapping = s.registry.swap({ default: local('/m/a.onnx', { conf: 0.5 }) }, detector);
    await traffic(s, ['a', 'b'], 1000, [old, next]);
    assert.equal(next.calls.length, 0, 'nothing goes to a model still loading');
    const during = s.results.length;
    assert.ok(during > before + 15, `frames were answered during the load (${during - before})`);

    // It has loaded: the switch comes while the old stage still has a batch in flight.
    s.scheduler.push(s.frame('a'));
    s.scheduler.push(s.frame('b'));
    assert.equal(old.pending.length, 1);
    next.release();
    const swap = await swapping;
    assert.deepEqual([swap.switched, swap.failed], [['default'], []]);
    s.scheduler.push(s.frame('a'));
    assert.equal(old.stopped, false, 'the old stage finishes its batch first');
    old.pending[0]!.resolve();
    await flush();
    await swap.retired;
    assert.equal(old.stopped, true);
    await traffic(s, ['a', 'b'], 1000, [next]);
    for (const stage of [old, next]) while (stage.pending.length) stage.pending[0]!.resolve();
    await flush();

    for (const cam of ['a', 'b']) {
      const got = s.results.filter((r) => r.camera === cam);
      const seqs = got.map((r) => r.seq);
      assert.deepEqual(
        seqs,
        Array.from({ length: s.frames.sent(cam) }, (_, i) => i + 1),
        `${cam}: every frame answered once, in order`,
      );
      const labels = got.map((r) => r.detections[0]!.label);
      const firstNew = labels.indexOf('new');
      assert.ok(
        firstNew > 0 && labels.slice(firstNew).every((l) => l === 'new'),
        `${cam}: ${labels.join(',')}`,
      );
      const st = s.scheduler.stats().cameras[cam]!;
      assert.deepEqual(st.dropped, { full: 0, stale: 0, error: 0 });
      assert.equal(st.framesIn, st.analysed);
    }
    assert.deepEqual(s.built, ['default:old', 'default:new']);
    assert.ok(s.lines.some((l) => l.msg === 'model swapped'));
  });

  it('keeps the running model when the new one fails to load, saying why; the next reload tries again', async () => {
    const old = new FakeModel('old');
    const broken = new FakeModel('broken', { held: true });
    const retry = new FakeModel('retry');
    const s = setup({ default: [old, broken, retry] }, { default: local('/m/a.onnx') });
    await s.registry.start();
    s.scheduler.start();
    s.scheduler.setCameras({ a: cameraConfig() }, { added: ['a'], removed: [], changed: [], unchanged: [] });
    const changed = { default: local('/m/b.onnx') };
    const swapping = s.registry.swap(changed, detector);
    await traffic(s, ['a'], 500, [old]);
    broken.release(new Error('/m/b.onnx: not a valid ONNX model'));
    const swap = await swapping;
    assert.deepEqual([swap.switched, swap.failed], [[], ['default']]);
    await swap.retired;
    assert.equal(old.stopped, false);
    assert.equal(s.registry.config().default!.path, '/m/a.onnx', 'the running settings are the old ones');
    const error = s.lines.find((l) => l.msg.startsWith('reload: '));
    assert.equal(
      error?.msg,
      'reload: model default: /m/b.onnx: not a valid ONNX model; the running model stays',
    );
    await traffic(s, ['a'], 500, [old]);
    while (old.pending.length) old.pending[0]!.resolve();
    await flush();
    assert.ok(s.results.every((r) => r.detections[0]!.label === 'old'));
    assert.equal(s.results.length, s.frames.sent('a'));
    // The same file again: the model is still not what it says, so it loads again.
    const again = await s.registry.swap(changed, detector);
    assert.deepEqual(again.switched, ['default']);
    await again.retired;
    assert.equal(old.stopped, true);
  });

  it('adds and removes models; an unchanged one is left alone; pictures waiting for a removed one are refused', async () => {
    const a = new FakeModel('a');
    const p = new FakeModel('p');
    const q = new FakeModel('q', { inputSize: 64 });
    const s = setup(
      { default: [a], plates: [p], people: [q] },
      {
        default: local('/m/a.onnx'),
        plates: local('/m/p.onnx'),
      },
    );
    await s.registry.start();
    s.scheduler.start();
    const picture = { data: Buffer.alloc(32 * 32 * 3), geometry: letterbox(32, 32, 32) };
    const first = s.scheduler.submit(picture, 5, 'plates');
    const queued = s.scheduler.submit(picture, 5, 'plates');
    const swap = await s.registry.swap({ default: local('/m/a.onnx'), people: local('/m/q.onnx') }, detector);
    assert.deepEqual(swap.switched.sort(), ['people', 'plates']);
    assert.deepEqual(s.registry.names().sort(), ['default', 'people']);
    await assert.rejects(queued, /its model was removed/);
    assert.equal(p.stopped, false, 'the removed model finishes its batch');
    p.pending[0]!.resolve();
    await first;
    await swap.retired;
    assert.equal(p.stopped, true);
    assert.equal(s.registry.detector('people')!.inputSize, 64);
    assert.deepEqual(s.built, ['default:a', 'plates:p', 'people:q']);
    assert.deepEqual(Object.keys(s.registry.stats()).sort(), ['default', 'people']);
    assert.equal(s.registry.stats().people!.kind, 'local');
  });

  it('is ready for the watchdog while every local model has a session; a remote model does not count', async () => {
    const a = new FakeModel('a');
    const r = new FakeModel('r');
    const s = setup(
      { default: [a], far: [r] },
      {
        default: local('/m/a.onnx'),
        far: modelConfig({ remote: { url: 'http://gpu:8000', model: 'x' } }),
      },
    );
    await s.registry.start();
    assert.equal(s.registry.localReady(), true);
    await r.stop();
    assert.equal(s.registry.localReady(), true, 'a restart of Argus mends no remote server');
    await a.stop();
    assert.equal(s.registry.localReady(), false);
  });

  it('passes on availability changes of the stage that runs under a name, and says why it is away', async () => {
    /** A stage whose server the test takes away and brings back, telling the registry each time. */
    class Away extends FakeModel {
      why: string | undefined;
      tell: (() => void) | undefined;
      availability(): ModelAvailability {
        return { model: 'far', up: this.why === undefined, message: this.why ?? null, since: 0 };
      }
      set(why: string | undefined): void {
        this.why = why;
        this.tell?.();
      }
    }
    const old = new Away('old');
    const next = new Away('next');
    const heard: string[] = [];
    const stages: Away[] = [old, next];
    const registry = new ModelRegistry(
      { far: modelConfig({ remote: { url: 'http://gpu:8000', model: 'x' } }) },
      detector,
      {
        log: silentLog,
        build: (_name, _model, _det, ctx) => {
          const stage = stages.shift()!;
          stage.tell = ctx.onAvailability;
          // Away already while it starts: nobody is told (the daemon asks when it publishes).
          stage.set('ECONNREFUSED');
          return Promise.resolve(stage);
        },
        spec: (m) => Promise.resolve(JSON.stringify(m)),
        onAvailability: (name) => heard.push(`${name}:${registry.unavailable(name) ?? 'up'}`),
      },
    );
    await registry.start();
    assert.deepEqual(heard, []);
    assert.equal(registry.unavailable('far'), 'ECONNREFUSED');
    old.set(undefined);
    assert.deepEqual(heard, ['far:up']);
    // A swapped-in stage is heard once it runs; the replaced one no more.
    const swap = await registry.swap(
      { far: modelConfig({ remote: { url: 'http://gpu2:8000', model: 'x' } }) },
      detector,
    );
    assert.deepEqual(swap.switched, ['far']);
    assert.equal(registry.unavailable('far'), 'ECONNREFUSED');
    old.set('gone');
    next.set(undefined);
    assert.deepEqual(heard, ['far:up', 'far:up']);
    assert.equal(registry.unavailable('nope'), undefined);
    await swap.retired;
  });
});

describe('model registry: names a user chose', () => {
  it('runs, lists and removes models named __proto__, constructor, toString, hasOwnProperty, valueOf', async () => {
    const stages = Object.fromEntries(SPECIAL_NAMES.map((n) => [n, [new FakeModel(n)]]));
    const models = named(SPECIAL_NAMES.map((n): [string, ModelConfig] => [n, local(`/m/${n}.onnx`)]));
    const s = setup(stages, models);
    await s.registry.start();
    assert.deepEqual(s.registry.names(), [...SPECIAL_NAMES]);
    const stats = s.registry.stats();
    assert.deepEqual(Object.keys(stats), [...SPECIAL_NAMES]);
    assert.equal(Object.getPrototypeOf(stats), null, 'a payload keyed by names has no prototype');
    const config = s.registry.config();
    assert.deepEqual(config, models);
    // A reload's models as a tool might build them, in a plain object: what it lacks goes.
    const kept = Object.fromEntries(['toString', 'valueOf'].map((n) => [n, models[n]!]));
    const swap = await s.registry.swap(kept, detector);
    assert.deepEqual(swap.switched.sort(), ['__proto__', 'constructor', 'hasOwnProperty']);
    assert.deepEqual(s.registry.names(), ['toString', 'valueOf']);
    await s.registry.stop();
  });
});
