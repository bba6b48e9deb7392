import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import {
  Aedes,
  type AedesPublishPacket,
  type AuthenticateError,
  type Client,
  type PublishPacket,
} from 'aedes';
import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import { systemClock, type Clock } from '../core/clock.js';
import { listen, listeningUrl } from '../listen.js';
import { Backlog, type BacklogLimits } from './broker-backlog.js';
import { commandTopic, RefusalLog, RetainedQuota, underTopic, type Refusal } from './broker-policy.js';
import { PacketSizeGuard } from './packet-size.js';

export interface BrokerStats {
  /** Clients and packets refused, by reason. */
  refusals: Record<Refusal, number>;
  /** Retained messages of clients other than Argus, and their bytes. */
  retained: { messages: number; bytes: number };
}

/** QoS 2 messages a client may leave waiting for their PUBREL (aedes holds them meanwhile). */
const MAX_INFLIGHT_QOS2 = 16;
/** The user name of Argus' own login; its password is new at each start. */
const OWN_USERNAME = 'argus-daemon';
/** A control command an allowed client published: topic, payload, retained, the client's id. */
export type CommandListener = (topic: string, payload: string, retained: boolean, clientId: string) => void;

/** Longest topic or client id quoted in a log line. */
const QUOTE_MAX = 200;
/** How often every other client's backlog is looked at (besides before each message to it). */
const BACKLOG_CHECK_MS = 1000;

/** CONNACK return codes of MQTT 3.1.1. */
const IDENTIFIER_REJECTED = 2;
const SERVER_UNAVAILABLE = 3;
const BAD_LOGIN = 4;
const NOT_AUTHORIZED = 5;

/** Compares a secret in time that does not depend on where the two differ. */
function sameSecret(given: Buffer | undefined, expected: string): boolean {
  if (given === undefined) return false;
  const digest = (b: Buffer | string): Buffer => createHash('sha256').update(b).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

const quote = (s: string | null | undefined): string | undefined =>
  s === null || s === undefined ? undefined : s.length > QUOTE_MAX ? `${s.slice(0, QUOTE_MAX)}…` : s;

/** aedes' (1.x) hook where a write that filled the socket waits for its `drain`. */
type DrainWaiter = (done: (err: Error | null, client: Client) => void) => void;

/**
 * The embedded MQTT broker (aedes), used when no `mqtt.url` is configured, so subscribers work
 * with nothing else installed. It listens on 127.0.0.1:1883 unless configured otherwise.
 *
 * Argus' own client logs in with a password made at each start (`login`); only that client may
 * publish under the base topic, so nobody else can fake Argus' states, and only its packets are
 * unlimited. Other clients need `embedded.username`/`password` when set, are at most
 * `max_clients` at once, keep no persistent session, may send packets of at most
 * `max_message_kb`, and together retain at most `max_retained_messages` of `max_retained_kb`.
 * Refusals are logged at a bounded rate.
 *
 * No client but Argus' own can hold up delivery or memory by not reading. Left to itself, aedes
 * finishes a message only when every subscriber's socket took it (it waits for `drain`), keeps
 * at most `concurrency` (100) messages in flight and queues the rest without bound: one stalled
 * subscriber held up every other one, and every message waited in memory, until aedes' drain
 * timeout (60 s). Here a write to another client never waits; its backlog is bounded instead
 * (./broker-backlog.ts: `max_queued_kb`, `max_behind_s`). At most `max_connecting` connections
 * may be waiting to send their CONNECT, for at most `connect_timeout_s`.
 */
export class EmbeddedBroker {
  private aedes: Aedes | undefined;
  private server: Server | undefined;
  /** The login Argus' own MQTT client connects with. */
  readonly login = { username: OWN_USERNAME, password: randomBytes(24).toString('base64url') };
  /** Argus' own client's connections (a new one at each reconnection). */
  private readonly own = new WeakSet<Client>();
  /** The client id Argus' client last connected with: no one else may take it over. */
  private ownId: string | undefined;
  /** Ids of the connected clients other than Argus' own (`max_clients` bounds them). */
  private readonly others = new Set<string>();
  /** Will topics of clients between CONNECT and authentication. */
  private readonly wills = new WeakMap<Client, string>();
  /** The backlog of each connected client other than Argus' own. */
  private readonly backlogs = new Map<Client, Backlog>();
  /** Connections that have not been accepted as a client yet (`max_connecting` bounds them). */
  private readonly connecting = new Set<Socket>();
  private backlogTimer: NodeJS.Timeout | undefined;
  private readonly backlogLimits: BacklogLimits;
  private readonly retained: RetainedQuota;
  private readonly refusals: RefusalLog;
  /** Connections logged in with mqtt.embedded's username and password: they may send commands. */
  private readonly steerers = new WeakSet<Client>();
  private commandListener: CommandListener | undefined;

  constructor(
    private readonly cfg: Config['mqtt'],
    private readonly log: Logger,
    private readonly clock: Pick<Clock, 'now'> = systemClock,
    /** Whether control commands are taken at all (`control.enabled`); otherwise refused as any other. */
    private readonly commands = false,
  ) {
    const e = cfg.embedded;
    this.retained = new RetainedQuota(e.max_retained_messages, e.max_retained_kb * 1024);
    this.refusals = new RefusalLog(log, clock);
    this.backlogLimits = { maxBytes: e.max_queued_kb * 1024, maxBehindMs: e.max_behind_s * 1000 };
  }

  get url(): string {
    return listeningUrl('mqtt', this.server, this.cfg.embedded.host, this.cfg.embedded.port);
  }

  /**
   * Hears every control command an allowed client published, with that client's id (which MQTT
   * does not pass to subscribers): Argus takes its commands from here, not from a subscription.
   */
  onCommand(listener: CommandListener): void {
    this.commandListener = listener;
  }

  /** Where and how Argus' own client connects: this broker, with the login made for this run. */
  ownClient(): { url: string; mqtt: Config['mqtt'] } {
    return { url: this.url, mqtt: { ...this.cfg, ...this.login } };
  }

  async start(): Promise<void> {
    const aedes = await Aedes.createBroker({
      maxInflightInbound: MAX_INFLIGHT_QOS2,
      connectTimeout: this.cfg.embedded.connect_timeout_s * 1000,
      // No shared pool of messages in flight, and no queue behind it: with one, messages waiting
      // for a slow subscriber took every slot, and a long run of messages no one subscribed to
      // was released in one synchronous chain that overflowed the stack (a crash).
      concurrency: 0,
      preConnect: (client, packet, done) => {
        if (packet.will) this.wills.set(client, packet.will.topic);
        done(null, true);
      },
      authenticate: (client, username, password, done) => this.authenticate(client, username, password, done),
      authorizePublish: (client, packet, done) => done(this.authorizePublish(client, packet)),
      authorizeForward: (client, packet) => this.authorizeForward(client, packet),
    });
    // aedes closes a client whose id another takes over before it registers the new one.
    aedes.on('client', (client) => {
      this.connecting.delete(client.conn as Socket);
      if (this.own.has(client)) return;
      this.others.add(client.id);
      this.backlogs.set(client, new Backlog(this.backlogLimits));
    });
    aedes.on('publish', (packet, client) => {
      if (client && this.steerers.has(client) && commandTopic(packet.topic, this.cfg.base_topic))
        this.commandListener?.(packet.topic, packet.payload.toString(), packet.retain, client.id);
    });
    aedes.on('clientDisconnect', (client) => {
      if (!this.own.has(client)) this.others.delete(client.id);
    });
    aedes.on('clientError', (client, err) => {
      if (err.message.startsWith('maxInflightInbound exceeded')) this.refuse('inflight', client);
    });
    aedes.on('connectionError', (client, err) => {
      if (err.message === 'connect did not arrive in time') this.refuse('connect_timeout', client);
    });
    this.aedes = aedes;
    const maxBytes = this.cfg.embedded.max_message_kb * 1024;
    const server = createServer((socket) => {
      if (this.connecting.size >= this.cfg.embedded.max_connecting) {
        this.refusals.refuse('connecting', { address: socket.remoteAddress });
        socket.destroy();
        return;
      }
      this.connecting.add(socket);
      const client = aedes.handle(socket);
      socket.once('close', () => {
        this.connecting.delete(socket);
        this.backlogs.delete(client);
      });
      this.neverWaitForDrain(client);
      this.limitPacketSize(socket, client, new PacketSizeGuard(maxBytes));
    });
    this.server = server;
    this.backlogTimer = setInterval(() => this.checkBacklogs(), BACKLOG_CHECK_MS).unref();
    const { host, port, username } = this.cfg.embedded;
    await listen(server, host, port, 'embedded MQTT broker');
    this.log.info({ url: this.url, login: username !== undefined }, 'embedded MQTT broker listening');
  }

  /**
   * aedes waits for a socket to drain after each write that filled it, and a message is not done
   * until every subscriber's write is: a client that stops reading holds up every message it
   * subscribed to. For clients other than Argus' own, the write is done at once; their backlog
   * is bounded instead (`authorizeForward`, `checkBacklogs`). If a later aedes has no such hook,
   * it keeps its own behaviour (test/integration/broker-backlog.test.ts fails).
   */
  private neverWaitForDrain(client: Client): void {
    const c = client as Client & { waitForDrain?: DrainWaiter };
    const wait = c.waitForDrain?.bind(c);
    if (!wait) return;
    c.waitForDrain = (done) => (this.own.has(client) ? wait(done) : setImmediate(done, null, client));
  }

  /** Whether a message goes to `client`: Argus' own gets all; another, as its backlog allows. */
  private authorizeForward(client: Client, packet: AedesPublishPacket): AedesPublishPacket | null {
    const backlog = this.backlogs.get(client);
    if (!backlog) return packet;
    if (client.conn.destroyed) return null;
    const inSocket = client.conn.writableLength;
    // Topic, payload and at most 9 bytes of headers.
    const bytes = Buffer.byteLength(packet.topic) + Buffer.byteLength(packet.payload) + 9;
    const verdict = backlog.admit(inSocket, bytes, packet.qos, this.clock.now());
    if (verdict === 'send') {
      // aedes writes it in an immediate it queues right after this one: the two run back to back.
      setImmediate(() => backlog.written(bytes));
      return packet;
    }
    if (verdict === 'drop')
      this.refuse('backlog', client, { topic: quote(packet.topic), queued_bytes: backlog.queued(inSocket) });
    else this.disconnectSlow(client, backlog.queued(inSocket));
    return null;
  }

  /** Disconnects the other clients that have stayed behind too long (no message may come to tell). */
  private checkBacklogs(): void {
    const now = this.clock.now();
    for (const [client, backlog] of this.backlogs) {
      const inSocket = client.conn.writableLength;
      if (!client.conn.destroyed && backlog.tooLong(inSocket, now))
        this.disconnectSlow(client, backlog.queued(inSocket));
    }
  }

  /** Closes a client that does not keep up: what waits in its socket is freed with it. */
  private disconnectSlow(client: Client, queued: number): void {
    this.refuse('slow', client, { queued_bytes: queued });
    client.conn.destroy();
  }

  /**
   * Reads each chunk aedes reads (with a `readable` listener present, `data` is emitted only by
   * aedes' own `read()`, so this neither consumes nor reorders anything) and closes the
   * connection at the header of a packet over the limit, before its body is buffered.
   */
  private limitPacketSize(socket: Socket, client: Client, guard: PacketSizeGuard): void {
    const onData = (chunk: Buffer): void => {
      if (this.own.has(client)) {
        socket.off('data', onData);
        return;
      }
      const over = guard.check(chunk);
      if (!over) return;
      socket.off('data', onData);
      this.refuse('oversize', client, {
        packet: over.type,
        bytes: Number.isFinite(over.bytes) ? over.bytes : 'malformed length',
        max_bytes: this.cfg.embedded.max_message_kb * 1024,
      });
      socket.destroy();
    };
    socket.on('data', onData);
  }

  private authenticate(
    client: Client,
    username: string | undefined,
    password: Buffer | undefined,
    done: (error: AuthenticateError | null, success: boolean | null) => void,
  ): void {
    const will = this.wills.get(client);
    this.wills.delete(client);
    if (username === this.login.username && sameSecret(password, this.login.password)) {
      this.own.add(client);
      this.ownId = client.id;
      return done(null, true);
    }
    const refuse = (reason: Refusal, code: number): void => {
      this.refuse(reason, client, reason === 'will' ? { topic: quote(will) } : {});
      done(Object.assign(new Error(reason), { returnCode: code }), false);
    };
    const { username: user, password: pass } = this.cfg.embedded;
    const login = user !== undefined && pass !== undefined;
    if (login && !(username === user && sameSecret(password, pass)))
      return refuse('login', username === undefined && password === undefined ? NOT_AUTHORIZED : BAD_LOGIN);
    if (login) this.steerers.add(client);
    if (client.id === this.ownId) return refuse('client_id', IDENTIFIER_REJECTED);
    // Argus' own client takes no room; a client taking over its own id (reconnecting before
    // its old connection was found dead) takes the room it had.
    if (!this.others.has(client.id) && this.others.size >= this.cfg.embedded.max_clients)
      return refuse('clients', SERVER_UNAVAILABLE);
    if (will !== undefined && underTopic(will, this.cfg.base_topic)) return refuse('will', NOT_AUTHORIZED);
    if (!client.clean) return refuse('session', NOT_AUTHORIZED);
    done(null, true);
  }

  /** Whether a message (or a last will about to be sent) may be published: null if it may. */
  private authorizePublish(client: Client | null, packet: PublishPacket): Error | null {
    const topic = packet.topic;
    let reason: Refusal | undefined;
    // A publisher that does not read its acknowledgements grows its own backlog.
    const backlog = client && !client.conn.destroyed && this.backlogs.get(client);
    if (client && backlog && backlog.overflowing(client.conn.writableLength)) {
      this.disconnectSlow(client, backlog.queued(client.conn.writableLength));
      return new Error('slow');
    }
    if (topic.startsWith('$SYS/')) reason = 'sys';
    else if (client && this.own.has(client)) {
      if (packet.retain) this.retained.forget(topic);
    } else if (this.commands && commandTopic(topic, this.cfg.base_topic)) {
      if (!client || !this.steerers.has(client)) reason = 'control';
      // A retained command is ignored by Control, but the broker keeps it: it counts as any
      // other retained message does.
      else if (packet.retain && !this.retained.admit(topic, Buffer.byteLength(packet.payload)))
        reason = 'retained_limit';
    } else if (underTopic(topic, this.cfg.base_topic)) reason = 'base_topic';
    else if (packet.retain && !this.retained.admit(topic, Buffer.byteLength(packet.payload)))
      reason = 'retained_limit';
    if (!reason) return null;
    this.refuse(reason, client, { topic: quote(topic) });
    return new Error(`${reason}: ${topic}`);
  }

  private refuse(reason: Refusal, client: Client | null, details: Record<string, unknown> = {}): void {
    const conn = client?.conn as Partial<Socket> | undefined;
    this.refusals.refuse(reason, { client: quote(client?.id), address: conn?.remoteAddress, ...details });
  }

  stats(): BrokerStats {
    return { refusals: this.refusals.stats(), retained: this.retained.stats() };
  }

  async stop(): Promise<void> {
    const server = this.server;
    const aedes = this.aedes;
    this.server = undefined;
    this.aedes = undefined;
    clearInterval(this.backlogTimer);
    // No new connections first (a reconnecting client would otherwise hold the server open).
    const closed = server && new Promise<void>((r) => server.close(() => r()));
    if (aedes) await new Promise<void>((r) => aedes.close(() => r()));
    await closed;
  }
}
