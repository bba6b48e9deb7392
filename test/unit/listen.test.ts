import assert from 'node:assert/strict';
import { connect, createServer, type AddressInfo, type Server } from 'node:net';
import { describe, it } from 'node:test';
import { listen, listeningUrl } from '../../src/listen.js';

/** A TCP server closed when the test ends. */
function server(t: { after: (fn: () => Promise<void>) => void }): Server {
  const s = createServer((socket) => socket.end());
  t.after(() => new Promise<void>((resolve) => s.close(() => resolve())));
  return s;
}

const portOf = (s: Server): number => (s.address() as AddressInfo).port;

/** Resolves once a TCP connection to host:port is accepted. */
function reach(host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, host, () => {
      socket.destroy();
      resolve();
    });
    socket.once('error', reject);
  });
}

describe('listen', () => {
  it('listens on port 0 and says which port it got', async (t) => {
    const s = server(t);
    await listen(s, '127.0.0.1', 0, 'HTTP server');
    const port = portOf(s);
    assert.ok(port > 0);
    assert.equal(listeningUrl('http', s, '127.0.0.1', 0), `http://127.0.0.1:${port}`);
    await reach('127.0.0.1', port);
  });

  it('says the configured port of a server that is not running', () => {
    assert.equal(listeningUrl('mqtt', undefined, 'localhost', 1883), 'mqtt://localhost:1883');
    assert.equal(listeningUrl('mqtt', createServer(), 'localhost', 1883), 'mqtt://localhost:1883');
  });

  it('puts IPv6 hosts in brackets', async (t) => {
    assert.equal(listeningUrl('http', undefined, '::', 8080), 'http://[::]:8080');
    const s = server(t);
    try {
      await listen(s, '::1', 0, 'HTTP server');
    } catch (err) {
      t.skip(`no IPv6 loopback here: ${(err as Error).message}`);
      return;
    }
    const port = portOf(s);
    assert.equal(listeningUrl('http', s, '::1', 0), `http://[::1]:${port}`);
    await reach('::1', port);
  });

  it('rejects naming what could not listen where, and why', async (t) => {
    const first = server(t);
    await listen(first, '127.0.0.1', 0, 'HTTP server');
    const port = portOf(first);
    await assert.rejects(listen(server(t), '127.0.0.1', port, 'MQTT broker'), {
      message: `MQTT broker cannot listen on 127.0.0.1:${port} (EADDRINUSE)`,
    });
  });
});
