import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseConfig, type Config } from '../../../src/config/index.js';
import {
  discoveryConfigs,
  discoveryFilter,
  haId,
  OCCUPIED_TEMPLATE,
} from '../../../src/publish/ha-configs.js';
import { topicMatches } from '../../../src/publish/mqtt-output.js';
import { topics } from '../../../src/publish/topics.js';
import { discoveryProblems } from '../../helpers/ha-schema.js';

/** Two cameras: `gate` tracks person and car, with a zone for cars and a line; `yard` tracks every label. */
const TWO_CAMERAS = `
model:
  path: m.onnx
home_assistant:
  enabled: true
cameras:
  gate:
    url: rtsp://10.0.0.2/s
    objects:
      track: [person, car]
    zones:
      drive:
        points: [[0, 0], [100, 0], [100, 100]]
        objects: [car]
    lines:
      road:
        points: [[0, 50], [100, 50]]
        objects: [car]
        directions: [north, south]
  yard:
    url: rtsp://10.0.0.3/s
`;

const configOf = (yaml: string): Config => parseConfig(yaml, 'c.yaml', {}).config;

/** The configs without the control entities (as with `control.enabled: false`), or with them. */
const build = (config: Config, control?: { modes: readonly string[] }) =>
  discoveryConfigs({
    settings: config.home_assistant,
    baseTopic: config.mqtt.base_topic,
    topics: topics(config.mqtt.base_topic),
    cameras: config.cameras,
    control,
    version: '1.2.3',
  });

const availability = [
  { topic: 'argus/status', payload_available: 'online', payload_not_available: 'offline' },
];
const origin = { name: 'Argus', sw_version: '1.2.3' };
const gateDevice = {
  identifiers: ['argus-gate'],
  name: 'gate',
  manufacturer: 'Argus',
  model: 'Camera',
  via_device: 'argus',
};

describe('Home Assistant discovery configs', () => {
  const configs = build(configOf(TWO_CAMERAS));
  const byId = new Map(configs.map((c) => [c.uniqueId, c]));

  it('announce the Argus device, then per camera its labels, zones and line directions', () => {
    assert.deepEqual(
      configs.map((c) => c.topic),
      [
        'homeassistant/binary_sensor/argus/argus-status/config',
        'homeassistant/binary_sensor/argus/argus-gate-person-occupancy/config',
        'homeassistant/sensor/argus/argus-gate-person-count/config',
        'homeassistant/camera/argus/argus-gate-person-snapshot/config',
        'homeassistant/binary_sensor/argus/argus-gate-car-occupancy/config',
        'homeassistant/sensor/argus/argus-gate-car-count/config',
        'homeassistant/camera/argus/argus-gate-car-snapshot/config',
        // The zone and the line count cars only.
        'homeassistant/binary_sensor/argus/argus-gate-zone-drive-car-occupancy/config',
        'homeassistant/sensor/argus/argus-gate-zone-drive-car-count/config',
        'homeassistant/sensor/argus/argus-gate-zone-drive-car-dwell/config',
        'homeassistant/sensor/argus/argus-gate-line-road-car-north-count/config',
        'homeassistant/sensor/argus/argus-gate-line-road-car-south-count/config',
        // No objects.track: home_assistant.default_labels.
        'homeassistant/binary_sensor/argus/argus-yard-person-occupancy/config',
        'homeassistant/sensor/argus/argus-yard-person-count/config',
        'homeassistant/camera/argus/argus-yard-person-snapshot/config',
      ],
    );
  });

  it('follow the documented schema: topic layout, keys, types and values', () => {
    for (const c of configs) {
      assert.deepEqual(discoveryProblems(c.topic, JSON.stringify(c.payload)), []);
      assert.equal(
        c.topic,
        `homeassistant/${c.component}/argus/${c.uniqueId}/config`,
        'object id = unique_id',
      );
      assert.ok(topicMatches(discoveryFilter('homeassistant', 'argus'), c.topic));
      assert.equal(c.payload.unique_id, c.uniqueId);
      assert.deepEqual(c.payload.origin, origin);
    }
    assert.equal(new Set(configs.map((c) => c.uniqueId)).size, configs.length, 'unique ids are unique');
  });

  it('the Argus device: a running sensor on argus/status, no availability of its own', () => {
    assert.deepEqual(byId.get('argus-status')!.payload, {
      name: 'Status',
      device_class: 'running',
      entity_category: 'diagnostic',
      state_topic: 'argus/status',
      payload_on: 'online',
      payload_off: 'offline',
      device: {
        identifiers: ['argus'],
        name: 'Argus',
        manufacturer: 'Argus',
        model: 'Video analytics',
        sw_version: '1.2.3',
      },
      unique_id: 'argus-status',
      origin,
    });
  });

  it("a label's occupancy, count and snapshot, on the reporter's topics", () => {
    assert.deepEqual(byId.get('argus-gate-car-occupancy')!.payload, {
      name: 'car occupancy',
      device_class: 'occupancy',
      state_topic: 'argus/cameras/gate/car',
      value_template: OCCUPIED_TEMPLATE,
      payload_on: 'ON',
      payload_off: 'OFF',
      availability,
      device: gateDevice,
      unique_id: 'argus-gate-car-occupancy',
      origin,
    });
    assert.deepEqual(byId.get('argus-gate-car-count')!.payload, {
      name: 'car count',
      state_topic: 'argus/cameras/gate/car',
      state_class: 'measurement',
      unit_of_measurement: 'objects',
      availability,
      device: gateDevice,
      unique_id: 'argus-gate-car-count',
      origin,
    });
    assert.deepEqual(byId.get('argus-gate-car-snapshot')!.payload, {
      name: 'car snapshot',
      topic: 'argus/cameras/gate/car/snapshot',
      availability,
      device: gateDevice,
      unique_id: 'argus-gate-car-snapshot',
      origin,
    });
    assert.equal(OCCUPIED_TEMPLATE, "{{ 'ON' if value | int(0) > 0 else 'OFF' }}");
  });

  it("a zone's occupancy and count, a line direction's cumulative count", () => {
    const zone = byId.get('argus-gate-zone-drive-car-occupancy')!.payload;
    assert.deepEqual(
      [zone.name, zone.state_topic, zone.device_class],
      ['drive car occupancy', 'argus/cameras/gate/zones/drive/car', 'occupancy'],
    );
    const zoneCount = byId.get('argus-gate-zone-drive-car-count')!.payload;
    assert.deepEqual(
      [zoneCount.name, zoneCount.state_topic, zoneCount.state_class],
      ['drive car count', 'argus/cameras/gate/zones/drive/car', 'measurement'],
    );
    assert.deepEqual(byId.get('argus-gate-line-road-car-south-count')!.payload, {
      name: 'road car south',
      state_topic: 'argus/cameras/gate/lines/road/car/south',
      state_class: 'total_increasing',
      unit_of_measurement: 'objects',
      availability,
      device: gateDevice,
      unique_id: 'argus-gate-line-road-car-south-count',
      origin,
    });
  });

  it('every camera device hangs off the Argus device (via_device names its identifier)', () => {
    const argus = byId.get('argus-status')!.payload.device as { identifiers: string[] };
    for (const c of configs.slice(1)) {
      const device = c.payload.device as { identifiers: string[]; via_device: string; name: string };
      assert.ok(argus.identifiers.includes(device.via_device), c.uniqueId);
      assert.deepEqual(device.identifiers, [`argus-${device.name}`]);
    }
  });

  it('follow the settings: discovery prefix, device name, default labels, base topic', () => {
    const config = configOf(
      `${TWO_CAMERAS}\nmqtt:\n  base_topic: site/argus\n`.replace(
        'enabled: true',
        'enabled: true\n  discovery_prefix: ha\n  device_name: Shed box\n  default_labels: [person, dog]',
      ),
    );
    const cs = build(config);
    for (const c of cs) assert.deepEqual(discoveryProblems(c.topic, JSON.stringify(c.payload), 'ha'), []);
    assert.ok(cs.every((c) => topicMatches(discoveryFilter('ha', 'site/argus'), c.topic)));
    assert.match(
      cs[0]!.topic,
      /^ha\/binary_sensor\/site_argus--[0-9a-f]{12}\/site_argus-status--[0-9a-f]{12}\/config$/,
    );
    const box = cs[0]!.payload;
    assert.equal((box.device as { name: string }).name, 'Shed box');
    assert.equal(box.state_topic, 'site/argus/status');
    assert.deepEqual(
      cs.filter((c) => c.uniqueId.includes('yard') && c.component === 'sensor').map((c) => c.payload.name),
      ['person count', 'dog count'],
    );
    // A base topic with '/' is not a plain name: hashed, still stable and valid.
    assert.equal(box.unique_id, haId('site/argus', 'status'));
    assert.match(String(box.unique_id), /^site_argus-status--[0-9a-f]{12}$/);
  });

  it('are the same at every run (unique ids stable across restarts)', () => {
    assert.deepEqual(build(configOf(TWO_CAMERAS)), configs);
  });
});

describe('haId', () => {
  it('joins plain names with -', () => {
    assert.equal(haId('argus', 'front_door', 'person', 'occupancy'), 'argus-front_door-person-occupancy');
  });

  it('turns other characters into _ and adds a hash of the exact names: valid, stable, distinct', () => {
    const lists = [
      ['argus', 'front door', 'person'],
      ['argus', 'front-door', 'person'],
      ['argus', 'front_door', 'person'],
      ['argus', 'front', 'door', 'person'],
      ['argus', 'Küche', 'traffic light'],
      ['argus', 'K_che', 'traffic_light'],
      ['a_b', 'c'],
      ['a', 'b_c'],
      ['a-b', 'c'],
      ['a', 'b-c'],
    ];
    const ids = lists.map((l) => haId(...l));
    for (const id of ids) assert.match(id, /^[a-zA-Z0-9_-]+$/);
    assert.equal(new Set(ids).size, ids.length, ids.join(' '));
    assert.equal(haId('argus', 'front door', 'person'), ids[0], 'stable');
    assert.match(ids[0]!, /^argus-front_door-person--[0-9a-f]{12}$/);
    // As docs/mqtt.md shows it: a hash of the names alone, the same on every machine and run.
    assert.equal(
      haId('argus', 'gate', 'traffic light', 'count'),
      'argus-gate-traffic_light-count--390b52d92cce',
    );
  });
});

describe('the documented-schema check (test/helpers/ha-schema.ts)', () => {
  it('finds what Home Assistant would refuse or silently ignore', () => {
    const good = { name: 'x', state_topic: 'a/b', unique_id: 'u', device: { identifiers: ['d'] } };
    assert.deepEqual(discoveryProblems('homeassistant/binary_sensor/u/config', JSON.stringify(good)), []);
    const problems = (topic: string, payload: Record<string, unknown>) =>
      discoveryProblems(topic, JSON.stringify(payload));
    assert.deepEqual(problems('homeassistant/binary_sensor/u/config', { ...good, state_topic: undefined }), [
      'homeassistant/binary_sensor/u/config: state_topic: required, missing',
    ]);
    assert.match(
      problems('homeassistant/sensor/u/config', { ...good, stat_class: 'measurement' })[0]!,
      /not a documented/,
    );
    assert.match(
      problems('homeassistant/binary_sensor/u/config', { ...good, device_class: 'person' })[0]!,
      /not one of/,
    );
    assert.match(
      problems('homeassistant/sensor/u/config', { ...good, state_class: 'count' })[0]!,
      /not one of/,
    );
    assert.match(
      problems('homeassistant/camera/u/config', { ...good, state_topic: undefined })[0]!,
      /topic: required/,
    );
    assert.match(problems('homeassistant/sensor/a b/config', good)[0]!, /outside \[a-zA-Z0-9_-\]/);
    assert.match(problems('homeassistant/sensor/u/state', good)[0]!, /not <prefix>/);
    assert.match(
      problems('homeassistant/sensor/u/config', { ...good, unique_id: undefined })[0]!,
      /unique_id/,
    );
    assert.match(
      problems('homeassistant/sensor/u/config', { ...good, device: { name: 'd' } })[0]!,
      /identifiers/,
    );
    assert.match(
      problems('homeassistant/sensor/u/config', { ...good, origin: { sw_version: '1' } })[0]!,
      /origin\.name/,
    );
    assert.match(
      problems('homeassistant/sensor/u/config', { ...good, availability: [{ payload_available: 'on' }] })[0]!,
      /availability\[0\]\.topic: required/,
    );
    assert.match(problems('homeassistant/sensor/u/config', { ...good, qos: '1' })[0]!, /not integer/);
  });
});

describe('Home Assistant discovery configs with control on', () => {
  const configs = build(configOf(TWO_CAMERAS), { modes: ['away', 'home'] });
  const byId = new Map(configs.map((c) => [c.uniqueId, c]));
  const control = configs.filter((c) => ['switch', 'number', 'button', 'select'].includes(c.component));

  it('add per camera its switches and numbers, per zone and line a switch, per line a reset, and the mode', () => {
    assert.deepEqual(
      control.map((c) => c.topic),
      [
        'homeassistant/select/argus/argus-mode/config',
        'homeassistant/switch/argus/argus-gate-enabled/config',
        'homeassistant/switch/argus/argus-gate-detect/config',
        'homeassistant/switch/argus/argus-gate-snapshots/config',
        'homeassistant/number/argus/argus-gate-fps/config',
        'homeassistant/number/argus/argus-gate-priority/config',
        'homeassistant/switch/argus/argus-gate-zone-drive-enabled/config',
        'homeassistant/switch/argus/argus-gate-line-road-enabled/config',
        'homeassistant/button/argus/argus-gate-line-road-reset/config',
        'homeassistant/switch/argus/argus-yard-enabled/config',
        'homeassistant/switch/argus/argus-yard-detect/config',
        'homeassistant/switch/argus/argus-yard-snapshots/config',
        'homeassistant/number/argus/argus-yard-fps/config',
        'homeassistant/number/argus/argus-yard-priority/config',
      ],
    );
    // What Argus sees is announced as before.
    assert.deepEqual(
      configs.filter((c) => !control.includes(c)),
      build(configOf(TWO_CAMERAS)),
    );
  });

  it('command the topics Control listens to, and read the retained states it publishes', () => {
    const detect = byId.get('argus-gate-detect')!.payload;
    assert.deepEqual(
      { ...detect, origin: undefined },
      {
        name: 'Detect',
        icon: 'mdi:motion-sensor',
        command_topic: 'argus/cameras/gate/detect/set',
        state_topic: 'argus/cameras/gate/detect/state',
        payload_on: 'ON',
        payload_off: 'OFF',
        state_on: 'ON',
        state_off: 'OFF',
        qos: 1,
        availability,
        device: gateDevice,
        unique_id: 'argus-gate-detect',
        origin: undefined,
      },
    );
    assert.equal(byId.get('argus-gate-snapshots')!.payload.entity_category, 'config');
    const zone = byId.get('argus-gate-zone-drive-enabled')!.payload;
    assert.equal(zone.command_topic, 'argus/cameras/gate/zones/drive/enabled/set');
    assert.equal(zone.state_topic, 'argus/cameras/gate/zones/drive/enabled/state');
    const fps = byId.get('argus-gate-fps')!.payload;
    assert.deepEqual(
      [fps.command_topic, fps.state_topic, fps.min, fps.max, fps.step, fps.unit_of_measurement, fps.mode],
      ['argus/cameras/gate/fps/set', 'argus/cameras/gate/fps/state', 0.1, 60, 0.01, 'fps', 'box'],
    );
    const priority = byId.get('argus-gate-priority')!.payload;
    assert.deepEqual([priority.min, priority.max, priority.step], [1, 10, 1]);
    assert.equal('unit_of_measurement' in priority, false);
    const reset = byId.get('argus-gate-line-road-reset')!.payload;
    assert.deepEqual(
      [reset.command_topic, reset.payload_press, 'state_topic' in reset],
      ['argus/cameras/gate/lines/road/reset/set', 'PRESS', false],
    );
    const mode = byId.get('argus-mode')!.payload;
    assert.deepEqual(
      [mode.command_topic, mode.state_topic, mode.options],
      ['argus/mode/set', 'argus/mode/state', ['none', 'away', 'home']],
    );
    assert.deepEqual((mode.device as { identifiers: string[] }).identifiers, ['argus']);
  });

  it('follow Home Assistant documented schema for switch, number, button and select', () => {
    for (const c of control) assert.deepEqual(discoveryProblems(c.topic, JSON.stringify(c.payload)), []);
  });

  it('have no mode select when the file has no modes', () => {
    const none = build(configOf(TWO_CAMERAS), { modes: [] });
    assert.equal(
      none.some((c) => c.component === 'select'),
      false,
    );
    assert.equal(none.filter((c) => c.component === 'switch').length, 8);
  });

  it('the schema check refuses what the four components would not take', () => {
    const at = (component: string) => `homeassistant/${component}/u/config`;
    const problems = (component: string, payload: Record<string, unknown>) =>
      discoveryProblems(at(component), JSON.stringify({ unique_id: 'u', ...payload }));
    assert.match(problems('switch', { state_topic: 'a' })[0]!, /command_topic: required/);
    assert.match(problems('number', { command_topic: 'a', step: 0.0001 })[0]!, /step is at least 0\.001/);
    assert.match(problems('number', { command_topic: 'a', min: 5, max: 5 })[0]!, /max must be greater/);
    assert.match(problems('number', { command_topic: 'a', mode: 'dial' })[0]!, /not one of/);
    assert.match(problems('button', { command_topic: 'a', state_topic: 'b' })[0]!, /not a documented/);
    assert.match(problems('select', { command_topic: 'a' })[0]!, /options: required/);
    assert.match(problems('sensor', { state_topic: 'a', entity_category: 'config' })[0]!, /diagnostic/);
  });
});

/** `gate` with a calibrated zone `road` (cars and people) and a plain zone `door` (people). */
const ZONES = `
model:
  path: m.onnx
home_assistant:
  enabled: true
events:
  speed_unit: mph
cameras:
  gate:
    url: rtsp://10.0.0.2/s
    objects:
      track: [person, car]
    zones:
      road:
        points: [[0, 0], [100, 0], [100, 100], [0, 100]]
        distances: [10, 8, 10, 8]
      door:
        points: [[0, 0], [100, 0], [100, 100]]
        objects: [person]
`;

describe('Home Assistant discovery configs of time and speed in zones', () => {
  const config = configOf(ZONES);
  const configs = discoveryConfigs({
    settings: config.home_assistant,
    baseTopic: config.mqtt.base_topic,
    topics: topics(config.mqtt.base_topic),
    cameras: config.cameras,
    control: undefined,
    version: '1.2.3',
    speedUnit: config.events.speed_unit,
  });
  const byId = new Map(configs.map((c) => [c.uniqueId, c]));

  it('announce per zone and label a dwell sensor, and per calibrated zone and label a speed sensor', () => {
    assert.deepEqual(
      configs.filter((c) => /-(dwell|speed)$/.test(c.uniqueId)).map((c) => c.topic),
      [
        'homeassistant/sensor/argus/argus-gate-zone-road-person-dwell/config',
        'homeassistant/sensor/argus/argus-gate-zone-road-person-speed/config',
        'homeassistant/sensor/argus/argus-gate-zone-road-car-dwell/config',
        'homeassistant/sensor/argus/argus-gate-zone-road-car-speed/config',
        // Not calibrated: no speed.
        'homeassistant/sensor/argus/argus-gate-zone-door-person-dwell/config',
      ],
    );
    for (const c of configs) assert.deepEqual(discoveryProblems(c.topic, JSON.stringify(c.payload)), []);
  });

  it('a dwell sensor: seconds, a duration, a measurement, on the zone dwell topic', () => {
    assert.deepEqual(byId.get('argus-gate-zone-door-person-dwell')!.payload, {
      name: 'door person dwell',
      icon: 'mdi:timer-sand',
      device_class: 'duration',
      state_topic: 'argus/cameras/gate/zones/door/person/dwell_s',
      state_class: 'measurement',
      unit_of_measurement: 's',
      availability,
      device: gateDevice,
      unique_id: 'argus-gate-zone-door-person-dwell',
      origin,
    });
  });

  it('a speed sensor: in events.speed_unit, a speed, a measurement, on the zone speed topic', () => {
    assert.deepEqual(byId.get('argus-gate-zone-road-car-speed')!.payload, {
      name: 'road car speed',
      device_class: 'speed',
      state_topic: 'argus/cameras/gate/zones/road/car/speed',
      state_class: 'measurement',
      unit_of_measurement: 'mph',
      availability,
      device: gateDevice,
      unique_id: 'argus-gate-zone-road-car-speed',
      origin,
    });
    // Without a unit given, km/h (events.speed_unit's default).
    const kmh = discoveryConfigs({
      settings: config.home_assistant,
      baseTopic: 'argus',
      topics: topics('argus'),
      cameras: config.cameras,
      control: undefined,
      version: '1.2.3',
    }).find((c) => c.uniqueId === 'argus-gate-zone-road-car-speed')!;
    assert.equal(kmh.payload.unit_of_measurement, 'km/h');
  });

  it('the schema check refuses a duration or speed in a unit or state class Home Assistant does not take', () => {
    const dwell = byId.get('argus-gate-zone-door-person-dwell')!;
    const speed = byId.get('argus-gate-zone-road-car-speed')!;
    const check = (c: typeof dwell, change: Record<string, unknown>) =>
      discoveryProblems(c.topic, JSON.stringify({ ...c.payload, ...change }));
    assert.match(check(dwell, { unit_of_measurement: 'seconds' })[0]!, /duration takes a unit/);
    assert.match(check(speed, { unit_of_measurement: 'kph' })[0]!, /speed takes a unit/);
    assert.match(check(speed, { state_class: 'total_increasing' })[0]!, /speed takes a state_class/);
    assert.match(check(speed, { device_class: 'velocity' })[0]!, /not one of/);
  });
});
