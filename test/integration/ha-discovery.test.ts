import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { REPUBLISH_WINDOW_MS } from '../../src/publish/ha-discovery.js';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tempDir, waitFor } from '../helpers/env.js';
import { discoveryProblems } from '../helpers/ha-schema.js';
import { publishOnce, startBroker, Subscriber, type Received } from '../helpers/mqtt.js';
import { yardCamera } from '../helpers/yard.js';
import { startDaemon, writeDaemonConfig } from '../helpers/daemon.js';

/** A still scene with a white square: the fixture model sees `bright` objects in it. */
const SQUARE =
  'lavfi:color=c=0x303030:s=640x480:r=5[bg];color=c=white:s=64x64:r=5[box];[bg][box]overlay=x=192:y=112';
const GREY = 'lavfi:color=c=0x404040:s=320x240:r=5';
const WHOLE = [
  [0, 0],
  [640, 0],
  [640, 480],
  [0, 480],
];

const gate = (zones: string[]) => ({
  url: SQUARE,
  fps: 2,
  objects: { track: ['bright', 'red'] },
  zones: Object.fromEntries(
    zones.map((z) => [z, { points: WHOLE, objects: [z === 'drive' ? 'red' : 'bright'] }]),
  ),
  lines: {
    road: {
      points: [
        [0, 400],
        [640, 400],
      ],
      objects: ['bright'],
      directions: ['north', 'south'],
    },
  },
});

const topic = (component: string, id: string) => `homeassistant/${component}/argus/argus-${id}/config`;
/** Each camera's health problem sensor (health is on by default; issue 49). */
const healthTopic = (camera: string) => topic('binary_sensor', `${camera}-health`);
const labelTopics = (camera: string, label: string) => [
  topic('binary_sensor', `${camera}-${label}-occupancy`),
  topic('sensor', `${camera}-${label}-count`),
  topic('camera', `${camera}-${label}-snapshot`),
];
const zoneTopics = (zone: string, label: string) => [
  topic('binary_sensor', `gate-zone-${zone}-${label}-occupancy`),
  topic('sensor', `gate-zone-${zone}-${label}-count`),
  topic('sensor', `gate-zone-${zone}-${label}-dwell`),
];
const GATE = [
  healthTopic('gate'),
  ...labelTopics('gate', 'bright'),
  ...labelTopics('gate', 'red'),
  topic('sensor', 'gate-line-road-bright-north-count'),
  topic('sensor', 'gate-line-road-bright-south-count'),
];
const YARD = [healthTopic('yard'), ...labelTopics('yard', 'bright')];
const STATUS = topic('binary_sensor', 'status');

/**
 * The retained configs a new subscriber to homeassistant/# gets, once `count` have come. A
 * subscriber that came while Argus was still publishing them gets the rest live (not retained):
 * it asks again, up to three times, and then every config must come retained.
 */
async function retainedConfigs(
  t: { after: (fn: () => Promise<void>) => void },
  url: string,
  count: number,
): Promise<Map<string, string>> {
  for (let attempt = 1; ; attempt++) {
    const sub = new Subscriber(url, 'homeassistant/#');
    t.after(() => sub.end());
    await sub.waitFor(`${count} retained configs`, () => sub.messages.length >= count, 30_000);
    await sub.retainedDone(); // and no more
    await sub.end();
    const live = sub.messages.filter((m) => !m.retain);
    if (live.length && attempt < 3) continue;
    for (const m of sub.messages) assert.ok(m.retain, `${m.topic} retained`);
    return new Map(sub.messages.map((m) => [m.topic, m.payload]));
  }
}

const sorted = (topics: Iterable<string>): string[] => [...topics].sort();

describe('Home Assistant discovery, end to end (argus run, a real broker)', () => {
  it('retained configs for two cameras with a zone and a line; deletions at a reload and a restart; all again when Home Assistant is online', async (t) => {
    const dir = await tempDir(t);
    const broker = await startBroker(t);
    const settings = (cameras: Record<string, unknown>) => ({
      mqtt: { url: broker.url, stats_interval_s: 1 },
      home_assistant: { enabled: true, default_labels: ['bright'] },
      // The control entities (switches, numbers, buttons, the select) are control-ha.test's.
      control: { enabled: false },
      cameras,
    });
    const config = await writeDaemonConfig(
      dir,
      settings({ gate: gate(['drive', 'lawn']), yard: { url: GREY, fps: 1 } }),
    );
    const states = new Subscriber(broker.url, 'argus/#');
    t.after(() => states.end());
    let daemon = startDaemon(t, config);

    // 1. A subscriber to homeassistant/# gets every entity's config, retained, as documented.
    await states.waitFor('Argus online', () => states.on('argus/status').some((m) => m.payload === 'online'));
    const first = [STATUS, ...GATE, ...zoneTopics('drive', 'red'), ...zoneTopics('lawn', 'bright'), ...YARD];
    const configs = await retainedConfigs(t, broker.url, first.length);
    assert.deepEqual(sorted(configs.keys()), sorted(first));
    for (const [topic, payload] of configs) assert.deepEqual(discoveryProblems(topic, payload), []);
    const occupancy = JSON.parse(configs.get(topic('binary_sensor', 'gate-bright-occupancy'))!) as Record<
      string,
      unknown
    >;
    assert.deepEqual(
      [occupancy.state_topic, occupancy.device_class, occupancy.availability],
      [
        'argus/cameras/gate/bright',
        'occupancy',
        [{ topic: 'argus/status', payload_available: 'online', payload_not_available: 'offline' }],
      ],
    );
    // The state topics the entities read are the ones Argus publishes (retained).
    const stateTopics = [...configs.values()].map((p) => {
      const c = JSON.parse(p) as { state_topic?: string; topic?: string };
      return c.state_topic ?? c.topic!;
    });
    const published = [
      'argus/status',
      'argus/cameras/gate/bright',
      'argus/cameras/gate/health',
      'argus/cameras/gate/zones/lawn/bright',
      'argus/cameras/gate/lines/road/bright/north',
      'argus/cameras/gate/lines/road/bright/south',
    ];
    // Counts start at 0 (retained); the white square then makes its count 1.
    await states.waitFor(
      'the counts of the white square',
      () =>
        published.every((p) => states.on(p).length) &&
        states.on('argus/cameras/gate/bright').some((m) => Number(m.payload) > 0),
    );
    for (const p of published) assert.ok(stateTopics.includes(p), p);
    assert.equal(states.on('argus/cameras/gate/bright')[0]!.payload, '0', 'a value before the first object');

    // 2. A reload without `yard` and the zone `lawn`: exactly their configs are deleted.
    // The configs as they come, and Argus' stats in the same ordered stream: a stats message after
    // the configs of a change shows that every config of it has come.
    const live = new Subscriber(broker.url, ['homeassistant/#', 'argus/stats']);
    t.after(() => live.end());
    const discovery = (): Received[] => live.messages.filter((m) => m.topic.startsWith('homeassistant/'));
    await live.waitFor('the retained configs', () => discovery().length >= first.length);
    const mark = discovery().length;
    await writeDaemonConfig(dir, settings({ gate: gate(['drive']) }));
    daemon.child.kill('SIGHUP');
    const gone = [...YARD, ...zoneTopics('lawn', 'bright')];
    await live.waitFor('the deletions', () => discovery().length >= mark + gone.length);
    await live.next('argus/stats');
    const after = discovery().slice(mark);
    assert.deepEqual(sorted(after.map((m) => m.topic)), sorted(gone));
    assert.ok(after.every((m) => m.payload === ''));
    const second = [STATUS, ...GATE, ...zoneTopics('drive', 'red')];
    assert.deepEqual(sorted((await retainedConfigs(t, broker.url, second.length)).keys()), sorted(second));

    // 3. Home Assistant announces itself: every config comes again.
    const before = discovery().length;
    assert.ok(await publishOnce(t, broker.url, 'homeassistant/status', 'online'));
    const sinceBirth = (): Received[] =>
      discovery()
        .slice(before)
        .filter((m) => m.topic.endsWith('/config'));
    await live.waitFor('the configs again', () => sinceBirth().length >= second.length, 10_000);
    await live.next('argus/stats');
    const again = sinceBirth();
    assert.deepEqual(sorted(again.map((m) => m.topic)), sorted(second));
    for (const m of again) assert.equal(m.payload, configs.get(m.topic), m.topic);

    // 4. A restart with a changed file (no zone `drive`, a new camera): what the last run
    // announced and this one does not is deleted; the new camera's entities come.
    daemon.child.kill('SIGTERM');
    assert.equal((await daemon.exited).code, 0);
    await writeDaemonConfig(dir, settings({ gate: gate([]), porch: { url: GREY, fps: 1 } }));
    const restart = discovery().length;
    daemon = startDaemon(t, config);
    const third = [STATUS, ...GATE, healthTopic('porch'), ...labelTopics('porch', 'bright')];
    await live.waitFor('the zone deleted', () =>
      zoneTopics('drive', 'red').every((z) =>
        discovery()
          .slice(restart)
          .some((m) => m.topic === z && m.payload === ''),
      ),
    );
    assert.deepEqual(sorted((await retainedConfigs(t, broker.url, third.length)).keys()), sorted(third));

    // 5. The broker restarts and forgets every retained message; once Argus has reconnected (and
    // subscribed again), Home Assistant's birth message brings the configs back.
    const reconnects = (): number => daemon.output().split('reconnected to the MQTT broker').length - 1;
    const republished = (): number => daemon.output().split('discovery published again').length - 1;
    const published0 = republished();
    await broker.kill();
    await broker.start();
    await waitFor('Argus reconnected', () => reconnects() > 0, 30_000);
    // Its SUBSCRIBE follows the CONNACK: a birth message before it goes unheard, so Home
    // Assistant's birth is sent again until Argus says it published the configs again.
    for (let tries = 0; republished() === published0; tries++) {
      assert.ok(tries < 10, 'Argus never answered the birth message');
      assert.ok(await publishOnce(t, broker.url, 'homeassistant/status', 'online'));
      await waitFor('the configs again', () => republished() > published0, REPUBLISH_WINDOW_MS + 3000).catch(
        () => undefined,
      );
    }
    assert.deepEqual(sorted((await retainedConfigs(t, broker.url, third.length)).keys()), sorted(third));

    daemon.child.kill('SIGTERM');
    assert.equal((await daemon.exited).code, 0);
  });

  it('dwell and speed sensors for the zones, every line count from 0 at start, a restored count kept (issue 45)', async (t) => {
    const dir = await tempDir(t);
    const broker = await startBroker(t);
    const config = await writeDaemonConfig(dir, {
      mqtt: { url: broker.url },
      home_assistant: { enabled: true },
      control: { enabled: false },
      events: { speed_unit: 'km/h', end_after_s: 2 },
      cameras: {
        // No `objects` on the line: its counts are the camera's labels'.
        yard: yardCamera({
          lines: {
            fence: {
              points: [
                [0, 20],
                [640, 20],
              ],
            },
          },
        }),
      },
    });
    // A count kept by an earlier run.
    await mkdir(join(dir, 'state'), { recursive: true });
    await writeFile(
      join(dir, 'state', 'line-counts.json'),
      JSON.stringify({ version: 1, counts: { yard: { fence: { bright: { in: 5 } } } } }),
    );
    const states = new Subscriber(broker.url, 'argus/#');
    t.after(() => states.end());
    const daemon = startDaemon(t, config);

    const line = (label: string, dir: string) => `argus/cameras/yard/lines/fence/${label}/${dir}`;
    const lines = [line('bright', 'in'), line('bright', 'out'), line('red', 'in'), line('red', 'out')];
    await states.waitFor('every line count', () => lines.every((l) => states.on(l).length > 0), 30_000);
    assert.deepEqual(
      lines.map((l) => states.on(l).map((m) => [m.payload, m.retain])),
      [[['5', false]], [['0', false]], [['0', false]], [['0', false]]],
      'each count once: the restored one as it was (never 0), the others 0',
    );
    // A subscriber that comes later gets them retained, as Home Assistant does.
    const later = new Subscriber(broker.url, 'argus/cameras/yard/lines/#');
    t.after(() => later.end());
    await later.waitFor('the retained line counts', () => later.messages.length >= 4);
    assert.deepEqual(
      new Map(later.messages.map((m) => [m.topic, [m.payload, m.retain]])),
      new Map(lines.map((l, i) => [l, [i === 0 ? '5' : '0', true]])),
    );

    const id = (x: string) => topic('sensor', `yard-${x}`);
    const wanted = [
      id('zone-road-bright-dwell'),
      id('zone-road-bright-speed'),
      id('zone-door-red-dwell'),
      id('line-fence-bright-in-count'),
      id('line-fence-red-out-count'),
    ];
    // Argus; the camera's health; per label 3; road's bright 4 (with speed), door's red 3; the
    // line's 2 labels × 2 directions.
    const configs = await retainedConfigs(t, broker.url, 1 + 1 + 2 * 3 + 4 + 3 + 2 * 2);
    assert.equal(configs.size, 1 + 1 + 2 * 3 + 4 + 3 + 2 * 2);
    for (const w of wanted) assert.ok(configs.has(w), `${w} announced`);
    assert.ok(!configs.has(id('zone-door-red-speed')), 'no speed sensor for a zone not calibrated');
    for (const [topic, payload] of configs) assert.deepEqual(discoveryProblems(topic, payload), []);
    const speed = JSON.parse(configs.get(id('zone-road-bright-speed'))!) as Record<string, unknown>;
    assert.deepEqual(
      [speed.state_topic, speed.unit_of_measurement, speed.device_class, speed.state_class],
      ['argus/cameras/yard/zones/road/bright/speed', 'km/h', 'speed', 'measurement'],
    );
    const dwell = JSON.parse(configs.get(id('zone-door-red-dwell'))!) as Record<string, unknown>;
    assert.deepEqual(
      [dwell.state_topic, dwell.unit_of_measurement, dwell.device_class, dwell.state_class],
      ['argus/cameras/yard/zones/door/red/dwell_s', 's', 'duration', 'measurement'],
    );

    // What the sensors read: the red square's time in `door` grows; the white square's speed
    // in `road` comes (128 px/s over 256 px for 4 m: 2 m/s, 7.2 km/h).
    const dwellTopic = 'argus/cameras/yard/zones/door/red/dwell_s';
    const speedTopic = 'argus/cameras/yard/zones/road/bright/speed';
    await states.waitFor(
      'a dwell over 1 s and a speed',
      () => states.on(dwellTopic).some((m) => Number(m.payload) >= 2) && states.on(speedTopic).length > 0,
      60_000,
    );
    const speeds = states.on(speedTopic).map((m) => Number(m.payload));
    assert.ok(
      speeds.some((v) => v > 5 && v < 10),
      `a speed near 7.2 km/h: ${speeds.join(', ')}`,
    );
    daemon.child.kill('SIGTERM');
    assert.equal((await daemon.exited).code, 0);
  });
});
