/**
 * Tracking scored from what Argus publishes (issue 42, item 6). Each scene of
 * test/helpers/synthetic-scene.ts with known truth is written as an H.264 clip and played once
 * in real time to `argus run` as a `file:` camera (`-re`); an MQTT subscriber records the
 * camera's detections (with their ids), `argus/events` and `argus/crossings`, and
 * bench/tracking-score.ts scores them. The frames are placed on the scene's clock by their `ts`
 * (the frame cache's ffmpeg drops unchanged pictures, so frame numbers skip): the first frame's
 * scene time is the offset, in 0–8 s, at which detections and truth overlap most.
 *
 * Then `vtest.mp4` (480×360, a plaza, parked vehicles at the top right) four times in a row
 * (`-stream_loop 3`) at 5 frames/s, with a line across the plaza: the vertical x = 240 from
 * y = 90 to 330, which most walkers on the footpath cross (directions `leftward`, `rightward`).
 * No truth per frame there: `new` and ids per person against the 19 person visits counted by eye per
 * playing (bench/events.ts), `new` events per parked vehicle, and ids that crossed the line
 * more than once, with their times; and the line against a by-eye truth of one playing
 * (bench/vtest-line-truth.ts): ids that crossed more often than their person did.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt from 'mqtt';
import type { Box } from '../src/core/geometry.js';
import type {
  CameraStatusPayload,
  CrossingPayload,
  DetectionsPayload,
  EventPayload,
} from '../src/publish/topics.js';
import {
  boxesAt,
  CROSSING_SCENE,
  PARKED_SCENE,
  SLOW_SCENE,
  SPEED_SCENE,
  STANDING_SCENE,
  WALKERS_BUS_SCENE,
  writeSceneClip,
  type Scene,
} from '../test/helpers/synthetic-scene.js';
import { benchDaemonConfig, EVERY_FRAME, startBenchBroker } from './common.js';
import { PEOPLE } from './events.js';
import { VTEST_LINE_TRUTH } from './vtest-line-truth.js';
import {
  bestOffset,
  scoreLineTruth,
  scoreTracking,
  type LineTruthScore,
  summariseSpeed,
  summariseStreet,
  type ScoredFrame,
  type SeenBox,
  type SpeedSummary,
  type StreetSummary,
  type TrackingScore,
  type TruthBox,
  type TruthCrossing,
} from './tracking-score.js';

export const CAMERA = 'scene';

/** The vertical line x = 640 across a 1280×720 scene; `rightward` is left to right. */
const MIDDLE = {
  middle: {
    points: [
      [640, 0],
      [640, 720],
    ],
    directions: ['leftward', 'rightward'],
  },
};

export interface TrackingSpec {
  name: string;
  scene: Scene;
  /** The camera's analysed frames per second. */
  fps: number;
  lines?: typeof MIDDLE;
  zones?: Record<string, { points: number[][]; distances: number[] }>;
  /** Known ground speed of its one walker, m/s (events in m/s). */
  speed?: number;
}

export const TRACKING_SCENES: TrackingSpec[] = [
  { name: 'walkers_bus', scene: WALKERS_BUS_SCENE, fps: 5, lines: MIDDLE },
  { name: 'parked', scene: PARKED_SCENE, fps: 5 },
  { name: 'crossing', scene: CROSSING_SCENE, fps: 5 },
  { name: 'standing', scene: STANDING_SCENE, fps: 5 },
  { name: 'slow', scene: SLOW_SCENE, fps: 0.5, lines: MIDDLE },
  {
    name: 'speed',
    scene: SPEED_SCENE,
    fps: 5,
    zones: {
      walk: {
        points: [
          [140, 500],
          [1140, 500],
          [1140, 700],
          [140, 700],
        ],
        distances: [10, 2, 10, 2],
      },
    },
    speed: 1.4,
  },
];

/** The truth of `scene` at time `t`: each mover named by its index and cut, drawing order. */
export const truthAt =
  (scene: Scene) =>
  (t: number): TruthBox[] => {
    // The clip holds a picture every 1/fps s: the truth of the picture shown at t.
    const shown = Math.floor(t * scene.fps + 1e-6) / scene.fps;
    return boxesAt(scene, shown).map(({ mover, box }) => ({
      object: `${scene.movers.indexOf(mover)}:${mover.cut}`,
      label: mover.label,
      box,
    }));
  };

/** Each mover's passes across the vertical line x = 640 (its box centre), sampled every 0.1 s. */
export function truthCrossings(spec: TrackingSpec): TruthCrossing[] {
  if (!spec.lines) return [];
  const out: TruthCrossing[] = [];
  const side = new Map<string, number>();
  for (let t = 0; t <= spec.scene.seconds; t += 0.1) {
    for (const { object, box } of truthAt(spec.scene)(t)) {
      const cx = (box[0] + box[2]) / 2;
      const s = Math.sign(cx - 640);
      const was = side.get(object);
      if (was !== undefined && s !== 0 && was !== 0 && s !== was)
        out.push({ object, line: 'middle', direction: s > 0 ? 'rightward' : 'leftward' });
      if (s !== 0) side.set(object, s);
    }
  }
  return out;
}

/** What the scorers read of an object event. */
export type RecordedEvent = Pick<
  EventPayload,
  'type' | 'camera' | 'id' | 'label' | 'box' | 'end_ts' | 'speed'
>;

/** What the subscriber kept of one run. */
export interface Recording {
  frames: { ts: number; frame: number; cached: boolean; seen: SeenBox[] }[];
  events: RecordedEvent[];
  crossings: CrossingPayload[];
}

/**
 * Runs `argus run` (the build under `root`) with `model` and the config `lines` until camera `CAMERA` has streamed and
 * stopped, then `tailS` more seconds (tracks end by themselves), recording what it publishes.
 */
async function record(
  root: string,
  model: string,
  lines: string[],
  capS: number,
  tailS: number,
): Promise<Recording> {
  const dir = await mkdtemp(join(tmpdir(), 'argus-bench-tracking-'));
  const broker = await startBenchBroker();
  const config = join(dir, 'argus.yaml');
  await writeFile(config, [...benchDaemonConfig(model, broker, EVERY_FRAME), ...lines].join('\n'));
  const base = `argus/cameras/${CAMERA}`;
  const rec: Recording = { frames: [], events: [], crossings: [] };
  let streamed = false;
  let clipEnded: () => void = () => undefined;
  const ended = new Promise<void>((r) => (clipEnded = r));
  const sub = mqtt.connect(broker.url);
  sub.on('message', (topic, payload) => {
    const text = payload.toString();
    if (topic === `${base}/status`) {
      const state = (JSON.parse(text) as CameraStatusPayload).state;
      if (state === 'streaming') streamed = true;
      else if (streamed) clipEnded();
    } else if (topic === `${base}/detections`) {
      const d = JSON.parse(text) as DetectionsPayload;
      rec.frames.push({
        ts: Date.parse(d.ts),
        frame: d.frame,
        cached: d.cached,
        seen: d.detections.map((x) => ({ label: x.label, score: x.score, box: x.box, id: x.id ?? null })),
      });
    } else if (topic === 'argus/events') {
      const e = JSON.parse(text) as EventPayload;
      if (e.camera === CAMERA) rec.events.push(e);
    } else if (topic === 'argus/crossings') {
      const c = JSON.parse(text) as CrossingPayload;
      if (c.camera === CAMERA) rec.crossings.push(c);
    }
  });
  await sub.subscribeAsync(['argus/events', 'argus/crossings', `${base}/detections`, `${base}/status`]);
  const child = spawn(process.execPath, [join(root, 'dist/src/cli.js'), 'run', '-c', config], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise((r) => child.once('exit', r));
  try {
    await Promise.race([ended, exited, new Promise((r) => setTimeout(r, capS * 1000).unref())]);
    if (!streamed) throw new Error('tracking: the camera never streamed');
    await new Promise((r) => setTimeout(r, tailS * 1000));
  } finally {
    child.kill('SIGTERM');
    if (child.exitCode === null && child.signalCode === null) await exited;
    await sub.endAsync();
    await broker.stop();
    await rm(dir, { recursive: true, force: true });
  }
  return rec;
}

/** The config after the bench's common start: one camera `CAMERA`, its clip played once. */
export function cameraYaml(
  camera: Record<string, unknown>,
  events: Record<string, string | number> = {},
): string[] {
  return [
    // The clip is played once: no restart after it ends within the run.
    'ffmpeg:',
    '  backoff_initial_s: 600',
    '  backoff_max_s: 600',
    ...(Object.keys(events).length
      ? ['events:', ...Object.entries(events).map(([k, v]) => `  ${k}: ${v}`)]
      : []),
    'cameras:',
    `  ${CAMERA}: ${JSON.stringify(camera)}`,
  ];
}

type EventSettings = Record<string, string | number>;

/** A scene's camera (its clip at `url`) and `events:` settings, as the bench runs it. */
export function sceneCamera(
  spec: TrackingSpec,
  url: string,
  events: EventSettings = {},
): { camera: Record<string, unknown>; events: EventSettings } {
  return {
    camera: {
      url,
      fps: spec.fps,
      input_args: ['-re'],
      ...(spec.lines ? { lines: spec.lines } : {}),
      ...(spec.zones ? { zones: spec.zones } : {}),
    },
    events: { ...events, ...(spec.speed === undefined ? {} : { speed_unit: 'm/s' }) },
  };
}

/**
 * vtest.mp4's camera, played `loops` times at 5 frames/s, with the line across the plaza: the
 * vertical x = 240 from y = 90 to 330.
 */
export function vtestCamera(
  clip: string,
  loops: number,
  events: EventSettings = {},
): { camera: Record<string, unknown>; events: EventSettings } {
  return {
    camera: {
      url: `file://${clip}`,
      fps: 5,
      input_args: ['-re', '-stream_loop', String(loops - 1)],
      lines: {
        plaza: {
          points: [
            [240, 90],
            [240, 330],
          ],
          directions: ['leftward', 'rightward'],
        },
      },
    },
    events,
  };
}

export interface SceneRow {
  name: string;
  fps: number;
  seconds: number;
  /** Scene time of the first published frame (s), and the mean IoU of the alignment. */
  offset_s: number;
  align_iou: number;
  frames: number;
  cached: number;
  score: TrackingScore;
  speed: SpeedSummary | null;
}

/** Scores what Argus published of a recording of `spec`'s scene. */
export function scoreScene(spec: TrackingSpec, rec: Recording): SceneRow {
  const truth = truthAt(spec.scene);
  const candidates = Array.from({ length: 161 }, (_, i) => i * 0.05);
  const { offset, meanIou } = bestOffset(rec.frames, truth, candidates);
  const t0 = rec.frames[0]?.ts ?? 0;
  const frames: ScoredFrame[] = rec.frames.map((f) => ({
    ts: f.ts,
    truth: truth(offset + (f.ts - t0) / 1000),
    seen: f.seen,
  }));
  const events = rec.events.map((e) => ({
    type: e.type,
    id: e.id,
    label: e.label,
    box: e.box,
    endTs: e.end_ts === null ? null : Date.parse(e.end_ts),
  }));
  const crossings = rec.crossings.map((c) => ({ ...c, ts: Date.parse(c.ts) }));
  const score = scoreTracking(frames, events, crossings, truthCrossings(spec), {
    width: spec.scene.width,
    height: spec.scene.height,
  });
  return {
    name: spec.name,
    fps: spec.fps,
    seconds: spec.scene.seconds,
    offset_s: offset,
    align_iou: meanIou,
    frames: rec.frames.length,
    cached: rec.frames.filter((f) => f.cached).length,
    score,
    speed: spec.speed === undefined ? null : summariseSpeed(rec.events, spec.speed, 'm/s'),
  };
}

export interface TrackingOptions {
  /** The built checkout whose daemon runs. */
  root: string;
  model: string;
  busJpg: string;
  /** vtest.mp4, or none to leave the street out. */
  clip?: string;
  /** Scene names to run (and `vtest`); all when absent. */
  only?: Set<string>;
  loops: number;
  /** Settings under `events:` for every run (`appearance: false` to measure without it). */
  events?: Record<string, string | number>;
  /**
   * A directory to write each run's recording to (`<scene>.json`, `vtest.json`): every published
   * detection of every answered frame, with its time, frame number and whether it was cached, so
   * bench/tracking-replay.ts can run the tracker over them again.
   */
  dump?: string;
}

/** Parked vehicles of vtest.mp4 (yolov8n on frames at 0, 40 and 78 s): the white van, the car at the edge. */
export const VTEST_PARKED: Box[] = [
  [408, 28, 452, 63],
  [459, 32, 480, 59],
];
export const VTEST_SECONDS = 79.5;

export interface StreetReplay extends StreetSummary {
  line_truth: LineTruthScore;
}

/** vtest's street figures from a recording (bench/tracking.ts's, and the line against the by-eye truth). */
export function scoreStreet(rec: Recording, loops: number): StreetReplay {
  const t0 = rec.frames[0]?.ts ?? 0;
  const crossings = rec.crossings.map((c) => ({ ...c, ts: Date.parse(c.ts) }));
  const street = summariseStreet(
    rec.frames,
    rec.events.map((e) => ({
      type: e.type,
      id: e.id,
      label: e.label,
      box: e.box,
      endTs: e.end_ts === null ? null : Date.parse(e.end_ts),
    })),
    crossings,
    { people: PEOPLE.count, loops, clipS: VTEST_SECONDS, parked: VTEST_PARKED, t0 },
  );
  return { ...street, line_truth: scoreLineTruth(crossings, VTEST_LINE_TRUTH, { t0, clipS: VTEST_SECONDS }) };
}

export interface TrackingRun {
  root: string;
  scenes: SceneRow[];
  street:
    | (StreetReplay & {
        loops: number;
        fps: number;
        frames: number;
        cached: number;
      })
    | null;
}

export async function benchTracking(opts: TrackingOptions, log: (m: string) => void): Promise<TrackingRun> {
  const dir = await mkdtemp(join(tmpdir(), 'argus-bench-scenes-'));
  const out: TrackingRun = { root: opts.root, scenes: [], street: null };
  try {
    for (const spec of TRACKING_SCENES) {
      if (opts.only && !opts.only.has(spec.name)) continue;
      const clip = join(dir, `${spec.name}.mp4`);
      await writeSceneClip(spec.scene, opts.busJpg, clip);
      log(`tracking: ${spec.name} (${spec.scene.seconds} s at ${spec.fps} frames/s)`);
      const { camera, events } = sceneCamera(spec, `file://${clip}`, opts.events);
      const rec = await record(opts.root, opts.model, cameraYaml(camera, events), spec.scene.seconds + 60, 5);
      if (opts.dump) await writeFile(join(opts.dump, `${spec.name}.json`), JSON.stringify(rec));
      const row = scoreScene(spec, rec);
      const s = row.score;
      log(
        `  ids/object ${s.ids_per_object.toFixed(2)}, switches ${s.switches}, IDF1 ${s.idf1.toFixed(2)}, early ends ${s.early_ends}, new ${s.new_events}/${s.objects}`,
      );
      out.scenes.push(row);
    }
    if (opts.clip && (!opts.only || opts.only.has('vtest'))) {
      log(
        `tracking: vtest.mp4 ${opts.loops} times at 5 frames/s (≈ ${Math.round(opts.loops * VTEST_SECONDS)} s)`,
      );
      const { camera, events } = vtestCamera(opts.clip, opts.loops, opts.events);
      const rec = await record(
        opts.root,
        opts.model,
        cameraYaml(camera, events),
        opts.loops * VTEST_SECONDS + 90,
        6,
      );
      if (opts.dump) await writeFile(join(opts.dump, 'vtest.json'), JSON.stringify(rec));
      out.street = {
        ...scoreStreet(rec, opts.loops),
        loops: opts.loops,
        fps: 5,
        frames: rec.frames.length,
        cached: rec.frames.filter((f) => f.cached).length,
      };
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  return out;
}
