import { hostname } from 'node:os';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { errorMessage } from '../core/errors.js';
import { isoTime } from '../core/time.js';
import type { Config } from '../config/index.js';
import { InferenceService } from '../kserve/index.js';
import { listen, listeningUrl } from '../listen.js';
import { parseEventQuery } from './events.js';
import { EventRoutes } from './event-routes.js';
import { LIVE_PAGE, PageScripts } from './page.js';
import { MAX_WIDTH, MIN_WIDTH } from '../draw/index.js';
import { argusVersion } from '../version.js';
import { HttpError } from './errors.js';
import { asciiJson } from './geometry.js';
import { send } from './send.js';
import type { HttpSource } from './source.js';
import { readBody, readImageUpload } from './upload.js';
import { AllowedHosts, Proxies, type ChangeAccess } from './trust.js';
import { controlRoute, serveControl } from './control.js';

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
    this.access = { token: cfg.token, proxies: new Proxies(cfg.trusted_proxies ?? []) };
    this.hosts = new AllowedHosts([...(cfg.allowed_hosts ?? []), ...ownNames(cfg.public_url)]);
    this.events = new EventRoutes(source, this.access, log);
  }

  private readonly access: ChangeAccess;
  private readonly hosts: AllowedHosts;
  private readonly events: EventRoutes;

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
    // Origin form only (`/path`), as a client or a proxy sends it: `//x/api/…` would be read as
    // host x and path /api/…, past a proxy's rules for /api, and an absolute URL's host is not
    // the Host checked above.
    const target = req.url ?? '/';
    if (!target.startsWith('/') || target.startsWith('//'))
      throw new HttpError(400, 'the request target must be a path (/…)');
    const path = new URL(target, 'http://argus').pathname;
    if (this.inference && (path === '/v2' || path.startsWith('/v2/'))) return this.kserve(req, res, path);
    const control = controlRoute(path);
    if (control) return serveControl(req, res, control, () => this.source.control(), this.access);
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
    if (one) return this.events.delete(req, res, one[1]!);
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
    if (path === '/api/fleet') {
      const fleet = this.source.fleet?.();
      if (!fleet)
        return send(res, 404, 'text/plain; charset=utf-8', 'not in a fleet (the config has no fleet:)\n');
      res.setHeader('Cache-Control', 'no-store');
      return send(res, 200, 'application/json', JSON.stringify(fleet));
    }
    if (path === '/api/events') {
      const query = parseEventQuery(new URL(req.url ?? '/', 'http://argus').searchParams);
      return send(res, 200, 'application/json', JSON.stringify(this.source.events(query)));
    }
    const ev = /^\/api\/events\/([^/]+)\/snapshot\.jpg$/.exec(path);
    if (ev) return this.events.snapshot(req, res, ev[1]!);
    const clip = /^\/api\/events\/([^/]+)\/clip\.mp4$/.exec(path);
    if (clip) return this.events.clip(req, res, clip[1]!);
    const recording = /^\/api\/cameras\/([^/]+)\/recording\.mp4$/.exec(path);
    if (recording) return this.events.recording(req, res, recording[1]!);
    const index = /^\/api\/cameras\/([^/]+)\/recording$/.exec(path);
    if (index) return this.events.recordingIndex(req, res, index[1]!);
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
