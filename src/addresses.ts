import { isIP } from 'node:net';

/** IP addresses as a connection or a config names them. */

/** IPv4 written as IPv6 (`::ffff:10.0.0.1`, how a dual-stack socket reports it) as plain IPv4. */
export function plainAddress(address: string): string {
  const m = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  return m ? m[1]! : address;
}

/** 127.0.0.0/8, ::1, and IPv4 loopback as IPv6 (::ffff:127.x.x.x). */
export function isLoopback(address: string | undefined): boolean {
  if (address === undefined) return false;
  const a = plainAddress(address);
  return a === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(a);
}

/**
 * An address or CIDR block as `http.trusted_proxies` takes it (`127.0.0.1`, `10.0.0.0/8`,
 * `::1`, `fd00::/8`); undefined when it is one, else what is wrong.
 */
export function addressProblem(entry: string): string | undefined {
  const [ip, bits, extra] = entry.split('/');
  const family = isIP(ip ?? '');
  if (family === 0 || extra !== undefined)
    return `'${entry}' is not an IP address or a CIDR block (10.0.0.0/8)`;
  if (bits === undefined) return undefined;
  const n = /^\d{1,3}$/.test(bits) ? Number(bits) : NaN;
  if (!(n >= 0 && n <= (family === 4 ? 32 : 128)))
    return `'${entry}': the prefix length must be 0 to ${family === 4 ? 32 : 128}`;
  return undefined;
}
