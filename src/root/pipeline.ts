import { resolve } from 'node:path';
import type { Logger } from 'pino';
import { EmbeddedBroker } from '../broker/index.js';
import { FrameCache } from '../cache/index.js';
import { Control, type ApplyOutcome } from '../control/index.js';
import type { CameraConfig } from '../config/index.js';
import type { Clock } from '../core/clock.js';
import { EventStore } from '../events/index.js';
import { CameraHealth } from '../health/index.js';
import { FootageRanges } from '../record/index.js';
import { Fleet } from '../fleet/index.js';
import { createMetrics, HttpServer, LiveView } from '../http/index.js';
import { Ingest } from '../ingest/index.js';
import { ModelRegistry } from '../models/index.js';
import { MqttOutput, StatsPublisher, topics } from '../publish/index.js';
import { scrub } from '../redact.js';
import { Scheduler } from '../scheduler/index.js';
import { StateLock } from '../state/index.js';
import type { Stage } from '../stop.js';
import { Bus } from './bus.js';
import { warnOtherCameras } from './other-cameras.js';
import { Parts, reportingParts } from './parts.js';
import type { Running } from './reload.js';
import type { RunningConfig } from './running-config.js';

/** What the daemon lends the root: its logger and clock, and its lifecycle. */
export interface AssemblyEnv {
  log: Logger;
  clock: Clock;
  /**
   * Starts a stage and remembers to stop it (the daemon's lifecycle); `slow` names a start that
   * may take minutes (systemd is told to wait).
   */
  begin: (name: string, stage: Stage, slow?: string) => Promise<void>;
  /** The stop is hurried: results in flight are dropped. */
  hurried: () => boolean;
  /** Applies Control's cameras to the running pipeline (the daemon's queue, after the start). */
  apply: () => Promise<ApplyOutcome>;
  /** Resolves once the start is over (a line reset heard during it waits for the events part). */
  started: () => Promise<unknown>;
}

/** The pipeline, built and started: what a reload, a change, the health and the log line reach. */
export interface Pipeline extends Running {
  view: LiveView;
  /** The broker Argus publishes to (the embedded one's URL, or `mqtt.url`). */
  url: string;
  /** This box in a fleet (`fleet:`). */
  fleet: Fleet | undefined;
}

/**
 * Builds the pipeline in the order frames and commands flow and starts each stage as it is
 * built: the state directory's lock (state/lock.ts: held until the last stage has stopped), the
 * models, the broker and Argus' MQTT client, Control (whose state makes the cameras that run), ingest, the parts that publish, the scheduler, the stats, HTTP, then the cameras.
 * Stages talk through the bus (bus.ts), so each is built after those it needs and no name is
 * used before it exists. The running config's cameras become Control's (mode, runtime changes).
 */
export async function assemble(running: RunningConfig, env: AssemblyEnv): Promise<Pipeline> {
  const { log, clock, begin } = env;
  const stage = (name: string): Logger => log.child({ stage: name });
  const bus = new Bus();
  const { config: file, secrets, state } = running.current();
  const t = topics(file.mqtt.base_topic);
  const stateFrom = state?.from ?? 'config';
  log.info(
    { models: Object.keys(file.models), state_dir: file.state_dir, state_from: stateFrom },
    'starting',
  );

  // The state directory, this config's while it runs: another running config's is refused.
  const dir = file.state_dir!; // resolved by the loader
  await begin(
    'state',
    new StateLock(dir, state?.config ?? resolve(running.current().file), stateFrom, stage('state')),
  );

  const models = new ModelRegistry(file.models, file.detector, {
    log: stage('models'),
    clock,
    secrets,
    onSwitch: bus.modelsSwitched.emit,
    onAvailability: (_name, a) => bus.availability.emit(a),
    engines: { stateDir: dir, maxBatch: file.scheduler.max_batch },
  });
  await begin('models', models, 'loading models'); // TensorRT engines: minutes

  const broker = file.mqtt.url
    ? undefined
    : new EmbeddedBroker(file.mqtt, stage('broker'), clock, file.control.enabled);
  if (broker) await begin('broker', broker);
  const { url, mqtt } = broker?.ownClient() ?? { url: file.mqtt.url!, mqtt: file.mqtt };
  // With fleet:, each box's own availability: the cameras' entities follow the box that runs them.
  const statusTopic = file.fleet ? t.boxStatus(file.fleet.name) : t.status;
  const output = new MqttOutput(url, mqtt, statusTopic, stage('mqtt'), secrets);
  await begin('mqtt', output);

  // The cameras that run: the file's, with the mode and runtime changes kept in the state dir.
  const control = new Control(file, {
    log: stage('control'),
    clock,
    out: output,
    topics: t,
    apply: env.apply,
    // Heard during start-up, a reset waits for the start: the line counts are loaded by then.
    resetLine: async (camera, line) => (await env.started(), bus.lineReset.ask(camera, line)),
    relearnHealth: async (camera) => (await env.started(), bus.relearn.ask(camera)),
    // With fleet:, the settings follow each camera to its next box (and the mode to every box).
    onStateChange: (cameras) => bus.cameraState.emit('control', cameras),
    onModeChange: bus.modeChanged.emit,
    runsHere: file.fleet ? bus.runsHere.ask : undefined,
  });
  await control.load();
  // With fleet:, the cameras etcd gives this box: none yet, they come as the fleet takes them.
  // A camera's line counts and runtime changes are kept in etcd too, and taken by its next box.
  const fleet = file.fleet
    ? new Fleet(file.fleet, {
        log: stage('fleet'),
        clock,
        secrets,
        apply: env.apply,
        follow: {
          cameras: {
            control: {
              read: (c) => control.overridesOf(c),
              adopt: (c, v) => control.adoptOverrides(c, v),
            },
            line_counts: { read: bus.lineCountsOf.ask, adopt: bus.adoptLineCounts.ask },
          },
          globals: { mode: { read: () => control.mode(), adopt: (v) => control.adoptMode(v) } },
        },
      })
    : undefined;
  bus.cameraState.on((kind, cameras) => fleet?.cameraStateChanged(kind, cameras));
  bus.modeChanged.on(() => fleet?.globalChanged('mode'));
  bus.runsHere.handle((camera) => !!fleet?.ownership(camera));
  const select = (cameras: Record<string, CameraConfig>): Record<string, CameraConfig> =>
    fleet ? fleet.select(cameras) : cameras;
  const controlCameras = control.storedCameras(); // before the file's cameras drop the others
  const effective = control.effective(file);
  running.set({ ...running.current(), config: { ...effective, cameras: select(effective.cameras) } });
  const config = running.current().config;
  control.listen(broker ? { broker } : { inbox: output }, config.mqtt.base_topic);

  // The events' footage each camera's recording keeps: set by the events, read by the rings.
  const footage = new FootageRanges();
  const ingest = new Ingest(
    {
      ...config,
      size: (c) => models.detector(c.model)!.inputSize,
      secrets,
      clips: config.events.clips,
      configured: effective.cameras,
    },
    { log, clock, onFrame: bus.frames.emit, onStatus: bus.statuses.emit, footage },
  );
  const scheduler = new Scheduler(config.scheduler, config.cameras, {
    models,
    cache: new FrameCache(config.cache, (camera) => running.cameras()[camera]?.cache_mask),
    clock,
    log: stage('scheduler'),
    onResult: (r) => env.hurried() || bus.results.emit(r),
    onDetectorError: (camera, message) =>
      env.hurried() || bus.detectorErrors.emit(camera, scrub(message, secrets)),
  });
  const history = EventStore.inStateDir(config.state_dir, config.events.history, stage('events'), clock);
  const reporting = reportingParts(config, {
    cameras: running.cameras,
    out: output,
    topics: t,
    clock,
    log,
    history,
    clipSource: () => ingest,
    footage,
    modes: () => Object.keys(running.current().config.modes),
    fleet: file.fleet && { box: file.fleet.name, fileCameras: () => control.cameras() },
    cameraStatus: (name) => ingest.status(name),
    availability: (model) => models.availability(model),
    lag: { of: (name) => scheduler.lag(name), afterS: config.scheduler.lagging_after_s },
    owner: fleet && ((camera) => fleet.ownership(camera)),
    onTracked: bus.tracked.emit,
    onFault: bus.faults.emit,
    onLineCounts: (camera) => bus.cameraState.emit('line_counts', [camera]),
  });
  const { discovery, detections, events, statuses, frameFit, latency } = reporting;
  const health = new CameraHealth(running.cameras, config.health, {
    out: output,
    topics: t,
    clock,
    log: stage('health'),
    stateDir: config.state_dir,
  });
  const sources = { scheduler, ingest, models, output };
  const stats = new StatsPublisher(config, sources, { out: output, topics: t, clock });
  const view = new LiveView(config.http, {
    ...sources,
    stats,
    history,
    control,
    counts: (c) => events.countsOf(c),
    zoneDwell: (c) => events.dwellOf(c),
    objects: (c) => events.objectsOf(c),
    eventFaults: events.faults,
    lineCounts: () => events.lineCountsNow(),
    cameras: running.cameras,
    health,
    clips: events,
    fleet: fleet && { view: () => fleet.view(), fileCameras: () => control.cameras() },
    metrics: createMetrics({
      ...sources,
      broker,
      latency,
      eventFaults: events.faults,
      health,
      ...(events.snapshotFrames ? { snapshotFrames: events.snapshotFrames } : {}),
    }),
  });
  // Those that hear of results, statuses and reloads, in order; the latency last (it times the others).
  const parts = new Parts(
    [discovery, control, view, health, events, detections, statuses, frameFit, latency],
    stage('parts'),
    clock,
  );

  // The journeys: a frame to its messages, a status, a command's line reset, a fault.
  bus.frames.on((f) => scheduler.push(f));
  bus.frames.on((f) => parts.tell('onFrame', f));
  bus.modelsSwitched.on((names) => scheduler.modelsChanged(names));
  bus.results.on((r) => parts.tell('onResult', r));
  bus.tracked.on((tracked) => parts.tell('onTracked', tracked));
  bus.detectorErrors.on((camera, message) => parts.tell('onDetectorError', camera, message));
  bus.statuses.on((s) => parts.tell('onCameraStatus', s));
  bus.lineReset.handle((camera, line) => events.resetLine(camera, line));
  bus.relearn.handle((camera) => health.relearn(camera));
  bus.lineCountsOf.handle((camera) => events.lineCountsOf(camera));
  bus.adoptLineCounts.handle((camera, json) => events.adoptLineCounts(camera, json));
  bus.faults.on((camera) => statuses.faultsChanged(camera));
  running.onCameras((before) => parts.tell('camerasChanged', before));

  await begin('events', parts);
  warnOtherCameras(
    stage('state'),
    config.state_dir,
    { history: history?.cameras() ?? [], line_counts: events.lineCountCameras(), control: controlCameras },
    Object.keys(file.cameras),
  );
  await begin('scheduler', scheduler);
  await begin('stats', stats);
  if (config.http.enabled) await begin('http', new HttpServer(config.http, view, stage('http')));
  // Before the cameras, so stopped after them: a camera's key is let go once it has stopped.
  if (fleet) await begin('fleet', fleet);
  await begin('cameras', ingest);
  // A model away or back is said once the parts run (one found at loading is in its status).
  bus.availability.on((a) => parts.tell('onModelAvailability', a));
  return { ingest, scheduler, parts, models, control, view, url, config: running, select, fleet };
}
