import type { Logger } from 'pino';
import type { CameraOwner } from '../core/owner.js';
import type { Clock, Timer } from '../core/clock.js';

/**
 * State that follows a camera from box to box (docs/fleet.md): its line counts and its runtime
 * control settings, and the fleet's global settings (the mode), kept in etcd beside the local
 * copies in each box's state directory.
 *
 * - A camera's state is written by the box that owns it, in a transaction that succeeds only
 *   while its owner key still names this box and its epoch: a stale owner cannot overwrite the
 *   new one's. A change is written at most once per `WRITE_MS` per key, and at once when the
 *   camera is handed on or the box stops.
 * - A global setting is written by the box that heard the change, while it is a live member (its
 *   member key on its lease); every box adopts a value another box wrote.
 * - The box that takes a camera over reads its state before the camera starts; where etcd holds
 *   none (a camera no box of the fleet wrote yet) the local copy stays.
 * - etcd away: the local copies go on; what could not be written is written when it is back.
 */

/** One kind of per-camera state: this box's copy, serialised, and how to take another box's. */
export interface CameraKind {
  /** The camera's state on this box now (JSON), read as it changes. */
  read: (camera: string) => string;
  /** Takes the state etcd holds for a camera this box takes over. */
  adopt: (camera: string, value: string) => void;
}

/** One global setting: this box's value, and how to take another box's. */
export interface GlobalKind {
  read: () => string;
  /** Takes the value another box wrote; returns whether the cameras that run changed. */
  adopt: (value: string) => boolean;
}

/** What a write is guarded by: the camera's ownership, or this box's membership. */
export type Guard =
  { kind: 'owner'; camera: string; owner: CameraOwner } | { kind: 'member'; box: string; lease: string };

/** The few etcd operations the state needs (Fleet's client; a fake in the unit tests). */
export interface StateKv {
  /** The value at `key` and its modification revision; undefined where there is none. Throws when etcd cannot be reached. */
  get(key: string): Promise<{ value: string; mod: string } | undefined>;
  /**
   * Puts `key` where the guard holds: the revision written, or undefined where the guard does not
   * hold. Throws when etcd cannot be reached.
   */
  putIf(guard: Guard, key: string, value: string): Promise<string | undefined>;
}

export interface FollowDeps {
  kv: StateKv;
  log: Logger;
  clock: Clock;
  /** The keys' prefix (`fleet.prefix`). */
  prefix: string;
  /** This box's name. */
  box: string;
  /** This box's ownership of a camera now; undefined where it does not run it. */
  ownership: (camera: string) => CameraOwner | undefined;
  /** An error as the log may show it (secrets scrubbed). */
  say: (err: unknown) => string;
  /** This box's lease now; undefined while etcd is away. */
  lease: () => string | undefined;
  cameras: Record<string, CameraKind>;
  globals: Record<string, GlobalKind>;
}

/** At most one write per key in this time (line counts change with every crossing). */
export const WRITE_MS = 1000;

/** A change not written yet: whose it is, and the value it had when made. */
type Pending = ({ camera: string } | { global: string }) & { value: string };

export class Follow {
  /** Keys changed here and not written yet: key → what it is. */
  private readonly dirty = new Map<string, Pending>();
  /** Each global key's modification revision last seen (written or adopted). */
  private readonly seen = new Map<string, string>();
  private timer: Timer | undefined;
  private lastWrite = -Infinity;
  private writing: Promise<void> | undefined;
  private stopped = false;

  constructor(private readonly deps: FollowDeps) {}

  /** A camera's key of one kind: `<prefix>/state/<kind>/<camera>`. */
  cameraKey(kind: string, camera: string): string {
    return `${this.deps.prefix}/state/${kind}/${camera}`;
  }

  /** A global setting's key: `<prefix>/global/<kind>`. */
  globalKey(kind: string): string {
    return `${this.deps.prefix}/global/${kind}`;
  }

  /** A camera's state of `kind` changed here: written within `WRITE_MS` where this box owns it. */
  cameraChanged(camera: string, kind: string): void {
    const k = Object.hasOwn(this.deps.cameras, kind) ? this.deps.cameras[kind] : undefined;
    if (!k || !this.deps.ownership(camera)) return;
    // Its value now: a camera handed on is stopped here (its local copy may be pruned) before
    // its last value is written.
    this.dirty.set(this.cameraKey(kind, camera), { camera, value: k.read(camera) });
    this.schedule();
  }

  /** A global setting changed here: written within `WRITE_MS`. */
  globalChanged(kind: string): void {
    const k = Object.hasOwn(this.deps.globals, kind) ? this.deps.globals[kind] : undefined;
    if (!k) return;
    this.dirty.set(this.globalKey(kind), { global: kind, value: k.read() });
    this.schedule();
  }

  private schedule(): void {
    if (this.timer || this.stopped) return;
    const wait = Math.max(0, this.lastWrite + WRITE_MS - this.deps.clock.now());
    this.timer = this.deps.clock.setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, wait);
  }

  /**
   * Writes what changed (or only `camera`'s); what etcd could not take stays to be written again
   * (every `WRITE_MS` until it can). Resolves once written or failed.
   */
  async flush(camera?: string): Promise<void> {
    while (this.writing) await this.writing;
    this.writing = this.write(camera);
    try {
      await this.writing;
    } finally {
      this.writing = undefined;
    }
    if (this.dirty.size && !this.stopped) this.schedule();
  }

  private async write(only?: string): Promise<void> {
    this.lastWrite = this.deps.clock.now();
    for (const [key, p] of [...this.dirty]) {
      if (only !== undefined && !('camera' in p && p.camera === only)) continue;
      let guard: Guard;
      if ('camera' in p) {
        const owner = this.deps.ownership(p.camera);
        if (!owner) {
          this.dirty.delete(key); // no longer ours to write: the new owner's copy is the one
          continue;
        }
        guard = { kind: 'owner', camera: p.camera, owner };
      } else {
        const lease = this.deps.lease();
        if (!lease) return; // etcd away: written once this box has a lease again
        guard = { kind: 'member', box: this.deps.box, lease };
      }
      // Taken off first: a change made while the write is in flight marks it again.
      this.dirty.delete(key);
      try {
        const rev = await this.deps.kv.putIf(guard, key, p.value);
        if (rev === undefined)
          this.deps.log.info({ key }, 'fleet: state not written (this box no longer owns it)');
        else if ('global' in p) this.seen.set(key, rev);
      } catch (err) {
        if (!this.dirty.has(key)) this.dirty.set(key, p);
        this.deps.log.debug(
          { key, err: this.deps.say(err) },
          'fleet: state not written (etcd away?); kept to write again',
        );
        return;
      }
    }
  }

  /**
   * This box took a camera over: the state etcd holds for it is adopted, before it starts. Throws
   * when etcd cannot be reached (the local copies stay).
   */
  async take(camera: string): Promise<string[]> {
    const adopted: string[] = [];
    for (const [kind, k] of Object.entries(this.deps.cameras)) {
      const key = this.cameraKey(kind, camera);
      if (this.dirty.has(key)) continue; // changed here since: ours is newer
      const got = await this.deps.kv.get(key);
      if (!got) continue;
      try {
        k.adopt(camera, got.value);
        adopted.push(kind);
      } catch (err) {
        this.deps.log.warn(
          { camera, key, err: this.deps.say(err) },
          'fleet: state kept in etcd unreadable; the local copy stays',
        );
      }
    }
    return adopted;
  }

  /**
   * Reads the global settings: each another box wrote since it was last seen is adopted (one
   * changed here and not written yet wins). Returns whether the cameras that run changed.
   */
  async sync(): Promise<boolean> {
    let changed = false;
    for (const [kind, k] of Object.entries(this.deps.globals)) {
      const key = this.globalKey(kind);
      const got = await this.deps.kv.get(key);
      if (!got || this.seen.get(key) === got.mod) continue;
      this.seen.set(key, got.mod);
      if (this.dirty.has(key) || got.value === k.read()) continue;
      this.deps.log.info({ setting: kind, value: got.value }, 'fleet: global setting taken from the fleet');
      changed = k.adopt(got.value) || changed;
    }
    return changed;
  }

  /** Writes what is pending, then stops scheduling (at the box's stop, before its lease goes). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) this.deps.clock.clearTimeout(this.timer);
    this.timer = undefined;
    await this.flush();
  }
}
