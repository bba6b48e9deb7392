import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';

/**
 * Resolves a camera URL's host name in Node and returns the URL with the address in its place.
 * The static ffmpeg build that ships with Argus crashes on any name lookup, and a name that
 * does not resolve is reported more clearly this way. TLS schemes keep their name (the
 * certificate is checked against it).
 */
export async function resolveUrlHost(
  url: string,
  resolve: (host: string) => Promise<string> = async (h) => (await lookup(h)).address,
): Promise<string> {
  const u = new URL(url);
  const scheme = u.protocol.slice(0, -1);
  const host = u.hostname.replace(/^\[|\]$/g, '');
  if (!host || isIP(host) || scheme === 'rtsps' || scheme === 'https' || scheme === 'file') return url;
  let address: string;
  try {
    address = await resolve(host);
  } catch {
    throw new Error(`cannot resolve host ${host}`);
  }
  u.hostname = isIP(address) === 6 ? `[${address}]` : address;
  return u.toString();
}
