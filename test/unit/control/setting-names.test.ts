import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  Control,
  keysOf,
  parseCommand,
  readKey,
  settingsOf,
  type ChangeRequest,
} from '../../../src/control/index.js';
import { LIMITS, topicLevelProblem, topicWordProblem, type Config } from '../../../src/config/index.js';
import { controlPath, parseSettingKey, settingKey } from '../../../src/core/setting-keys.js';
import { controlRoute } from '../../../src/http/control.js';
import { discoveryConfigs } from '../../../src/publish/ha-configs.js';
import { commandTopic, topics } from '../../../src/publish/topics.js';
import { config, LINE_POINTS, ZONE_POINTS } from '../../helpers/config.js';
import { FakeClock, recordingLog } from '../../helpers/fakes.js';
import { FakeMqtt } from '../../helpers/fake-output.js';
import { SPECIAL_NAMES } from '../../helpers/names.js';
import { seededRandom } from '../../helpers/random.js';

const BASE = 'argus';

/**
 * What names are made of: the grammar's separators and words, what a path or a URL treats
 * specially, spaces, letters of other scripts, an emoji (two UTF-16 units), a combining mark —
 * and `/`, `+`, `#`, `$` and control characters, which the schema refuses (those names are left
 * out by its own check, below).
 */
const PIECES = [
  ...'abcXYZ019._-~ %?&=:;,@!*()[]{}<>|\\\'"`^'.split(''),
  'é',
  'ß',
  '入口',
  'Ω',
  '🚗',
  'e\u0301',
  'zones',
  'lines',
  'enabled',
  'reset',
  '.enabled',
  'zones.',
  '%2F',
  '%2e',
  '/',
  '+',
  '#',
  '$',
  '\u0007',
];

/** `count` names the schema takes for a zone or a line (`topicWordProblem`: its own check), all different. */
function names(count: number, seed: number, allowed: (name: string) => boolean): string[] {
  const random = seededRandom(seed); // the same names at every run: a failure can be read and rerun
  const out = new Set<string>(
    [
      'front.door',
      'a.enabled',
      'zones.x.enabled',
      'lines.',
      '.hidden',
      'a..b',
      'x y',
      ...SPECIAL_NAMES,
    ].filter(allowed),
  );
  while (out.size < count) {
    const parts = 1 + Math.floor(random() * 8);
    let name = '';
    for (let i = 0; i < parts; i++) name += PIECES[Math.floor(random() * PIECES.length)]!;
    if (allowed(name)) out.add(name);
  }
  return [...out];
}

const isWord = (n: string): boolean => topicWordProblem(n) === undefined;
const isLevel = (n: string): boolean => topicLevelProblem(n) === undefined;

/** Cameras named so, each with `LIMITS.zones` zones and `LIMITS.lines` lines of generated names. */
function file(seed: number): Config {
  const cameras = names(4, seed, isLevel).map((camera, i) => [
    camera,
    {
      url: `lavfi:testsrc${i}`,
      zones: Object.fromEntries(
        names(LIMITS.zones, seed + 100 + i, isWord).map((z) => [z, { points: ZONE_POINTS }]),
      ),
      lines: Object.fromEntries(
        names(LIMITS.lines, seed + 200 + i, isWord).map((l) => [l, { points: LINE_POINTS }]),
      ),
    },
  ]);
  // Through the schema: every name here is one a file may hold.
  return config({ cameras: Object.fromEntries(cameras) });
}

/** A path as the HTTP server hands it to controlRoute (server.ts: the request URL's pathname). */
const pathOf = (path: string): string => new URL(`/api/control${path}`, 'http://argus').pathname;

function control(cfg: Config, mqtt: FakeMqtt): Control {
  const { log } = recordingLog();
  const c: Control = new Control(cfg, {
    log,
    clock: new FakeClock(),
    out: mqtt,
    topics: topics(BASE),
    // As the root does: the parts hear the new cameras, Control among them.
    apply: () => (c.camerasChanged(), Promise.resolve({ outcome: 'applied' as const })),
    resetLine: () => Promise.resolve(true),
  });
  c.effective(cfg);
  c.listen({ inbox: mqtt }, BASE);
  c.start();
  return c;
}

/** Lets a command heard on MQTT run to its end (Control.change: apply, then the states). */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('setting keys through every encoding, for every name the schema allows', () => {
  for (const seed of [1, 2, 3])
    it(`every setting round-trips: flat key, MQTT set topic, HTTP path, Home Assistant's command topic (seed ${seed})`, () => {
      const cfg = file(seed);
      let checked = 0;
      for (const [camera, cam] of Object.entries(cfg.cameras)) {
        for (const ref of settingsOf(cam)) {
          const key = settingKey(ref);
          const set: ChangeRequest = { kind: 'set', camera, key, value: 'ON' };
          assert.deepEqual(parseSettingKey(key), ref, key);
          assert.notEqual(readKey(cam, key), undefined, key);
          assert.deepEqual(parseCommand(BASE, commandTopic(BASE, camera, ref), 'ON'), set, key);
          assert.deepEqual(controlRoute(pathOf(controlPath(camera, ref))), { kind: 'set', camera, key }, key);
          // The flat key in one segment, as the page and GET /api/control's keys have it.
          const flat = `/cameras/${encodeURIComponent(camera)}/${encodeURIComponent(key)}`;
          assert.deepEqual(controlRoute(pathOf(flat)), { kind: 'set', camera, key }, key);
          checked++;
        }
        for (const line of Object.keys(cam.lines)) {
          const ref = { kind: 'reset', line } as const;
          assert.deepEqual(parseCommand(BASE, commandTopic(BASE, camera, ref), 'PRESS'), {
            kind: 'reset',
            camera,
            line,
          });
          assert.deepEqual(controlRoute(pathOf(controlPath(camera, ref))), { kind: 'reset', camera, line });
        }
      }
      assert.ok(checked > 4 * 2 * LIMITS.zones, `${checked} settings checked`);

      // Home Assistant: each switch's and number's command topic is read as its own setting, its
      // state topic is where that setting's state is, and every setting has one; each button resets its line.
      const t = topics(BASE);
      const configs = discoveryConfigs({
        settings: cfg.home_assistant,
        baseTopic: BASE,
        topics: t,
        cameras: cfg.cameras,
        control: { modes: [] },
        version: '0',
      });
      const found = new Map<string, string[]>();
      for (const { component, payload } of configs) {
        if (component !== 'switch' && component !== 'number' && component !== 'button') continue;
        const command = payload.command_topic as string;
        const req = parseCommand(BASE, command, component === 'button' ? 'PRESS' : 'ON');
        assert.ok(req && !('error' in req) && req.kind !== 'mode', `${command}: ${JSON.stringify(req)}`);
        if (req.kind === 'reset') {
          assert.ok(Object.hasOwn(cfg.cameras[req.camera]!.lines, req.line), command);
          continue;
        }
        if (req.kind === 'relearn') {
          assert.ok(Object.hasOwn(cfg.cameras, req.camera), command);
          continue;
        }
        const ref = parseSettingKey(req.key)!;
        const state =
          component === 'switch' ? t.switchState(req.camera, ref) : t.numberState(req.camera, ref);
        assert.equal(payload.state_topic, state, command);
        found.set(req.camera, [...(found.get(req.camera) ?? []), req.key]);
      }
      for (const [camera, cam] of Object.entries(cfg.cameras))
        assert.deepEqual(found.get(camera)?.sort(), keysOf(cam).sort(), camera);
    });

  it('every state Control publishes is on the topic whose /set changes that very setting', () => {
    const cfg = file(4);
    const mqtt = new FakeMqtt();
    const c = control(cfg, mqtt);
    const states = mqtt.take();
    let checked = 0;
    for (const [topic, payload] of states) {
      if (topic === `${BASE}/mode/state`) continue;
      const req = parseCommand(BASE, topic.replace(/\/state$/, '/set'), payload);
      assert.ok(req && !('error' in req) && req.kind === 'set', `${topic}: ${JSON.stringify(req)}`);
      const value = readKey(c.cameras()[req.camera]!, req.key);
      assert.equal(typeof value === 'boolean' ? (value ? 'ON' : 'OFF') : String(value), payload, topic);
      checked++;
    }
    const all = Object.values(cfg.cameras).reduce((n, cam) => n + keysOf(cam).length, 0);
    assert.equal(checked, all);
  });
});

describe("a zone and a line named with dots, through Home Assistant's switches and button", () => {
  const cfg = config({
    cameras: {
      porch: {
        url: 'lavfi:a',
        zones: { 'front.door': { points: ZONE_POINTS }, front: { points: ZONE_POINTS } },
        lines: { 'gate.in': { points: LINE_POINTS } },
      },
    },
  });
  const entity = (component: string, name: string): Record<string, unknown> => {
    const found = discoveryConfigs({
      settings: cfg.home_assistant,
      baseTopic: BASE,
      topics: topics(BASE),
      cameras: cfg.cameras,
      control: { modes: [] },
      version: '0',
    }).find((c) => c.component === component && c.payload.name === name);
    assert.ok(found, `${component} ${name}`);
    return found.payload;
  };

  it("the zone front.door's switch turns it off and on, and its state follows on the switch's state topic", async () => {
    const mqtt = new FakeMqtt();
    const c = control(cfg, mqtt);
    const zone = entity('switch', 'front.door enabled');
    assert.equal(zone.command_topic, 'argus/cameras/porch/zones/front.door/enabled/set');
    assert.equal(zone.state_topic, 'argus/cameras/porch/zones/front.door/enabled/state');
    assert.equal(mqtt.take().get(zone.state_topic as string), 'ON');

    mqtt.deliver(zone.command_topic, zone.payload_off as string);
    await settle();
    assert.equal(c.view().cameras.porch!['zones.front.door.enabled'], false);
    assert.equal(c.view().cameras.porch!['zones.front.enabled'], true, 'the zone front is another');
    assert.deepEqual([...mqtt.take()], [[zone.state_topic, 'OFF']]);

    mqtt.deliver(zone.command_topic, zone.payload_on as string);
    await settle();
    assert.equal(c.view().cameras.porch!['zones.front.door.enabled'], true);
    assert.deepEqual([...mqtt.take()], [[zone.state_topic, 'ON']]);
  });

  it("the line gate.in's switch and reset button reach it", async () => {
    const mqtt = new FakeMqtt();
    const c = control(cfg, mqtt);
    const line = entity('switch', 'gate.in enabled');
    mqtt.take();
    mqtt.deliver(line.command_topic as string, 'OFF');
    await settle();
    assert.equal(c.view().cameras.porch!['lines.gate.in.enabled'], false);
    assert.deepEqual([...mqtt.take()], [['argus/cameras/porch/lines/gate.in/enabled/state', 'OFF']]);

    const button = entity('button', 'gate.in reset');
    assert.equal(button.command_topic, 'argus/cameras/porch/lines/gate.in/reset/set');
    assert.deepEqual(parseCommand(BASE, button.command_topic as string, button.payload_press as string), {
      kind: 'reset',
      camera: 'porch',
      line: 'gate.in',
    });
  });
});
