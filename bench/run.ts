/**
 * `npm run bench`: measures, in one run on one machine, where Argus stands against its physical
 * limit (bare onnxruntime-node) and against a naive design, and writes
 * bench/results/latest.json and latest.md.
 *
 *   npm run bench              short mode (≈ 5 min, 1.5 min of object events, 4 of the fleet): pipeline at
 *                              1, 4, 16 cameras, the main levers, events on the pedestrian clip
 *   npm run bench -- --full    1–16 cameras, every lever, 7 repeats, 30 s runs, a 10-minute
 *                              8-camera soak sampling RSS (≈ 35 min)
 *   npm run bench -- --provider cuda --batches 1,2,4,8,16 --sections models,limit,pipeline
 *   npm run bench -- --sections tracking [--busy] [--root ../argus-old] [--tracking-scenes crossing,vtest]
 *                              synthetic scenes with known truth and vtest.mp4 four times, scored
 *                              from what the daemon publishes (bench/tracking.ts); --busy keeps
 *                              every core spinning meanwhile; --root runs another built
 *                              checkout's daemon instead, --baseline runs it as well;
 *                              --tracking-loops N plays vtest.mp4 N times (4);
 *                              --tracking-events appearance=false sets events: keys for every run;
 *                              --tracking-dump DIR keeps each run's recording (DIR/<scene>.json,
 *                              DIR/vtest.json): `node dist/bench/tracking-replay.js DIR` replays
 *                              them through this checkout's tracker in seconds
 *   npm run bench -- --sections fleet
 *                              three daemons over a three-member etcd cluster, nine cameras, each
 *                              box killed in turn (5 kills, 9 with --full), etcd stopped 30 s, one
 *                              box cut from etcd 30 s (bench/fleet-failover.ts; ≈ 4 min)
 *   npm run bench -- --sections idle --idle-cameras 8 --baseline ../argus-old
 *                              (--idle-ring-dir /dev/shm/x: the clips daemon's ring there;
 *                              --idle-health: the second daemon has camera health off instead
 *                              of clips on, and health's cost per camera is measured)
 *                              N still cameras against N plain decoders (bench/idle.ts); with
 *                              --baseline, another built checkout's daemon runs beside this
 *                              one (idle), or after it with the same cameras (pipeline, cache)
 *
 * Models from ../shared are used when present (the fixture model otherwise); they are prepared
 * with `argus model prepare`'s passes into a temporary directory, never copied into the repo.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { errorStack } from '../src/core/errors.js';
import { isoTime } from '../src/core/time.js';
import { PROVIDERS, type ProviderName } from '../src/config/models.js';
import { decodeModel, encodeModel } from '../src/onnx/graph.js';
import { buildFixtureModel } from '../src/onnx/fixture.js';
import { prepareModel, type Precision } from '../src/onnx/prepare.js';
import { planModel } from '../src/detector/index.js';
import { benchCache } from './cache.js';
import { benchDetector, type DetectorBenchRow } from './detector.js';
import { benchEvents } from './events.js';
import { benchFleet } from './fleet-failover.js';
import { benchHash } from './hash.js';
import { benchHealth } from './health.js';
import { benchIdle } from './idle.js';
import { benchOverload, type OverloadModel } from './overload.js';
import { benchPipeline, syntheticCamera, type PipelineRow } from './pipeline.js';
import { benchRemote } from './remote.js';
import { benchTracking } from './tracking.js';
import { busyCores } from '../test/helpers/load.js';
import { renderMarkdown } from './report.js';
import type { BenchResults } from './results.js';
import { benchLiveSaturation, efficiencyOf } from './saturation.js';
import { EVERY_FRAME, softwareVulkan, stillClip } from './common.js';
import { defaultFfmpegPath } from '../src/ingest/ffmpeg-process.js';

const root = resolve(fileURLToPath(import.meta.url), '../../..');
const shared = process.env.ARGUS_SHARED_DIR ?? resolve(root, '..', 'shared');
const SECTIONS = [
  'models',
  'limit',
  'remote',
  'pipeline',
  'levers',
  'cache',
  'hash',
  'health',
  'idle',
  'events',
  'tracking',
  'overload',
  'fleet',
  'soak',
] as const;
type Section = (typeof SECTIONS)[number];

const { values } = parseArgs({
  options: {
    full: { type: 'boolean' },
    provider: { type: 'string' },
    batches: { type: 'string' },
    sections: { type: 'string' },
    precision: { type: 'string' },
    cameras: { type: 'string' },
    'idle-cameras': { type: 'string' },
    'idle-ring-dir': { type: 'string' },
    'idle-health': { type: 'boolean' },
    baseline: { type: 'string' },
    root: { type: 'string' },
    busy: { type: 'boolean' },
    'tracking-scenes': { type: 'string' },
    'tracking-loops': { type: 'string' },
    'tracking-events': { type: 'string' },
    'tracking-dump': { type: 'string' },
    out: { type: 'string' },
  },
});
const full = values.full === true;
const provider = (values.provider ?? 'cpu') as ProviderName;
if (!PROVIDERS.includes(provider)) throw new Error(`--provider must be one of ${PROVIDERS.join(', ')}`);
const batches = (values.batches ?? '1,2,4,8').split(',').map(Number);
const precision = (values.precision ?? 'fp32') as Precision;
const cameraCounts = (values.cameras ?? (full ? '1,2,4,8,16' : '1,4,16')).split(',').map(Number);
const saturated = Math.max(...cameraCounts);
/** Results go to bench/results/<out>.json and .md. */
const outName = values.out ?? 'latest';
const sections = new Set<Section>(
  (values.sections?.split(',') ?? SECTIONS.filter((s) => s !== 'soak' || full)) as Section[],
);
const repeats = full ? 7 : 3;
/** Another checkout (built) whose daemon the pipeline, cache and idle sections run too. */
const baseline = values.baseline === undefined ? undefined : resolve(values.baseline);
/** Whether a built checkout's config schema (one file up to issue 44, a folder of them since) holds `word`. */
function baselineConfigHas(dir: string, word: string): boolean {
  const config = join(dir, 'dist/src/config');
  return readdirSync(config)
    .filter((f) => f.endsWith('.js'))
    .some((f) => readFileSync(join(config, f), 'utf8').includes(word));
}

/**
 * The pipeline and cache sections count answered frames by detections messages: a build that
 * publishes them on change only (from issue 16 on) is asked for every frame's, an older one
 * publishes every frame's without being asked (and would refuse the key).
 */
const baselineMqtt = baseline && baselineConfigHas(baseline, 'every_frame') ? EVERY_FRAME : [];
const idleCameras = Number(values['idle-cameras'] ?? 8);
const log = (msg: string): boolean => process.stderr.write(`bench: ${msg}\n`);

async function prepared(src: string, dir: string, p: Precision): Promise<string> {
  const model = decodeModel(readFileSync(src));
  prepareModel(model, { batch: 'dynamic', precision: p });
  const out = join(dir, basename(src).replace(/\.onnx$/, `.${p}.onnx`));
  await writeFile(out, encodeModel(model));
  return out;
}

async function main(): Promise<void> {
  const tmp = await mkdtemp(join(tmpdir(), 'argus-bench-'));
  const out: BenchResults = {
    date: isoTime(Date.now()),
    machine: {
      cpus: cpus().length,
      cpu: cpus()[0]?.model ?? 'unknown',
      node: process.version,
      provider,
      softwareVulkan: provider === 'webgpu' ? softwareVulkan() : null,
    },
    full,
    repeats,
    models: [],
    limit: null,
    remote: null,
    pipeline: null,
    levers: null,
    cacheLive: null,
    cacheReplay: [],
    hashes: [],
    idle: null,
    events: null,
    tracking: null,
    overload: null,
    fleet: null,
    soak: null,
  };
  try {
    const fixture = join(tmp, 'argus-fixture.onnx');
    await writeFile(fixture, buildFixtureModel());
    const sharedModel = (m: string): string | undefined => {
      const p = join(shared, 'models', m);
      if (existsSync(p)) return p;
      log(`${p} not found, skipped`);
      return undefined;
    };
    const v8 = sharedModel('yolov8n_int8.onnx');
    const y11 = sharedModel('yolo11n_int8_320.onnx');

    // 1. Prepared against original, bare sessions, batch 1 (the originals have a static batch of 1).
    const preparedOf = new Map<string, string>();
    for (const src of [y11, v8]) {
      if (!src) continue;
      preparedOf.set(src, await prepared(src, tmp, precision));
      if (!sections.has('models')) continue;
      log(`model prepare: ${basename(src)} int8 vs ${precision}`);
      const rows: DetectorBenchRow[] = [];
      // Alternate the two so drift in machine load hits both alike.
      for (let r = 0; r < repeats; r++) {
        for (const [path, name] of [
          [src, basename(src)],
          [preparedOf.get(src)!, `${basename(src)} → ${precision}`],
        ] as const) {
          const res = await benchDetector(path, [1], { frames: 8, repeats: 1, provider, argus: false, name });
          rows.push(...res.rows);
        }
      }
      out.models.push({
        original: basename(src),
        prepared: `${precision}, dynamic batch`,
        rows: medianRows(rows),
      });
    }

    // 2. The limit: bare onnxruntime-node at each batch size, and Argus' detector beside it.
    const pipeModel = (y11 && preparedOf.get(y11)) ?? fixture;
    const pipeName = y11 ? `${basename(y11)} → ${precision}` : 'argus-fixture.onnx';
    if (sections.has('limit')) {
      log(`limit: ${pipeName} at batch ${batches.join(', ')}`);
      // Argus' detector as the daemon runs it: its sessions chosen for the machine, one batch in flight per session.
      const res = await benchDetector(pipeModel, batches, {
        frames: 32,
        repeats,
        provider,
        name: pipeName,
        workers: 0,
      });
      out.limit = {
        model: pipeName,
        rows: res.rows,
        preprocessMsPerFrame: Object.values(res.preprocessMsPerFrame)[0]!,
        loopMsPerFrame: Object.values(res.loopMsPerFrame)[0]!,
      };
    }

    // 2b. Remote inference: the same model behind an Argus KServe v2 server, over loopback.
    if (sections.has('remote')) {
      log(`remote: ${pipeName} local vs over KServe v2 (loopback), batch 4`);
      const bus = join(shared, 'media', 'bus.jpg');
      out.remote = await benchRemote({
        root,
        dir: tmp,
        model: pipeModel,
        name: pipeName,
        image: existsSync(bus) ? bus : undefined,
        batch: 4,
        batches: full ? 40 : 15,
        repeats,
      });
    }

    // 3. The daemon against the naive design: N synthetic cameras, cache off.
    const seconds = full ? 30 : 10;
    const base = {
      root,
      model: pipeModel,
      fps: 10,
      seconds,
      warmupSeconds: 6,
      cache: false,
      detector: { providers: `[${provider}]` },
      mqtt: EVERY_FRAME,
    };
    if (sections.has('pipeline')) {
      const rows: PipelineRow[] = [];
      for (const n of cameraCounts) {
        const sources = Array.from({ length: n }, (_, i) => syntheticCamera(i, 10));
        for (const mode of ['argus', 'naive'] as const) {
          log(`pipeline: ${mode}, ${n} cameras`);
          rows.push(await benchPipeline({ ...base, sources, mode }));
          if (mode !== 'argus' || !baseline) continue;
          log(`pipeline: baseline, ${n} cameras`);
          rows.push(
            await benchPipeline({
              ...base,
              root: baseline,
              mqtt: baselineMqtt,
              sources,
              mode,
              label: 'baseline',
            }),
          );
        }
      }
      const lavfi = rows.filter((r) => r.mode === 'argus' && r.label === '' && r.mean_batch !== null).at(-1);
      // The same saturated fleet as live cameras, and the bare session beside their decoders.
      const live = await benchLiveSaturation(
        {
          pipeline: base,
          cameras: saturated,
          modelName: pipeName,
          size: (await planModel({ path: pipeModel })).inputSize,
          batches,
          repeats,
          provider,
        },
        log,
      );
      out.pipeline = {
        model: pipeName,
        rows,
        efficiency: efficiencyOf(lavfi, out.limit?.rows ?? []),
        live,
      };
    }

    // 4. Levers at saturation, one changed at a time against the defaults.
    if (sections.has('levers')) {
      const sources = Array.from({ length: saturated }, (_, i) => syntheticCamera(i, 10));
      // The defaults, then each earlier default or alternative, one change at a time.
      const variants: [string, Record<string, number | boolean>, Record<string, number | string>][] = [
        ['defaults', {}, {}],
        ['1 worker, ORT threads (old default)', {}, { workers: 1, intra_op_threads: 0 }],
        ['threads spin (old default)', {}, { thread_spinning: 'true' }],
        ['queue_size 3 (old default)', { queue_size: 3 }, {}],
      ];
      if (full) {
        variants.push(
          ['max_in_flight 1', { max_in_flight: 1 }, {}],
          ['max_batch 1', { max_batch: 1 }, {}],
          ['max_batch 8', { max_batch: 8 }, {}],
        );
      }
      const rows: PipelineRow[] = [];
      for (const [label, scheduler, detector] of variants) {
        log(`lever: ${label}`);
        rows.push(
          await benchPipeline({
            ...base,
            sources,
            mode: 'argus',
            label,
            scheduler,
            detector: { ...base.detector, ...detector },
          }),
        );
      }
      // The int8 original, for the prepared model's effect on the whole pipeline.
      if (y11 && full) {
        log('lever: int8 original model');
        rows.push(
          await benchPipeline({ ...base, model: y11, sources, mode: 'argus', label: 'int8 original model' }),
        );
      }
      out.levers = { model: pipeName, rows };
    }

    // 5. A mostly static fleet, live: still scenes with sensor noise and one real clip.
    if (sections.has('cache')) {
      // Still scenes are encoded once with temporal sensor noise (x264, like a camera's stream)
      // and looped: ffmpeg's movie source loops a file cheaply, a picture it re-decodes flat out.
      const ffmpeg = await defaultFfmpegPath();
      const bus = join(shared, 'media', 'bus.jpg');
      const picture = existsSync(bus)
        ? ['-loop', '1', '-framerate', '10', '-i', bus]
        : ['-f', 'lavfi', '-i', 'testsrc=s=640x480:r=10'];
      const noisy = stillClip(
        ffmpeg,
        [...picture, '-vf', 'scale=640:-2,noise=alls=6:allf=t'],
        10,
        23,
        join(tmp, 'still.mp4'),
      );
      const loop = (file: string): string => `lavfi:movie=${file}:loop=0,setpts=N/(10*TB)`;
      const sources = Array.from({ length: 7 }, () => loop(noisy));
      const clip = join(shared, 'media', 'vtest.mp4');
      sources.push(existsSync(clip) ? loop(clip) : syntheticCamera(7, 10));
      const rows: PipelineRow[] = [];
      const variants: ['argus' | 'naive', boolean, string, string][] = [
        ['argus', true, 'Argus, cache on', root],
        ['argus', false, 'Argus, cache off', root],
        ['naive', false, 'naive', root],
      ];
      if (baseline) variants.splice(1, 0, ['argus', true, 'Argus (baseline), cache on', baseline]);
      for (const [mode, cache, label, from] of variants) {
        const mqtt = from === root ? EVERY_FRAME : baselineMqtt;
        log(`cache, live fleet: ${label}`);
        rows.push(
          await benchPipeline({
            ...base,
            root: from,
            mqtt,
            fps: 5,
            sources,
            mode,
            cache,
            label,
            seconds: full ? 60 : 20,
          }),
        );
      }
      const on = rows[0]!;
      const naive = rows.at(-1)!;
      out.cacheLive = {
        model: pipeName,
        rows,
        perCpuRatio: on.answered_per_cpu_s / naive.answered_per_cpu_s,
      };
      if (y11) {
        log('cache: replay over real clips');
        out.cacheReplay = await benchCache(shared, pipeModel, {
          maxDistance: 2,
          cellThreshold: 10,
          maxAgeS: 10,
          fps: 5,
          seconds: full ? 60 : 20,
        });
      }
    }

    if (sections.has('hash')) {
      log('frame hashes');
      for (const size of full ? [320, 640] : [320])
        out.hashes.push(await benchHash(shared, size, { maxDistance: 2, cellThreshold: 10, hammingMax: 4 }));
    }

    if (sections.has('health')) {
      log('camera health: tampered and untampered clips (the scored set)');
      out.health = await benchHealth(join(shared, 'media'), { set: 'score', log });
    }

    // 6. Still cameras against plain decoders of the same stream (issue 16).
    if (sections.has('idle')) {
      const bus = join(shared, 'media', 'bus.jpg');
      const v8Prepared = v8 && preparedOf.get(v8);
      if (!existsSync(bus)) log(`idle: ${bus} not found, skipped`);
      else {
        log(`idle: ${idleCameras} still cameras against ${idleCameras} plain decoders`);
        out.idle = await benchIdle({
          root,
          baseline,
          model: v8Prepared ?? pipeModel,
          modelName: v8Prepared ? `${basename(v8)} → ${precision}` : pipeName,
          image: bus,
          cameras: idleCameras,
          ringDir: values['idle-ring-dir'],
          health: values['idle-health'] === true,
          fps: 5,
          warmupSeconds: 20,
          windowSeconds: full ? 60 : 30,
          windows: full ? 5 : 3,
          detector: base.detector,
        });
      }
    }

    // 7. Object events on the pedestrian clip, played once at 5 frames/s, cache on.
    if (sections.has('events')) {
      const clip = join(shared, 'media', 'vtest.mp4');
      if (!y11 || !existsSync(clip)) log(`events: ${clip} or the YOLO11n model not found, skipped`);
      else {
        log('events: vtest.mp4 once at 5 frames/s (≈ 90 s)');
        const row = await benchEvents({ root, model: pipeModel, clip, fps: 5, detector: base.detector });
        out.events = { model: pipeName, row };
      }
    }

    // 7a. Tracking scored against known truth, and the pedestrian clip four times (issue 42).
    if (sections.has('tracking')) {
      const bus = join(shared, 'media', 'bus.jpg');
      const clip = join(shared, 'media', 'vtest.mp4');
      const v8Prepared = v8 && preparedOf.get(v8);
      if (!v8Prepared || !existsSync(bus)) log(`tracking: the YOLOv8n model or ${bus} not found, skipped`);
      else {
        const scenes = values['tracking-scenes'];
        const trackingEvents = Object.fromEntries(
          (values['tracking-events'] ?? '')
            .split(',')
            .filter(Boolean)
            .map((kv) => kv.split('=') as [string, string]),
        );
        const daemons = [values.root === undefined ? root : resolve(values.root)];
        if (baseline) daemons.unshift(baseline);
        // One spinning process per core (test/helpers/load.ts), killed when the section ends.
        const stops: (() => void)[] = [];
        const hogs = values.busy ? busyCores({ after: (fn) => stops.push(fn) }) : 0;
        if (hogs) log(`tracking: ${hogs} spinning processes keep every core busy`);
        try {
          const runs = [];
          for (const from of daemons) {
            log(`tracking: the daemon of ${from}`);
            runs.push(
              await benchTracking(
                {
                  root: from,
                  model: v8Prepared,
                  busJpg: bus,
                  clip: existsSync(clip) ? clip : undefined,
                  only: scenes === undefined ? undefined : new Set(scenes.split(',')),
                  loops: Number(values['tracking-loops'] ?? 4),
                  events: trackingEvents,
                  dump: values['tracking-dump'],
                },
                log,
              ),
            );
          }
          out.tracking = {
            model: `${basename(v8)} → ${precision}`,
            busy: hogs,
            events: trackingEvents,
            runs,
          };
        } finally {
          for (const stop of stops) stop();
        }
      }
    }

    // 7b. Overload: still, walking and moving RTSP cameras offering several times what the model
    // answers (the pipeline's, then YOLOv8n: 6–8×, then 30–50×), cache on; each run one playing
    // of the pedestrian clip.
    if (sections.has('overload')) {
      const bus = join(shared, 'media', 'bus.jpg');
      const clip = join(shared, 'media', 'vtest.mp4');
      if (!y11 || !existsSync(bus) || !existsSync(clip))
        log(`overload: the YOLO11n model, ${bus} or ${clip} not found, skipped`);
      else {
        const v8Prepared = v8 && preparedOf.get(v8);
        const models: OverloadModel[] = [{ path: pipeModel, name: pipeName }];
        if (v8Prepared) {
          const name = `${basename(v8)} → ${precision}`;
          models.push({ path: v8Prepared, name });
          // Two frames a camera: a priority-10 camera can then take its whole share (with one
          // frame it is capped at one a batch), so the weighted share itself is measured.
          models.push({ path: v8Prepared, name: `${name}, queue_size 2`, queueSize: 2 });
        }
        out.overload = await benchOverload(
          {
            root,
            models,
            image: bus,
            clip,
            repeats: full ? 3 : 1,
            warmupSeconds: 15,
            detector: base.detector,
          },
          log,
        );
      }
    }

    // 7c. A fleet of three daemons over a real etcd cluster: each box killed in turn, etcd stopped,
    // one box cut from etcd (issue 48, item 6; skipped without Debian's etcd-server).
    if (sections.has('fleet')) out.fleet = await benchFleet({ kills: full ? 9 : 5 }, log);

    // 8. Full mode: ten minutes of 8 saturated cameras, RSS sampled every 30 s.
    if (sections.has('soak')) {
      log('soak: 8 cameras for 10 minutes');
      const sources = Array.from({ length: 8 }, (_, i) => syntheticCamera(i, 10));
      out.soak = await benchPipeline({
        ...base,
        sources,
        mode: 'argus',
        seconds: 600,
        rssEverySeconds: 30,
        label: 'soak',
      });
    }
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
  const dir = join(root, 'bench', 'results');
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, `${outName}.json`), `${JSON.stringify(out, null, 2)}\n`);
  const md = renderMarkdown(out);
  await writeFile(join(dir, `${outName}.md`), md);
  process.stdout.write(md);
}

/** Per model and batch, the median of the rows measured in separate alternating repeats. */
function medianRows(rows: DetectorBenchRow[]): DetectorBenchRow[] {
  const groups = new Map<string, DetectorBenchRow[]>();
  for (const r of rows)
    groups.set(`${r.model}|${r.batch}`, [...(groups.get(`${r.model}|${r.batch}`) ?? []), r]);
  return [...groups.values()].map((g) => {
    const s = [...g].sort((a, b) => a.bareFps - b.bareFps);
    return s[s.length >> 1]!;
  });
}

main().catch((err: unknown) => {
  process.stderr.write(`bench: ${errorStack(err)}\n`);
  process.exitCode = 1;
});
