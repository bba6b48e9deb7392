import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startDaemon, writeDaemonConfig, type Daemon } from '../helpers/daemon.js';
import { tempDir } from '../helpers/env.js';
import {
  FLEET_BOXES as BOXES,
  FLEET_CAMERAS as CAMERAS,
  FLEET_TTL_S as TTL_S,
  needsEtcd,
  ownersSeen,
  startEtcdCluster,
  type OwnerSeen,
} from '../helpers/etcd.js';
import { startBroker, Subscriber } from '../helpers/mqtt.js';
import { hasGstreamer, startRtspServer } from '../helpers/rtsp.js';

/**
 * Issue 48, item 5: a fleet of three real Argus daemons over a real three-member etcd cluster, a
 * real broker and an RTSP server with nine cameras. Which box analysed a frame is read from the
 * detections each camera publishes (`owner`), as a subscriber sees them.
 */

/** The goal: a dead box's camera publishes from another box within this (TTL plus a start). */
const FAILOVER_GOAL_S = 12;
/** What the test fails at: the goal plus room for a machine shared with other work. */
const FAILOVER_LIMIT_S = 30;

describe('a fleet on etcd: three boxes, nine cameras', { timeout: 400_000 }, () => {
  it(
    'spreads the cameras, takes a killed box over within the goal, rides out etcd faults, gives the share back',
    { skip: needsEtcd },
    async (t) => {
      const etcd = await startEtcdCluster(t);
      const broker = await startBroker(t);
      let url = (_camera: string): string => 'lavfi:testsrc=size=320x240:rate=5';
      if (hasGstreamer()) {
        // One stream, nine cameras reading it (one encoder: the machine stays quiet enough).
        const rtsp = await startRtspServer(t, [
          { name: 'ball', source: { kind: 'ball', width: 320, height: 240, fps: 5 } },
        ]);
        url = () => rtsp.url('ball');
      } else t.diagnostic('no GStreamer RTSP server: the cameras are lavfi sources instead');
      const cameras = Object.fromEntries(CAMERAS.map((c) => [c, { url: url(c), fps: 2 }]));

      const sub = new Subscriber(broker.url, 'site/cameras/+/detections');
      t.after(() => sub.end());
      // Home Assistant's side (item 4): the discovery configs and each box's availability.
      const ha = new Subscriber(broker.url, ['homeassistant/#', 'site/boxes/+/status']);
      t.after(() => ha.end());
      const cameraConfigs = () =>
        ha.messages.filter((m) => /^homeassistant\/[^/]+\/site\/site-cam\d-/.test(m.topic));
      /** The availability topic of a camera's entities, by the latest config published for it. */
      const availabilityOf = (camera: string): string | undefined => {
        const last = cameraConfigs()
          .filter((m) => m.topic.includes(`/site-${camera}-`))
          .at(-1);
        if (!last || last.payload === '') return undefined;
        return (JSON.parse(last.payload) as { availability: { topic: string }[] }).availability[0]?.topic;
      };
      const deletedConfigs = () =>
        cameraConfigs()
          .filter((m) => m.payload === '')
          .map((m) => m.topic);
      const seen = (): OwnerSeen[] => ownersSeen(sub.messages);
      const configs = new Map<string, string>();
      for (const box of BOXES) {
        const dir = await tempDir(t);
        configs.set(
          box,
          await writeDaemonConfig(dir, {
            mqtt: {
              url: broker.url,
              base_topic: 'site',
              client_id: `argus-${box}`,
              detections: { publish: 'every_frame' },
            },
            http: { enabled: false },
            home_assistant: { enabled: true, default_labels: ['bright'] },
            detector: { workers: 1 },
            fleet: { endpoints: etcd.endpoints, name: box, capacity: 10, ttl_s: TTL_S },
            cameras,
          }),
        );
      }
      const daemons = new Map<string, Daemon>();
      for (const box of BOXES) daemons.set(box, startDaemon(t, configs.get(box)!));

      /** Each camera's box by its latest message after `since`. */
      const latest = (since: number): Map<string, OwnerSeen> => {
        const by = new Map<string, OwnerSeen>();
        for (const s of seen()) if (s.at >= since) by.set(s.camera, s);
        return by;
      };
      const spread = (since: number): Map<string, string[]> => {
        const by = new Map<string, string[]>();
        for (const [c, s] of latest(since)) by.set(s.box, [...(by.get(s.box) ?? []), c]);
        return by;
      };

      // 1. Spread: three cameras a box (equal capacities, the bound ⌊1.1 × 3⌋ = 3).
      const begin = Date.now();
      await sub.waitFor(
        'every camera analysed, three a box',
        () => {
          const by = spread(Date.now() - 3000);
          return BOXES.every((b) => by.get(b)?.length === 3);
        },
        120_000,
      );
      t.diagnostic(
        `spread after ${((Date.now() - begin) / 1000).toFixed(1)} s: ${JSON.stringify(Object.fromEntries(spread(Date.now() - 3000)))}`,
      );

      // No camera analysed by two boxes while etcd is reachable: 6 s of messages, one box each.
      const quietFrom = Date.now();
      await new Promise((r) => setTimeout(r, 6000));
      const pairs = new Set(
        seen()
          .filter((s) => s.at >= quietFrom)
          .map((s) => `${s.camera}@${s.box}`),
      );
      assert.equal(pairs.size, CAMERAS.length, `each camera from one box: ${[...pairs].join(' ')}`);

      // Home Assistant: each camera's entities available while the box that runs it is; no box
      // deleted another's.
      for (const [c, s] of latest(quietFrom))
        assert.equal(availabilityOf(c), `site/boxes/${s.box}/status`, `${c}'s entities`);
      assert.deepEqual(deletedConfigs(), [], 'no camera config deleted');

      // 2. SIGKILL box a: each of its cameras publishes from another box within the goal.
      const victims = spread(Date.now() - 3000).get('a')!;
      const killedAt = Date.now();
      daemons.get('a')!.child.kill('SIGKILL');
      await daemons.get('a')!.exited;
      await sub.waitFor(
        "box a's cameras analysed by b or c",
        () => victims.every((c) => seen().some((s) => s.camera === c && s.box !== 'a' && s.at > killedAt)),
        60_000,
      );
      const failover = victims.map((c) => {
        const first = seen().find((s) => s.camera === c && s.box !== 'a' && s.at > killedAt)!;
        return { camera: c, box: first.box, s: (first.at - killedAt) / 1000 };
      });
      for (const f of failover)
        t.diagnostic(`failover ${f.camera}: ${f.s.toFixed(2)} s to box ${f.box} (lease TTL ${TTL_S} s)`);
      // Box a's last will made its cameras' entities unavailable; their new box announced them again.
      assert.equal(ha.on('site/boxes/a/status').at(-1)?.payload, 'offline', "box a's last will");
      await ha.waitFor(
        "box a's cameras' entities announced by their new box",
        () => failover.every((f) => availabilityOf(f.camera) === `site/boxes/${f.box}/status`),
        30_000,
      );
      assert.deepEqual(deletedConfigs(), [], 'no camera config deleted through the takeover');
      // The goal is printed against each figure; the assertion allows a loaded CI machine (shared
      // cores slow a camera's start) a margin over it, and fails where a takeover did not happen.
      for (const f of failover) {
        t.diagnostic(
          `${f.camera}: ${f.s <= FAILOVER_GOAL_S ? 'within' : 'OVER'} the ${FAILOVER_GOAL_S} s goal`,
        );
        assert.ok(
          f.s <= FAILOVER_LIMIT_S,
          `${f.camera} took ${f.s.toFixed(2)} s, over ${FAILOVER_LIMIT_S} s`,
        );
      }

      // 3. The etcd leader killed: no camera stops (each publishes in every 3 s window for 9 s).
      const leader = await etcd.leader();
      await etcd.kill(leader);
      const leaderGone = Date.now();
      for (let w = 1; w <= 3; w++) {
        await new Promise((r) => setTimeout(r, 3000));
        const live = latest(leaderGone + (w - 1) * 3000);
        assert.deepEqual(
          [...live.keys()].sort(),
          [...CAMERAS].sort(),
          `window ${w} after the etcd leader died`,
        );
      }
      await etcd.start(leader);

      // 4. etcd stopped entirely for 30 s: every camera keeps being analysed; duplicates counted.
      for (let i = 0; i < 3; i++) await etcd.kill(i);
      const downAt = Date.now();
      for (let w = 1; w <= 10; w++) {
        await new Promise((r) => setTimeout(r, 3000));
        const live = latest(downAt + (w - 1) * 3000);
        assert.deepEqual([...live.keys()].sort(), [...CAMERAS].sort(), `window ${w} with etcd down`);
      }
      const down = seen().filter((s) => s.at >= downAt);
      const doubled = new Set<string>();
      for (const s of down)
        for (const o of down)
          if (o.camera === s.camera && o.box !== s.box)
            doubled.add(`${s.camera}:${Math.floor((s.at - downAt) / 1000)}`);
      t.diagnostic(`etcd down 30 s: camera-seconds analysed by two boxes: ${doubled.size}`);
      await Promise.all([0, 1, 2].map((i) => etcd.start(i)));

      // 5. Box a back: its share returns; each moved camera stopped on its old box before, or
      // within one second after, it starts on a.
      const backAt = Date.now();
      daemons.set('a', startDaemon(t, configs.get('a')!));
      await sub.waitFor(
        'box a running three cameras again',
        () => spread(Date.now() - 3000).get('a')?.length === 3,
        120_000,
      );
      const returned = spread(Date.now() - 3000).get('a')!;
      for (const c of returned) {
        const firstOnA = seen().find((s) => s.camera === c && s.box === 'a' && s.at >= backAt)!;
        const lastElsewhere = seen()
          .filter((s) => s.camera === c && s.box !== 'a' && s.at >= backAt)
          .at(-1);
        const overlap = lastElsewhere ? (lastElsewhere.at - firstOnA.at) / 1000 : -Infinity;
        t.diagnostic(`${c} back on a: the old box's last message ${overlap.toFixed(2)} s after a's first`);
        assert.ok(overlap <= 1, `${c}: analysed by its old box ${overlap.toFixed(2)} s after a started it`);
        assert.ok(firstOnA.epoch > 0);
      }
    },
  );
});
