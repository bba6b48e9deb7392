import { join } from 'node:path';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { Clock } from '../core/clock.js';
import { errorMessage } from '../core/errors.js';
import { namedRecord, own } from '../core/names.js';
import { isNumber, parseSettingKey } from '../core/setting-keys.js';
import { NO_MODE, type CameraConfig, type Config } from '../config/index.js';
import { Publisher, type Output, type Topics } from '../publish/index.js';
import { CONTROL_FILE, JsonFile } from '../state/index.js';
import type { EmbeddedBroker } from '../broker/index.js';
import type { Inbox } from '../publish/index.js';
import { commandFilters, parseCommand } from './commands.js';
import {
  checkStored,
  effectiveCameras,
  emptyState,
  keysOf,
  parseValue,
  readKey,
  readSetting,
  settingsOf,
  withMode,
  type ChangeRequest,
  type ControlState,
  type SettingValue,
} from './settings.js';

/**
 * What became of a change: applied (or already so) and kept in control.json, or kept and
 * deferred (`deferred` says why: Argus is stopping, and it runs at the next start); refused with
 * why (and an HTTP status), the pipeline's refusal included (nothing kept); or applied but not
 * kept (control.json could not be written: a 500 that says so, as the change lasts only until
 * Argus stops).
 */
export type ChangeOutcome =
  | { ok: true; changed: boolean; deferred?: string }
  | { ok: false; status: 400 | 403 | 404; error: string }
  | { ok: false; status: 500; error: string; applied: true }
  | { ok: false; status: 500; error: string; applied: false };

/**
 * What became of applying the cameras to the running pipeline: applied; deferred (Argus is
 * stopping: kept, it runs at the next start); or refused (the apply failed, with why).
 */
export type ApplyOutcome =
  { outcome: 'applied' } | { outcome: 'deferred'; reason: string } | { outcome: 'refused'; reason: string };

/** The settings as GET /api/control shows them. */
export interface ControlView {
  enabled: boolean;
  mode: string;
  modes: string[];
  cameras: Record<string, Record<string, SettingValue>>;
  /** The runtime changes in force: camera → key → value (what file and mode give is `base`). */
  overrides: ControlState['overrides'];
}

export interface ControlDeps {
  log: Logger;
  clock: Clock;
  out: Output;
  topics: Topics;
  /**
   * Applies `cameras()` to the running pipeline, queued with the reloads; a change heard while
   * Argus starts waits for the start. Resolves once applied, deferred or refused (a rejection is
   * read as refused).
   */
  apply: () => Promise<ApplyOutcome>;
  /**
   * Sets a line's counts back to 0 and publishes them, once Argus runs; false when the running
   * pipeline has no such line (a reload in progress may not have made it yet).
   */
  resetLine: (camera: string, line: string) => Promise<boolean>;
  /**
   * Forgets a camera's health references (learnt again from now on), once Argus runs; false when
   * the camera's health is off. Absent: no health part (tools).
   */
  relearnHealth?: (camera: string) => Promise<boolean>;
  /**
   * The runtime changes of these cameras changed here (a command, a mode, a refused change undone,
   * a stale change dropped). With `fleet:`, written to etcd.
   */
  onStateChange?: (cameras: string[]) => void;
  /** The mode changed here (a command, a refused change undone). With `fleet:`, written to etcd. */
  onModeChange?: () => void;
  /**
   * With `fleet:`, whether this box runs a camera: the retained states of a camera are published
   * by the box that runs it (whose settings are the camera's), those of the others left to them.
   */
  runsHere?: ((camera: string) => boolean) | undefined;
}

/** The file in the state directory (its name: state/layout.ts). */
export { CONTROL_FILE };

const overrideSchema = z.object({
  value: z.union([z.boolean(), z.number()]),
  base: z.union([z.boolean(), z.number()]),
});
const fileSchema = z.object({
  version: z.literal(1),
  mode: z.string().min(1),
  overrides: z.record(z.string(), z.record(z.string(), overrideSchema)),
});

/** Copies parsed records into prototype-less ones (core/names.ts): camera names are user input. */
/** A copy to go back to (prototype-less records, as parseState makes them). */
function copyState(s: ControlState): ControlState {
  const overrides = namedRecord<Record<string, { value: SettingValue; base: SettingValue }>>();
  for (const [cam, keys] of Object.entries(s.overrides)) overrides[cam] = Object.assign(namedRecord(), keys);
  return { mode: s.mode, overrides };
}

function parseState(data: unknown): ControlState {
  const f = fileSchema.parse(data);
  const overrides = namedRecord<Record<string, { value: SettingValue; base: SettingValue }>>();
  for (const [cam, keys] of Object.entries(f.overrides)) overrides[cam] = Object.assign(namedRecord(), keys);
  return { mode: f.mode, overrides };
}

const onOff = (v: boolean): 'ON' | 'OFF' => (v ? 'ON' : 'OFF');

/**
 * Steering at run time: the active mode and the runtime changes, kept in the state directory
 * (control.json, written crash-safely). The cameras that run are the file's, with the active
 * mode's settings on them, then the runtime changes (settings.ts, `effectiveCameras`). Each
 * setting's state is published retained (`…/state`), and a change is applied like a reload of
 * the cameras it touches: a camera whose stream is the same keeps streaming.
 */
export class Control {
  readonly name = 'control';
  private state: ControlState = emptyState();
  private file: Pick<Config, 'cameras' | 'modes' | 'control'>;
  private readonly store: JsonFile<ControlState> | undefined;
  private readonly mqtt: Publisher;
  /** Retained states published, topic → payload: only changes are sent, those gone cleared. */
  private published = new Map<string, string>();
  private running = false;
  /** Whether `effective` has run: the first is the start, the later ones reloads. */
  private effectiveOnce = false;

  constructor(
    config: Pick<Config, 'cameras' | 'modes' | 'control'> & { state_dir?: string | undefined },
    private readonly deps: ControlDeps,
  ) {
    this.file = config;
    this.mqtt = new Publisher(deps.out);
    this.store =
      config.state_dir === undefined
        ? undefined
        : new JsonFile(join(config.state_dir, CONTROL_FILE), {
            parse: parseState,
            serialize: (s) => ({ version: 1, ...s }),
            maxBytes: 4 << 20,
            delayMs: 0,
            clock: deps.clock,
            log: deps.log,
          });
  }

  get enabled(): boolean {
    return this.file.control.enabled;
  }

  /** Tells `onStateChange` of every camera of the file (and the mode, where `mode`). */
  private stateChanged(cameras: string[] = Object.keys(this.file.cameras), mode = true): void {
    if (cameras.length) this.deps.onStateChange?.(cameras);
    if (mode) this.deps.onModeChange?.();
  }

  /** One camera's runtime changes as JSON, `{ key: { value, base } }` (what a fleet keeps in etcd). */
  overridesOf(camera: string): string {
    return JSON.stringify(own(this.state.overrides, camera) ?? {});
  }

  /**
   * Takes a camera's runtime changes from the box that ran it before (etcd), before it starts
   * here: kept in control.json, applied with the camera. Changes out of range are dropped (one
   * line each, as at load); throws on a document that is no camera's changes.
   */
  adoptOverrides(camera: string, json: string): void {
    const keys = z.record(z.string(), overrideSchema).parse(JSON.parse(json));
    const { state, problems } = checkStored({
      mode: this.state.mode,
      overrides: Object.assign(namedRecord(), { [camera]: Object.assign(namedRecord(), keys) }),
    });
    for (const { key, value, error } of problems)
      this.deps.log.warn(
        { camera, setting: key, value },
        `control: a runtime change kept in etcd is out of range (${error}): dropped`,
      );
    const kept = own(state.overrides, camera);
    if (kept) this.state.overrides[camera] = kept;
    else delete this.state.overrides[camera];
    this.store?.save(this.state);
  }

  /** The active mode (what a fleet keeps in etcd). */
  mode(): string {
    return this.state.mode;
  }

  /**
   * Takes the mode another box of the fleet set: true where it is one of the file's (and is now
   * active: the caller applies the cameras), false where this file has no such mode (logged).
   */
  adoptMode(mode: string): boolean {
    if (mode !== NO_MODE && !own(this.file.modes, mode)) {
      this.deps.log.warn(
        { mode },
        `control: the fleet's mode '${mode}' is not in this box's file; kept as it is`,
      );
      return false;
    }
    if (mode === this.state.mode) return false;
    const touched = this.enterMode(mode);
    this.store?.save(this.state);
    this.deps.log.info({ mode }, 'control: mode changed by another box of the fleet');
    // The changes the mode replaced, for the cameras this box owns.
    this.stateChanged(touched, false);
    return true;
  }

  /**
   * Reads the state kept by the last run (a missing or corrupt file: none). A change no setting's
   * range takes (an edited file: `fps` -5, `detect` 7) is dropped, one line each, so the file's
   * (or the mode's) value runs.
   */
  async load(): Promise<void> {
    const { state, problems } = checkStored((await this.store?.load()) ?? emptyState());
    for (const { camera, key, value, error } of problems)
      this.deps.log.warn(
        { camera, setting: key, value, file: this.store?.path },
        `control: a runtime change kept in ${CONTROL_FILE} is out of range (${error}): dropped, the file's value runs`,
      );
    this.state = state;
    if (problems.length) this.store?.save(state);
  }

  /** The cameras control.json holds runtime changes of, as read (before `effective` drops those of cameras the file does not have). */
  storedCameras(): string[] {
    return Object.keys(this.state.overrides).sort();
  }

  /**
   * The configuration that runs for a file (at start and at each reload): its cameras with the
   * mode and the runtime changes on them. Changes whose key the file (or mode) changed since are
   * dropped, and logged.
   */
  effective<C extends Pick<Config, 'cameras' | 'modes' | 'control'>>(config: C): C {
    this.file = config;
    if (!config.control.enabled) return config;
    const { cameras, state, dropped } = effectiveCameras(config, this.state);
    if (dropped.length)
      this.deps.log.info(
        { settings: dropped },
        'control: runtime changes dropped: the file (or the mode) changed those settings since',
      );
    if (state.mode !== this.state.mode)
      this.deps.log.warn(
        { mode: this.state.mode },
        `control: mode '${this.state.mode}' is no longer in the file: no mode is active (${NO_MODE})`,
      );
    const first = !this.effectiveOnce;
    this.effectiveOnce = true;
    if (dropped.length || state.mode !== this.state.mode) {
      this.state = state;
      this.store?.save(state);
      // A mode this box's own control.json named, gone from the file, is not the fleet's news at
      // start (a box that was away must not push its stale mode's end on the others: it takes
      // the fleet's); at a reload every box reads the same file, and says so.
      this.stateChanged(undefined, !first);
    }
    return { ...config, cameras };
  }

  /**
   * The cameras that should run now (file, mode, runtime changes): a pure reading. `effective`
   * (at start and at each reload) is where stale changes are dropped and the file rewritten.
   */
  cameras(): Record<string, CameraConfig> {
    if (!this.file.control.enabled) return this.file.cameras;
    return effectiveCameras(this.file, this.state).cameras;
  }

  view(): ControlView {
    const cameras = namedRecord<Record<string, SettingValue>>();
    for (const [name, cam] of Object.entries(this.cameras())) {
      const values = namedRecord<SettingValue>();
      for (const key of keysOf(cam)) values[key] = readKey(cam, key)!;
      cameras[name] = values;
    }
    return {
      enabled: this.enabled,
      mode: this.state.mode,
      modes: [NO_MODE, ...Object.keys(this.file.modes)],
      cameras,
      overrides: this.state.overrides,
    };
  }

  /**
   * Takes commands from the embedded broker (which names the client that sent each, and lets
   * only logged-in clients send them) or, with an external broker, from a subscription (whose
   * broker's ACL says who may; MQTT does not tell subscribers who published).
   */
  listen(source: { broker: Pick<EmbeddedBroker, 'onCommand'> } | { inbox: Inbox }, base: string): void {
    if (!this.enabled) return;
    if ('broker' in source)
      source.broker.onCommand((topic, payload, retained, id) =>
        this.onCommand(topic, payload, retained, id, base),
      );
    else
      for (const filter of commandFilters(base))
        source.inbox.subscribe(filter, (payload, topic, retained) =>
          this.onCommand(topic, payload, retained, 'a client of the external broker', base),
        );
  }

  /** A message on a control topic (`by`: the client that sent it, as far as Argus knows). */
  onCommand(topic: string, payload: string, retained: boolean, by: string, base: string): void {
    if (!this.enabled) return;
    const req = parseCommand(base, topic, payload);
    if (!req) return;
    const where = { topic, client: by };
    if (retained) {
      // A retained command would be replayed at every connection; Home Assistant never retains them.
      this.deps.log.warn(where, 'control: a retained command is ignored (publish commands without retain)');
      return;
    }
    if ('error' in req) {
      this.deps.log.warn(
        { ...where, payload: payload.slice(0, 64) },
        `control: ${req.error}; nothing changed`,
      );
      return;
    }
    // MQTT has no answer: a refusal is one warn line (one applied but not kept, or kept but not
    // applied, was logged by change()); a throw is one too, and the daemon goes on.
    this.change(req, by).then(
      (o) => {
        if (!o.ok && !('applied' in o))
          this.deps.log.warn(
            { ...where, payload: payload.slice(0, 64) },
            `control: ${o.error}; nothing changed`,
          );
      },
      (err: unknown) =>
        this.deps.log.warn(
          { ...where, err: errorMessage(err) },
          'control: the change failed; nothing changed',
        ),
    );
  }

  /** Applies a change (validated, kept, published); refused with why when it cannot be made. */
  async change(req: ChangeRequest, by: string): Promise<ChangeOutcome> {
    if (!this.enabled) return { ok: false, status: 403, error: 'control is off (control.enabled: false)' };
    if (req.kind === 'mode') return this.setMode(req.mode, by);
    const cam = own(this.cameras(), req.camera);
    if (!cam) return { ok: false, status: 404, error: `there is no camera '${req.camera}'` };
    if (req.kind === 'relearn') {
      if (!(await this.deps.relearnHealth?.(req.camera)))
        return { ok: false, status: 404, error: `camera '${req.camera}' has health off (health.enabled)` };
      this.deps.log.info(
        { camera: req.camera, client: by },
        'control: health reference reset: learning again',
      );
      return { ok: true, changed: true };
    }
    if (req.kind === 'reset') {
      const none = {
        ok: false,
        status: 404,
        error: `camera '${req.camera}' has no line '${req.line}'`,
      } as const;
      if (!own(cam.lines, req.line) || !(await this.deps.resetLine(req.camera, req.line))) return none;
      this.deps.log.info({ camera: req.camera, line: req.line, client: by }, 'control: line counts reset');
      return { ok: true, changed: true };
    }
    if (readKey(cam, req.key) === undefined)
      return { ok: false, status: 404, error: `camera '${req.camera}' has no setting '${req.key}'` };
    const parsed = parseValue(cam, req.key, req.value);
    if ('error' in parsed) return { ok: false, status: 400, error: parsed.error };
    const { value } = parsed;
    if (readKey(cam, req.key) === value) return this.kept(false);
    const before = copyState(this.state);
    const base = readKey(withMode(this.file, this.state.mode)[req.camera]!, req.key)!;
    const keys = (this.state.overrides[req.camera] ??= namedRecord());
    if (value === base) delete keys[req.key];
    else keys[req.key] = { value, base };
    if (Object.keys(keys).length === 0) delete this.state.overrides[req.camera];
    this.store?.save(this.state);
    this.stateChanged([req.camera], false);
    this.deps.log.info(
      { camera: req.camera, setting: req.key, value, client: by },
      'control: camera setting changed',
    );
    return this.applied(before);
  }

  /**
   * Applies the change just made (`before`: the state it replaced) and says what became of it:
   * applied and kept; applied but not kept (a 500, kept()); kept and deferred (Argus is
   * stopping: it runs at the next start); or refused by the pipeline (a 500 that says why, the
   * state and control.json back to `before`, logged).
   */
  private async applied(before: ControlState): Promise<ChangeOutcome> {
    // Saving starts at once, beside the apply: a stop right after a command still writes it.
    const [kept, result] = await Promise.all([
      this.kept(true),
      this.deps
        .apply()
        .catch((err: unknown): ApplyOutcome => ({ outcome: 'refused', reason: errorMessage(err) })),
    ]);
    if (result.outcome === 'refused') {
      this.state = before;
      this.store?.save(before);
      this.stateChanged();
      const error = `refused: ${result.reason}; nothing changed`;
      this.deps.log.warn(`control: ${error}`);
      return { ok: false, status: 500, error, applied: false };
    }
    if (result.outcome === 'applied' || !kept.ok) return kept;
    this.deps.log.info(`control: kept, not applied yet: ${result.reason}`);
    return { ...kept, deferred: result.reason };
  }

  /**
   * Whether control.json holds the settings now in force (a write that failed before is tried
   * again): ok, or a 500 that says the change runs but lasts only until Argus stops (logged).
   */
  private async kept(changed: boolean): Promise<ChangeOutcome> {
    const why = await this.store?.saved();
    if (why === undefined) return { ok: true, changed };
    const error = `applied, but not saved to ${this.store!.path} (${why}): it lasts only until Argus stops`;
    if (changed) this.deps.log.warn({ file: this.store!.path, err: why }, `control: ${error}`);
    return { ok: false, status: 500, error, applied: true };
  }

  private async setMode(mode: string, by: string): Promise<ChangeOutcome> {
    if (mode !== NO_MODE && !own(this.file.modes, mode))
      return {
        ok: false,
        status: 404,
        error: `there is no mode '${mode}' (the modes are ${[NO_MODE, ...Object.keys(this.file.modes)].join(', ')})`,
      };
    if (mode === this.state.mode) return this.kept(false);
    const before = copyState(this.state);
    const touched = this.enterMode(mode);
    this.store?.save(this.state);
    this.stateChanged(touched, true);
    this.deps.log.info({ mode, client: by }, 'control: mode changed');
    return this.applied(before);
  }

  /**
   * Makes `mode` the active one: the mode's own settings win over earlier runtime changes of the
   * same keys (dropped). Returns the cameras whose changes it dropped.
   */
  private enterMode(mode: string): string[] {
    const touched: string[] = [];
    for (const [cam, sw] of Object.entries(own(this.file.modes, mode)?.cameras ?? {})) {
      const keys = own(this.state.overrides, cam);
      if (!keys) continue;
      for (const key of Object.keys(keys)) {
        const ref = parseSettingKey(key);
        if (!ref) continue;
        const named =
          ref.kind === 'camera' ? sw[ref.key] !== undefined : own(sw[ref.kind], ref.name) !== undefined;
        if (!named) continue;
        delete keys[key];
        if (!touched.includes(cam)) touched.push(cam);
      }
    }
    this.state.mode = mode;
    return touched;
  }

  /** Publishes every setting's state (and the mode), retained; from now on each change's. */
  start(): void {
    this.running = true;
    this.publishStates();
  }

  /** The cameras changed (a reload, a change): their states follow. */
  camerasChanged(): void {
    if (this.running) this.publishStates();
  }

  private publishStates(): void {
    if (!this.enabled) return;
    const { topics } = this.deps;
    const next = new Map<string, string>();
    const send = (topic: string, payload: string, put: () => void): void => {
      next.set(topic, payload);
      if (this.published.get(topic) !== payload) put();
    };
    /** With `fleet:`, the states of the file's cameras another box runs: its to publish, not cleared here. */
    const elsewhere = new Set<string>();
    for (const [name, cam] of Object.entries(this.cameras())) {
      const here = this.deps.runsHere?.(name) ?? true;
      for (const ref of settingsOf(cam)) {
        const v = readSetting(cam, ref)!;
        const t = isNumber(ref) ? topics.numberState(name, ref) : topics.switchState(name, ref);
        if (!here) elsewhere.add(t);
        else if (isNumber(ref)) send(t, String(v), () => this.mqtt.state(t, v as number));
        else send(t, onOff(v as boolean), () => this.mqtt.state(t, onOff(v as boolean)));
      }
    }
    // The mode last: a subscriber that sees the mode has already seen the settings it brought.
    send(topics.modeState, this.state.mode, () => this.mqtt.state(topics.modeState, this.state.mode));
    for (const topic of this.published.keys())
      if (!next.has(topic) && !elsewhere.has(topic)) this.deps.out.state(topic, '');
    this.published = next;
  }

  /** Writes what is pending. */
  async stop(): Promise<void> {
    this.running = false;
    await this.store?.flush();
  }
}
