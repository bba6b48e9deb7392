import { readFileSync } from 'node:fs';
import { Etcd3, type IKeyValue, type Lease, type Watcher } from 'etcd3';
import type { Logger } from 'pino';
import type { CameraConfig, FleetConfig } from '../config/index.js';
import type { CameraOwner } from '../core/owner.js';
import { systemClock, type Clock, type Timer } from '../core/clock.js';
import { errorMessage } from '../core/errors.js';
import { scrub } from '../redact.js';
import { Follow, type CameraKind, type GlobalKind, type Guard, type StateKv } from './follow.js';
import { place, type Member, type Placement } from './placement.js';

/**
 * This box in a fleet (docs/fleet.md): a thin shell over etcd, which does all the agreeing.
 *
 * - Membership: `<prefix>/members/<name>` (capacity, labels) bound to this box's lease; a box
 *   that dies stops renewing it, and etcd deletes its keys `ttl_s` later.
 * - Placement: every box computes `place()` from the same camera file, member list and owner
 *   keys (sticky: a camera stays with its live owner while that owner is within its limit).
 * - Ownership: a box runs a camera only once it created `<prefix>/owners/<camera>` bound to its
 *   lease in a transaction that succeeds only where the key does not exist; the key's create
 *   revision is the ownership epoch. A camera placed elsewhere is stopped here first, then its key
 *   deleted (in a transaction that checks it is still ours), so the next owner starts after.
 * - etcd away: the cameras owned go on (Argus never goes blind for its coordinator); once etcd is
 *   back with a new lease, keys still ours are bound to it again and cameras another box took in
 *   the meantime are stopped here.
 *
 * Changes are found by a watch on the prefix, and by a resync every `RESYNC_MS` in case a watch
 * event was missed. `apply` is the daemon's: it runs `select()`'s cameras and resolves once they do.
 */

/** Who runs a camera, and since which etcd revision (the epoch: a new owner has a greater one). */
export type Ownership = CameraOwner;

export interface FleetView {
  box: string;
  connected: boolean;
  members: (Member & { cameras: string[]; limit: number })[];
  /** camera → its owner as etcd lists it (another box's too). */
  owners: Record<string, Ownership>;
  /** What this box runs now. */
  running: string[];
  /** Cameras no live box has the labels for. */
  unplaced: string[];
}

export interface FleetDeps {
  log: Logger;
  clock?: Clock;
  secrets: readonly string[];
  /** Brings the running cameras in line with `select()`; resolves once applied. */
  apply: () => Promise<unknown>;
  /**
   * The state that follows a camera to its new box (its line counts, its runtime settings) and
   * the global settings (the mode), kept in etcd (follow.ts); none where absent.
   */
  follow?: { cameras: Record<string, CameraKind>; globals: Record<string, GlobalKind> };
}

/** A resync of members and owners at least this often, beside the watch. */
export const RESYNC_MS = 2000;
/** One etcd call's deadline. */
const CALL_MS = 3000;

export class Fleet {
  readonly name = 'fleet';
  private client: Etcd3 | undefined;
  private lease: Lease | undefined;
  private leaseId: string | undefined;
  private watcher: Watcher | undefined;
  private timer: Timer | undefined;
  /** The file's cameras (with mode and runtime changes): those placed. */
  private cameras: Record<string, CameraConfig> = {};
  /** The cameras this box runs, with their epoch. */
  private readonly mine = new Map<string, number>();
  private members: Member[] = [];
  private owners = new Map<string, Ownership & { lease: string; mod: string }>();
  private placement: Placement | undefined;
  private connected = false;
  /** etcd's absence was logged (once until it is back). */
  private warned = false;
  private stopped = false;
  private busy = false;
  private again = false;
  private readonly clock: Clock;
  private readonly follow: Follow;

  constructor(
    private readonly cfg: FleetConfig,
    private readonly deps: FleetDeps,
  ) {
    this.clock = deps.clock ?? systemClock;
    this.follow = new Follow({
      kv: this.stateKv(),
      log: deps.log,
      clock: this.clock,
      prefix: cfg.prefix,
      box: cfg.name,
      say: (err) => this.say(err),
      ownership: (camera) => this.held(camera),
      lease: () => (this.lease && !this.lease.revoked() ? this.leaseId : undefined),
      cameras: deps.follow?.cameras ?? {},
      globals: deps.follow?.globals ?? {},
    });
  }

  /** The follow state's etcd operations, each guarded in one transaction. */
  private stateKv(): StateKv {
    return {
      get: async (key) => {
        const kv = (await this.client!.get(key).exec()).kvs[0];
        return kv && { value: kv.value.toString(), mod: kv.mod_revision };
      },
      putIf: async (guard: Guard, key, value) => {
        const c = this.client!;
        const when =
          guard.kind === 'owner'
            ? c
                .if(this.key('owners', guard.camera), 'Value', '==', guard.owner.box)
                .and(this.key('owners', guard.camera), 'Create', '==', guard.owner.epoch)
            : c.if(this.key('members', guard.box), 'Lease', '==', guard.lease);
        const r = await when.then(c.put(key).value(value)).commit();
        return r.succeeded ? r.header.revision : undefined;
      },
    };
  }

  /**
   * This box's hold of a camera: while it runs it, and after it stopped it until its owner key is
   * deleted (its last state is written in between).
   */
  private held(camera: string): Ownership | undefined {
    const mine = this.ownership(camera);
    if (mine) return mine;
    const o = this.owners.get(camera);
    return o && o.box === this.cfg.name ? { box: o.box, epoch: o.epoch } : undefined;
  }

  /** Cameras' state of `kind` (follow.ts) changed on this box: written to etcd where it owns them. */
  cameraStateChanged(kind: string, cameras: readonly string[]): void {
    for (const camera of cameras) this.follow.cameraChanged(camera, kind);
  }

  /** A global setting (follow.ts) changed on this box: written to etcd. */
  globalChanged(kind: string): void {
    this.follow.globalChanged(kind);
  }

  private key(kind: 'members' | 'owners', name = ''): string {
    return `${this.cfg.prefix}/${kind}/${name}`;
  }

  /** Connects to etcd (without waiting for it: the loop keeps trying) and starts reconciling. */
  start(): void {
    const { endpoints, tls, username, password } = this.cfg;
    const https = !!tls || endpoints.some((e) => e.toLowerCase().startsWith('https://'));
    this.client = new Etcd3({
      hosts: endpoints.map((e) => (/^[a-z]+:\/\//i.test(e) ? e : `${https ? 'https' : 'http'}://${e}`)),
      ...(tls
        ? {
            credentials: {
              rootCertificate: readFileSync(tls.ca),
              ...(tls.cert && tls.key
                ? { certChain: readFileSync(tls.cert), privateKey: readFileSync(tls.key) }
                : {}),
            },
          }
        : {}),
      ...(username && password ? { auth: { username, password } } : {}),
      defaultCallOptions: () => ({ deadline: Date.now() + CALL_MS }),
      dialTimeout: CALL_MS,
    });
    void this.watch();
    this.kick();
  }

  private async watch(): Promise<void> {
    try {
      const w = await this.client!.watch().prefix(`${this.cfg.prefix}/`).create();
      if (this.stopped) return void (await w.cancel());
      this.watcher = w;
      // Members, owners and global settings; a camera's state (written every second) is read when taken.
      const matters = (kv: IKeyValue): boolean => !kv.key.toString().startsWith(`${this.cfg.prefix}/state/`);
      w.on('put', (kv) => matters(kv) && this.kick());
      w.on('delete', (kv) => matters(kv) && this.kick());
      w.on('connected', () => this.kick());
      w.on('error', (err) => this.deps.log.debug({ err: this.say(err) }, 'fleet: watch error'));
    } catch (err) {
      this.deps.log.debug({ err: this.say(err) }, 'fleet: watch not created; retrying');
      if (!this.stopped) this.clock.setTimeout(() => void this.watch(), RESYNC_MS);
    }
  }

  /** The cameras of the file (with mode and runtime changes); returns those this box runs. */
  select(cameras: Record<string, CameraConfig>): Record<string, CameraConfig> {
    const changed =
      JSON.stringify(Object.keys(cameras).sort()) !== JSON.stringify(Object.keys(this.cameras).sort());
    this.cameras = cameras;
    if (changed) this.kick();
    return Object.fromEntries(Object.entries(cameras).filter(([name]) => this.mine.has(name)));
  }

  /** The owner of a camera this box runs (events and statuses carry it), or undefined. */
  ownership(camera: string): Ownership | undefined {
    const epoch = this.mine.get(camera);
    return epoch === undefined ? undefined : { box: this.cfg.name, epoch };
  }

  view(): FleetView {
    const byBox = new Map<string, string[]>();
    for (const [c, o] of this.owners) byBox.set(o.box, [...(byBox.get(o.box) ?? []), c]);
    return {
      box: this.cfg.name,
      connected: this.connected,
      members: this.members.map((m) => ({
        ...m,
        cameras: (byBox.get(m.name) ?? []).sort(),
        limit: this.placement?.limits.get(m.name) ?? 0,
      })),
      owners: Object.fromEntries([...this.owners].map(([c, { box, epoch }]) => [c, { box, epoch }])),
      running: [...this.mine.keys()].sort(),
      unplaced: this.placement?.unplaced ?? [],
    };
  }

  /** Reconciles now, or once more after the pass in progress. */
  private kick(): void {
    if (this.stopped) return;
    if (this.busy) {
      this.again = true;
      return;
    }
    this.busy = true;
    if (this.timer) this.clock.clearTimeout(this.timer);
    void this.reconcile().finally(() => {
      this.busy = false;
      if (this.stopped) return;
      if (this.again) {
        this.again = false;
        this.kick();
      } else this.timer = this.clock.setTimeout(() => this.kick(), RESYNC_MS);
    });
  }

  private say(err: unknown): string {
    return scrub(errorMessage(err), this.deps.secrets);
  }

  /** A lease, and our member key on it; undefined while etcd cannot be reached. */
  private async ensureLease(): Promise<string | undefined> {
    if (this.lease && this.leaseId && !this.lease.revoked()) return this.leaseId;
    const lease = this.client!.lease(this.cfg.ttl_s);
    lease.on('lost', (err) => {
      if (this.lease !== lease || this.stopped) return;
      this.connected = false;
      this.lease = undefined;
      this.leaseId = undefined;
      this.deps.log.warn(
        { err: this.say(err), running: [...this.mine.keys()] },
        'fleet: lease lost (etcd unreachable?); the cameras this box runs go on',
      );
      this.kick();
    });
    try {
      const id = await lease.grant();
      const member = { capacity: this.cfg.capacity, labels: this.cfg.labels };
      await this.client!.put(this.key('members', this.cfg.name)).value(JSON.stringify(member)).lease(id);
      if (this.stopped) {
        await lease.revoke().catch(() => undefined);
        return undefined;
      }
      this.lease = lease;
      this.leaseId = id;
      this.warned = false;
      this.deps.log.info({ box: this.cfg.name, ttl_s: this.cfg.ttl_s }, 'fleet: joined');
      return id;
    } catch (err) {
      lease.release();
      if (!this.warned) this.deps.log.warn({ err: this.say(err) }, 'fleet: etcd unreachable; retrying');
      this.warned = true;
      this.connected = false;
      return undefined;
    }
  }

  private async reconcile(): Promise<void> {
    try {
      const lease = await this.ensureLease();
      if (!lease || this.stopped) return;
      await this.read();
      this.connected = true;
      if (await this.follow.sync()) await this.deps.apply();
      await this.settle(lease);
    } catch (err) {
      if (this.connected)
        this.deps.log.warn(
          { err: this.say(err) },
          'fleet: etcd call failed; the cameras this box runs go on',
        );
      this.connected = false;
    }
  }

  /** Reads the members and the owners. */
  private async read(): Promise<void> {
    const members = await this.client!.getAll().prefix(this.key('members')).exec();
    this.members = members.kvs.flatMap((kv) => {
      try {
        const m = JSON.parse(kv.value.toString()) as { capacity: number; labels: string[] };
        const name = kv.key.toString().slice(this.key('members').length);
        return [{ name, capacity: m.capacity, labels: m.labels }];
      } catch {
        return [];
      }
    });
    const owners = await this.client!.getAll().prefix(this.key('owners')).exec();
    this.owners = new Map(
      owners.kvs.map((kv: IKeyValue) => [
        kv.key.toString().slice(this.key('owners').length),
        {
          box: kv.value.toString(),
          epoch: Number(kv.create_revision),
          lease: kv.lease,
          mod: kv.mod_revision,
        },
      ]),
    );
  }

  /** Stops, releases and takes cameras until this box runs what the placement gives it. */
  private async settle(lease: string): Promise<void> {
    const current = new Map([...this.owners].map(([c, o]) => [c, o.box]));
    this.placement = place(this.cameras, this.members, current);
    const wanted = new Set([...this.placement.owners].filter(([, b]) => b === this.cfg.name).map(([c]) => c));
    let changed = false;
    // Taken by another box while this one was away from etcd, or a camera gone from the file.
    for (const c of [...this.mine.keys()]) {
      const o = this.owners.get(c);
      if (!Object.hasOwn(this.cameras, c) || (o && o.box !== this.cfg.name)) {
        this.mine.delete(c);
        changed = true;
        if (o && o.box !== this.cfg.name)
          this.deps.log.warn(
            { camera: c, owner: o.box, epoch: o.epoch },
            'fleet: camera owned by another box; stopped here',
          );
      }
    }
    // Placed elsewhere now: stopped here first, its key deleted after.
    const release = [...this.owners].filter(([c, o]) => o.box === this.cfg.name && !wanted.has(c));
    for (const [c] of release) changed = this.mine.delete(c) || changed;
    if (changed) await this.deps.apply();
    changed = false;
    for (const [c, o] of release) {
      // Its last line counts and settings, while the key is still ours, for the next owner.
      await this.follow.flush(c);
      const r = await this.client!.if(this.key('owners', c), 'Mod', '==', o.mod)
        .then(this.client!.delete().key(this.key('owners', c)))
        .commit();
      if (r.succeeded) this.deps.log.info({ camera: c }, 'fleet: camera handed on');
    }
    for (const c of wanted) {
      const o = this.owners.get(c);
      const key = this.key('owners', c);
      if (o && o.box === this.cfg.name) {
        // Ours: on an old lease (etcd was away), bound to this one.
        if (o.lease !== lease) {
          const r = await this.client!.if(key, 'Mod', '==', o.mod)
            .then(this.client!.put(key).value(this.cfg.name).lease(lease))
            .commit();
          if (!r.succeeded) continue;
        }
        if (!this.mine.has(c)) {
          this.mine.set(c, o.epoch);
          changed = true;
        }
        continue;
      }
      if (o) continue; // another box's still: it hands it on once it sees the placement
      const r = await this.client!.if(key, 'Create', '==', 0)
        .then(this.client!.put(key).value(this.cfg.name).lease(lease))
        .commit();
      if (!r.succeeded) continue;
      const epoch = Number(r.header.revision);
      await this.adopt(c);
      this.mine.set(c, epoch);
      this.deps.log.info({ camera: c, epoch }, 'fleet: camera taken');
      changed = true;
    }
    if (changed) await this.deps.apply();
  }

  /** The state etcd keeps of a camera just taken, adopted before it starts (follow.ts). */
  private async adopt(camera: string): Promise<void> {
    try {
      const kinds = await this.follow.take(camera);
      if (kinds.length) this.deps.log.info({ camera, state: kinds }, 'fleet: camera state taken from etcd');
    } catch (err) {
      this.deps.log.warn(
        { camera, err: this.say(err) },
        "fleet: the camera's state kept in etcd could not be read; it starts with this box's copy",
      );
    }
  }

  /** Stops reconciling; the cameras have stopped by now (stopped before): their keys and lease go. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) this.clock.clearTimeout(this.timer);
    await this.watcher?.cancel().catch(() => undefined);
    // The cameras' last state, while their keys are still this box's.
    await this.follow.stop();
    try {
      if (this.lease && !this.lease.revoked()) await this.lease.revoke();
    } catch (err) {
      this.deps.log.warn({ err: this.say(err) }, 'fleet: lease not revoked; etcd drops it after ttl_s');
    }
    this.client?.close();
  }
}
