/**
 * The camera relay: keeps an RTSP camera's credentials out of ffmpeg's command line, where any
 * local user could read them (`/proc/<pid>/cmdline`, `ps`). The static ffmpeg Argus ships takes
 * RTSP credentials only inside the URL; so ffmpeg is given `rtsp://127.0.0.1:<port>/<path>`, with
 * no user or password, and this relay, listening there, opens the camera (TCP, or TLS for
 * `rtsps`), forwards both ways, writes each request's URI as the camera's, and answers the
 * camera's authentication itself (Basic, or Digest: `rtsp-auth.ts`), resending the request a 401
 * refused. Interleaved RTP/RTCP (`$` frames) passes through as it came; with UDP transport the
 * camera sends RTP to this host's ports directly, as before.
 *
 * Only connections from a socket owned by Argus' own user are accepted (`peer-uid.ts`): another
 * local user finds the port but cannot use the camera through it.
 */
import { createServer, connect as tcpConnect, type AddressInfo, type Server, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type { Logger } from 'pino';
import { errorMessage } from '../core/errors.js';
import { redactUrl, scrub } from '../redact.js';
import { peerUid as procPeerUid, type Endpoint } from './peer-uid.js';
import { RtspAuthenticator, type Credentials } from './rtsp-auth.js';
import {
  header,
  headerValues,
  requestLine,
  rewriteUri,
  RtspSplitter,
  RtspWireError,
  statusCode,
  writeRequest,
  type RtspItem,
  type RtspMessage,
} from './rtsp-wire.js';
import type { FailureCause } from './stderr.js';

/** Why the relay could not serve a connection, as a camera's failure. */
export interface RelayFailure {
  cause: FailureCause;
  message: string;
}

export interface RtspRelayDeps {
  log: Logger;
  /** How long to wait for the camera to accept a connection (the camera's `ffmpeg.timeout_s`). */
  connectTimeoutMs: number;
  /** A connection could not be served: the camera refused the credentials, could not be reached, … */
  onFailure: (failure: RelayFailure) => void;
  /** The uid owning a connecting peer's socket (default: Linux's socket tables). */
  peerUid?: (peer: Endpoint, us: Endpoint) => Promise<number | undefined>;
  /** Our own uid (default: the process's). */
  uid?: number;
}

/** Whether ffmpeg must reach this camera through the relay: an RTSP URL with credentials or a secret. */
export function needsRelay(url: string, secrets: readonly string[]): boolean {
  const scheme = url.slice(0, url.indexOf(':')).toLowerCase();
  if (scheme !== 'rtsp' && scheme !== 'rtsps') return false;
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return false;
  }
  return u.username !== '' || u.password !== '' || scrub(url, secrets) !== url;
}

/** Percent-decoding that leaves a `%` not followed by two hex digits as it is. */
const decode = (s: string): string =>
  s.replace(/(%[0-9a-f]{2})+/gi, (m) => {
    try {
      return decodeURIComponent(m);
    } catch {
      return m;
    }
  });

/** Where a camera is, and what ffmpeg asks for instead. */
interface Target {
  /** The camera's URL as configured (resolved), for messages (redacted there). */
  url: string;
  tls: boolean;
  host: string;
  /** The name a TLS certificate is checked against. */
  servername: string;
  port: number;
  creds: Credentials | undefined;
  /** The URI prefix ffmpeg's requests carry, and the camera's in its place. */
  from: string;
  to: string;
}

/** The path ffmpeg is given when the camera's own path or query holds a secret. */
const NEUTRAL_PATH = '/camera';

/** The most requests kept for their answer on one connection (ffmpeg waits for each). */
const MAX_UNANSWERED = 32;

/** The most connections one relay serves at once: one ffmpeg uses one. */
const MAX_CONNECTIONS = 4;

/** What node's socket errors say, in the words ffmpeg uses (stderr.ts classifies them). */
function socketError(err: unknown): string {
  const code = (err as { code?: string }).code;
  const words: Record<string, string> = {
    ECONNREFUSED: 'Connection refused',
    ETIMEDOUT: 'Connection timed out',
    EHOSTUNREACH: 'No route to host',
    ENETUNREACH: 'Network is unreachable',
    ECONNRESET: 'Connection reset by peer',
    EPIPE: 'Broken pipe',
  };
  return (code && words[code]) ?? errorMessage(err);
}

/**
 * One camera's relay, started with the camera and stopped with it. `target` sets the camera (its
 * address may change between runs) and gives the URL ffmpeg opens.
 */
export class RtspRelay {
  private server: Server | undefined;
  private port = 0;
  private current: Target | undefined;
  private readonly sockets = new Set<Socket>();
  private readonly log: Logger;

  constructor(
    private readonly secrets: readonly string[],
    private readonly deps: RtspRelayDeps,
  ) {
    this.log = deps.log.child({ part: 'rtsp-relay' });
  }

  /** Listens on an ephemeral port of 127.0.0.1. */
  async start(): Promise<void> {
    const server = createServer({ pauseOnConnect: true }, (socket) => this.accept(socket));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    server.on('error', (err) => this.log.warn({ err: errorMessage(err) }, 'camera relay: listening failed'));
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
  }

  /** The URL ffmpeg opens to reach `cameraUrl` (an RTSP URL, credentials and all). */
  target(cameraUrl: string): string {
    const u = new URL(cameraUrl);
    const tls = u.protocol.toLowerCase() === 'rtsps:';
    const port = u.port ? Number(u.port) : tls ? 322 : 554;
    const host = u.hostname.replace(/^\[|\]$/g, '');
    const authority = `${u.hostname}:${port}`;
    // The path and query as written: the authority ends at the first `/`, `?` or `#` after `//`.
    const authorityAt = cameraUrl.indexOf('//') + 2;
    const restAt = cameraUrl.slice(authorityAt).search(/[/?#]/);
    const rest = restAt < 0 ? '' : cameraUrl.slice(authorityAt + restAt);
    const local = `rtsp://127.0.0.1:${this.port}`;
    const hidden = scrub(rest, this.secrets) !== rest;
    this.current = {
      url: cameraUrl,
      tls,
      host,
      servername: host,
      port,
      creds:
        u.username || u.password ? { user: decode(u.username), password: decode(u.password) } : undefined,
      from: hidden ? local + NEUTRAL_PATH : local,
      to: `${tls ? 'rtsps' : 'rtsp'}://${authority}${hidden ? rest : ''}`,
    };
    return hidden ? local + NEUTRAL_PATH : local + rest;
  }

  /** Stops listening and ends every connection. */
  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private accept(client: Socket): void {
    const target = this.current;
    if (!target || this.sockets.size >= MAX_CONNECTIONS) {
      client.destroy();
      return;
    }
    this.sockets.add(client);
    client.on('close', () => this.sockets.delete(client));
    client.on('error', () => undefined);
    const peer = { address: client.remoteAddress ?? '', port: client.remotePort ?? 0 };
    const us = { address: client.localAddress ?? '', port: client.localPort ?? 0 };
    const own = this.deps.uid ?? process.getuid?.();
    (this.deps.peerUid ?? procPeerUid)(peer, us).then(
      (uid) => {
        if (client.destroyed) return;
        if (uid === undefined || uid !== own) {
          this.log.warn(
            { peer: `${peer.address}:${peer.port}`, uid: uid ?? null },
            `camera relay: refused a connection from ${uid === undefined ? 'an unknown user' : `uid ${uid}`}, not Argus' own (uid ${own})`,
          );
          client.destroy();
          return;
        }
        new RelayConnection(client, target, this.deps, this.log);
      },
      (err: unknown) => {
        const message = `the camera relay cannot tell who connected to it (${errorMessage(err)}): refused`;
        this.log.warn(message);
        this.deps.onFailure({ cause: 'exited', message });
        client.destroy();
      },
    );
  }
}

/** A request sent to the camera, kept until its answer: resent when the camera asks for credentials. */
interface Sent {
  method: string;
  uri: string;
  headers: [string, string][];
  body: Buffer;
  version: string;
  tries: number;
}

/** One of ffmpeg's connections and the camera connection opened for it. */
class RelayConnection {
  private readonly camera: Socket;
  private readonly auth: RtspAuthenticator | undefined;
  private readonly sent = new Map<string, Sent>();
  private readonly fromClient = new RtspSplitter();
  private readonly fromCamera = new RtspSplitter();
  /** A direction whose bytes could not be read is passed on as it comes. */
  private rawUp = false;
  private rawDown = false;
  private connected = false;

  constructor(
    private readonly client: Socket,
    private readonly target: Target,
    private readonly deps: RtspRelayDeps,
    private readonly log: Logger,
  ) {
    this.auth = target.creds && new RtspAuthenticator(target.creds);
    const options = { host: target.host, port: target.port };
    this.camera = target.tls
      ? // As ffmpeg's own rtsps (tls_verify 0 by default): cameras' certificates are mostly self-signed.
        tlsConnect({ ...options, servername: target.servername, rejectUnauthorized: false })
      : tcpConnect(options);
    this.camera.setNoDelay(true);
    client.setNoDelay(true);
    this.camera.setTimeout(deps.connectTimeoutMs, () =>
      this.camera.destroy(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' })),
    );
    this.camera.once(target.tls ? 'secureConnect' : 'connect', () => {
      this.connected = true;
      this.camera.setTimeout(0);
      client.resume();
    });
    this.camera.on('error', (err) => {
      if (!this.connected) this.fail('unreachable', `${redactUrl(target.url)}: ${socketError(err)}`);
      else this.log.debug({ err: socketError(err) }, 'camera relay: the camera connection failed');
      client.destroy();
    });
    // The camera closing lets ffmpeg have what it sent last (a 401, a stream's end) before ffmpeg's
    // connection ends; ffmpeg's closing (or the relay's stop destroying it) ends the camera's.
    this.camera.on('close', () => client.end());
    client.on('close', () => this.camera.destroy());
    this.camera.on('data', (chunk: Buffer) => this.down(chunk));
    client.on('data', (chunk: Buffer) => this.up(chunk));
  }

  private fail(cause: FailureCause, message: string): void {
    this.log.warn({ cause }, `camera relay: ${message}`);
    this.deps.onFailure({ cause, message });
  }

  /** Writes to `to`; when its buffer is full, `from` waits for it to drain. */
  private write(to: Socket, from: Socket, data: Buffer): void {
    if (!to.write(data) && !from.isPaused()) {
      from.pause();
      to.once('drain', () => from.resume());
    }
  }

  private up(chunk: Buffer): void {
    if (this.rawUp) return this.write(this.camera, this.client, chunk);
    let items: RtspItem[];
    try {
      items = this.fromClient.push(chunk);
    } catch (err) {
      this.rawUp = true;
      this.log.warn(
        { err: errorMessage(err) },
        'camera relay: ffmpeg sent what is not RTSP; passing it on as it is',
      );
      return this.write(this.camera, this.client, chunk);
    }
    for (const item of items) {
      const req = item.kind === 'message' ? requestLine(item) : undefined;
      if (item.kind === 'data' || !req) this.write(this.camera, this.client, item.raw);
      else this.request(item, req.method, rewriteUri(req.uri, this.target.from, this.target.to), req.version);
    }
  }

  /** Sends a request to the camera with the camera's URI and, once it asked for them, credentials. */
  private request(m: RtspMessage, method: string, uri: string, version: string): void {
    const headers = m.headers.filter(([k]) => k.toLowerCase() !== 'authorization');
    const sent: Sent = { method, uri, headers, body: m.body, version, tries: 0 };
    const cseq = header(headers, 'cseq');
    if (cseq !== undefined && this.auth) {
      this.sent.set(cseq, sent);
      // Every request is answered; a camera that does not answer some is not let to grow this.
      if (this.sent.size > MAX_UNANSWERED) this.sent.delete(this.sent.keys().next().value!);
    }
    this.send(sent);
  }

  private send(s: Sent): void {
    const auth = this.auth?.header(s.method, s.uri, s.body);
    const headers: [string, string][] = auth ? [...s.headers, ['Authorization', auth]] : s.headers;
    this.write(this.camera, this.client, writeRequest(`${s.method} ${s.uri} ${s.version}`, headers, s.body));
  }

  private down(chunk: Buffer): void {
    if (this.rawDown) return this.write(this.client, this.camera, chunk);
    let items: RtspItem[];
    try {
      items = this.fromCamera.push(chunk);
    } catch (err) {
      this.rawDown = true;
      this.log.warn(
        { err: err instanceof RtspWireError ? err.message : errorMessage(err) },
        'camera relay: the camera sent what is not RTSP; passing it on as it is',
      );
      return this.write(this.client, this.camera, chunk);
    }
    for (const item of items) {
      if (item.kind === 'message' && this.answered(item)) continue;
      this.write(this.client, this.camera, item.raw);
    }
  }

  /**
   * A response to a request we sent: a 401 is answered with credentials and the request resent
   * (true: the 401 goes no further); a second 401, or one we cannot answer, goes on to ffmpeg,
   * which reports it, and is reported here as the camera refusing the credentials.
   */
  private answered(m: RtspMessage): boolean {
    const code = statusCode(m);
    const cseq = header(m.headers, 'cseq');
    if (code === undefined || cseq === undefined || !this.auth) return false;
    const s = this.sent.get(cseq);
    if (!s) return false;
    if (code !== 401) {
      this.sent.delete(cseq);
      return false;
    }
    const answerable = this.auth.challenged(headerValues(m.headers, 'www-authenticate'));
    // A first 401 asks for credentials; a later one with stale=true only for a fresh nonce.
    if (answerable && (s.tries === 0 || (this.auth.stale && s.tries < 3))) {
      s.tries++;
      this.send(s);
      return true;
    }
    this.sent.delete(cseq);
    const reason = answerable
      ? `the camera refused the credentials (${m.start.slice(m.start.indexOf(' ') + 1)} to ${this.auth.scheme === 'digest' ? 'Digest' : 'Basic'} authentication)`
      : `the camera asks for an authentication Argus cannot answer: ${
          headerValues(m.headers, 'www-authenticate')
            .map((v) => v.split(/\s/)[0])
            .join(', ') || 'no WWW-Authenticate'
        }`;
    this.fail('auth', `${redactUrl(this.target.url)}: ${reason}`);
    return false;
  }
}
