import type { FileHandle } from 'node:fs/promises';
import { hostname } from 'node:os';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { errorMessage } from '../core/errors.js';
import { isoTime } from '../core/time.js';
import type { Config } from '../config/index.js';
import { InferenceService, type ServedModel } from '../kserve/index.js';
import { listen, listeningUrl } from '../listen.js';
import type { EventQuery, Snapshot } from '../events/index.js';
import { parseEventQuery } from './events.js';
import { LIVE_PAGE, PageScripts } from './page.js';
import { MAX_WIDTH, MIN_WIDTH } from '../draw/index.js';
import { argusVersion } from '../version.js';
import { HttpError } from './errors.js';
import { asciiJson, type BoxCounts } from './geometry.js';
import { readBody, readImageUpload } from './upload.js';
import { AllowedHosts, mayChange, Proxies } from './trust.js';
import {
  changeRequest,
  controlRoute,
  MAX_CONTROL_BODY,
  type ControlApi,
  type ControlRoute,
} from './control.js';

export interface Health {
  ok: boolean;
  /** All models together (`provider`: those in use, comma-separated). */
  detector: { ready_workers: number; provider: string | null };
  models: Record<string, { ready_workers: number; provider: string | null }>;
  mqtt: { connected: boolean; last_error: { cause: string; message: string } | null };
  cameras: Record<string, string>;
  /** Per camera, the parts of its events path that fail now (contained: the others go on). */
  event_faults: Record<string, { part: string; count: number; message: string; last: string }[]>;
  /** Each clip-keeping camera's ring of recent video: whether its directory can be used, and why not. */
  rings?: Record<string, { ok: boolean; error: string | null }>;
}

/** A camera's latest frame as latest.jpg answers it: the JPEG, its time, and the boxes drawn on it, counted. */
export interface LatestFrame {
  jpeg: Buffer;
  ts: number;
  boxes: BoxCounts;
}

/** What the HTTP API reads from the running daemon. */
export interface HttpSource {
  health(): Health;
  cameras(): unknown[];
  /** Names of the configured cameras (the only names a URL may address). */
  cameraNames(): string[];
  /** Names of the models running. */
  modelNames(): string[];
  /** The camera's latest frame with its detections drawn, scaled to `width` when given. */
  latestJpeg(camera: string, width?: number): Promise<LatestFrame | undefined>;
  metrics(): Promise<{ contentType: string; body: string }>;
  /** Runs one image through the scheduler, on `model`; rejects with HttpError. */
  detect(image: Buffer, name: string, model: string): Promise<unknown>;
  /** The event history's events that match, newest first. */
  events(query: EventQuery): unknown[];
  /** Whether the history holds an event of that id. */
  hasEvent(id: string): boolean;
  /** An event's snapshot (the frame with its box drawn, or the crop); undefined without one. */
  eventSnapshot(id: string, which: keyof Snapshot): Promise<Buffer | undefined>;
  /** An event's clip, opened, with its size (the caller closes it); undefined without one. */
  eventClip(id: string): Promise<{ file: FileHandle; size: number } | undefined>;
  /** Deletes an event with its snapshot and clip; false when there is no such event. */
  deleteEvent(id: string): Promise<boolean>;
  /** The models served over KServe v2 (`http.inference`). */
  servedModels(): readonly ServedModel[];
  /** The runtime settings (GET and PUT /api/control); undefined where none run (tools). */
  control(): ControlApi | undefined;
}

/**
 * Health, metrics, the cameras, the live page, the event history and image detection, over plain node:http
 * (docs/http.md), and with `http.inference` the KServe v2 endpoints under /v2. Binds to
 * 127.0.0.1 unless told otherwise. Every route is a GET but POST /api/detect and the KServe
 * inference, whose bodies are bounded by `http.max_body_mb`, and the PUTs of /api/control, which
 * change runtime settings: only from this machine or with `http.token` (control.ts).
 */
export class HttpServer {
  private server: Server | undefined;
  private inference: InferenceService | undefined;
  private scripts: PageScripts | undefined;

  constructor(
    private readonly cfg: Pick<Config['http'], 'host' | 'port' | 'max_body_mb' | 'inference' | 'token'> &
      Partial<Pick<Config['http'], 'public_url' | 'trusted_proxies' | 'allowed_hosts'>>,
    private readonly source: HttpSource,
    private readonly log: Logger,
    /** Where the live page's modules are (dist/page/ unless told; tests give their own). */
    private readonly pageDir?: URL,
  ) {
    this.proxies = new Proxies(cfg.trusted_proxies ?? []);
    this.hosts = new AllowedHosts([...(cfg.allowed_hosts ?? []), ...ownNames(cfg.public_url)]);
  }

  private readonly proxies: Proxies;
  private readonly hosts: AllowedHosts;

  private get maxBodyBytes(): number {
    return Math.round(this.cfg.max_body_mb * 1024 * 1024);
  }

  get url(): string {
    return listeningUrl('http', this.server, this.cfg.host, this.cfg.port);
  }

  async start(): Promise<void> {
    this.scripts = await PageScripts.load(this.pageDir);
    if (this.scripts.missing) this.log.warn(this.scripts.missing);
    if (this.cfg.inference)
      this.inference = new InferenceService(() => this.source.servedModels(), {
        version: argusVersion(),
        maxBodyBytes: this.maxBodyBytes,
      });
    const server = createServer((req, res) => {
      this.handle(req, res).catch((err: unknown) => {
        if (err instanceof HttpError) {
          // A body refused unread (or half read) is read and dropped, so the client can finish
          // sending and read the answer (a socket closed under a sending client loses the
          // answer); Node's requestTimeout bounds it. A body already read is not touched.
          req.resume();
          return send(res, err.status, 'application/json', JSON.stringify({ error: err.message }));
        }
        this.log.warn({ url: req.url, err: errorMessage(err) }, 'HTTP request failed');
        if (!res.headersSent) send(res, 500, 'text/plain; charset=utf-8', 'internal error\n');
        else res.end();
      });
    });
    this.server = server;
    await listen(server, this.cfg.host, this.cfg.port, 'HTTP server');
    this.log.info({ url: this.url }, 'HTTP server listening');
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // Every route, reads too: a page whose name was pointed at this machine (DNS rebinding) gets
    // nothing, not the events, frames, clips or metrics.
    const foreign = this.hosts.foreign(req.headers);
    if (foreign !== undefined)
      throw new HttpError(
        403,
        `Host '${foreign.slice(0, 100)}' is not a name of this server (add it to http.allowed_hosts, or set http.public_url)`,
      );
    const path = new URL(req.url ?? '/', 'http://argus').pathname;
    if (this.inference && (path === '/v2' || path.startsWith('/v2/'))) return this.kserve(req, res, path);
    const control = controlRoute(path);
    if (control) return this.control(req, res, control);
    if (path === '/api/detect') {
      if (req.method !== 'POST') {
        res.setHeader('Allow', 'POST');
        return send(res, 405, 'text/plain; charset=utf-8', 'method not allowed\n');
      }
      const model = this.detectModel(req);
      const upload = await this.body(req, readImageUpload);
      const answer = await this.source.detect(upload.data, upload.name, model);
      return send(res, 200, 'application/json', JSON.stringify(answer));
    }
    const one = /^\/api\/events\/([^/]+)$/.exec(path);
    if (one) return this.eventRoute(req, res, one[1]!);
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      return send(res, 405, 'text/plain; charset=utf-8', 'method not allowed\n');
    }
    if (path === '/healthz') {
      const h = this.source.health();
      return send(res, h.ok ? 200 : 503, 'application/json', JSON.stringify(h));
    }
    if (path === '/metrics') {
      const m = await this.source.metrics();
      return send(res, 200, m.contentType, m.body);
    }
    if (path === '/api/cameras')
      return send(res, 200, 'application/json', JSON.stringify(this.source.cameras()));
    if (path === '/api/events') {
      const query = parseEventQuery(new URL(req.url ?? '/', 'http://argus').searchParams);
      return send(res, 200, 'application/json', JSON.stringify(this.source.events(query)));
    }
    const ev = /^\/api\/events\/([^/]+)\/snapshot\.jpg$/.exec(path);
    if (ev) return this.eventSnapshot(req, res, ev[1]!);
    const clip = /^\/api\/events\/([^/]+)\/clip\.mp4$/.exec(path);
    if (clip) return this.eventClip(req, res, clip[1]!);
    if (path === '/') return send(res, 200, 'text/html; charset=utf-8', LIVE_PAGE);
    const script = /^\/page\/([^/]+)$/.exec(path);
    if (script) return this.pageScript(res, script[1]!);
    const m = /^\/api\/cameras\/([^/]+)\/latest\.jpg$/.exec(path);
    if (m) {
      let name: string;
      try {
        name = decodeURIComponent(m[1]!);
      } catch {
        return send(res, 400, 'text/plain; charset=utf-8', 'bad camera name\n');
      }
      // Only configured names are looked up: nothing from the URL reaches a file path.
      if (!this.source.cameraNames().includes(name))
        return send(res, 404, 'text/plain; charset=utf-8', 'no such camera\n');
      const frame = await this.source.latestJpeg(name, displayWidth(req));
      if (!frame) return send(res, 404, 'text/plain; charset=utf-8', 'no analysed frame yet\n');
      res.setHeader('Cache-Control', 'no-store');
      // What is drawn on this very JPEG: the page's count chips agree with its boxes.
      res.setHeader('X-Argus-Frame-Ts', isoTime(frame.ts));
      res.setHeader('X-Argus-Boxes', asciiJson(frame.boxes));
      return send(res, 200, 'image/jpeg', frame.jpeg);
    }
    return send(res, 404, 'text/plain; charset=utf-8', 'not found\n');
  }

  /** GET /page/<module>.js: one of the live page's modules, by its file name only. */
  private pageScript(res: ServerResponse, name: string): void {
    const source = this.scripts?.get(name);
    if (!source) {
      const unbuilt = name === 'main.js' && this.scripts?.missing !== undefined;
      const why = unbuilt ? "the live page's script is not built on this server (see its log)" : 'not found';
      return send(res, 404, 'text/plain; charset=utf-8', `${why}\n`);
    }
    res.setHeader('Cache-Control', 'no-cache');
    return send(res, 200, 'text/javascript; charset=utf-8', source);
  }

  /**
   * GET /api/control, and the PUTs that change a setting, the mode, or reset a line: each is
   * checked (who asks, then the body) before Control sees it, and answered with the settings as
   * they are now.
   */
  private async control(req: IncomingMessage, res: ServerResponse, route: ControlRoute): Promise<void> {
    const allow = route.kind === 'view' ? 'GET, HEAD' : 'PUT';
    if (!allow.split(', ').includes(req.method ?? '')) {
      res.setHeader('Allow', allow);
      return send(res, 405, 'text/plain; charset=utf-8', 'method not allowed\n');
    }
    const control = this.source.control();
    if (!control) throw new HttpError(404, 'no runtime settings in this process');
    if (route.kind !== 'view') {
      if (!control.enabled) throw new HttpError(403, 'control is off (control.enabled: false)');
      const who = mayChange(req.socket.remoteAddress, req.headers, this.cfg.token, this.proxies);
      if (!who.ok) {
        // Says that a token would be heard (the page asks for it then).
        if (this.cfg.token !== undefined) res.setHeader('WWW-Authenticate', 'Bearer realm="argus"');
        throw new HttpError(403, who.error);
      }
      const outcome = await control.change(
        changeRequest(route, await readBody(req, MAX_CONTROL_BODY)),
        who.by,
      );
      if (!outcome.ok) throw new HttpError(outcome.status, outcome.error);
    }
    res.setHeader('Cache-Control', 'no-store');
    return send(res, 200, 'application/json', JSON.stringify(control.view()));
  }

  /** POST /api/detect[?model=NAME]: the model, checked before the body is read (`default` if not given). */
  private detectModel(req: IncomingMessage): string {
    const params = new URL(req.url ?? '/', 'http://argus').searchParams;
    let problem: string | undefined;
    for (const name of params.keys())
      if (name !== 'model') problem = `${name}: unknown parameter (the one parameter is model)`;
    const given = params.getAll('model');
    const model = given[0] ?? 'default';
    const names = this.source.modelNames();
    if (given.length > 1) problem = 'model: give it once';
    else if (!problem && !names.includes(model))
      problem = `model: there is no model named '${model}' (the models are ${names.join(', ')})`;
    if (problem) throw new HttpError(400, problem);
    return model;
  }

  /** A request's body as `read` reads it, at most `http.max_body_mb`; refused with HttpError. */
  private async body<T>(
    req: IncomingMessage,
    read: (req: IncomingMessage, max: number) => Promise<T>,
  ): Promise<T> {
    return read(req, this.maxBodyBytes);
  }

  /** The KServe v2 endpoints: a POST's body is read (bounded) before the service sees it. */
  private async kserve(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const body = req.method === 'POST' ? await this.body(req, readBody) : undefined;
    const answer = await this.inference!.handle({
      method: req.method ?? 'GET',
      path,
      headers: req.headers,
      body,
    });
    for (const [k, v] of Object.entries(answer.headers)) res.setHeader(k, v);
    res.statusCode = answer.status;
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.end(req.method === 'HEAD' ? undefined : answer.body);
  }

  /** GET /api/events/<id>/snapshot.jpg[?crop=1]: ids are only looked up, never made into paths. */
  private async eventSnapshot(req: IncomingMessage, res: ServerResponse, encoded: string): Promise<void> {
    let id: string;
    try {
      id = decodeURIComponent(encoded);
    } catch {
      return send(res, 400, 'text/plain; charset=utf-8', 'bad event id\n');
    }
    const params = new URL(req.url ?? '/', 'http://argus').searchParams;
    for (const name of params.keys())
      if (name !== 'crop') throw new HttpError(400, `${name}: unknown parameter (the one parameter is crop)`);
    const crop = params.getAll('crop');
    if (crop.length > 1 || (crop[0] !== undefined && crop[0] !== '0' && crop[0] !== '1'))
      throw new HttpError(400, 'crop: must be 0 or 1');
    if (!this.source.hasEvent(id)) return send(res, 404, 'text/plain; charset=utf-8', 'no such event\n');
    const jpeg = await this.source.eventSnapshot(id, crop[0] === '1' ? 'crop' : 'full');
    if (!jpeg) return send(res, 404, 'text/plain; charset=utf-8', 'no snapshot for this event\n');
    res.setHeader('Cache-Control', 'no-cache');
    return send(res, 200, 'image/jpeg', jpeg);
  }

  /**
   * DELETE /api/events/<id>: removes the event with its snapshot and clip, from this machine or
   * with `http.token` (as PUT /api/control).
   */
  private async eventRoute(req: IncomingMessage, res: ServerResponse, encoded: string): Promise<void> {
    const id = decodeId(encoded);
    if (req.method !== 'DELETE') {
      res.setHeader('Allow', 'DELETE');
      return send(res, 405, 'text/plain; charset=utf-8', 'method not allowed\n');
    }
    const who = mayChange(req.socket.remoteAddress, req.headers, this.cfg.token, this.proxies);
    if (!who.ok) {
      if (this.cfg.token !== undefined) res.setHeader('WWW-Authenticate', 'Bearer realm="argus"');
      throw new HttpError(403, who.error);
    }
    if (!(await this.source.deleteEvent(id)))
      return send(res, 404, 'text/plain; charset=utf-8', 'no such event\n');
    this.log.info({ id, by: who.by }, 'event deleted');
    res.statusCode = 204;
    res.end();
  }

  /**
   * GET /api/events/<id>/clip.mp4: the event's clip, with byte ranges (`Range: bytes=a-b`, one
   * range: a video player seeks), streamed from the file.
   */
  private async eventClip(req: IncomingMessage, res: ServerResponse, encoded: string): Promise<void> {
    const id = decodeId(encoded);
    if (!this.source.hasEvent(id)) return send(res, 404, 'text/plain; charset=utf-8', 'no such event\n');
    const clip = await this.source.eventClip(id);
    if (!clip) return send(res, 404, 'text/plain; charset=utf-8', 'no clip for this event\n');
    const { file, size } = clip;
    let closed = false;
    const close = (): void => {
      if (closed) return;
      closed = true;
      void file.close().catch(() => undefined);
    };
    try {
      const range = parseRange(req.headers.range, size);
      res.setHeader('Accept-Ranges', 'bytes');
      res.setHeader('Cache-Control', 'no-cache');
      res.setHeader('Content-Type', 'video/mp4');
      res.setHeader('X-Content-Type-Options', 'nosniff');
      if (range === 'unsatisfiable') {
        res.setHeader('Content-Range', `bytes */${size}`);
        close();
        return send(res, 416, 'text/plain; charset=utf-8', 'range not satisfiable\n');
      }
      const [start, end] = range ?? [0, size - 1];
      res.statusCode = range ? 206 : 200;
      if (range) res.setHeader('Content-Range', `bytes ${start}-${end}/${size}`);
      res.setHeader('Content-Length', String(Math.max(0, end - start + 1)));
      if (req.method === 'HEAD' || size === 0) {
        close();
        res.end();
        return;
      }
      const stream = file.createReadStream({ start, end, autoClose: false });
      stream.on('error', () => res.destroy());
      stream.on('close', close);
      res.on('close', () => {
        stream.destroy();
        close();
      });
      stream.pipe(res);
    } catch (err) {
      close();
      throw err;
    }
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  }
}

/** This machine's own names, and public_url's: a request naming them is for this server. */
function ownNames(publicUrl: string | undefined): string[] {
  const names = [hostname(), `${hostname()}.local`];
  if (publicUrl !== undefined) names.push(new URL(publicUrl).hostname.replace(/^\[|\]$/g, ''));
  return names.filter((n) => /^[A-Za-z0-9._-]+$/.test(n) || n.includes(':'));
}

/**
 * latest.jpg's `width`: the width the image is shown at, so its labels are drawn at a size that
 * reads there. Other parameters (a cache-buster) are ignored.
 */
function displayWidth(req: IncomingMessage): number | undefined {
  const width = new URL(req.url ?? '/', 'http://argus').searchParams.get('width');
  if (width === null) return undefined;
  const n = /^\d{1,5}$/.test(width) ? Number(width) : NaN;
  if (!(n >= MIN_WIDTH && n <= MAX_WIDTH))
    throw new HttpError(400, `width: must be a whole number of pixels from ${MIN_WIDTH} to ${MAX_WIDTH}`);
  return n;
}

/** An id from a URL path: only ever looked up, never made into a file path. */
function decodeId(encoded: string): string {
  try {
    return decodeURIComponent(encoded);
  } catch {
    throw new HttpError(400, 'bad event id');
  }
}

/**
 * A request's `Range` (RFC 9110 §14.1–14.2) as the first and last byte of the one range served;
 * undefined for the whole file: no `Range`, one this does not read (another unit, a range-spec
 * that is invalid, such as `5-2` or `0 - 5`: §14.2 lets a server ignore it), several ranges of
 * which one is satisfiable (the whole file is a valid answer to those), or a suffix range of a
 * zero-length file: §14.1.1 counts `bytes=-5` as satisfiable there, but no `Content-Range` can name
 * zero bytes, so the Range is ignored and the empty file sent (200); 'unsatisfiable' (416, its
 * Content-Range naming the size) when no range-spec is: each starts at or past the end, or is `-0`. The unit is read
 * case-insensitively; the list's elements may have spaces around their commas, and empty ones.
 */
export function parseRange(
  header: string | undefined,
  size: number,
): [number, number] | 'unsatisfiable' | undefined {
  if (!header) return undefined;
  const m = /^bytes=(.*)$/i.exec(header.trim());
  if (!m) return undefined;
  const specs = m[1]!
    .split(',')
    .map((x) => x.trim())
    .filter((x) => x !== '');
  if (specs.length === 0) return undefined;
  const ranges: ([number, number] | 'unsatisfiable' | 'whole')[] = [];
  for (const spec of specs) {
    const r = rangeSpec(spec, size);
    if (r === undefined) return undefined; // one invalid spec: the header is ignored
    ranges.push(r);
  }
  if (ranges.every((r) => r === 'unsatisfiable')) return 'unsatisfiable';
  if (ranges.length > 1) return undefined;
  const [only] = ranges;
  return Array.isArray(only) ? only : undefined;
}

/** One range-spec: its bytes, 'unsatisfiable', 'whole' (satisfiable, but no bytes to name), or undefined when invalid. */
function rangeSpec(spec: string, size: number): [number, number] | 'unsatisfiable' | 'whole' | undefined {
  const m = /^(\d*)-(\d*)$/.exec(spec);
  if (!m || (m[1] === '' && m[2] === '')) return undefined;
  if (m[1] === '') {
    const n = Number(m[2]);
    if (n === 0) return 'unsatisfiable';
    if (size === 0) return 'whole';
    return [Math.max(0, size - n), size - 1];
  }
  const start = Number(m[1]);
  if (m[2] !== '' && Number(m[2]) < start) return undefined;
  if (start >= size) return 'unsatisfiable';
  return [start, m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1)];
}

function send(res: ServerResponse, status: number, type: string, body: string | Buffer): void {
  res.statusCode = status;
  res.setHeader('Content-Type', type);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.end(body);
}
