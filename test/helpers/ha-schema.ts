/**
 * Home Assistant's documented MQTT discovery schema, as data, for the components Argus
 * announces: which keys a config may hold, which are required, their types and allowed values.
 * Transcribed from (home-assistant/home-assistant.io, source/_integrations/):
 *
 * - https://www.home-assistant.io/integrations/mqtt/#mqtt-discovery — the topic
 *   `<discovery_prefix>/<component>/[<node_id>/]<object_id>/config`, ids of `[a-zA-Z0-9_-]`,
 *   "best practice for entities with a unique_id is to set <object_id> to unique_id and omit the
 *   <node_id>"; `origin` (`name` required, `sw_version`, `support_url`); availability
 *   (`availability` list or `availability_topic`, not both; `availability_mode`);
 *   an empty retained payload deletes.
 * - https://www.home-assistant.io/integrations/binary_sensor.mqtt/
 * - https://www.home-assistant.io/integrations/sensor.mqtt/
 * - https://www.home-assistant.io/integrations/camera.mqtt/ (`topic` carries the raw image;
 *   `image_encoding: b64` only for base64 payloads)
 * - https://www.home-assistant.io/integrations/switch.mqtt/ (`command_topic` required;
 *   `payload_on`/`payload_off` sent, `state_on`/`state_off` read; `optimistic`, `retain`)
 * - https://www.home-assistant.io/integrations/number.mqtt/ (`command_topic` required; `min`,
 *   `max`, `step` floats, "step: smallest value 0.001"; `mode` `auto`, `box` or `slider`)
 * - https://www.home-assistant.io/integrations/button.mqtt/ (`command_topic` required;
 *   `payload_press`, default `PRESS`)
 * - https://www.home-assistant.io/integrations/select.mqtt/ (`command_topic` and `options`
 *   required)
 * - https://www.home-assistant.io/integrations/switch/#device-class,
 *   https://www.home-assistant.io/integrations/button/#device-class
 * - https://developers.home-assistant.io/docs/core/entity#generic-properties (`entity_category`:
 *   `config` or `diagnostic`; a sensor's or binary sensor's only `diagnostic`)
 * - https://www.home-assistant.io/integrations/binary_sensor/#device-class
 * - https://developers.home-assistant.io/docs/core/entity/sensor/#available-state-classes
 * - `device`: "Only works when unique_id is set. At least one of identifiers or connections must
 *   be present to identify the device."
 *
 * The `platform` key is left out: it belongs to device-based discovery only, which Argus does not
 * use. `object_id` is kept although Home Assistant 2025.10 deprecated it for `default_entity_id`:
 * a config may hold either. Unknown keys are "allowed but ignored" by Home Assistant, which is
 * why this check refuses them: a misspelt key would do nothing, silently.
 */

/** `float`: any number (an integer is one too). */
type Type = 'string' | 'integer' | 'float' | 'boolean' | 'null' | 'list' | 'map';

export interface KeySpec {
  type: Type | readonly Type[];
  required?: boolean;
  /** Allowed values of a string. */
  values?: readonly string[];
  /** The keys of a map, or of each map in a list. */
  keys?: Record<string, KeySpec>;
  /** The type of a list's items, when they are not maps. */
  items?: Type;
}

const str: KeySpec = { type: 'string' };
const tpl: KeySpec = { type: 'string' };

const availabilityItem: Record<string, KeySpec> = {
  topic: { type: 'string', required: true },
  payload_available: str,
  payload_not_available: str,
  value_template: tpl,
};

export const DEVICE_KEYS: Record<string, KeySpec> = {
  configuration_url: str,
  connections: { type: 'list' },
  hw_version: str,
  identifiers: { type: ['string', 'list'], items: 'string' },
  manufacturer: str,
  model: str,
  model_id: str,
  name: str,
  serial_number: str,
  suggested_area: str,
  sw_version: str,
  via_device: str,
};

export const ORIGIN_KEYS: Record<string, KeySpec> = {
  name: { type: 'string', required: true },
  sw_version: str,
  support_url: str,
};

/** Options every MQTT entity platform documents, plus `origin` of the discovery payload. */
const COMMON: Record<string, KeySpec> = {
  availability: { type: 'list', keys: availabilityItem },
  availability_mode: { type: 'string', values: ['all', 'any', 'latest'] },
  availability_template: tpl,
  availability_topic: str,
  default_entity_id: str,
  device: { type: 'map', keys: DEVICE_KEYS },
  enabled_by_default: { type: 'boolean' },
  encoding: str,
  entity_category: { type: 'string', values: ['config', 'diagnostic'] },
  entity_picture: str,
  icon: str,
  json_attributes_template: tpl,
  json_attributes_topic: str,
  name: { type: ['string', 'null'] },
  object_id: str,
  origin: { type: 'map', keys: ORIGIN_KEYS },
  payload_available: str,
  payload_not_available: str,
  qos: { type: 'integer', values: ['0', '1', '2'] },
  unique_id: str,
};

export const BINARY_SENSOR_DEVICE_CLASSES = [
  'battery',
  'battery_charging',
  'carbon_monoxide',
  'cold',
  'connectivity',
  'door',
  'garage_door',
  'gas',
  'heat',
  'light',
  'lock',
  'moisture',
  'motion',
  'moving',
  'occupancy',
  'opening',
  'plug',
  'power',
  'presence',
  'problem',
  'running',
  'safety',
  'smoke',
  'sound',
  'tamper',
  'update',
  'vibration',
  'window',
] as const;

export const STATE_CLASSES = ['measurement', 'measurement_angle', 'total', 'total_increasing'] as const;

/**
 * The sensor device classes Argus uses, each with the units and state classes Home Assistant
 * allows for it (https://www.home-assistant.io/integrations/sensor/#device-class: "duration:
 * Duration in d, h, min, s, ms, µs", "speed: Generic speed in ft/s, in/d, in/h, in/s, km/h, kn,
 * m/s, mph, mm/d, mm/s"; the state classes are those of core's `DEVICE_CLASS_STATE_CLASSES`,
 * which the sensor platform warns about when broken). A sensor with another device class is
 * refused here until its row is transcribed: a class whose unit Home Assistant does not accept
 * leaves the entity without its unit (and statistics), silently.
 */
export const SENSOR_DEVICE_CLASSES: Record<
  string,
  { units: readonly string[]; stateClasses: readonly (typeof STATE_CLASSES)[number][] }
> = {
  duration: {
    units: ['d', 'h', 'min', 's', 'ms', 'µs'],
    stateClasses: ['measurement', 'total', 'total_increasing'],
  },
  speed: {
    units: ['ft/s', 'in/d', 'in/h', 'in/s', 'km/h', 'kn', 'm/s', 'mph', 'mm/d', 'mm/s'],
    stateClasses: ['measurement'],
  },
};

/** What the components that send commands share: where to, how (QoS, retain), in what mode. */
const COMMANDS: Record<string, KeySpec> = {
  command_template: tpl,
  command_topic: { type: 'string', required: true },
  retain: { type: 'boolean' },
};

/** What the components that also read a state share. */
const STATEFUL: Record<string, KeySpec> = {
  ...COMMANDS,
  optimistic: { type: 'boolean' },
  state_topic: str,
  value_template: tpl,
};

export const COMPONENTS: Record<
  'binary_sensor' | 'sensor' | 'camera' | 'switch' | 'number' | 'button' | 'select',
  Record<string, KeySpec>
> = {
  binary_sensor: {
    ...COMMON,
    device_class: { type: ['string', 'null'], values: BINARY_SENSOR_DEVICE_CLASSES },
    expire_after: { type: 'integer' },
    force_update: { type: 'boolean' },
    off_delay: { type: 'integer' },
    payload_off: str,
    payload_on: str,
    state_topic: { type: 'string', required: true },
    value_template: tpl,
  },
  sensor: {
    ...COMMON,
    // Sensor device classes are many: those Argus uses (a count has none), SENSOR_DEVICE_CLASSES.
    device_class: { type: ['string', 'null'], values: Object.keys(SENSOR_DEVICE_CLASSES) },
    expire_after: { type: 'integer' },
    force_update: { type: 'boolean' },
    last_reset_value_template: tpl,
    options: { type: 'list', items: 'string' },
    state_class: { type: 'string', values: STATE_CLASSES },
    state_topic: { type: 'string', required: true },
    suggested_display_precision: { type: 'integer' },
    unit_of_measurement: { type: ['string', 'null'] },
    value_template: tpl,
  },
  camera: {
    ...COMMON,
    image_encoding: { type: 'string', values: ['b64'] },
    topic: { type: 'string', required: true },
  },
  switch: {
    ...COMMON,
    ...STATEFUL,
    device_class: { type: ['string', 'null'], values: ['outlet', 'switch'] },
    payload_off: str,
    payload_on: str,
    state_off: str,
    state_on: str,
  },
  number: {
    ...COMMON,
    ...STATEFUL,
    // Number device classes are many; Argus sets none (a frame rate, a priority have none).
    device_class: { type: ['string', 'null'] },
    max: { type: 'float' },
    min: { type: 'float' },
    mode: { type: 'string', values: ['auto', 'box', 'slider'] },
    payload_reset: str,
    step: { type: 'float' },
    unit_of_measurement: { type: ['string', 'null'] },
  },
  button: {
    ...COMMON,
    ...COMMANDS,
    device_class: { type: ['string', 'null'], values: ['identify', 'restart', 'update'] },
    payload_press: str,
  },
  select: {
    ...COMMON,
    ...STATEFUL,
    options: { type: 'list', items: 'string', required: true },
  },
};

const typeOf = (v: unknown): Type =>
  v === null
    ? 'null'
    : Array.isArray(v)
      ? 'list'
      : typeof v === 'object'
        ? 'map'
        : typeof v === 'number'
          ? Number.isInteger(v)
            ? 'integer'
            : 'float'
          : typeof v === 'boolean'
            ? 'boolean'
            : 'string';

/** Every way `value` breaks `specs` (unknown keys included), as `path: problem` lines. */
function checkKeys(value: Record<string, unknown>, specs: Record<string, KeySpec>, path: string): string[] {
  const problems: string[] = [];
  for (const [key, spec] of Object.entries(specs))
    if (spec.required && !(key in value)) problems.push(`${path}${key}: required, missing`);
  for (const [key, v] of Object.entries(value)) {
    const spec = specs[key];
    const where = `${path}${key}`;
    if (!spec) {
      problems.push(`${where}: not a documented option`);
      continue;
    }
    const type = typeOf(v);
    const types = typeof spec.type === 'string' ? [spec.type] : spec.type;
    if (!types.includes(type) && !(type === 'integer' && types.includes('float'))) {
      problems.push(`${where}: ${JSON.stringify(v)} is not ${types.join(' or ')}`);
      continue;
    }
    if (spec.values && (typeof v === 'string' || typeof v === 'number') && !spec.values.includes(String(v)))
      problems.push(`${where}: ${JSON.stringify(v)} is not one of ${spec.values.join(', ')}`);
    if (type === 'map' && spec.keys)
      problems.push(...checkKeys(v as Record<string, unknown>, spec.keys, `${where}.`));
    if (type === 'list')
      (v as unknown[]).forEach((item, i) => {
        if (spec.keys && typeOf(item) === 'map')
          problems.push(...checkKeys(item as Record<string, unknown>, spec.keys, `${where}[${i}].`));
        else if (spec.keys || (spec.items && typeOf(item) !== spec.items))
          problems.push(`${where}[${i}]: ${JSON.stringify(item)} is not ${spec.keys ? 'map' : spec.items}`);
      });
  }
  return problems;
}

const ID = /^[a-zA-Z0-9_-]+$/;

/**
 * Every way a retained discovery message breaks Home Assistant's documentation: its topic, its
 * payload's keys, types and values, and the rules between keys. An empty list when it is valid.
 */
export function discoveryProblems(topic: string, payload: string, prefix = 'homeassistant'): string[] {
  const problems: string[] = [];
  if (!topic.startsWith(`${prefix}/`)) return [`${topic}: not under the discovery prefix ${prefix}`];
  const levels = topic.slice(prefix.length + 1).split('/');
  const component = levels[0] as keyof typeof COMPONENTS;
  if (levels.length < 3 || levels.length > 4 || levels.at(-1) !== 'config')
    problems.push(`${topic}: not <prefix>/<component>/[<node_id>/]<object_id>/config`);
  if (!(component in COMPONENTS))
    return [...problems, `${topic}: component ${component} is not one Argus uses`];
  for (const id of levels.slice(1, -1))
    if (!ID.test(id)) problems.push(`${topic}: id '${id}' has characters outside [a-zA-Z0-9_-]`);
  let config: unknown;
  try {
    config = JSON.parse(payload);
  } catch {
    return [...problems, `${topic}: payload is not JSON`];
  }
  if (typeOf(config) !== 'map') return [...problems, `${topic}: payload is not a JSON object`];
  const c = config as Record<string, unknown>;
  problems.push(...checkKeys(c, COMPONENTS[component], `${topic}: `));
  if ('availability' in c && 'availability_topic' in c)
    problems.push(`${topic}: availability and availability_topic must not be used together`);
  if ('device' in c) {
    if (!('unique_id' in c)) problems.push(`${topic}: device only works with unique_id set`);
    const d = c.device as Record<string, unknown>;
    if (!('identifiers' in d) && !('connections' in d))
      problems.push(`${topic}: device needs identifiers or connections`);
  }
  if (
    (component === 'sensor' || component === 'binary_sensor') &&
    'entity_category' in c &&
    c.entity_category !== 'diagnostic'
  )
    problems.push(`${topic}: a sensor's entity_category must be diagnostic`);
  if (component === 'number') {
    const { min = 1, max = 100, step = 1 } = c as { min?: number; max?: number; step?: number };
    if (!(max > min)) problems.push(`${topic}: max must be greater than min`);
    if (step < 0.001) problems.push(`${topic}: step is at least 0.001`);
  }
  if (component === 'sensor') {
    if ('options' in c && ('state_class' in c || 'unit_of_measurement' in c))
      problems.push(`${topic}: options cannot be used with state_class or unit_of_measurement`);
    if ('last_reset_value_template' in c && c.state_class !== 'total')
      problems.push(`${topic}: last_reset_value_template needs state_class total`);
    const dc = typeof c.device_class === 'string' ? SENSOR_DEVICE_CLASSES[c.device_class] : undefined;
    if (dc && !dc.units.includes(String(c.unit_of_measurement)))
      problems.push(
        `${topic}: device_class ${String(c.device_class)} takes a unit_of_measurement of ${dc.units.join(', ')}`,
      );
    if (dc && 'state_class' in c && !(dc.stateClasses as readonly unknown[]).includes(c.state_class))
      problems.push(
        `${topic}: device_class ${String(c.device_class)} takes a state_class of ${dc.stateClasses.join(', ')}`,
      );
  }
  return problems;
}
