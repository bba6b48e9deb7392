/**
 * Who is at the other end of a local TCP connection: the user id that owns the peer's socket,
 * from Linux's socket tables (`/proc/net/tcp`, `/proc/net/tcp6`). The camera relay accepts only
 * connections from its own user, so another local user cannot borrow its credentials.
 */
import { readFile } from 'node:fs/promises';
import { endianness } from 'node:os';

export interface Endpoint {
  address: string;
  port: number;
}

/** An address as the kernel prints it (each 32-bit word in the host's byte order), as Node writes it. */
export function tableAddress(hex: string, littleEndian = endianness() === 'LE'): string {
  const bytes: number[] = [];
  for (let w = 0; w < hex.length; w += 8) {
    const word = hex
      .slice(w, w + 8)
      .match(/../g)!
      .map((h) => parseInt(h, 16));
    bytes.push(...(littleEndian ? word.reverse() : word));
  }
  if (bytes.length === 4) return bytes.join('.');
  // An IPv4 address mapped into IPv6 (::ffff:a.b.c.d) is the IPv4 address.
  if (bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff)
    return bytes.slice(12).join('.');
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((bytes[i]! << 8) | bytes[i + 1]!).toString(16));
  return groups.join(':');
}

/** Node's spelling of an address, comparable with `tableAddress`'s. */
function plain(address: string): string {
  const v4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (v4) return v4[1]!;
  if (!address.includes(':')) return address;
  // Expand `::` so that both spellings have eight groups without leading zeros.
  const [head, tail] = address.toLowerCase().split('::') as [string, string | undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  return groups.map((g) => parseInt(g, 16).toString(16)).join(':');
}

/**
 * The uid owning the socket whose local end is `peer` and whose remote end is `us`, in the text
 * of a socket table; undefined when no such socket is listed.
 */
export function socketOwner(table: string, peer: Endpoint, us: Endpoint): number | undefined {
  for (const line of table.split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length < 8) continue;
    const [localHex, localPort] = f[1]!.split(':') as [string, string];
    const [remoteHex, remotePort] = f[2]!.split(':') as [string, string];
    if (parseInt(localPort, 16) !== peer.port || parseInt(remotePort, 16) !== us.port) continue;
    if (tableAddress(localHex) !== plain(peer.address) || tableAddress(remoteHex) !== plain(us.address))
      continue;
    return Number(f[7]);
  }
  return undefined;
}

/** The uid owning the peer's socket of a local connection, by Linux's tables; undefined if not listed. */
export async function peerUid(peer: Endpoint, us: Endpoint): Promise<number | undefined> {
  const v4 = socketOwner(await readFile('/proc/net/tcp', 'utf8'), peer, us);
  if (v4 !== undefined) return v4;
  // A host without IPv6 has no tcp6 table.
  const v6 = await readFile('/proc/net/tcp6', 'utf8').catch(() => '');
  return socketOwner(v6, peer, us);
}
