import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseConfig, type Config } from '../../../src/config/index.js';
import { Discovery, REPUBLISH_WINDOW_MS } from '../../../src/publish/ha-discovery.js';
import { topics } from '../../../src/publish/topics.js';
import { FakeClock, silentLog } from '../../helpers/fakes.js';
import { FakeMqtt } from '../../helpers/fake-output.js';
import { CamerasBox } from '../../helpers/cameras-now.js';

const camera = (name: string, extra = '') => `  ${name}:\n    url: rtsp://h/${name}\n${extra}`;
const zone = (name: string) => `      ${name}:\n        points: [[0, 0], [9, 0], [9, 9]]\n`;

/** Control off unless asked: the control entities have a test of their own. */
function configOf(cameras: string[], ha = 'enabled: true', control = 'enabled: false'): Config {
  return parseConfig(
    `model:\n  path: m.onnx\nhealth:\n  enabled: false\nhome_assistant:\n  ${ha}\ncontrol:\n  ${control}\ncameras:\n${cameras.join('')}`,
    'c.yaml',
    {},
  ).config;
}

function setup(config: Config, random = 0.5, modes?: () => readonly string[]) {
  const out = new FakeMqtt();
  const clock = new FakeClock();
  const box = new CamerasBox(config.cameras);
  const discovery = new Discovery(config, box.now, {
    out,
    topics: topics(config.mqtt.base_topic),
    clock,
    log: silentLog,
    random: () => random,
    ...(modes ? { modes } : {}),
  });
  return { out, clock, discovery, box };
}

const gate = camera('gate', `    objects:\n      track: [car]\n    zones:\n${zone('drive')}${zone('lawn')}`);

describe('Home Assistant discovery (the stage)', () => {
  it('publishes every config, retained, at start, and listens on <prefix>/status', () => {
    const config = configOf([gate, camera('yard')]);
    const { out, discovery } = setup(config);
    discovery.start();
    const sent = out.take();
    // Argus; gate's car (occupancy, count, snapshot); per zone occupancy, count, dwell; yard's person.
    assert.equal(sent.size, 1 + 3 + 2 * 3 + 3);
    for (const [topic, payload] of sent) {
      assert.match(topic, /^homeassistant\/(binary_sensor|sensor|camera)\/argus\/argus-[^/]+\/config$/);
      assert.ok(payload.startsWith('{'), topic);
    }
    assert.deepEqual([...out.listeners.keys()], ['homeassistant/status', 'homeassistant/+/argus/+/config']);
  });

  it('with control on, announces the control entities too, and the modes a reload brings', () => {
    const config = configOf([gate], 'enabled: true', 'enabled: true');
    let modes: readonly string[] = [];
    const { out, discovery, box } = setup(config, 0.5, () => modes);
    discovery.start();
    const sent = out.take();
    const control = [...sent.keys()].filter((t) => /\/(switch|number|button|select)\//.test(t));
    // enabled, detect, snapshots, two zones' enabled; fps, priority; no modes yet, no select.
    assert.deepEqual(
      control.map((t) => t.split('/')[1]),
      ['switch', 'switch', 'switch', 'number', 'number', 'switch', 'switch'],
    );
    modes = ['away'];
    box.set(config.cameras, discovery);
    const next = out.take();
    assert.deepEqual([...next.keys()], ['homeassistant/select/argus/argus-mode/config']);
    const select = JSON.parse(next.get('homeassistant/select/argus/argus-mode/config')!) as {
      options: string[];
    };
    assert.deepEqual(select.options, ['none', 'away']);
  });

  it('does nothing when disabled', () => {
    const config = configOf([gate], 'enabled: false');
    const { out, discovery, box } = setup(config);
    discovery.start();
    box.set(config.cameras, discovery);
    assert.deepEqual(out.sent, []);
    assert.equal(out.listeners.size, 0);
  });

  it('on a reload deletes exactly the configs of what is gone, publishes what is new, leaves the rest', () => {
    const before = configOf([gate, camera('yard')]);
    const { out, discovery, box } = setup(before);
    discovery.start();
    const first = out.take();
    // yard goes, gate loses its zone `lawn` and tracks person too, porch comes.
    const after = configOf([
      camera('gate', `    objects:\n      track: [car, person]\n    zones:\n${zone('drive')}`),
      camera('porch'),
    ]);
    box.set(after.cameras, discovery);
    const sent = out.take();
    const deleted = [...sent].filter(([, p]) => p === '').map(([t]) => t);
    assert.deepEqual(deleted.sort(), [
      'homeassistant/binary_sensor/argus/argus-gate-zone-lawn-car-occupancy/config',
      'homeassistant/binary_sensor/argus/argus-yard-person-occupancy/config',
      'homeassistant/camera/argus/argus-yard-person-snapshot/config',
      'homeassistant/sensor/argus/argus-gate-zone-lawn-car-count/config',
      'homeassistant/sensor/argus/argus-gate-zone-lawn-car-dwell/config',
      'homeassistant/sensor/argus/argus-yard-person-count/config',
    ]);
    for (const topic of deleted) assert.ok(first.has(topic));
    const published = [...sent].filter(([, p]) => p !== '').map(([t]) => t);
    assert.deepEqual(published.sort(), [
      'homeassistant/binary_sensor/argus/argus-gate-person-occupancy/config',
      'homeassistant/binary_sensor/argus/argus-gate-zone-drive-person-occupancy/config',
      'homeassistant/binary_sensor/argus/argus-porch-person-occupancy/config',
      'homeassistant/camera/argus/argus-gate-person-snapshot/config',
      'homeassistant/camera/argus/argus-porch-person-snapshot/config',
      'homeassistant/sensor/argus/argus-gate-person-count/config',
      'homeassistant/sensor/argus/argus-gate-zone-drive-person-count/config',
      'homeassistant/sensor/argus/argus-gate-zone-drive-person-dwell/config',
      'homeassistant/sensor/argus/argus-porch-person-count/config',
    ]);
    box.set(after.cameras, discovery);
    assert.equal(out.take().size, 0, 'the same cameras again: nothing to say');
  });

  it('publishes every config again when Home Assistant says `online`, after a random delay within the window', async () => {
    const config = configOf([gate]);
    const { out, clock, discovery } = setup(config, 0.5);
    discovery.start();
    const all = out.take();
    out.deliver('homeassistant/status', 'offline');
    out.deliver('homeassistant/status', 'online');
    await clock.advance(REPUBLISH_WINDOW_MS / 2 - 1);
    assert.equal(out.take().size, 0, 'not before its delay');
    out.deliver('homeassistant/status', 'online'); // a second birth while waiting: one answer
    await clock.advance(1);
    assert.deepEqual(out.take(), all);
    await clock.advance(REPUBLISH_WINDOW_MS);
    assert.equal(out.take().size, 0);
  });

  it('deletes a config left on its discovery topics by an earlier run, and only those', () => {
    const config = configOf([gate]);
    const { out, discovery } = setup(config);
    discovery.start();
    const mine = out.take();
    // What the broker sends back on the subscription: retained configs of earlier runs, and the
    // echo of Argus' own (empty ones too).
    const ghost = 'homeassistant/sensor/argus/argus-shed-person-count/config';
    out.deliver(ghost, '{"name":"person count"}');
    out.deliver('homeassistant/sensor/argus/argus-shed-person-count/config', '');
    for (const [topic, payload] of mine) out.deliver(topic, payload);
    out.deliver('homeassistant/sensor/other/other-thing/config', '{"name":"thing"}');
    assert.deepEqual([...out.take()], [[ghost, '']]);
  });

  it('stops answering once stopped', async () => {
    const config = configOf([gate]);
    const { out, clock, discovery } = setup(config, 0.99);
    discovery.start();
    out.take();
    out.deliver('homeassistant/status', 'online');
    discovery.stop();
    out.deliver('homeassistant/status', 'online');
    await clock.advance(REPUBLISH_WINDOW_MS);
    assert.equal(out.take().size, 0);
    assert.equal(clock.pending, 0);
  });
});

describe('Home Assistant discovery of zone speed sensors (the stage)', () => {
  it('deletes a zone speed sensor when its calibration goes, and announces it when it comes', () => {
    const calibrated = camera(
      'gate',
      '    objects:\n      track: [car]\n    zones:\n      road:\n        points: [[0, 0], [9, 0], [9, 9], [0, 9]]\n        distances: [5, 5, 5, 5]\n',
    );
    const withSpeed = configOf([calibrated]);
    const { out, discovery, box } = setup(withSpeed);
    discovery.start();
    const speedTopic = 'homeassistant/sensor/argus/argus-gate-zone-road-car-speed/config';
    assert.ok(out.take().has(speedTopic));
    const plain = configOf([calibrated.replace('        distances: [5, 5, 5, 5]\n', '')]);
    box.set(plain.cameras, discovery);
    assert.deepEqual([...out.take()], [[speedTopic, '']], 'only the speed sensor goes');
    box.set(withSpeed.cameras, discovery);
    assert.deepEqual([...out.take().keys()], [speedTopic]);
  });
});

describe('Home Assistant discovery with fleet: (the stage, issue 48 item 4)', () => {
  /** Box `name` of a fleet whose file has `file`'s cameras, running `runs` of them. */
  function boxOf(name: string, file: Config, runs: string[]) {
    const out = new FakeMqtt();
    const pick = (names: string[]) => Object.fromEntries(names.map((n) => [n, file.cameras[n]!]));
    const box = new CamerasBox(pick(runs));
    const discovery = new Discovery(file, box.now, {
      out,
      topics: topics(file.mqtt.base_topic),
      clock: new FakeClock(),
      log: silentLog,
      fleet: { box: name, fileCameras: () => file.cameras },
    });
    return { out, discovery, runs: (names: string[]) => box.set(pick(names), discovery) };
  }
  const file = configOf([camera('gate'), camera('yard'), camera('porch')]);
  const json = (p: string | undefined) => JSON.parse(p!) as Record<string, unknown>;

  it('announces only the cameras the box runs, available while the box is, under its own device', () => {
    const b1 = boxOf('b1', file, ['gate']);
    b1.discovery.start();
    const sent = b1.out.take();
    // b1's status sensor, outside Argus' discovery filter; gate's person (occupancy, count, snapshot).
    assert.deepEqual([...sent.keys()].sort(), [
      'homeassistant/binary_sensor/argus-box-b1/argus-box-b1-status/config',
      'homeassistant/binary_sensor/argus/argus-gate-person-occupancy/config',
      'homeassistant/camera/argus/argus-gate-person-snapshot/config',
      'homeassistant/sensor/argus/argus-gate-person-count/config',
    ]);
    const status = json(sent.get('homeassistant/binary_sensor/argus-box-b1/argus-box-b1-status/config'));
    assert.equal(status.state_topic, 'argus/boxes/b1/status');
    assert.deepEqual((status.device as { identifiers: string[] }).identifiers, ['argus-box-b1']);
    const count = json(sent.get('homeassistant/sensor/argus/argus-gate-person-count/config'));
    assert.deepEqual(count.availability, [
      { topic: 'argus/boxes/b1/status', payload_available: 'online', payload_not_available: 'offline' },
    ]);
    assert.equal((count.device as { via_device: string }).via_device, 'argus-box-b1');
    assert.equal(count.unique_id, 'argus-gate-person-count', 'per camera, not per box');
  });

  it('never deletes the configs of a camera of the file another box runs; deletes a camera gone from the file', () => {
    const b1 = boxOf('b1', file, ['gate']);
    const b2 = boxOf('b2', file, ['yard', 'porch']);
    b1.discovery.start();
    b2.discovery.start();
    const one = b1.out.take();
    const two = b2.out.take();
    // The broker hands each box every config on Argus' discovery topics: the other's included.
    for (const [t, p] of [...one, ...two]) {
      b1.out.deliver(t, p);
      b2.out.deliver(t, p);
    }
    assert.equal(b1.out.take().size, 0, 'b1 deletes none of b2');
    assert.equal(b2.out.take().size, 0, 'b2 deletes none of b1');
    // A camera no longer in the file (left by an earlier run): deleted.
    const ghost = 'homeassistant/sensor/argus/argus-shed-person-count/config';
    b1.out.deliver(ghost, '{"name":"person count"}');
    assert.deepEqual([...b1.out.take()], [[ghost, '']]);
    // The single box's status sensor of an earlier run: no box announces it now.
    const single = 'homeassistant/binary_sensor/argus/argus-status/config';
    b2.out.deliver(single, '{"name":"Status"}');
    assert.deepEqual([...b2.out.take()], [[single, '']]);
  });

  it('a takeover: the camera handed on keeps its entities; the new box announces them with its availability', () => {
    const b1 = boxOf('b1', file, ['gate', 'yard']);
    const b2 = boxOf('b2', file, ['porch']);
    b1.discovery.start();
    b2.discovery.start();
    b1.out.take();
    b2.out.take();
    b1.runs(['gate']); // yard placed on b2
    assert.equal(b1.out.take().size, 0, 'nothing deleted: the entity stays for yard');
    b2.runs(['porch', 'yard']);
    const sent = b2.out.take();
    assert.deepEqual([...sent.keys()].sort(), [
      'homeassistant/binary_sensor/argus/argus-yard-person-occupancy/config',
      'homeassistant/camera/argus/argus-yard-person-snapshot/config',
      'homeassistant/sensor/argus/argus-yard-person-count/config',
    ]);
    for (const p of sent.values())
      assert.equal((json(p).availability as { topic: string }[])[0]!.topic, 'argus/boxes/b2/status');
  });

  it('the mode select: the same payload from every box, with no availability', () => {
    const withModes = parseConfig(
      'model:\n  path: m.onnx\nhome_assistant:\n  enabled: true\ncontrol:\n  enabled: true\nmodes:\n  away:\n    cameras:\n      gate: { detect: true }\ncameras:\n' +
        camera('gate') +
        camera('yard'),
      'c.yaml',
      {},
    ).config;
    const b1 = boxOf('b1', withModes, ['gate']);
    const b2 = boxOf('b2', withModes, ['yard']);
    b1.discovery.start();
    b2.discovery.start();
    const topic = 'homeassistant/select/argus/argus-mode/config';
    const s1 = b1.out.take().get(topic);
    assert.ok(s1);
    assert.equal(s1, b2.out.take().get(topic));
    assert.equal(json(s1).availability, undefined);
  });
});
