import { createHash } from 'node:crypto';
import { cameraFps, cameraPriority, NO_MODE, type CameraConfig, type Config } from '../config/index.js';
import { NUMBERS, SWITCHES, type NumberKey, type SettingRef, type Switch } from '../core/setting-keys.js';
import { commandTopic, type Topic, type Topics } from './topics.js';

/**
 * Home Assistant MQTT discovery as plain data: which entities Argus announces and their config
 * messages, following https://www.home-assistant.io/integrations/mqtt/#mqtt-discovery (one
 * retained config per entity on `<discovery_prefix>/<component>/<node_id>/<object_id>/config`)
 * and the pages of the components used: binary_sensor.mqtt, sensor.mqtt and camera.mqtt for what
 * Argus sees; switch.mqtt, number.mqtt, button.mqtt and select.mqtt for its control topics.
 * src/publish/ha-discovery.ts publishes them.
 */

export type Component = 'binary_sensor' | 'sensor' | 'camera' | 'switch' | 'number' | 'button' | 'select';

export interface DiscoveryConfig {
  component: Component;
  /** Also the discovery topic's object id, as Home Assistant's documentation advises. */
  uniqueId: string;
  /** `<discovery_prefix>/<component>/<node_id>/<unique_id>/config`, the node id Argus' own. */
  topic: Topic<'discovery'>;
  payload: Record<string, unknown>;
}

export interface DiscoveryInput {
  settings: Config['home_assistant'];
  baseTopic: string;
  topics: Topics;
  /** The cameras that run (the file's with the mode and runtime changes on them). */
  cameras: Record<string, CameraConfig>;
  /**
   * With `control.enabled`: the names of the arming modes (`none` aside), for the entities that
   * steer Argus; without it, none of them.
   */
  control: { modes: readonly string[] } | undefined;
  /** Argus' version, for `origin` and the Argus device. */
  version: string;
  /** Whether a camera's health is watched (config `health`, the camera's over the defaults); absent: none is. */
  healthOn?: ((cam: CameraConfig) => boolean) | undefined;
  /** `events.speed_unit`, the unit of the calibrated zones' speed sensors (default km/h). */
  speedUnit?: 'km/h' | 'mph' | 'm/s' | undefined;
  /**
   * With `fleet:`, this box's name: `cameras` are those it runs, each available while this box's
   * own status topic (`<base>/boxes/<box>/status`) is `online`, and the box is a device of its own.
   */
  fleet?: { box: string } | undefined;
}

/**
 * A camera's switches and numbers (core/setting-keys.ts SWITCHES and NUMBERS), each with its
 * entity's look. A
 * setting flipped in daily use (the camera, its detection) is a control; one that tunes the
 * camera (snapshots, frame rate, priority) is in the `config` category, off the default
 * dashboards but still on the device's page and usable in automations.
 */
export const CAMERA_SWITCHES = {
  enabled: { name: 'Enabled', icon: 'mdi:cctv', category: undefined },
  detect: { name: 'Detect', icon: 'mdi:motion-sensor', category: undefined },
  snapshots: { name: 'Snapshots', icon: 'mdi:image-multiple', category: 'config' },
} as const satisfies Record<Switch, Look>;

/**
 * The frame rate's step in Home Assistant: the schema takes fractional rates from 0.1 (0.2: a
 * frame every 5 s); Home Assistant refuses a state below `min`, and its step must be at least 0.001.
 */
export const FPS_STEP = 0.01;

export const CAMERA_NUMBERS = {
  fps: {
    name: 'FPS',
    icon: 'mdi:speedometer',
    min: cameraFps.minValue!,
    max: cameraFps.maxValue!,
    step: FPS_STEP,
    unit: 'fps',
  },
  priority: {
    name: 'Priority',
    icon: 'mdi:priority-high',
    min: cameraPriority.minValue!,
    max: cameraPriority.maxValue!,
    step: 1,
    unit: undefined,
  },
} as const satisfies Record<
  NumberKey,
  Look & { min: number; max: number; step: number; unit?: string | undefined }
>;

/** Names kept as they are in ids: what Home Assistant allows in a topic's object id, less '-'. */
const PLAIN = /^[A-Za-z0-9_]+$/;

/**
 * A stable id, of the characters Home Assistant allows in a discovery topic's object id
 * (`[a-zA-Z0-9_-]`), different for different lists of names: plain names joined by '-'
 * (`argus-front_door-person-occupancy`); when a name has other characters (a space, '-', '/',
 * non-ASCII letters), those become '_' and a hash of the exact names follows an empty level
 * (`argus-gate-traffic_light-count--390b52d92cce`), so no two lists share an id.
 */
export function haId(...names: string[]): string {
  if (names.every((n) => PLAIN.test(n))) return names.join('-');
  const hash = createHash('sha256').update(JSON.stringify(names)).digest('hex').slice(0, 12);
  return `${names.map((n) => n.replace(/[^A-Za-z0-9_]+/g, '_')).join('-')}--${hash}`;
}

/**
 * The node id of Argus' discovery topics, its device's identifier: from `mqtt.base_topic`,
 * which differs between the Argus instances sharing a broker.
 */
export const nodeId = (baseTopic: string): string => haId(baseTopic);

/**
 * Every discovery topic of this Argus, those of earlier runs included: the node id level lets
 * Argus find (and delete) the configs it no longer announces.
 */
export const discoveryFilter = (prefix: string, baseTopic: string): string =>
  `${prefix}/+/${nodeId(baseTopic)}/+/config`;

/**
 * With `fleet:`, a box's device identifier and the node id of its status sensor's discovery
 * topic: outside `discoveryFilter`, so no box deletes another's (docs/fleet.md).
 */
export const boxNodeId = (baseTopic: string, box: string): string => haId(baseTopic, 'box', box);

const unique = (labels: readonly string[]): string[] => [...new Set(labels)];

/**
 * The labels a camera's entities are for: those it tracks, or `default_labels` when it reports
 * every label of the model (80 for COCO: three entities each would swamp Home Assistant).
 */
export function cameraLabels(cam: CameraConfig, defaults: readonly string[]): string[] {
  return unique(cam.objects.track ?? defaults);
}

/** A zone's or a line's: its `objects` that the camera reports, or the camera's own. */
export function areaLabels(
  objects: readonly string[] | undefined,
  cam: CameraConfig,
  defaults: readonly string[],
): string[] {
  const track = cam.objects.track;
  if (!objects) return cameraLabels(cam, defaults);
  return unique(track ? objects.filter((l) => track.includes(l)) : objects);
}

/** An entity's name, icon and category (none: a control, on the default dashboards). */
interface Look {
  name: string;
  icon: string;
  category?: 'config' | undefined;
}

const looks = ({ name, icon, category }: Look): Record<string, string> => ({
  name,
  icon,
  ...(category ? { entity_category: category } : {}),
});

/** The mode's command topic: its state topic with `set` for `state` (src/control/commands.ts). */
const commandOf = (state: string): string => state.replace(/\/state$/, '/set');

/** A camera's health as a problem: `ON` while a fault holds (its payload's state is not `ok`). */
export const HEALTH_TEMPLATE = "{{ 'OFF' if value_json.state == 'ok' else 'ON' }}";

/** A count as an occupancy: `ON` while anything is counted. */
export const OCCUPIED_TEMPLATE = "{{ 'ON' if value | int(0) > 0 else 'OFF' }}";

/**
 * Every config message, the Argus device's first: one device for Argus (a `running` binary
 * sensor on `<base>/status`) and one per camera, linked to it by `via_device`, with, per label
 * it reports, an occupancy binary sensor and a count sensor (`state_class: measurement`) on its
 * count topic and a camera on its snapshot topic; per zone and label the same two sensors, a
 * `duration` sensor of its dwell (seconds, `measurement`) and, in a calibrated zone
 * (`distances`), a `speed` sensor of the last speed measured there (`events.speed_unit`); per
 * line, label and direction a `total_increasing` sensor of its cumulative count. With control on
 * (`input.control`), the control topics too: per camera a switch for `enabled`, `detect` and
 * `snapshots`, a number for `fps` and `priority`, per zone and line a switch for `enabled`, per
 * line a button that resets its counts; on the Argus device a select of the mode, when the file
 * has modes. The cameras' entities and the select are available while `<base>/status` is
 * `online` (Argus' last will sets `offline`).
 *
 * With `fleet:` (`input.fleet`), every box has its own device (`<device_name> <box>`, under the
 * Argus device) with a `running` sensor on its own `<base>/boxes/<box>/status` (its last will),
 * and announces the entities of the cameras it runs, available while that topic is `online`, their
 * devices under its own: a box that dies makes them unavailable, and the box that takes a camera
 * over announces it again (same unique ids, its own availability). The Argus device has no status
 * sensor then, and the mode's select no availability (every box hears a mode command): every box
 * announces it with the same payload.
 */
export function discoveryConfigs(input: DiscoveryInput): DiscoveryConfig[] {
  const { settings, baseTopic, topics: t, version } = input;
  const origin = { name: 'Argus', sw_version: version };
  const box = nodeId(baseTopic);
  const out: DiscoveryConfig[] = [];
  const add = (component: Component, names: string[], payload: Record<string, unknown>): void => {
    const uniqueId = haId(baseTopic, ...names);
    const topic = t.discovery(settings.discovery_prefix, component, box, uniqueId);
    out.push({ component, uniqueId, topic, payload: { ...payload, unique_id: uniqueId, origin } });
  };

  const argus = {
    identifiers: [box],
    name: settings.device_name,
    manufacturer: 'Argus',
    model: 'Video analytics',
    sw_version: version,
  };
  const fleet = input.fleet;
  const statusTopic = fleet ? t.boxStatus(fleet.box) : t.status;
  const running = {
    name: 'Status',
    device_class: 'running',
    entity_category: 'diagnostic',
    state_topic: statusTopic,
    payload_on: 'online',
    payload_off: 'offline',
  };
  // The device the cameras hang from: Argus, or with fleet: this box (under Argus).
  let parent = box;
  if (fleet) {
    parent = boxNodeId(baseTopic, fleet.box);
    const uniqueId = haId(baseTopic, 'box', fleet.box, 'status');
    out.push({
      component: 'binary_sensor',
      uniqueId,
      topic: t.discovery(settings.discovery_prefix, 'binary_sensor', parent, uniqueId),
      payload: {
        ...running,
        device: {
          identifiers: [parent],
          name: `${settings.device_name} ${fleet.box}`,
          manufacturer: 'Argus',
          model: 'Video analytics box',
          sw_version: version,
          via_device: box,
        },
        unique_id: uniqueId,
        origin,
      },
    });
  } else add('binary_sensor', ['status'], { ...running, device: argus });

  const availability = [
    { topic: statusTopic, payload_available: 'online', payload_not_available: 'offline' },
  ];
  const control = input.control;
  if (control?.modes.length)
    add('select', ['mode'], {
      name: 'Mode',
      icon: 'mdi:shield-home',
      command_topic: commandOf(t.modeState),
      state_topic: t.modeState,
      options: [NO_MODE, ...control.modes],
      qos: 1,
      ...(fleet ? {} : { availability }),
      device: argus,
    });
  for (const [camera, cam] of Object.entries(input.cameras)) {
    const device = {
      identifiers: [haId(baseTopic, camera)],
      name: camera,
      manufacturer: 'Argus',
      model: 'Camera',
      via_device: parent,
    };
    const entity = (component: Component, names: string[], payload: Record<string, unknown>): void =>
      add(component, [camera, ...names], { ...payload, availability, device });
    const occupancy = (name: string, names: string[], stateTopic: string): void =>
      entity('binary_sensor', [...names, 'occupancy'], {
        name: `${name} occupancy`,
        device_class: 'occupancy',
        state_topic: stateTopic,
        value_template: OCCUPIED_TEMPLATE,
        payload_on: 'ON',
        payload_off: 'OFF',
      });
    const count = (name: string, names: string[], stateTopic: string, stateClass: string): void =>
      entity('sensor', [...names, 'count'], {
        name,
        state_topic: stateTopic,
        state_class: stateClass,
        unit_of_measurement: 'objects',
      });

    // What Home Assistant sends on a switch's command topic, and reads on its state topic.
    const onOff = { payload_on: 'ON', payload_off: 'OFF', state_on: 'ON', state_off: 'OFF' };
    const toggle = (names: string[], ref: SettingRef, look: Look): void =>
      entity('switch', names, {
        ...looks(look),
        command_topic: commandTopic(baseTopic, camera, ref),
        state_topic: t.switchState(camera, ref),
        ...onOff,
        qos: 1,
      });
    if (control) {
      for (const key of SWITCHES) toggle([key], { kind: 'camera', key }, CAMERA_SWITCHES[key]);
      for (const key of NUMBERS) {
        const n = CAMERA_NUMBERS[key];
        const ref = { kind: 'camera', key } as const;
        entity('number', [key], {
          ...looks({ ...n, category: 'config' }),
          command_topic: commandTopic(baseTopic, camera, ref),
          state_topic: t.numberState(camera, ref),
          min: n.min,
          max: n.max,
          step: n.step,
          mode: 'box',
          ...(n.unit === undefined ? {} : { unit_of_measurement: n.unit }),
          qos: 1,
        });
      }
      for (const zone of Object.keys(cam.zones))
        toggle(
          ['zone', zone, 'enabled'],
          { kind: 'zones', name: zone },
          {
            name: `${zone} enabled`,
            icon: 'mdi:vector-square',
          },
        );
      for (const line of Object.keys(cam.lines)) {
        toggle(
          ['line', line, 'enabled'],
          { kind: 'lines', name: line },
          {
            name: `${line} enabled`,
            icon: 'mdi:vector-line',
          },
        );
        entity('button', ['line', line, 'reset'], {
          ...looks({ name: `${line} reset`, icon: 'mdi:counter' }),
          command_topic: commandTopic(baseTopic, camera, { kind: 'reset', line }),
          payload_press: 'PRESS',
          qos: 1,
        });
      }
    }

    if (input.healthOn?.(cam)) {
      entity('binary_sensor', ['health'], {
        name: 'Health',
        device_class: 'problem',
        entity_category: 'diagnostic',
        state_topic: t.health(camera),
        value_template: HEALTH_TEMPLATE,
        payload_on: 'ON',
        payload_off: 'OFF',
        json_attributes_topic: t.health(camera),
      });
      if (control)
        entity('button', ['health', 'reset'], {
          ...looks({ name: 'Health reset', icon: 'mdi:camera-retake', category: 'config' }),
          command_topic: commandTopic(baseTopic, camera, { kind: 'relearn' }),
          payload_press: 'PRESS',
          qos: 1,
        });
    }

    const defaults = settings.default_labels;
    for (const label of cameraLabels(cam, defaults)) {
      occupancy(label, [label], t.count(camera, label));
      count(`${label} count`, [label], t.count(camera, label), 'measurement');
      entity('camera', [label, 'snapshot'], { name: `${label} snapshot`, topic: t.snapshot(camera, label) });
    }
    for (const [zone, z] of Object.entries(cam.zones))
      for (const label of areaLabels(z.objects, cam, defaults)) {
        const topic = t.zoneCount(camera, zone, label);
        occupancy(`${zone} ${label}`, ['zone', zone, label], topic);
        count(`${zone} ${label} count`, ['zone', zone, label], topic, 'measurement');
        entity('sensor', ['zone', zone, label, 'dwell'], {
          name: `${zone} ${label} dwell`,
          icon: 'mdi:timer-sand',
          device_class: 'duration',
          state_topic: t.zoneDwell(camera, zone, label),
          state_class: 'measurement',
          unit_of_measurement: 's',
        });
        if (z.distances)
          entity('sensor', ['zone', zone, label, 'speed'], {
            name: `${zone} ${label} speed`,
            device_class: 'speed',
            state_topic: t.zoneSpeed(camera, zone, label),
            state_class: 'measurement',
            unit_of_measurement: input.speedUnit ?? 'km/h',
          });
      }
    for (const [line, l] of Object.entries(cam.lines))
      for (const label of areaLabels(l.objects, cam, defaults))
        for (const direction of l.directions)
          count(
            `${line} ${label} ${direction}`,
            ['line', line, label, direction],
            t.lineCount(camera, line, label, direction),
            'total_increasing',
          );
  }
  return out;
}
