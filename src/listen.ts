import type { Server } from 'node:net';

/**
 * Listening sockets, for the servers Argus runs (HTTP, the embedded MQTT broker): one way to
 * listen with an error that names what could not listen where, one way to say where it listens.
 */

/** Listens on host:port; rejects naming `what` and the address (e.g. EADDRINUSE, EACCES). */
export function listen(server: Server, host: string, port: number, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(new Error(`${what} cannot listen on ${host}:${port} (${err.code ?? err.message})`)),
    );
    server.listen(port, host, () => resolve());
  });
}

/** `scheme://host:port` of a server: the port it was given when 0 was asked; IPv6 in brackets. */
export function listeningUrl(scheme: string, server: Server | undefined, host: string, port: number): string {
  const addr = server?.address();
  const actual = addr && typeof addr === 'object' ? addr.port : port;
  return `${scheme}://${host.includes(':') ? `[${host}]` : host}:${actual}`;
}
