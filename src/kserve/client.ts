import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Clock } from '../core/clock.js';
import { redactUrl } from '../redact.js';
import { bodyHeaders, type EncodedBody } from './codec.js';

/**
 * The HTTP shell of the KServe v2 client: one request at a time, on keep-alive connections (at
 * most `maxSockets`), each within its deadline, its failure sorted into what a caller acts on.
 * Header values (tokens) go on the wire only: never into a message.
 */

/**
 * - `connect`: no answer (refused, reset, unknown host, TLS) — retried, the server may come back;
 * - `timeout`: no full answer within the deadline;
 * - `unavailable`: 502, 503 or 504 — retried;
 * - `rejected`: any other error status (the server's `{"error"}` in the message);
 * - `protocol`: an answer that breaks the protocol, or is larger than the request can need.
 */
export type FailureKind = 'connect' | 'timeout' | 'unavailable' | 'rejected' | 'protocol';

export class RemoteRequestError extends Error {
  constructor(
    readonly kind: FailureKind,
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

export interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export interface ClientOptions {
  url: string;
  headers: Record<string, string>;
  /** PEM of the CA that signs the server's certificate (else the system's). */
  ca: Buffer | undefined;
  maxSockets: number;
  timeoutMs: number;
}

/** Largest answer read when the caller gives no bound: health, metadata and configuration. */
export const MAX_METADATA_BYTES = 4 * 1024 * 1024;

/** The server's `{"error": "..."}`, shortened; or the start of whatever it sent. */
function errorText(body: Buffer): string {
  const text = body.subarray(0, 2000).toString('utf8');
  let message = text;
  try {
    const json = JSON.parse(text) as { error?: unknown };
    if (typeof json.error === 'string') message = json.error;
  } catch {
    // Not JSON: shown as it is.
  }
  message = message.replace(/\s+/g, ' ').trim();
  return message.length > 300 ? `${message.slice(0, 300)}…` : message;
}

export class KServeHttp {
  private readonly base: URL;
  private readonly agent: HttpAgent;
  private readonly send: typeof httpRequest;
  /** Where the server is, for messages: no password, no path beyond the server's. */
  readonly where: string;

  constructor(
    private readonly opts: ClientOptions,
    private readonly clock: Clock,
  ) {
    this.base = new URL(opts.url);
    const tls = this.base.protocol === 'https:';
    const agentOptions = { keepAlive: true, maxSockets: opts.maxSockets, maxFreeSockets: opts.maxSockets };
    this.agent = tls
      ? new HttpsAgent({ ...agentOptions, ...(opts.ca ? { ca: opts.ca } : {}) })
      : new HttpAgent(agentOptions);
    this.send = tls ? httpsRequest : httpRequest;
    this.where = redactUrl(`${this.base.protocol}//${this.base.host}`);
  }

  /**
   * One request: resolves with any HTTP answer, rejects with RemoteRequestError without one. An
   * answer over `maxBytes` (as its Content-Length says, or as it arrives) is refused (`protocol`)
   * and its connection dropped, never read whole.
   */
  request(
    method: 'GET' | 'POST',
    path: string,
    body?: EncodedBody,
    maxBytes = MAX_METADATA_BYTES,
  ): Promise<Answer> {
    const url = new URL(this.base.pathname.replace(/\/+$/, '') + path, this.base);
    const headers: Record<string, string | number> = {
      ...this.opts.headers,
      ...(body ? { ...bodyHeaders(body), 'Content-Length': body.length } : {}),
    };
    const what = `${method} ${this.where}${url.pathname}`;
    return new Promise<Answer>((resolve, reject) => {
      let settled = false;
      const fail = (err: RemoteRequestError): void => {
        if (settled) return;
        settled = true;
        this.clock.clearTimeout(deadline);
        req.destroy();
        reject(err);
      };
      const tooLarge = (): RemoteRequestError =>
        new RemoteRequestError('protocol', `${what}: answer over ${maxBytes} bytes, more than it can need`);
      const req = this.send(url, { method, headers, agent: this.agent }, (res) => {
        if (Number(res.headers['content-length']) > maxBytes) return fail(tooLarge());
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          if (settled) return;
          size += c.length;
          if (size > maxBytes) fail(tooLarge());
          else chunks.push(c);
        });
        res.on('error', (err) => fail(new RemoteRequestError('connect', `${what}: ${err.message}`)));
        res.on('end', () => {
          if (settled) return;
          settled = true;
          this.clock.clearTimeout(deadline);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks, size) });
        });
      });
      const deadline = this.clock.setTimeout(
        () => fail(new RemoteRequestError('timeout', `${what}: no answer within ${this.opts.timeoutMs} ms`)),
        this.opts.timeoutMs,
      );
      req.on('error', (err: NodeJS.ErrnoException) =>
        fail(
          new RemoteRequestError(
            'connect',
            `${what}: ${err.code ?? err.message}${err.code && err.message && !err.message.includes(err.code) ? ` (${err.message})` : ''}`,
          ),
        ),
      );
      if (body) for (const c of body.chunks) req.write(c);
      req.end();
    });
  }

  /**
   * Turns an answer's error status into RemoteRequestError: 502/503/504 `unavailable`, the rest
   * `rejected`. Returns the answer when it is a success.
   */
  static check(answer: Answer, what: string): Answer {
    if (answer.status >= 200 && answer.status < 300) return answer;
    const kind = [502, 503, 504].includes(answer.status) ? 'unavailable' : 'rejected';
    const text = errorText(answer.body);
    throw new RemoteRequestError(
      kind,
      `${what}: HTTP ${answer.status}${text ? `: ${text}` : ''}`,
      answer.status,
    );
  }

  /** Closes the kept connections (requests still running fail). */
  close(): void {
    this.agent.destroy();
  }
}
