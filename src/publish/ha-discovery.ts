import type { Logger } from 'pino';
import type { Clock, Timer } from '../core/clock.js';
import { healthOf, type CameraConfig, type CamerasNow, type Config } from '../config/index.js';
import { argusVersion } from '../version.js';
import { discoveryConfigs, discoveryFilter } from './ha-configs.js';
import type { Inbox, Output } from './mqtt-output.js';
import { Publisher } from './publisher.js';
import type { Topic, Topics } from './topics.js';

export interface DiscoveryDeps {
  out: Output & Inbox;
  topics: Topics;
  clock: Clock;
  log: Logger;
  /** In [0, 1): where in the delay window a re-publication falls (tests fix it). */
  random?: () => number;
  /**
   * The names of the arming modes now (`none` aside), for the mode's select: a reload may change
   * them. Without it, those of the config Discovery was made with.
   */
  modes?: () => readonly string[];
  /**
   * With `fleet:`: this box's name and every camera of the file (with mode and runtime changes).
   * The box announces the cameras it runs (`cameras`) and deletes no config of a camera of the
   * file: another box runs it.
   */
  fleet?: { box: string; fileCameras: () => Record<string, CameraConfig> } | undefined;
}

/**
 * The longest wait before re-publishing after Home Assistant's birth message: its documentation
 * asks for a random delay, so that many publishers do not answer at the same instant.
 */
export const REPUBLISH_WINDOW_MS = 2000;

/**
 * Home Assistant MQTT discovery (`home_assistant.enabled`): publishes the retained config of
 * every entity (src/publish/ha-configs.ts) at start, publishes again all of them when Home
 * Assistant announces itself (`online` on `<discovery_prefix>/status`: it may have lost them,
 * with a broker that keeps no retained messages across restarts), and on a reload publishes the
 * configs that are new or changed and deletes, with an empty retained message, those of the
 * cameras, labels, zones and lines gone. It also listens to its own discovery topics: a config
 * there that it does not announce (left retained by an earlier run with other cameras) is
 * deleted too, so a restart with a changed file leaves no ghost entities. With `control.enabled`,
 * the entities that steer Argus come with them (switches, numbers, buttons, the mode's select).
 *
 * With `fleet:` (`deps.fleet`), each box announces the cameras it runs, available while the box is
 * (ha-configs.ts), and deletes only configs that no camera of the file has: those of a camera
 * another box runs stay, and a camera handed on keeps its entity until its new box announces it.
 */
export class Discovery {
  readonly name = 'discovery';
  /** What was last published: topic → payload (and as JSON, to compare). */
  private configs = new Map<Topic<'discovery'>, { payload: Record<string, unknown>; json: string }>();
  /** With `fleet:`: the topics of every camera of the file, which this box never deletes. */
  private fileTopics = new Set<Topic<'discovery'>>();
  private readonly mqtt: Publisher;
  private version = '';
  private running = false;
  private timer: Timer | null = null;

  constructor(
    private readonly cfg: Pick<Config, 'home_assistant' | 'mqtt' | 'control' | 'modes'> & {
      /** `speed_unit`: the calibrated zones' speed sensors' unit (absent: km/h). */
      events?: Pick<Config['events'], 'speed_unit'>;
      /** Camera health's defaults: absent, no camera's health is announced. */
      health?: Config['health'];
    },
    /** The cameras that run (with the mode and the runtime changes on them): those announced. */
    private readonly cameras: CamerasNow,
    private readonly deps: DiscoveryDeps,
  ) {
    this.mqtt = new Publisher(deps.out);
  }

  private get settings(): Config['home_assistant'] {
    return this.cfg.home_assistant;
  }

  /** Publishes every config and listens for Home Assistant's status; nothing when disabled. */
  start(): void {
    if (!this.settings.enabled) return;
    this.version = argusVersion();
    this.running = true;
    const prefix = this.settings.discovery_prefix;
    this.deps.out.subscribe(`${prefix}/status`, (payload) => this.onStatus(payload));
    this.camerasChanged();
    const own = discoveryFilter(prefix, this.cfg.mqtt.base_topic);
    this.deps.out.subscribe(own, (payload, topic) => this.onOwnConfig(topic, payload));
    this.deps.log.info(
      { entities: this.configs.size, prefix: this.settings.discovery_prefix },
      'Home Assistant discovery published',
    );
  }

  /**
   * The labels a camera that tracks every label has entities for while discovery runs
   * (`default_labels`); none when it is off.
   */
  defaultLabels(): readonly string[] {
    return this.running ? this.settings.default_labels : [];
  }

  /** The cameras changed (a reload, a change): new and changed configs are published, those gone deleted. */
  camerasChanged(): void {
    if (!this.running) return;
    const fleet = this.deps.fleet;
    const input = {
      settings: this.settings,
      baseTopic: this.cfg.mqtt.base_topic,
      topics: this.deps.topics,
      control: this.cfg.control.enabled
        ? { modes: this.deps.modes?.() ?? Object.keys(this.cfg.modes) }
        : undefined,
      version: this.version,
      speedUnit: this.cfg.events?.speed_unit,
      fleet: fleet && { box: fleet.box },
      healthOn: this.cfg.health && healthOnOf(this.cfg.health),
    };
    const configs = discoveryConfigs({ ...input, cameras: this.cameras() });
    this.fileTopics = fleet
      ? new Set(discoveryConfigs({ ...input, cameras: fleet.fileCameras() }).map((d) => d.topic))
      : new Set();
    const next = new Map(
      configs.map((d) => [d.topic, { payload: d.payload, json: JSON.stringify(d.payload) }]),
    );
    for (const topic of this.configs.keys())
      if (!next.has(topic) && !this.fileTopics.has(topic)) this.mqtt.clear(topic);
    for (const [topic, { payload, json }] of next)
      if (this.configs.get(topic)?.json !== json) this.mqtt.state(topic, payload);
    this.configs = next;
  }

  /** `online`: Home Assistant (re)started; every config again, after a random delay. */
  private onStatus(payload: string): void {
    if (!this.running || payload !== 'online' || this.timer) return;
    const delay = Math.floor((this.deps.random ?? Math.random)() * REPUBLISH_WINDOW_MS);
    this.timer = this.deps.clock.setTimeout(() => {
      this.timer = null;
      if (!this.running) return;
      for (const [topic, { payload }] of this.configs) this.mqtt.state(topic, payload);
      this.deps.log.info(
        { entities: this.configs.size },
        'Home Assistant is online: discovery published again',
      );
    }, delay);
  }

  /** A config on one of Argus' discovery topics: deleted unless Argus (or, with fleet, another box) announces it. */
  private onOwnConfig(name: string, payload: string): void {
    // A topic the discovery filter matched: one of Argus' discovery topics.
    const topic = name as Topic<'discovery'>;
    if (!this.running || payload === '' || this.configs.has(topic) || this.fileTopics.has(topic)) return;
    this.deps.log.info({ topic }, 'Home Assistant discovery: deleting a config no longer announced');
    this.mqtt.clear(topic);
  }

  /** Stops answering Home Assistant's status; the configs stay (and the entities, unavailable). */
  stop(): void {
    this.running = false;
    if (this.timer) this.deps.clock.clearTimeout(this.timer);
    this.timer = null;
  }
}

/** Whether a camera's health is watched: its own `health.enabled`, or the defaults'. */
const healthOnOf =
  (defaults: Config['health']) =>
  (cam: CameraConfig): boolean =>
    healthOf(defaults, cam.health).enabled;
