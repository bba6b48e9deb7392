import { startDaemon, writeDaemonConfig, type Daemon } from '../test/helpers/daemon.js';
import { tempDir } from '../test/helpers/env.js';
import {
  findEtcd,
  FLEET_BOXES as BOXES,
  FLEET_CAMERAS as CAMERAS,
  FLEET_TTL_S as TTL_S,
  ownersSeen,
  startEtcdCluster,
  type OwnerSeen,
} from '../test/helpers/etcd.js';
import { startBroker, Subscriber } from '../test/helpers/mqtt.js';
import { hasGstreamer, startRtspServer } from '../test/helpers/rtsp.js';

/**
 * `npm run bench -- --sections fleet` (issue 48, item 6): a fleet of real Argus daemons over a
 * real three-member etcd cluster (Debian's etcd-server on loopback ports), a broker and an RTSP
 * server, each box SIGKILLed in turn and started again. Which box analysed a frame is read from
 * the detections each camera publishes (`owner`), as a subscriber receives them.
 *
 * - failover: per camera of a killed box, the SIGKILL to its first detections from another box;
 * - moved ÷ ideal: per membership change (a kill, a return), the cameras whose box changed between
 *   the steady states before and after, ÷ (cameras ÷ boxes);
 * - load: in each steady state, the most loaded box's cameras ÷ capacity over the fleet's;
 * - double analysis: camera-seconds in which two boxes published a camera's detections, with
 *   etcd stopped for 30 s, and with one box cut from etcd for 30 s (its only endpoint's member
 *   stopped; the others keep quorum and take its cameras while it goes on).
 */

export interface FleetBench {
  boxes: number;
  cameras: number;
  kills: number;
  ttl_s: number;
  /** Every camera of every killed box, seconds. */
  failover_s: number[];
  p50_s: number;
  p95_s: number;
  max_s: number;
  /** Per membership change: cameras moved ÷ (cameras ÷ boxes). */
  moves: { change: string; moved: number; ratio: number }[];
  /** Max ÷ mean load by capacity in each steady state. */
  load_ratios: number[];
  outage_double_camera_s: number;
  partition_double_camera_s: number;
}

const OUTAGE_S = 30;

type Seen = Pick<OwnerSeen, 'camera' | 'box' | 'at'>;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The value at quantile q of the sorted values (nearest rank). */
export function quantile(values: readonly number[], q: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))] ?? NaN;
}

/** Camera-seconds (1 s buckets from `from` to `to`) in which two boxes published one camera. */
export function doubled(seen: readonly Seen[], from: number, to: number): number {
  const boxes = new Map<string, Set<string>>();
  for (const s of seen) {
    if (s.at < from || s.at >= to) continue;
    const key = `${s.camera}:${Math.floor((s.at - from) / 1000)}`;
    boxes.set(key, (boxes.get(key) ?? new Set()).add(s.box));
  }
  return [...boxes.values()].filter((b) => b.size > 1).length;
}

export async function benchFleet(
  opts: { kills: number },
  log: (msg: string) => void,
): Promise<FleetBench | null> {
  if (!findEtcd()) {
    log('fleet: etcd not found (Debian etcd-server): section skipped');
    return null;
  }
  const cleanups: (() => Promise<void>)[] = [];
  const t = { after: (fn: () => Promise<void>) => void cleanups.push(fn) };
  try {
    const etcd = await startEtcdCluster(t);
    const broker = await startBroker(t);
    let url = 'lavfi:testsrc=size=320x240:rate=5';
    if (hasGstreamer()) {
      const rtsp = await startRtspServer(t, [
        { name: 'ball', source: { kind: 'ball', width: 320, height: 240, fps: 5 } },
      ]);
      url = rtsp.url('ball');
    } else log('fleet: no GStreamer RTSP server: lavfi cameras instead');
    const sub = new Subscriber(broker.url, 'site/cameras/+/detections');
    cleanups.push(() => sub.end());
    const seen = (): Seen[] => ownersSeen(sub.messages);
    const configs = new Map<string, string>();
    for (const box of BOXES)
      configs.set(
        box,
        await writeDaemonConfig(await tempDir(t), {
          mqtt: {
            url: broker.url,
            base_topic: 'site',
            client_id: `argus-${box}`,
            detections: { publish: 'every_frame' },
          },
          http: { enabled: false },
          detector: { workers: 1 },
          // Box a reaches etcd through one member only: stopping it cuts a from etcd (the partition).
          fleet: {
            endpoints: box === 'a' ? [etcd.endpoints[0]!] : etcd.endpoints,
            name: box,
            capacity: 10,
            ttl_s: TTL_S,
          },
          cameras: Object.fromEntries(CAMERAS.map((c) => [c, { url, fps: 2 }])),
        }),
      );
    const daemons = new Map<string, Daemon>();
    for (const box of BOXES) daemons.set(box, startDaemon(t, configs.get(box)!));

    const failover: number[] = [];
    const moves: FleetBench['moves'] = [];
    const load_ratios: number[] = [];
    /** Each camera's box by its latest message in the last 3 s. */
    const owners = (): Map<string, string> => {
      const by = new Map<string, string>();
      for (const s of seen()) if (s.at >= Date.now() - 3000) by.set(s.camera, s.box);
      return by;
    };
    const loads = (o: Map<string, string>): Map<string, number> => {
      const l = new Map<string, number>();
      for (const b of o.values()) l.set(b, (l.get(b) ?? 0) + 1);
      return l;
    };
    /** Waits until every camera publishes from one box, spread over `live` as `ok` wants, for 3 s. */
    const steady = async (what: string, live: string[]): Promise<Map<string, string>> => {
      const fair = CAMERAS.length / live.length;
      const ok = (): boolean => {
        const o = owners();
        const l = loads(o);
        return (
          o.size === CAMERAS.length &&
          [...l.keys()].every((b) => live.includes(b)) &&
          live.every((b) => (l.get(b) ?? 0) >= Math.floor(fair) && (l.get(b) ?? 0) <= Math.ceil(fair))
        );
      };
      await sub.waitFor(what, ok, 120_000);
      await sleep(3000);
      await sub.waitFor(what, ok, 60_000);
      const o = owners();
      load_ratios.push(Math.max(...loads(o).values()) / fair);
      return o;
    };
    const moved = (a: Map<string, string>, b: Map<string, string>): number =>
      CAMERAS.filter((c) => a.get(c) !== b.get(c)).length;

    const ideal = CAMERAS.length / BOXES.length;
    log(`fleet: ${BOXES.length} boxes, ${CAMERAS.length} cameras, lease TTL ${TTL_S} s: starting`);
    let before = await steady('the fleet spread', [...BOXES]);
    for (let k = 0; k < opts.kills; k++) {
      const box = BOXES[k % BOXES.length]!;
      const others = BOXES.filter((b) => b !== box);
      const victims = CAMERAS.filter((c) => before.get(c) === box);
      const killedAt = Date.now();
      daemons.get(box)!.child.kill('SIGKILL');
      await daemons.get(box)!.exited;
      const firstElsewhere = (c: string): Seen | undefined =>
        seen().find((s) => s.camera === c && s.box !== box && s.at > killedAt);
      await sub.waitFor(`box ${box}'s cameras on another box`, () => victims.every(firstElsewhere), 120_000);
      const times = victims.map((c) => (firstElsewhere(c)!.at - killedAt) / 1000);
      failover.push(...times);
      log(`fleet: kill ${k + 1} (box ${box}): failover ${times.map((s) => s.toFixed(1)).join(', ')} s`);
      const without = await steady(`the fleet without ${box}`, others);
      moves.push({
        change: `${box} killed`,
        moved: moved(before, without),
        ratio: moved(before, without) / ideal,
      });
      daemons.set(box, startDaemon(t, configs.get(box)!));
      before = await steady(`box ${box} back`, [...BOXES]);
      moves.push({
        change: `${box} back`,
        moved: moved(without, before),
        ratio: moved(without, before) / ideal,
      });
    }

    log(`fleet: etcd stopped for ${OUTAGE_S} s`);
    for (let i = 0; i < 3; i++) await etcd.kill(i);
    const downAt = Date.now();
    await sleep(OUTAGE_S * 1000);
    const outage = doubled(seen(), downAt, Date.now());
    await Promise.all([0, 1, 2].map((i) => etcd.start(i)));
    before = await steady('the fleet after the etcd outage', [...BOXES]);

    log(`fleet: box a cut from etcd for ${OUTAGE_S} s (its only member stopped)`);
    await etcd.kill(0);
    const cutAt = Date.now();
    await sleep(OUTAGE_S * 1000);
    await etcd.start(0);
    // Until a has seen that its cameras went elsewhere, and stopped them.
    await steady('the fleet after the partition', [...BOXES]);
    const partition = doubled(seen(), cutAt, Date.now());

    return {
      boxes: BOXES.length,
      cameras: CAMERAS.length,
      kills: opts.kills,
      ttl_s: TTL_S,
      failover_s: failover,
      p50_s: quantile(failover, 0.5),
      p95_s: quantile(failover, 0.95),
      max_s: Math.max(...failover),
      moves,
      load_ratios,
      outage_double_camera_s: outage,
      partition_double_camera_s: partition,
    };
  } finally {
    for (const fn of cleanups.reverse()) await fn().catch(() => undefined);
  }
}
