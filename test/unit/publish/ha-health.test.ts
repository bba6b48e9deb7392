import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { healthOf, parseConfig } from '../../../src/config/index.js';
import { discoveryConfigs, HEALTH_TEMPLATE } from '../../../src/publish/ha-configs.js';
import { parseCommand } from '../../../src/control/commands.js';
import { topics } from '../../../src/publish/topics.js';
import { discoveryProblems } from '../../helpers/ha-schema.js';

const config = parseConfig(
  'model:\n  path: m.onnx\ncameras:\n  gate:\n    url: rtsp://10.0.0.2/s\n  yard:\n    url: rtsp://10.0.0.3/s\n    health:\n      enabled: false\n',
  'c.yaml',
  {},
).config;
const build = (control: boolean, fleet?: { box: string }) =>
  discoveryConfigs({
    settings: config.home_assistant,
    baseTopic: 'argus',
    topics: topics('argus'),
    cameras: config.cameras,
    control: control ? { modes: [] } : undefined,
    version: '1',
    healthOn: (cam) => healthOf(config.health, cam.health).enabled,
    fleet,
  });

describe('Home Assistant discovery of camera health', () => {
  it('a problem binary sensor per camera with health on, on its health topic; a reset button with control', () => {
    const ids = build(true)
      .filter((c) => c.uniqueId.includes('health'))
      .map((c) => c.topic);
    assert.deepEqual(ids, [
      'homeassistant/binary_sensor/argus/argus-gate-health/config',
      'homeassistant/button/argus/argus-gate-health-reset/config',
    ]);
    assert.ok(!build(false).some((c) => c.uniqueId === 'argus-gate-health-reset'));
  });

  it('follow the documented schema; the button commands the topic Control reads as a health reset', () => {
    const all = build(true).filter((c) => c.uniqueId.includes('health'));
    for (const c of all) assert.deepEqual(discoveryProblems(c.topic, JSON.stringify(c.payload)), []);
    const sensor = all[0]!.payload;
    assert.equal(sensor.device_class, 'problem');
    assert.equal(sensor.state_topic, 'argus/cameras/gate/health');
    assert.equal(sensor.value_template, HEALTH_TEMPLATE);
    assert.deepEqual(parseCommand('argus', all[1]!.payload.command_topic as string, 'PRESS'), {
      kind: 'relearn',
      camera: 'gate',
    });
    assert.deepEqual(parseCommand('argus', 'argus/cameras/gate/health/reset/set', 'ON'), {
      error: 'a health reset takes PRESS',
    });
  });

  it("are announced as the camera's other entities: its device, and its availability (the box's status with fleet)", () => {
    for (const fleet of [undefined, { box: 'b1' }]) {
      const gate = build(true, fleet).filter((c) => c.uniqueId.startsWith('argus-gate-'));
      const health = gate.filter((c) => c.uniqueId.includes('health'));
      assert.equal(health.length, 2);
      const status = fleet ? 'argus/boxes/b1/status' : 'argus/status';
      for (const c of gate) {
        assert.deepEqual(
          c.payload.availability,
          [{ topic: status, payload_available: 'online', payload_not_available: 'offline' }],
          c.uniqueId,
        );
        assert.deepEqual(c.payload.device, gate[0]!.payload.device, c.uniqueId);
      }
      assert.equal(
        (health[0]!.payload.device as { via_device: string }).via_device,
        fleet ? 'argus-box-b1' : 'argus',
      );
    }
  });
});
