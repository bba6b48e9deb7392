import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { DetectionsPayload, EventPayload } from '../../src/publish/index.js';
import { haId } from '../../src/publish/ha-configs.js';
import { tempDir } from '../helpers/env.js';
import { discoveryProblems } from '../helpers/ha-schema.js';
import { publishOnce, Subscriber, type Login } from '../helpers/mqtt.js';
import { freePort } from '../helpers/rtsp.js';
import { startDaemon, writeDaemonConfig } from '../helpers/daemon.js';

/**
 * A white square that falls down the frame, again and again (a new object each time it starts
 * at the top): it crosses the line `road` southwards, so the line has counts to reset. x=192
 * keeps it on the fixture model's 32-pixel grid (640 px scaled to 320).
 */
const FALLING =
  "lavfi:color=c=0x303030:s=640x480:r=5[bg];color=c=white:s=64x64:r=5[box];[bg][box]overlay=x=192:y='mod(t*50,416)'";

const WHOLE = [
  [0, 0],
  [640, 0],
  [640, 480],
  [0, 480],
];

const gate = {
  url: FALLING,
  fps: 4,
  objects: { track: ['bright'] },
  // A name with a dot (issue 44): its topics keep it as one level, `zones/front.door/enabled`.
  zones: { all: { points: WHOLE }, 'front.door': { points: WHOLE } },
  lines: {
    road: {
      points: [
        [0, 240],
        [640, 240],
      ],
      directions: ['north', 'south'],
    },
  },
};

type Entity = Record<string, unknown> & { command_topic: string; state_topic?: string };

/**
 * Home Assistant's side: its MQTT integration subscribes to the discovery topics, reads each
 * entity's config and, when a person flips a switch, publishes the config's payload on its
 * command topic with the config's QoS, not retained (`retain` defaults to false in every one of
 * the four components).
 */
class HomeAssistant {
  constructor(
    private readonly sub: Subscriber,
    private readonly url: string,
    private readonly login: Login,
  ) {}

  entity(component: string, id: string): Entity {
    const topic = `homeassistant/${component}/argus/argus-${id}/config`;
    const got = this.sub.on(topic).at(-1);
    assert.ok(got && got.payload !== '', `no config on ${topic}`);
    assert.deepEqual(discoveryProblems(topic, got.payload), []);
    return JSON.parse(got.payload) as Entity;
  }

  async send(t: Parameters<typeof publishOnce>[0], e: Entity, payload: string): Promise<void> {
    assert.equal(e.qos, 1, 'publishOnce sends with QoS 1, as the config asks');
    assert.ok(await publishOnce(t, this.url, e.command_topic, payload, { login: this.login }));
  }

  state(e: Entity): string | undefined {
    return this.sub.on(e.state_topic!).at(-1)?.payload;
  }
}

describe('Home Assistant steers Argus end to end (discovery, real broker and daemon)', () => {
  it('a switch, a number, a button and the select, used as Home Assistant uses them, change what Argus does', async (t) => {
    const dir = await tempDir(t);
    const port = await freePort();
    const login: Login = { username: 'hass', password: 'hass-secret-1' };
    const config = await writeDaemonConfig(dir, {
      mqtt: { embedded: { port, ...login }, stats_interval_s: 1, detections: { publish: 'every_frame' } },
      home_assistant: { enabled: true },
      modes: { away: { cameras: { gate: { detect: false } } }, home: {} },
      cameras: { gate },
    });
    const url = `mqtt://127.0.0.1:${port}`;
    const daemon = startDaemon(t, config);
    const sub = new Subscriber(url, ['homeassistant/#', 'argus/#'], login);
    t.after(() => sub.end());
    const ha = new HomeAssistant(sub, url, login);
    const detections = () => sub.json<DetectionsPayload>('argus/cameras/gate/detections').length;
    const events = () => sub.json<EventPayload>('argus/events');
    // Which way the tracker sees the square cross (it jumps a 32-pixel cell at a time) does not
    // matter here: either count will do.
    const counts = ['north', 'south'].map((d) => `argus/cameras/gate/lines/road/bright/${d}`);
    const counted = () => counts.find((c) => Number(sub.on(c).at(-1)?.payload ?? 0) > 0);

    await sub.waitFor('a crossing of road', () => counted() !== undefined, 90_000);
    const count = counted()!;
    const mode = ha.entity('select', 'mode');
    assert.deepEqual(mode.options, ['none', 'away', 'home']);
    const detect = ha.entity('switch', 'gate-detect');
    const priority = ha.entity('number', 'gate-priority');
    const zone = ha.entity('switch', 'gate-zone-all-enabled');
    const dottedId = haId('argus', 'gate', 'zone', 'front.door', 'enabled');
    const dotted = ha.entity('switch', dottedId.slice('argus-'.length));
    assert.equal(dotted.command_topic, 'argus/cameras/gate/zones/front.door/enabled/set');
    const reset = ha.entity('button', 'gate-line-road-reset');
    assert.equal(ha.state(detect), detect.state_on);
    assert.equal(ha.state(mode), 'none');

    // The button: the line's counts go back to 0 (and grow again as the square keeps falling).
    let from = sub.messages.length;
    await ha.send(t, reset, reset.payload_press as string);
    await sub.waitFor(
      'the reset count',
      () => sub.messages.slice(from).some((m) => m.topic === count && m.payload === '0'),
      10_000,
    );
    assert.match(daemon.output(), /"client":"mqttjs_[^"]+"[^\n]*line counts reset/);

    // The number: a new priority, shown on its state topic.
    await ha.send(t, priority, '9');
    await sub.waitFor('priority 9', () => ha.state(priority) === '9', 10_000);

    // The zone's switch: off, and the zone has no occupancy any more.
    await ha.send(t, zone, zone.payload_off as string);
    await sub.waitFor('zone off', () => ha.state(zone) === zone.state_off, 10_000);
    assert.equal(ha.state(dotted), dotted.state_on);
    await ha.send(t, dotted, dotted.payload_off as string);
    await sub.waitFor('zone front.door off', () => ha.state(dotted) === dotted.state_off, 10_000);
    assert.equal(ha.state(zone), zone.state_off, 'the zone all is another');

    // The switch: detection off; the object ends and no detections come any more.
    await ha.send(t, detect, detect.payload_off as string);
    await sub.waitFor('detect off', () => ha.state(detect) === detect.state_off, 10_000);
    await sub.waitFor('the object ended', () => events().at(-1)?.type === 'end', 10_000);
    await sub.next('argus/stats');
    const seen = detections();
    await sub.next('argus/stats');
    await sub.next('argus/stats');
    assert.equal(detections(), seen, 'no detections while detection is off');

    // On again, then the select: `away` turns detection off for gate, `none` back on.
    await ha.send(t, detect, detect.payload_on as string);
    await sub.waitFor('detect on', () => ha.state(detect) === detect.state_on, 10_000);
    await ha.send(t, mode, 'away');
    await sub.waitFor('mode away', () => ha.state(mode) === 'away', 10_000);
    await sub.waitFor('away: detect off', () => ha.state(detect) === detect.state_off, 10_000);
    from = events().length;
    await ha.send(t, mode, 'none');
    await sub.waitFor(
      'mode none',
      () => ha.state(mode) === 'none' && ha.state(detect) === detect.state_on,
      10_000,
    );
    await sub.waitFor(
      'new events again',
      () =>
        events()
          .slice(from)
          .some((e) => e.type === 'new'),
      30_000,
    );

    daemon.child.kill('SIGTERM');
    assert.equal((await daemon.exited).code, 0, daemon.output());
  });
});
