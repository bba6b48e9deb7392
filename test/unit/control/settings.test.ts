import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { commandFilters, parseCommand } from '../../../src/control/commands.js';
import {
  effectiveCameras,
  emptyState,
  parseValue,
  readKey,
  withMode,
  writeKey,
} from '../../../src/control/settings.js';
import { ConfigError, parseConfig } from '../../../src/config/index.js';
import { topicMatches } from '../../../src/publish/mqtt-output.js';
import { cameraConfig, config } from '../../helpers/config.js';

const SQUARE = [
  [0, 0],
  [10, 0],
  [10, 10],
];
/** Without the null prototypes the config's maps have (core/names.ts). */
const plain = (v: unknown): unknown => JSON.parse(JSON.stringify(v));

const file = () =>
  config({
    cameras: {
      porch: {
        url: 'lavfi:a',
        zones: { door: { points: SQUARE } },
        lines: {
          gate: {
            points: [
              [0, 0],
              [9, 9],
            ],
          },
        },
      },
      yard: { url: 'lavfi:b', detect: false },
    },
    modes: {
      away: { cameras: { porch: { detect: true, priority: 9 }, yard: { detect: true } } },
      home: { cameras: { porch: { detect: false, zones: { door: { enabled: false } } } } },
    },
  });

describe('control settings (keys, values, modes, precedence)', () => {
  it('reads and writes every kind of key without changing the config in place', () => {
    const cam = file().cameras.porch!;
    assert.equal(readKey(cam, 'detect'), true);
    assert.equal(readKey(cam, 'fps'), 5);
    assert.equal(readKey(cam, 'zones.door.enabled'), true);
    assert.equal(readKey(cam, 'zones.nowhere.enabled'), undefined);
    assert.equal(readKey(cam, 'url'), undefined, 'only the switchable keys');
    const off = writeKey(cam, 'zones.door.enabled', false);
    assert.equal(readKey(off, 'zones.door.enabled'), false);
    assert.equal(readKey(cam, 'zones.door.enabled'), true, 'the original is unchanged');
    assert.deepEqual(off.zones.door!.points, cam.zones.door!.points);
    assert.equal(readKey(writeKey(cam, 'priority', 2), 'priority'), 2);
  });

  it('parses ON/OFF, JSON booleans and numbers within the schema ranges, and says what is wrong', () => {
    const cam = cameraConfig();
    assert.deepEqual(parseValue(cam, 'detect', 'OFF'), { value: false });
    assert.deepEqual(parseValue(cam, 'detect', ' on '), { value: true });
    assert.deepEqual(parseValue(cam, 'snapshots', false), { value: false });
    assert.match((parseValue(cam, 'detect', 'maybe') as { error: string }).error, /ON or OFF/);
    assert.deepEqual(parseValue(cam, 'fps', '2.5'), { value: 2.5 });
    assert.deepEqual(parseValue(cam, 'priority', 10), { value: 10 });
    for (const bad of ['0', '61', '', 'x'])
      assert.match((parseValue(cam, 'fps', bad) as { error: string }).error, /fps takes/, bad);
    for (const bad of ['0', '11', '2.5'])
      assert.match((parseValue(cam, 'priority', bad) as { error: string }).error, /priority takes/, bad);
    assert.match((parseValue(cam, 'url', 'x') as { error: string }).error, /no setting/);
  });

  it('puts a mode on the file; none is the file', () => {
    const c = file();
    assert.equal(withMode(c, 'none'), c.cameras);
    const home = withMode(c, 'home');
    assert.equal(home.porch!.detect, false);
    assert.equal(home.porch!.zones.door!.enabled, false);
    assert.equal(home.yard, c.cameras.yard, 'a camera the mode does not name is the file’s');
    assert.equal(withMode(c, 'away').porch!.priority, 9);
  });

  it('file, then mode, then runtime changes; a change whose base moved is dropped', () => {
    const c = file();
    const state = {
      mode: 'away',
      overrides: { porch: { fps: { value: 2, base: 5 }, priority: { value: 3, base: 5 } } },
    };
    const { cameras, state: kept, dropped } = effectiveCameras(c, state);
    assert.equal(cameras.porch!.fps, 2, 'a change whose base is still the file value stays');
    // The mode away sets priority 9: the change made when it was 5 no longer holds.
    assert.equal(cameras.porch!.priority, 9);
    assert.deepEqual(dropped, ['porch.priority']);
    assert.deepEqual(plain(kept), { mode: 'away', overrides: { porch: { fps: { value: 2, base: 5 } } } });
    assert.equal(cameras.yard!.detect, true, 'the mode switched yard on');
  });

  it('forgets changes of cameras and zones that are gone, and a mode the file no longer has', () => {
    const c = file();
    const state = {
      mode: 'party',
      overrides: {
        gone: { detect: { value: false, base: true } },
        porch: { 'zones.patio.enabled': { value: false, base: true } },
      },
    };
    const { state: kept, dropped } = effectiveCameras(c, state);
    assert.equal(kept.mode, 'none');
    assert.deepEqual(plain(kept.overrides), {});
    assert.deepEqual(dropped.sort(), ['gone.detect', 'porch.zones.patio.enabled']);
    assert.deepEqual(effectiveCameras(c, emptyState()).dropped, []);
  });

  it('refuses modes named none, or naming cameras, zones or lines the file does not have', () => {
    const yaml = [
      'model: { path: m.onnx }',
      'cameras: { porch: { url: "lavfi:a", zones: { door: { points: [[0,0],[9,0],[9,9]] } } } }',
      'modes:',
      '  none: { cameras: {} }',
      '  away:',
      '    cameras:',
      '      garage: { detect: true }',
      '      porch: { zones: { patio: { enabled: false } }, lines: { gate: { enabled: true } }, fps: 99 }',
    ].join('\n');
    let err: unknown;
    try {
      parseConfig(yaml, 'argus.yaml');
    } catch (e) {
      err = e;
    }
    assert.ok(err instanceof ConfigError);
    const text = err.format();
    assert.match(text, /modes\.none.*reserved/);
    assert.match(text, /modes\.away\.cameras\.garage.*no camera 'garage'/);
    assert.match(text, /modes\.away\.cameras\.porch\.zones\.patio.*no zone 'patio'/);
    assert.match(text, /modes\.away\.cameras\.porch\.lines\.gate.*no line 'gate'/);
    assert.match(text, /modes\.away\.cameras\.porch\.fps/);
  });
});

describe('control topics', () => {
  const base = 'argus';
  it('reads each command topic and its payload', () => {
    assert.deepEqual(parseCommand(base, 'argus/mode/set', 'away'), { kind: 'mode', mode: 'away' });
    assert.deepEqual(parseCommand(base, 'argus/cameras/porch/detect/set', 'OFF'), {
      kind: 'set',
      camera: 'porch',
      key: 'detect',
      value: 'OFF',
    });
    assert.deepEqual(parseCommand(base, 'argus/cameras/porch/fps/set', '2'), {
      kind: 'set',
      camera: 'porch',
      key: 'fps',
      value: '2',
    });
    assert.deepEqual(parseCommand(base, 'argus/cameras/porch/zones/door/enabled/set', 'ON'), {
      kind: 'set',
      camera: 'porch',
      key: 'zones.door.enabled',
      value: 'ON',
    });
    assert.deepEqual(parseCommand(base, 'argus/cameras/porch/lines/gate/reset/set', 'PRESS'), {
      kind: 'reset',
      camera: 'porch',
      line: 'gate',
    });
  });

  it('says what is wrong with a command topic it has not, or a payload it cannot take; ignores the rest', () => {
    assert.deepEqual(parseCommand(base, 'argus/cameras/porch/url/set', 'x'), {
      error: 'no such command topic',
    });
    assert.deepEqual(parseCommand(base, 'argus/cameras/porch/lines/gate/reset/set', 'ON'), {
      error: 'a line reset takes PRESS',
    });
    assert.deepEqual(parseCommand(base, 'argus/mode/set', ' '), { error: 'an empty mode name' });
    assert.equal(parseCommand(base, 'argus/cameras/porch/detect/state', 'ON'), undefined);
    assert.equal(parseCommand(base, 'other/cameras/porch/detect/set', 'ON'), undefined);
  });

  it('subscribes to every command topic and to no state topic', () => {
    const filters = commandFilters(base);
    const heard = (t: string) => filters.some((f) => topicMatches(f, t));
    for (const t of [
      'argus/mode/set',
      'argus/cameras/porch/detect/set',
      'argus/cameras/porch/priority/set',
      'argus/cameras/porch/zones/door/enabled/set',
      'argus/cameras/porch/lines/gate/reset/set',
    ])
      assert.ok(heard(t), t);
    for (const t of ['argus/mode/state', 'argus/cameras/porch/detect/state', 'argus/cameras/porch/person'])
      assert.ok(!heard(t), t);
  });
});
