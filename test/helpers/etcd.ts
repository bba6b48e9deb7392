import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DetectionsPayload } from '../../src/publish/topics.js';
import { freePort } from './rtsp.js';

/** A real etcd cluster on loopback ports (Debian's etcd-server), for the fleet's tests. */

type T = { after: (fn: () => Promise<void>) => void };

let found: string | null | undefined;
/** The etcd binary, or null. */
export function findEtcd(): string | null {
  if (found !== undefined) return found;
  const r = spawnSync('sh', ['-c', 'command -v etcd'], { encoding: 'utf8' });
  return (found = r.status === 0 ? r.stdout.trim() : null);
}

export const needsEtcd = findEtcd()
  ? false
  : 'etcd not found (Debian etcd-server; .ci/run installs it): fleet test skipped';

export interface EtcdCluster {
  /** host:port of each member's client URL. */
  endpoints: string[];
  /** SIGKILLs member i. */
  kill(i: number): Promise<void>;
  /** Starts member i again on its data directory. */
  start(i: number): Promise<void>;
  /** The index of the member that leads now. */
  leader(): Promise<number>;
  running(i: number): boolean;
}

async function healthy(endpoint: string): Promise<boolean> {
  try {
    const r = await fetch(`http://${endpoint}/health`, { signal: AbortSignal.timeout(1000) });
    return r.ok && ((await r.json()) as { health: string }).health === 'true';
  } catch {
    return false;
  }
}

/** Starts `n` members and waits until the cluster answers; each is killed after the test. */
export async function startEtcdCluster(t: T, n = 3): Promise<EtcdCluster> {
  const bin = findEtcd();
  if (!bin) throw new Error('etcd not installed');
  const dir = await mkdtemp(join(tmpdir(), 'argus-etcd-'));
  const ports = await Promise.all(Array.from({ length: n * 2 }, () => freePort()));
  const client = (i: number): string => `127.0.0.1:${ports[i]}`;
  const peer = (i: number): string => `http://127.0.0.1:${ports[n + i]}`;
  const initial = Array.from({ length: n }, (_, i) => `m${i}=${peer(i)}`).join(',');
  const procs: (ChildProcess | undefined)[] = [];
  const exits: Promise<void>[] = [];
  const launch = (i: number): void => {
    const child = spawn(
      bin,
      [
        ...['--name', `m${i}`, '--data-dir', join(dir, `m${i}`)],
        ...['--listen-client-urls', `http://${client(i)}`, '--advertise-client-urls', `http://${client(i)}`],
        ...['--listen-peer-urls', peer(i), '--initial-advertise-peer-urls', peer(i)],
        ...['--initial-cluster', initial, '--initial-cluster-state', 'new'],
        ...['--heartbeat-interval', '100', '--election-timeout', '1000', '--log-level', 'error'],
      ],
      { stdio: 'ignore' },
    );
    procs[i] = child;
    exits[i] = new Promise((r) => child.on('exit', () => r()));
  };
  const endpoints = Array.from({ length: n }, (_, i) => client(i));
  const cluster: EtcdCluster = {
    endpoints,
    running: (i) => !!procs[i] && procs[i].exitCode === null && procs[i].signalCode === null,
    async kill(i) {
      if (!cluster.running(i)) return;
      procs[i]!.kill('SIGKILL');
      await exits[i];
    },
    async start(i) {
      launch(i);
      const end = Date.now() + 30_000;
      while (!(await healthy(endpoints[i]!))) {
        if (Date.now() > end) throw new Error(`etcd member m${i} did not come back`);
        await new Promise((r) => setTimeout(r, 200));
      }
    },
    async leader() {
      for (let i = 0; i < n; i++) {
        if (!cluster.running(i)) continue;
        try {
          const r = await fetch(`http://${endpoints[i]}/v3/maintenance/status`, {
            method: 'POST',
            body: '{}',
          });
          const s = (await r.json()) as { header: { member_id: string }; leader: string };
          if (s.leader === s.header.member_id) return i;
        } catch {
          // not answering: another member leads
        }
      }
      throw new Error('no etcd member leads');
    },
  };
  t.after(async () => {
    for (let i = 0; i < n; i++) await cluster.kill(i);
    await rm(dir, { recursive: true, force: true });
  });
  for (let i = 0; i < n; i++) launch(i);
  const end = Date.now() + 30_000;
  while (!(await Promise.all(endpoints.map(healthy))).every(Boolean)) {
    if (Date.now() > end) throw new Error('the etcd cluster did not become healthy');
    await new Promise((r) => setTimeout(r, 200));
  }
  return cluster;
}

/** The fleet that test/integration/fleet-etcd.test.ts asserts on and bench/fleet-failover.ts times. */
export const FLEET_BOXES = ['a', 'b', 'c'] as const;
export const FLEET_CAMERAS = Array.from({ length: 9 }, (_, i) => `cam${i}`);
/** The lease TTL the fleet's daemons run with: how long a dead box keeps its cameras. */
export const FLEET_TTL_S = 3;

/** One detections message of a fleet's camera: which box analysed the frame, and when it came. */
export interface OwnerSeen {
  camera: string;
  box: string;
  epoch: number;
  at: number;
}

/** The owners in the detections a subscriber received (`owner`; messages without one left out). */
export function ownersSeen(messages: readonly { payload: string; at: number }[]): OwnerSeen[] {
  return messages.flatMap((m) => {
    const p = JSON.parse(m.payload) as DetectionsPayload;
    return p.owner ? [{ camera: p.camera, box: p.owner.box, epoch: p.owner.epoch, at: m.at }] : [];
  });
}
