import { createHash, timingSafeEqual } from 'node:crypto';
import { BlockList, isIP } from 'node:net';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { isLoopback, plainAddress as plain } from '../addresses.js';
import { HttpError } from './errors.js';

/**
 * Who a request comes from and which names it may use, decided from the connection and the
 * config (`http.trusted_proxies`, `http.allowed_hosts`), never from what a proxy may have left
 * out: a proxy on this machine connects from loopback, and nginx's minimal `proxy_pass` adds no
 * header saying so.
 */

/** Headers a reverse proxy adds (any one of them: the request came through a proxy). */
export const PROXY_HEADERS = [
  'forwarded',
  'x-forwarded-for',
  'x-forwarded-host',
  'x-forwarded-proto',
  'x-forwarded-port',
  'x-forwarded-server',
  'x-forwarded-prefix',
  'x-real-ip',
  'x-original-forwarded-for',
  'via',
] as const;

/** The addresses of `http.trusted_proxies`, to test a connection against. */
export class Proxies {
  private readonly list = new BlockList();
  readonly empty: boolean;

  constructor(entries: readonly string[]) {
    this.empty = entries.length === 0;
    for (const entry of entries) {
      const [ip, bits] = entry.split('/') as [string, string | undefined];
      const type = isIP(ip) === 6 ? 'ipv6' : 'ipv4';
      if (bits === undefined) this.list.addAddress(ip, type);
      else this.list.addSubnet(ip, Number(bits), type);
    }
  }

  has(address: string | undefined): boolean {
    if (address === undefined || this.empty) return false;
    const a = plain(address);
    const type = isIP(a) === 6 ? 'ipv6' : 'ipv4';
    return isIP(a) !== 0 && this.list.check(a, type);
  }
}

/** The two strings are equal, found out in a time that does not depend on where they differ. */
function sameSecret(given: string, secret: string): boolean {
  const digest = (s: string): Buffer => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(given), digest(secret));
}

/**
 * The addresses a proxy says the request passed through, nearest last (X-Forwarded-For's order),
 * only those that are IP addresses (a value that is not is left out of the log). A trusted proxy
 * must set X-Forwarded-For itself (nginx: `$proxy_add_x_forwarded_for`): one that sets only
 * X-Real-IP passes the client's own X-Forwarded-For on, and the log names what the client says.
 */
function forwardedChain(headers: IncomingHttpHeaders): string[] {
  return rawChain(headers).filter((a) => isIP(plain(a)) !== 0);
}

function rawChain(headers: IncomingHttpHeaders): string[] {
  const xff = headers['x-forwarded-for'];
  if (xff !== undefined)
    return (Array.isArray(xff) ? xff.join(',') : xff)
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
  const forwarded = headers.forwarded;
  if (forwarded !== undefined)
    return [...forwarded.matchAll(/for=("?)\[?([^\]";,]+)\]?(?::\d+)?\1/gi)].map((m) =>
      // An unquoted IPv4 with a port (`for=192.0.2.1:4711`, against RFC 7239) loses its port.
      m[2]!.replace(/^(\d{1,3}(?:\.\d{1,3}){3}):\d+$/, '$1'),
    );
  const real = headers['x-real-ip'];
  return typeof real === 'string' ? real.split(',').map((s) => s.trim()) : [];
}

/** Where a request comes from, as far as the connection and the trusted proxies tell. */
export interface Client {
  /** The client's address: the socket's, or what trusted proxies say. */
  address: string;
  /** It came through a proxy: from a trusted proxy, or carrying a proxy's headers. */
  proxied: boolean;
}

/**
 * The client of a request. Forwarded headers are believed only from `http.trusted_proxies`:
 * walking X-Forwarded-For (or `Forwarded: for=`, or X-Real-IP) from the nearest hop back, the
 * first address that is not a trusted proxy is the client. From anyone else they are not
 * believed, but they still mark the request as proxied.
 */
export function clientOf(socket: string | undefined, headers: IncomingHttpHeaders, proxies: Proxies): Client {
  const address = socket === undefined ? 'unknown' : plain(socket);
  const marked = PROXY_HEADERS.some((h) => headers[h] !== undefined);
  if (!proxies.has(socket)) return { address, proxied: marked };
  const chain = forwardedChain(headers);
  let client = address;
  for (let i = chain.length - 1; i >= 0; i--) {
    client = plain(chain[i]!);
    if (!proxies.has(client)) break;
  }
  return { address: client, proxied: true };
}

/**
 * Whether a request may change settings or delete events, and how the change's log line names
 * its client (`by`); else why not (a 403).
 * - With `http.token` set, every change needs `Authorization: Bearer <token>`, from this machine
 *   too: a proxy on this machine connects from loopback and, as nginx's minimal `proxy_pass`
 *   does, may say nothing about it, so no request can prove it is local.
 * - Without a token, a change is taken only from this machine: a loopback connection that is not
 *   from a trusted proxy and carries none of a proxy's headers (PROXY_HEADERS), with a Host that
 *   names loopback (a page elsewhere whose name was pointed at 127.0.0.1 sends its own name).
 */
export function mayChange(
  socket: string | undefined,
  headers: IncomingHttpHeaders,
  token: string | undefined,
  proxies: Proxies,
): { ok: true; by: string } | { ok: false; error: string } {
  const client = clientOf(socket, headers, proxies);
  const by = `http ${client.address}${client.proxied ? ' via proxy' : ''}`;
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(headers.authorization ?? '')?.[1];
  if (token !== undefined) {
    if (bearer !== undefined && sameSecret(bearer, token)) return { ok: true, by };
    return {
      ok: false,
      error:
        bearer === undefined
          ? 'settings change only with Authorization: Bearer <http.token> (from this machine too, once a token is set)'
          : 'the token is not http.token',
    };
  }
  const local =
    isLoopback(socket) && !client.proxied && (headers.host === undefined || hostIsLoopback(headers.host));
  if (local) return { ok: true, by };
  return {
    ok: false,
    error: client.proxied
      ? 'settings change through a proxy only with http.token set (and Authorization: Bearer <http.token>)'
      : 'settings change only from this machine (set http.token to allow others)',
  };
}

/** What decides who may change settings or delete events: `http.token` and `http.trusted_proxies`. */
export interface ChangeAccess {
  token: string | undefined;
  proxies: Proxies;
}

/**
 * Who a request that changes something comes from (`mayChange`'s `by`); else a 403 HttpError,
 * with `WWW-Authenticate` when a token would be heard (the page asks for it then).
 */
export function changerOf(req: IncomingMessage, res: ServerResponse, access: ChangeAccess): string {
  const who = mayChange(req.socket.remoteAddress, req.headers, access.token, access.proxies);
  if (!who.ok) {
    if (access.token !== undefined) res.setHeader('WWW-Authenticate', 'Bearer realm="argus"');
    throw new HttpError(403, who.error);
  }
  return who.by;
}

/** The name in a Host header (`[::1]:8080` → `::1`, `Argus.LAN.:80` → `argus.lan`). */
export function hostName(host: string): string {
  const h = host.trim().toLowerCase();
  const name = h.startsWith('[') ? h.slice(1, h.indexOf(']')) : h.replace(/:\d*$/, '');
  return name.replace(/\.$/, '');
}

/** A Host header that names this machine by loopback (`localhost`, `127.x`, `[::1]`), any port. */
export function hostIsLoopback(host: string): boolean {
  const name = hostName(host);
  return name === 'localhost' || name.endsWith('.localhost') || isLoopback(name);
}

/**
 * The names this server answers to (DNS rebinding: a page on `evil.test` whose name was made to
 * point at this machine sends `Host: evil.test`, and must get nothing). Always: IP addresses
 * (a rebinding page has a name, not an address), `localhost` and `*.localhost`. Then the given
 * names: exact (`argus.lan`), a leading dot for a domain and its subdomains (`.example.com`), or
 * `*` for any name (the check off).
 */
export class AllowedHosts {
  private readonly exact = new Set<string>();
  private readonly suffixes: string[] = [];
  private readonly any: boolean;

  constructor(names: readonly string[]) {
    this.any = names.includes('*');
    for (const n of names) {
      const name = n.toLowerCase().replace(/\.$/, '');
      if (name.startsWith('.')) this.suffixes.push(name);
      else this.exact.add(name);
    }
  }

  /** Whether a Host (or X-Forwarded-Host) value names this server; an absent one does (HTTP/1.0). */
  allows(host: string | undefined): boolean {
    if (host === undefined || this.any) return true;
    const name = hostName(host);
    if (name === '' || !/^[a-z0-9.:_-]+$/.test(name)) return false;
    if (isIP(name) !== 0 || name === 'localhost' || name.endsWith('.localhost')) return true;
    return this.exact.has(name) || this.suffixes.some((s) => name.endsWith(s) || name === s.slice(1));
  }

  /**
   * The first name in a request that this server does not answer to: its Host, or the original
   * Host a proxy passed on (X-Forwarded-Host, `Forwarded: host=`); undefined when all are fine.
   */
  foreign(headers: IncomingHttpHeaders): string | undefined {
    const names: string[] = [];
    if (headers.host !== undefined) names.push(headers.host);
    const xfh = headers['x-forwarded-host'];
    if (xfh !== undefined) names.push(...(Array.isArray(xfh) ? xfh : [xfh]).flatMap((v) => v.split(',')));
    for (const m of (headers.forwarded ?? '').matchAll(/host=("?)([^";,]+)\1/gi)) names.push(m[2]!);
    return names.map((n) => n.trim()).find((n) => !this.allows(n));
  }
}
