import { createHash } from 'node:crypto';
import type { CameraConfig, Config } from '../config/index.js';
import type { Topic, Topics } from './topics.js';

/**
 * Home Assistant MQTT discovery as plain data: which entities Argus announces and their config
 * messages, following https://www.home-assistant.io/integrations/mqtt/#mqtt-discovery (one
 * retained config per entity on `<discovery_prefix>/<component>/<node_id>/<object_id>/config`)
 * and the pages of the three components used: binary_sensor.mqtt, sensor.mqtt and camera.mqtt.
 * src/publish/ha-discovery.ts publishes them.
 */

export type Component = 'binary_sensor' | 'sensor' | 'camera';

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
  cameras: Record<string, CameraConfig>;
  /** Argus' version, for `origin` and the Argus device. */
  version: string;
}

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

/** A count as an occupancy: `ON` while anything is counted. */
export const OCCUPIED_TEMPLATE = "{{ 'ON' if value | int(0) > 0 else 'OFF' }}";

/**
 * Every config message, the Argus device's first: one device for Argus (a `running` binary
 * sensor on `<base>/status`) and one per camera, linked to it by `via_device`, with, per label
 * it reports, an occupancy binary sensor and a count sensor (`state_class: measurement`) on its
 * count topic and a camera on its snapshot topic; per zone and label the same two sensors; per
 * line, label and direction a `total_increasing` sensor of its cumulative count. The cameras'
 * entities are available while `<base>/status` is `online` (Argus' last will sets `offline`).
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

  add('binary_sensor', ['status'], {
    name: 'Status',
    device_class: 'running',
    entity_category: 'diagnostic',
    state_topic: t.status,
    payload_on: 'online',
    payload_off: 'offline',
    device: {
      identifiers: [box],
      name: settings.device_name,
      manufacturer: 'Argus',
      model: 'Video analytics',
      sw_version: version,
    },
  });

  const availability = [{ topic: t.status, payload_available: 'online', payload_not_available: 'offline' }];
  for (const [camera, cam] of Object.entries(input.cameras)) {
    const device = {
      identifiers: [haId(baseTopic, camera)],
      name: camera,
      manufacturer: 'Argus',
      model: 'Camera',
      via_device: box,
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
