/**
 * RTSP authentication as a client answers it, pure: a server's `WWW-Authenticate` challenges
 * read, the best one chosen, and the `Authorization` header that answers it — Basic (RFC 7617) or
 * Digest (RFC 7616, which keeps RFC 2617's MD5 and adds SHA-256; with `qop=auth`, `auth-int` or
 * without qop, RFC 2069's form, which many cameras still send). Used by the camera relay
 * (`rtsp-relay.ts`), which holds the credentials so that ffmpeg's command line has none.
 */
import { createHash, randomBytes } from 'node:crypto';

export interface Credentials {
  user: string;
  password: string;
}

/** One challenge: its scheme (lower case) and its parameters (names lower case, values unquoted). */
export interface Challenge {
  scheme: string;
  params: Record<string, string>;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+/;

/**
 * Every challenge of a `WWW-Authenticate` header value (a server may send several in one value,
 * separated by commas, as well as several headers): `Digest realm="r", nonce="n", Basic realm="r"`.
 * Quoted strings may hold commas and escaped quotes. What cannot be read ends the list.
 */
export function parseChallenges(value: string): Challenge[] {
  const out: Challenge[] = [];
  let rest = value.trim();
  let current: Challenge | undefined;
  while (rest.length > 0) {
    rest = rest.replace(/^[\s,]+/, '');
    const name = TOKEN.exec(rest)?.[0];
    if (!name) break;
    const after = rest.slice(name.length).replace(/^[ \t]*/, '');
    if (after.startsWith('=') && current) {
      let v = after.slice(1).replace(/^[ \t]*/, '');
      let val: string;
      if (v.startsWith('"')) {
        let i = 1;
        val = '';
        while (i < v.length && v[i] !== '"') {
          if (v[i] === '\\' && i + 1 < v.length) i++;
          val += v[i];
          i++;
        }
        v = v.slice(i + 1);
      } else {
        val = TOKEN.exec(v)?.[0] ?? '';
        v = v.slice(val.length);
      }
      current.params[name.toLowerCase()] = val;
      rest = v;
    } else {
      current = { scheme: name.toLowerCase(), params: {} };
      out.push(current);
      rest = after;
    }
  }
  return out;
}

const DIGEST_ALGORITHMS = ['SHA-256-sess', 'SHA-256', 'MD5-sess', 'MD5'];

/** The challenge a client should answer: Digest with the strongest algorithm it knows, else Basic. */
export function chooseChallenge(challenges: readonly Challenge[]): Challenge | undefined {
  const digests = challenges.filter(
    (c) => c.scheme === 'digest' && c.params.nonce !== undefined && algorithmOf(c) !== undefined,
  );
  digests.sort(
    (a, b) => DIGEST_ALGORITHMS.indexOf(algorithmOf(a)!) - DIGEST_ALGORITHMS.indexOf(algorithmOf(b)!),
  );
  return digests[0] ?? challenges.find((c) => c.scheme === 'basic');
}

/** The challenge's algorithm as RFC 7616 spells it (MD5 when absent); undefined when unknown. */
function algorithmOf(c: Challenge): string | undefined {
  const given = (c.params.algorithm ?? 'MD5').toUpperCase();
  return DIGEST_ALGORITHMS.find((a) => a.toUpperCase() === given);
}

const hashOf =
  (algorithm: string) =>
  (data: string | Buffer): string =>
    createHash(algorithm.startsWith('SHA-256') ? 'sha256' : 'md5')
      .update(data)
      .digest('hex');

/** What a Digest answer covers besides the challenge: the request and the client's counters. */
export interface DigestRequest {
  method: string;
  uri: string;
  /** The request's body (for qop=auth-int). */
  body?: Buffer;
  /** This nonce's request count (1 for the first request that uses it). */
  nc: number;
  cnonce: string;
}

const quote = (s: string): string => `"${s.replace(/["\\]/g, '\\$&')}"`;

/**
 * The `Authorization` value answering a Digest challenge (RFC 7616 §3.4): `response` is
 * KD(H(A1), nonce:nc:cnonce:qop:H(A2)) with a qop, H(H(A1):nonce:H(A2)) without one.
 */
export function digestAuthorization(challenge: Challenge, creds: Credentials, req: DigestRequest): string {
  const p = challenge.params;
  const algorithm = algorithmOf(challenge) ?? 'MD5';
  const H = hashOf(algorithm);
  const realm = p.realm ?? '';
  const nonce = p.nonce ?? '';
  let ha1 = H(`${creds.user}:${realm}:${creds.password}`);
  if (algorithm.endsWith('-sess')) ha1 = H(`${ha1}:${nonce}:${req.cnonce}`);
  const offered = (p.qop ?? '').split(',').map((q) => q.trim().toLowerCase());
  const qop = offered.includes('auth') ? 'auth' : offered.includes('auth-int') ? 'auth-int' : undefined;
  const ha2 = H(
    qop === 'auth-int' ? `${req.method}:${req.uri}:${H(req.body ?? '')}` : `${req.method}:${req.uri}`,
  );
  const nc = req.nc.toString(16).padStart(8, '0');
  const response = qop ? H(`${ha1}:${nonce}:${nc}:${req.cnonce}:${qop}:${ha2}`) : H(`${ha1}:${nonce}:${ha2}`);
  const fields = [
    `username=${quote(creds.user)}`,
    `realm=${quote(realm)}`,
    `nonce=${quote(nonce)}`,
    `uri=${quote(req.uri)}`,
    `response=${quote(response)}`,
  ];
  if (p.algorithm !== undefined) fields.push(`algorithm=${algorithm}`);
  if (p.opaque !== undefined) fields.push(`opaque=${quote(p.opaque)}`);
  if (qop) fields.push(`qop=${qop}`, `nc=${nc}`, `cnonce=${quote(req.cnonce)}`);
  return `Digest ${fields.join(', ')}`;
}

/** The `Authorization` value of Basic authentication (RFC 7617): base64 of `user:password` in UTF-8. */
export function basicAuthorization(creds: Credentials): string {
  return `Basic ${Buffer.from(`${creds.user}:${creds.password}`, 'utf8').toString('base64')}`;
}

/**
 * A client's answers to one server: the challenge it last heard and its count of requests under
 * that nonce. `header` gives each request's `Authorization`; `challenged` takes a 401's challenges.
 */
export class RtspAuthenticator {
  private challenge: Challenge | undefined;
  private nc = 0;

  constructor(
    private readonly creds: Credentials,
    private readonly cnonce: () => string = () => randomBytes(16).toString('hex'),
  ) {}

  /** The scheme in use ('digest', 'basic'), undefined before any challenge. */
  get scheme(): string | undefined {
    return this.challenge?.scheme;
  }

  /**
   * Takes a 401's `WWW-Authenticate` values. False when none of them is a challenge this client
   * can answer (an unknown scheme or algorithm).
   */
  challenged(values: readonly string[]): boolean {
    const chosen = chooseChallenge(values.flatMap(parseChallenges));
    if (!chosen) return false;
    if (chosen.params.nonce !== this.challenge?.params.nonce) this.nc = 0;
    this.challenge = chosen;
    return true;
  }

  /** Whether the last challenge said that only its nonce had expired (`stale=true`). */
  get stale(): boolean {
    return this.challenge?.params.stale?.toLowerCase() === 'true';
  }

  /** The `Authorization` value for a request, undefined before the server has asked for one. */
  header(method: string, uri: string, body?: Buffer): string | undefined {
    const c = this.challenge;
    if (!c) return undefined;
    if (c.scheme === 'basic') return basicAuthorization(this.creds);
    this.nc++;
    return digestAuthorization(c, this.creds, {
      method,
      uri,
      nc: this.nc,
      cnonce: this.cnonce(),
      ...(body && { body }),
    });
  }
}
