import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { HttpError } from './errors.js';
import { parseRange } from './range.js';
import { send } from './send.js';
import type { ClipFile, HttpSource } from './source.js';
import { MAX_RANGE_MS } from '../events/index.js';
import { changerOf, type ChangeAccess } from './trust.js';

/** An id from a URL path: only ever looked up, never made into a file path. */
function decodeId(encoded: string): string {
  try {
    return decodeURIComponent(encoded);
  } catch {
    throw new HttpError(400, 'bad event id');
  }
}

/**
 * The routes of one event of the history (docs/http.md): its snapshot, its clip (with byte
 * ranges) and its DELETE. The server matches the path and hands over the id as the URL has it.
 */
export class EventRoutes {
  constructor(
    private readonly source: HttpSource,
    private readonly access: ChangeAccess,
    private readonly log: Logger,
  ) {}

  /** GET /api/events/<id>/snapshot.jpg[?crop=1]: ids are only looked up, never made into paths. */
  async snapshot(req: IncomingMessage, res: ServerResponse, encoded: string): Promise<void> {
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
    // Kept as a frame of the recording that is no longer there, or cannot be read now: why.
    if (!Buffer.isBuffer(jpeg)) return send(res, jpeg.status, 'text/plain; charset=utf-8', `${jpeg.error}\n`);
    res.setHeader('Cache-Control', 'no-cache');
    return send(res, 200, 'image/jpeg', jpeg);
  }

  /**
   * DELETE /api/events/<id>: removes the event with its snapshot and clip, from this machine or
   * with `http.token` (as PUT /api/control).
   */
  async delete(req: IncomingMessage, res: ServerResponse, encoded: string): Promise<void> {
    const id = decodeId(encoded);
    if (req.method !== 'DELETE') {
      res.setHeader('Allow', 'DELETE');
      return send(res, 405, 'text/plain; charset=utf-8', 'method not allowed\n');
    }
    const by = changerOf(req, res, this.access);
    if (!(await this.source.deleteEvent(id)))
      return send(res, 404, 'text/plain; charset=utf-8', 'no such event\n');
    this.log.info({ id, by }, 'event deleted');
    res.statusCode = 204;
    res.end();
  }

  /**
   * GET (or HEAD) /api/events/<id>/clip.mp4: the event's clip, made from its camera's recording
   * on the first request and cached (or its own file, written before issue 47), with byte ranges
   * (`Range: bytes=a-b`, one range: a video player seeks).
   */
  async clip(req: IncomingMessage, res: ServerResponse, encoded: string): Promise<void> {
    const id = decodeId(encoded);
    if (!this.source.hasEvent(id)) return send(res, 404, 'text/plain; charset=utf-8', 'no such event\n');
    return serveMp4(req, res, await this.source.eventClip(id));
  }

  /**
   * GET (or HEAD) /api/cameras/<camera>/recording.mp4?start=&end=: a range of a camera's kept
   * recording (ISO 8601 times or ms since the epoch; an hour at most), from the key frame at or
   * before `start`, as an MP4 made on request.
   */
  async recording(req: IncomingMessage, res: ServerResponse, encoded: string): Promise<void> {
    const camera = decodeCamera(encoded);
    if (!this.source.cameraNames().includes(camera))
      return send(res, 404, 'text/plain; charset=utf-8', 'no such camera\n');
    const params = windowParams(req);
    const from = timeParam(params, 'start');
    const to = timeParam(params, 'end');
    if (to <= from) throw new HttpError(400, 'end: must be after start');
    if (to - from > MAX_RANGE_MS)
      throw new HttpError(400, `end: at most ${MAX_RANGE_MS / 60_000} minutes after start`);
    const clip = await this.source.recording?.(camera, from, to);
    return serveMp4(req, res, clip ?? { status: 404, error: 'no recordings' });
  }

  /**
   * GET /api/cameras/<camera>/recording[?start=&end=]: what the camera's recording holds (the
   * stretches kept, each with why) and its events, in the window (each bound optional, as
   * recording.mp4 reads them; absent: no bound).
   */
  recordingIndex(req: IncomingMessage, res: ServerResponse, encoded: string): void {
    const camera = decodeCamera(encoded);
    if (!this.source.cameraNames().includes(camera))
      return send(res, 404, 'text/plain; charset=utf-8', 'no such camera\n');
    const params = windowParams(req);
    const from = params.has('start') ? timeParam(params, 'start') : undefined;
    const to = params.has('end') ? timeParam(params, 'end') : undefined;
    if (from !== undefined && to !== undefined && to <= from)
      throw new HttpError(400, 'end: must be after start');
    const index = this.source.recordingIndex?.(camera, from, to);
    if (!index) return send(res, 404, 'text/plain; charset=utf-8', 'no such camera\n');
    res.setHeader('Cache-Control', 'no-store');
    return send(res, 200, 'application/json', JSON.stringify(index));
  }
}

/** A camera's name from a URL path: only ever looked up among the cameras' names. */
function decodeCamera(encoded: string): string {
  try {
    return decodeURIComponent(encoded);
  } catch {
    throw new HttpError(400, 'bad camera name');
  }
}

/** The query of a time window (`start`, `end`); any other parameter is refused. */
function windowParams(req: IncomingMessage): URLSearchParams {
  const params = new URL(req.url ?? '/', 'http://argus').searchParams;
  for (const name of params.keys())
    if (name !== 'start' && name !== 'end')
      throw new HttpError(400, `${name}: unknown parameter (the parameters are start and end)`);
  return params;
}

/** A time parameter: ISO 8601, or ms since the epoch. */
function timeParam(params: URLSearchParams, name: string): number {
  const values = params.getAll(name);
  if (values.length !== 1)
    throw new HttpError(400, `${name}: give it once (an ISO 8601 time or ms since the epoch)`);
  const v = values[0]!;
  const t = /^\d{1,15}$/.test(v) ? Number(v) : Date.parse(v);
  if (!Number.isFinite(t))
    throw new HttpError(400, `${name}: ${JSON.stringify(v.slice(0, 40))} is not a time`);
  return t;
}

/** Serves an MP4 (or says why there is none), with byte ranges; HEAD answers its headers only. */
function serveMp4(req: IncomingMessage, res: ServerResponse, clip: ClipFile | undefined): void {
  if (!clip) return send(res, 404, 'text/plain; charset=utf-8', 'no clip for this event\n');
  if ('status' in clip) return send(res, clip.status, 'text/plain; charset=utf-8', `${clip.error}\n`);
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
