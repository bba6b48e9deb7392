/**
 * RTSP on the wire, pure: a TCP stream cut into its messages (requests and responses: a start
 * line, headers, a `Content-Length` body) and interleaved binary frames (`$`, channel, 16-bit
 * length, data: RTP and RTCP over the RTSP connection, RFC 2326 §10.12), and a request written
 * back after the relay changed its URI or headers.
 */

export interface RtspMessage {
  kind: 'message';
  /** The start line: `DESCRIBE rtsp://… RTSP/1.0` or `RTSP/1.0 401 Unauthorized`. */
  start: string;
  /** Headers in order, names as sent. */
  headers: [string, string][];
  body: Buffer;
  /** The message's bytes as received. */
  raw: Buffer;
}

export interface InterleavedFrame {
  kind: 'data';
  /** The frame's bytes as received, `$` header included. */
  raw: Buffer;
}

export type RtspItem = RtspMessage | InterleavedFrame;

/** The longest start line and headers accepted: a peer sending more is not speaking RTSP. */
export const MAX_HEAD_BYTES = 64 * 1024;
/** The largest message body accepted (an SDP is a few kilobytes). */
export const MAX_BODY_BYTES = 1024 * 1024;

export class RtspWireError extends Error {}

const CRLFCRLF = Buffer.from('\r\n\r\n');
const DOLLAR = 0x24;

/**
 * Cuts a byte stream into messages and interleaved frames. `push` returns the items completed by
 * a chunk; it throws `RtspWireError` on bytes that are neither (the stream cannot be read on).
 */
export class RtspSplitter {
  private buf: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): RtspItem[] {
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    const items: RtspItem[] = [];
    for (;;) {
      const item = this.next();
      if (!item) break;
      items.push(item);
    }
    return items;
  }

  /** Bytes received that do not yet make a whole item. */
  get pending(): number {
    return this.buf.length;
  }

  private take(n: number): Buffer {
    const out = this.buf.subarray(0, n);
    this.buf = this.buf.subarray(n);
    return out;
  }

  private next(): RtspItem | undefined {
    const b = this.buf;
    if (b.length === 0) return undefined;
    if (b[0] === DOLLAR) {
      if (b.length < 4) return undefined;
      const size = 4 + b.readUInt16BE(2);
      return b.length < size ? undefined : { kind: 'data', raw: this.take(size) };
    }
    const end = b.indexOf(CRLFCRLF);
    if (end < 0) {
      if (b.length > MAX_HEAD_BYTES)
        throw new RtspWireError(`a message head longer than ${MAX_HEAD_BYTES} bytes`);
      if (!/[A-Z_]/.test(String.fromCharCode(b[0]!))) throw new RtspWireError(unreadable(b));
      return undefined;
    }
    const lines = b.subarray(0, end).toString('latin1').split('\r\n');
    const start = lines[0]!;
    if (!/^(RTSP\/\d\.\d \d{3}( .*)?|[A-Z_]+ \S+ RTSP\/\d\.\d)$/.test(start))
      throw new RtspWireError(unreadable(b));
    const headers: [string, string][] = [];
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      if (colon <= 0)
        throw new RtspWireError(`a header line without a name: ${JSON.stringify(line.slice(0, 80))}`);
      headers.push([line.slice(0, colon).trim(), line.slice(colon + 1).trim()]);
    }
    const length = Number(header(headers, 'content-length') ?? '0');
    if (!Number.isInteger(length) || length < 0 || length > MAX_BODY_BYTES)
      throw new RtspWireError(`a Content-Length that cannot be: ${header(headers, 'content-length')}`);
    const total = end + 4 + length;
    if (b.length < total) return undefined;
    const raw = this.take(total);
    return { kind: 'message', start, headers, body: raw.subarray(end + 4), raw };
  }
}

function unreadable(b: Buffer): string {
  return `bytes that are neither RTSP nor an interleaved frame: ${JSON.stringify(b.subarray(0, 24).toString('latin1'))}`;
}

/** The first value of a header (names compared without case). */
export function header(headers: readonly [string, string][], name: string): string | undefined {
  const n = name.toLowerCase();
  return headers.find(([k]) => k.toLowerCase() === n)?.[1];
}

/** Every value of a header, in order. */
export function headerValues(headers: readonly [string, string][], name: string): string[] {
  const n = name.toLowerCase();
  return headers.filter(([k]) => k.toLowerCase() === n).map(([, v]) => v);
}

/** A request's method and URI; undefined for a response. */
export function requestLine(m: RtspMessage): { method: string; uri: string; version: string } | undefined {
  const parts = m.start.split(' ');
  if (parts[0]!.startsWith('RTSP/')) return undefined;
  return { method: parts[0]!, uri: parts[1]!, version: parts[2]! };
}

/** A response's status code; undefined for a request. */
export function statusCode(m: RtspMessage): number | undefined {
  return m.start.startsWith('RTSP/') ? Number(m.start.split(' ')[1]) : undefined;
}

/** A request's bytes: its start line, its headers, its body (Content-Length as the body's). */
export function writeRequest(start: string, headers: readonly [string, string][], body: Buffer): Buffer {
  const head = [start, ...headers.map(([k, v]) => `${k}: ${v}`)].join('\r\n');
  return Buffer.concat([Buffer.from(`${head}\r\n\r\n`, 'latin1'), body]);
}

/**
 * The URI a request should carry to the camera: one starting with `from` (the address ffmpeg was
 * given) starts with `to` (the camera's, without credentials) instead; any other is left as it is
 * (ffmpeg sends later requests to the Content-Base the camera answered, which is the camera's own).
 */
export function rewriteUri(uri: string, from: string, to: string): string {
  if (uri === from) return to;
  if (uri.startsWith(from) && /^[/?#]/.test(uri.slice(from.length)))
    return to.endsWith('/') && uri[from.length] === '/'
      ? to + uri.slice(from.length + 1)
      : to + uri.slice(from.length);
  return uri;
}
