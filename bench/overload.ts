/**
 * Overload (issue 22): real RTSP cameras offering several times what the detector answers —
 * still scenes among moving ones — through `argus run` with the cache on, as a user runs it.
 *
 * The fleet, all cameras at 5 frames/s from one GStreamer RTSP server (test/helpers/rtsp.ts):
 * two still cameras (bus.jpg, x264 with a key frame every 2 s; the objects never move), two
 * cameras on vtest.mp4 (walkers; the clip is played once, in real time, from the first client
 * on, so one run lasts the clip), and moving synthetic cameras (GStreamer's ball), at a mix of
 * priorities. Before it, in the same bench run, a reference: one still and one walkers camera
 * alone, on a detector with time to spare.
 *
 * An MQTT subscriber records argus/events, each camera's status and count topics
 * (`argus/cameras/<cam>/<label>`) and argus/stats. Per camera:
 *   - offered, cached, analysed and dropped frames/s, from the stats topic's per-camera rates
 *     (each message's rates cover the time since the one before: rate × that time is a count),
 *     over the run after a warm-up;
 *   - its weighted share of what the model analysed (`waterFill`): weighted max-min fair share
 *     of all cameras' analysed frames/s, each camera weighted by its priority and capped at its
 *     demand, the frames the cache did not answer (offered − cached). A still camera the cache
 *     answers asks for little and is owed only that; a camera whose frames all need the model is
 *     owed its priority's part of the rest; and (queue_size 1) no camera is owed more than one
 *     frame per batch formed. The scheduler's promise (src/scheduler/fair-share.ts) is exactly
 *     this share;
 *   - the longest stretch without any answered frame (analysed or cached): the largest `lag_s`
 *     the stats topic gave;
 *   - `new` and `end` events of its tracked labels, and how often a count topic fell from a
 *     number to 0, until the daemon is told to stop (its shutdown ends every object: not counted).
 * Truth: a still camera holds the objects its count topics settled on in the reference run
 * (bus.jpg: 3 persons and the bus; the fourth person, cut by the left edge, scores 0.39–0.41 and
 * never starts a track below `events.high_score`); a walkers camera sees the clip's 19 person
 * visits (17–20, counted by eye: bench/events.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt from 'mqtt';
import type { CameraStatusPayload, EventPayload, StatsPayload } from '../src/publish/topics.js';
import { startRtspServer, type Mount, type RtspServer } from '../test/helpers/rtsp.js';
import { benchDaemonConfig, children, median, startBenchBroker, stopChild, yamlSection } from './common.js';
import { PEOPLE } from './events.js';
import type { PeopleCount } from './events-summary.js';

const FPS = 5;
/** vtest.mp4's length: one run is one playing of it. */
const CLIP_SECONDS = 79.5;

type Kind = 'still' | 'walkers' | 'moving';

interface CameraSpec {
  name: string;
  kind: Kind;
  priority: number;
  /** Labels the camera reports (objects.track); all when absent. */
  track?: string[];
}

const MOUNT: Record<Kind, string> = { still: 'still', walkers: 'plaza', moving: 'ball' };
const TRACK: Record<Kind, string[] | undefined> = {
  still: ['person', 'bus'],
  walkers: ['person'],
  moving: undefined,
};

const spec = (name: string, kind: Kind, priority: number): CameraSpec => ({
  name,
  kind,
  priority,
  track: TRACK[kind],
});

/** The reference: a still camera alone, the detector unloaded, for what it holds. */
const REFERENCE = [spec('still0', 'still', 5)];
const REFERENCE_SECONDS = 25;

/**
 * The loaded fleet, 16 cameras: two still at priority 5, walkers at priority 10 (owed ≥ 1
 * analysed frame/s when the model answers ≥ 4) and at 1 (the most loaded), and moving cameras,
 * ten at priority 1 and two at 10: 80 frames/s offered. On this shared 2-core machine YOLO11n
 * @320 answers 10–15 of them (6–8×), YOLOv8n @640 2–3 (30–50×, the "~3 %").
 */
const FLEET = [
  spec('still0', 'still', 5),
  spec('still1', 'still', 5),
  spec('walk10', 'walkers', 10),
  spec('walk1', 'walkers', 1),
  ...Array.from({ length: 2 }, (_, i) => spec(`ball10_${i}`, 'moving', 10)),
  ...Array.from({ length: 10 }, (_, i) => spec(`ball1_${i}`, 'moving', 1)),
];

export interface OverloadCameraRow {
  camera: string;
  kind: Kind;
  priority: number;
  offered_fps: number;
  cached_fps: number;
  analysed_fps: number;
  dropped_fps: number;
  /** Of which dropped as stale (waited longer than scheduler.max_frame_age_ms). */
  stale_fps: number;
  /** Frames that needed the model: offered − cached. */
  demand_fps: number;
  /** Its weighted max-min fair share of all cameras' analysed frames/s (see the top). */
  share_fps: number;
  /** analysed ÷ share (goal 0.9–1.1). */
  share_ratio: number;
  /** The longest stretch without an answered frame, analysed or cached (seconds): the daemon's largest `lag_s`. */
  longest_unanswered_s: number;
  /** `new` events of its tracked labels. */
  new_events: number;
  /** `end` events before the daemon was told to stop (a still camera's objects never leave). */
  end_events: number;
  /** Times one of its count topics went from a number to 0. */
  count_drops_to_zero: number;
  /** The counts its topics held when the daemon was told to stop, by label. */
  final_counts: Record<string, number>;
}

export interface OverloadPriorityRow {
  priority: number;
  cameras: number;
  analysed_fps: number;
  share_fps: number;
  ratio: number;
}

export interface OverloadRun {
  label: string;
  /** Seconds over which the rates were measured. */
  seconds: number;
  offered_fps: number;
  analysed_fps: number;
  cameras: OverloadCameraRow[];
  priorities: OverloadPriorityRow[];
}

export interface OverloadResult {
  fps: number;
  warmupSeconds: number;
  /** What a still camera holds (the reference's final counts), and the clip's person visits. */
  truth: { still: Record<string, number>; walkers: PeopleCount };
  reference: OverloadRun;
  /** The fleet's runs on each model. */
  variants: { model: string; runs: OverloadRun[] }[];
}

export interface OverloadModel {
  path: string;
  name: string;
  /** Frames each camera may have waiting (scheduler.queue_size); the default, 1, when absent. */
  queueSize?: number;
}

export interface OverloadOptions {
  root: string;
  /** The fleet runs on each in turn: a heavier model, a heavier overload. */
  models: OverloadModel[];
  image: string;
  clip: string;
  /** Loaded runs per model (each one playing of the clip), alternating between the models. */
  repeats: number;
  /** Rates are measured from this long after the walkers camera starts. */
  warmupSeconds: number;
  detector?: Record<string, string | number>;
}

/**
 * Weighted max-min fair shares (water-filling) of `total` among contenders of `weight` each
 * capped at `cap`: every uncapped contender gets the same amount per unit of weight, and none
 * more than its cap.
 */
export function waterFill(total: number, contenders: readonly { weight: number; cap: number }[]): number[] {
  const share = contenders.map(() => 0);
  let open = contenders.map((_, i) => i).filter((i) => contenders[i]!.cap > 0);
  let left = total;
  while (open.length && left > 1e-9) {
    const perWeight = left / open.reduce((a, i) => a + contenders[i]!.weight, 0);
    const capped = open.filter((i) => contenders[i]!.cap <= perWeight * contenders[i]!.weight);
    if (!capped.length) {
      for (const i of open) share[i] = perWeight * contenders[i]!.weight;
      break;
    }
    for (const i of capped) {
      share[i] = contenders[i]!.cap;
      left -= contenders[i]!.cap;
    }
    open = open.filter((i) => !capped.includes(i));
  }
  return share;
}

/** What the subscriber keeps of one camera. */
interface Tally {
  offered: number;
  cached: number;
  analysed: number;
  dropped0?: Record<string, number>;
  dropped1?: Record<string, number>;
  gap: number;
  longestGap: number;
  newEvents: number;
  endEvents: number;
  drops: number;
  counts: Map<string, number>;
}

/** Frames dropped by the scheduler since the start: in all (failed batches aside), and as stale. */
const droppedOf = (t: Tally, since: 'dropped0' | 'dropped1'): { all: number; stale: number } => {
  const d = t[since] ?? t.dropped0 ?? {};
  return {
    all: Object.entries(d).reduce((a, [why, n]) => (why === 'error' ? a : a + n), 0),
    stale: d.stale ?? 0,
  };
};

function configYaml(
  opts: OverloadOptions,
  model: OverloadModel,
  broker: Awaited<ReturnType<typeof startBenchBroker>>,
  server: RtspServer,
  specs: readonly CameraSpec[],
): string {
  return [
    ...benchDaemonConfig(model.path, broker, ['stats_interval_s: 1']),
    ...yamlSection('detector', opts.detector),
    ...yamlSection('scheduler', model.queueSize ? { queue_size: model.queueSize } : undefined),
    'cameras:',
    ...specs.flatMap((c) => [
      `  ${c.name}:`,
      `    url: "${server.url(MOUNT[c.kind])}"`,
      `    fps: ${FPS}`,
      `    priority: ${c.priority}`,
      `    rtsp_transport: ${server.transport}`,
      ...(c.track ? ['    objects:', `      track: [${c.track.join(', ')}]`] : []),
    ]),
  ].join('\n');
}

/**
 * One run of `specs` on its own RTSP server, broker and daemon: one playing of the clip when a
 * camera shows it, else `seconds` from the first camera's start; rates after `warmupSeconds`.
 */
async function runFleet(
  opts: OverloadOptions,
  model: OverloadModel,
  specs: readonly CameraSpec[],
  run: { label: string; seconds: number; warmupSeconds: number },
): Promise<OverloadRun> {
  const cleanups: (() => Promise<void>)[] = [];
  try {
    const dir = await mkdtemp(join(tmpdir(), 'argus-bench-overload-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const kinds = new Set(specs.map((c) => c.kind));
    const sources: Record<Kind, Mount['source']> = {
      still: { kind: 'image', path: opts.image, fps: FPS },
      walkers: { kind: 'clip', path: opts.clip, once: true },
      moving: { kind: 'ball', width: 640, height: 480, fps: FPS },
    };
    // A server of its own, so that the clip starts from its beginning with this run's cameras.
    const server = await startRtspServer(
      { after: (fn) => cleanups.push(fn) },
      [...kinds].map((k) => ({ name: MOUNT[k], source: sources[k] })),
    );
    const broker = await startBenchBroker();
    cleanups.push(() => broker.stop());
    const config = join(dir, 'argus.yaml');
    await writeFile(config, configYaml(opts, model, broker, server, specs));

    const tallies = new Map<string, Tally>(
      specs.map((c) => [
        c.name,
        {
          offered: 0,
          cached: 0,
          analysed: 0,
          gap: 0,
          longestGap: 0,
          newEvents: 0,
          endEvents: 0,
          drops: 0,
          counts: new Map(),
        },
      ]),
    );
    const tracked = new Map(specs.map((c) => [c.name, c.track]));
    const clip = specs.find((c) => c.kind === 'walkers');
    const clockCamera = (clip ?? specs[0]!).name;
    let started = 0;
    let lastStats: number | undefined;
    /** The detector's batches (all models) at the window's first stats message, and its last. */
    let batches0: number | undefined;
    let batches1 = 0;
    /** Seconds the rates were summed over: from the first stats message in the window to the last. */
    let measured = 0;
    let stopping = false;
    let clipEnded: () => void = () => undefined;
    const ended = new Promise<void>((r) => (clipEnded = r));
    const inWindow = (at: number): boolean =>
      started > 0 && at >= started + run.warmupSeconds * 1000 && at <= started + run.seconds * 1000;

    const onStats = (s: StatsPayload): void => {
      const at = Date.parse(s.ts);
      const secs = lastStats === undefined ? 0 : (at - lastStats) / 1000;
      lastStats = at;
      if (!inWindow(at)) return;
      const first = measured === 0;
      measured += first ? 1e-9 : secs;
      batches0 ??= s.detector.batches;
      batches1 = s.detector.batches;
      for (const [name, c] of Object.entries(s.cameras)) {
        const t = tallies.get(name);
        if (!t) continue;
        // The first message opens the window: its rates cover the time before it.
        if (first) {
          t.dropped0 = c.dropped;
          continue;
        }
        t.dropped1 = c.dropped;
        t.offered += c.fps_in * secs;
        t.cached += c.fps_cached * secs;
        t.analysed += c.fps_analysed * secs;
        // The daemon's own lag (the age of the newest answered frame) when it has one; else
        // stats windows with no answer, summed.
        t.gap = c.fps_analysed + c.fps_cached > 0 ? 0 : t.gap + secs;
        t.longestGap = Math.max(t.longestGap, c.lag_s ?? t.gap);
      }
    };
    const sub = mqtt.connect(broker.url);
    cleanups.push(() => sub.endAsync().then(() => undefined));
    sub.on('message', (topic, payload) => {
      if (stopping) return;
      const text = payload.toString();
      if (topic === 'argus/stats') return onStats(JSON.parse(text) as StatsPayload);
      if (topic === 'argus/events') {
        const e = JSON.parse(text) as EventPayload;
        const t = tallies.get(e.camera);
        if (!t || !(tracked.get(e.camera)?.includes(e.label) ?? true)) return;
        if (e.type === 'new') t.newEvents++;
        if (e.type === 'end') t.endEvents++;
        return;
      }
      const [, , camera, leaf] = topic.split('/');
      const t = tallies.get(camera!);
      if (!t || leaf === 'detections') return;
      if (leaf === 'status') {
        if (camera !== clockCamera) return;
        const state = (JSON.parse(text) as CameraStatusPayload).state;
        if (state === 'streaming') {
          if (started) return;
          started = Date.now();
          if (!clip) setTimeout(clipEnded, run.seconds * 1000);
        }
        // The clip's end (a restart mid-run is not).
        else if (clip && started && Date.now() - started > (run.seconds - 5) * 1000) clipEnded();
        return;
      }
      const value = Number(text);
      if (value === 0 && (t.counts.get(leaf!) ?? 0) > 0) t.drops++;
      t.counts.set(leaf!, value);
    });
    // Count topics are one level below the camera (`…/person`); `…/person/active` is not read.
    await sub.subscribeAsync(['argus/events', 'argus/stats', 'argus/cameras/+/+']);

    const child: ChildProcess = spawn(
      process.execPath,
      [join(opts.root, 'dist/src/cli.js'), 'run', '-c', config],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    );
    cleanups.push(async () => {
      const spawned = child.pid ? children(child.pid) : [];
      await stopChild(child);
      // Its ffmpeg children, should the daemon have died before stopping them.
      for (const pid of spawned) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    });
    // The end, or the run's length with a margin for a camera slow to connect.
    const cap = new Promise((r) => setTimeout(r, (run.seconds + 60) * 1000).unref());
    await Promise.race([ended, cap, new Promise((r) => child.once('exit', r))]);
    if (!started) throw new Error(`overload: ${clockCamera} never streamed`);
    stopping = true;

    const secs = measured;
    if (secs < 1) throw new Error('overload: no stats message in the measurement window');
    const rate = (n: number): number => n / secs;
    const demand = specs.map((c) => {
      const t = tallies.get(c.name)!;
      // A still camera's refreshes are analysed besides being answered from the cache: what it
      // asked of the model is at least what it got.
      return Math.max(0, rate(t.offered - t.cached), rate(t.analysed));
    });
    const analysed = specs.map((c) => rate(tallies.get(c.name)!.analysed));
    const total = analysed.reduce((a, b) => a + b, 0);
    // A camera holds queue_size frames, so it gives at most that many to each batch: its share
    // is capped by the batches formed per second too (docs/config.md, scheduler).
    const perBatch = rate(batches1 - (batches0 ?? batches1)) * (model.queueSize ?? 1);
    const shares = waterFill(
      total,
      specs.map((c, i) => ({ weight: c.priority, cap: Math.min(demand[i]!, perBatch) })),
    );
    const cameras = specs.map((c, i): OverloadCameraRow => {
      const t = tallies.get(c.name)!;
      const [d0, d1] = [droppedOf(t, 'dropped0'), droppedOf(t, 'dropped1')];
      return {
        camera: c.name,
        kind: c.kind,
        priority: c.priority,
        offered_fps: rate(t.offered),
        cached_fps: rate(t.cached),
        analysed_fps: analysed[i]!,
        dropped_fps: rate(d1.all - d0.all),
        stale_fps: rate(d1.stale - d0.stale),
        demand_fps: demand[i]!,
        share_fps: shares[i]!,
        share_ratio: shares[i]! > 0 ? analysed[i]! / shares[i]! : 0,
        longest_unanswered_s: t.longestGap,
        new_events: t.newEvents,
        end_events: t.endEvents,
        count_drops_to_zero: t.drops,
        final_counts: Object.fromEntries(t.counts),
      };
    });
    const priorities = [...new Set(specs.map((c) => c.priority))]
      .sort((a, b) => b - a)
      .map((priority): OverloadPriorityRow => {
        const group = cameras.filter((c) => c.priority === priority);
        const a = group.reduce((x, c) => x + c.analysed_fps, 0);
        const s = group.reduce((x, c) => x + c.share_fps, 0);
        return { priority, cameras: group.length, analysed_fps: a, share_fps: s, ratio: s > 0 ? a / s : 0 };
      });
    return {
      label: run.label,
      seconds: secs,
      offered_fps: cameras.reduce((a, c) => a + c.offered_fps, 0),
      analysed_fps: total,
      cameras,
      priorities,
    };
  } finally {
    for (const fn of cleanups.reverse()) await fn().catch(() => undefined);
  }
}

export async function benchOverload(
  opts: OverloadOptions,
  log: (msg: string) => void = () => undefined,
): Promise<OverloadResult> {
  log(`overload: reference, a still camera alone (≈ ${REFERENCE_SECONDS + 10} s)`);
  const reference = await runFleet(opts, opts.models[0]!, REFERENCE, {
    label: 'reference',
    seconds: REFERENCE_SECONDS,
    warmupSeconds: 5,
  });
  const variants = opts.models.map((m) => ({ model: m.name, runs: [] as OverloadRun[] }));
  // Alternating, so that drift in the machine's load hits each model alike.
  for (let r = 0; r < opts.repeats; r++) {
    for (const [i, m] of opts.models.entries()) {
      log(`overload: ${FLEET.length} cameras, ${m.name}, run ${r + 1} of ${opts.repeats} (≈ 95 s)`);
      variants[i]!.runs.push(
        await runFleet(opts, m, FLEET, {
          label: `run ${r + 1}`,
          seconds: CLIP_SECONDS,
          warmupSeconds: opts.warmupSeconds,
        }),
      );
    }
  }
  return {
    fps: FPS,
    warmupSeconds: opts.warmupSeconds,
    truth: { still: reference.cameras[0]!.final_counts, walkers: PEOPLE },
    reference,
    variants,
  };
}

/** Per camera, each figure's median over the runs (counts of events are listed per run by the report). */
export const medianOf = (
  runs: OverloadRun[],
  camera: string,
  pick: (c: OverloadCameraRow) => number,
): number => median(runs.map((r) => pick(r.cameras.find((c) => c.camera === camera)!)));
