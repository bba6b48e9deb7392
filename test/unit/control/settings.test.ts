import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { commandFilters, parseCommand } from '../../../src/control/commands.js';
import {
  checkStored,
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

  /**
   * One range for every way a value arrives: the YAML file (a camera, a mode), a control topic's
   * payload, a JSON body, control.json. Each value is taken by all of them or by none.
   */
  const BOUNDARIES: [key: string, value: unknown, takes: boolean][] = [
    ['fps', 0.1, true],
    ['fps', 60, true],
    ['fps', 2.5, true],
    ['fps', 0.09, false],
    ['fps', 5e-324, false],
    ['fps', 0, false],
    ['fps', -5, false],
    ['fps', 60.5, false],
    ['fps', true, false],
    ['priority', 1, true],
    ['priority', 10, true],
    ['priority', 0, false],
    ['priority', 11, false],
    ['priority', 2.5, false],
    ['priority', 1e9, false],
    ['priority', false, false],
    ['detect', true, true],
    ['detect', false, true],
    ['detect', 7, false],
    ['enabled', 2, false],
    ['enabled', 0, false],
    ['snapshots', 1, false],
  ];

  const yamlTakes = (yaml: string): boolean => {
    try {
      parseConfig(yaml, 'argus.yaml');
      return true;
    } catch (err) {
      assert.ok(err instanceof ConfigError, String(err));
      return false;
    }
  };

  it('takes a value in YAML, in a mode, over MQTT, in JSON and from control.json alike, or refuses it everywhere', () => {
    const cam = cameraConfig();
    for (const [key, value, takes] of BOUNDARIES) {
      const what = `${key} ${String(value)}`;
      const v = JSON.stringify(value);
      const head = 'model: { path: m.onnx }\n';
      assert.equal(
        yamlTakes(`${head}cameras: { a: { url: "lavfi:a", ${key}: ${v} } }`),
        takes,
        `YAML ${what}`,
      );
      assert.equal(
        yamlTakes(
          `${head}cameras: { a: { url: "lavfi:a" } }\nmodes: { m: { cameras: { a: { ${key}: ${v} } } } }`,
        ),
        takes,
        `mode ${what}`,
      );
      assert.equal('value' in parseValue(cam, key, value), takes, `JSON ${what}`);
      // A control topic's payload: a number as text, a switch as ON/OFF (the text of 7 is no switch).
      const payload = typeof value === 'boolean' ? (value ? 'ON' : 'OFF') : String(value);
      const asText = typeof value === 'boolean' && typeof readKey(cam, key) !== 'boolean' ? 'true' : payload;
      assert.equal('value' in parseValue(cam, key, asText), takes, `MQTT ${what} (${asText})`);
      const stored = checkStored({
        mode: 'none',
        overrides: { a: { [key]: { value: value as number, base: 5 } } },
      });
      assert.equal(stored.problems.length === 0, takes, `control.json ${what}`);
    }
  });

  it('says what each key takes, from its schema', () => {
    const cam = cameraConfig();
    const error = (key: string, raw: unknown): string =>
      (parseValue(cam, key, raw) as { error: string }).error;
    assert.equal(error('fps', '5e-324'), 'fps takes a number from 0.1 to 60');
    assert.equal(error('priority', '1e9'), 'priority takes a whole number from 1 to 10');
    assert.equal(error('detect', '7'), 'detect takes ON or OFF (true or false in JSON)');
    // Only decimal numbers: no hexadecimal, no words JavaScript reads as numbers.
    for (const raw of ['0x5', 'Infinity', '0b1', ' ', '5 fps'])
      assert.equal(error('fps', raw), 'fps takes a number from 0.1 to 60', raw);
    assert.deepEqual(parseValue(cam, 'fps', ' 1e1 '), { value: 10 });
    assert.deepEqual(parseValue(cam, 'fps', '.5'), { value: 0.5 });
  });

  it('drops the changes kept in control.json that no range takes, saying which, and keeps the rest', () => {
    const state = {
      mode: 'away',
      overrides: {
        porch: {
          fps: { value: -5, base: 5 },
          detect: { value: 7, base: true },
          'zones.door.enabled': { value: false, base: true },
          'zones.door.points': { value: 1, base: 1 },
        },
        yard: { priority: { value: 1e9, base: 5 } },
      },
    };
    const { state: kept, problems } = checkStored(state);
    assert.deepEqual(plain(kept), {
      mode: 'away',
      overrides: { porch: { 'zones.door.enabled': { value: false, base: true } } },
    });
    assert.deepEqual(
      problems.map((p) => [p.camera, p.key, p.value, p.error]),
      [
        ['porch', 'fps', -5, 'fps takes a number from 0.1 to 60'],
        ['porch', 'detect', 7, 'detect takes ON or OFF (true or false in JSON)'],
        ['porch', 'zones.door.points', 1, "no setting 'zones.door.points'"],
        ['yard', 'priority', 1e9, 'priority takes a whole number from 1 to 10'],
      ],
    );
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
