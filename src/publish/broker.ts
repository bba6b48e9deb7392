import { createServer, type Server } from 'node:net';
import { Aedes } from 'aedes';
import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import { listen, listeningUrl } from '../listen.js';

/**
 * The embedded MQTT broker (aedes), used when no `mqtt.url` is configured, so subscribers work
 * with nothing else installed. It listens on 127.0.0.1:1883 unless configured otherwise.
 */
export class EmbeddedBroker {
  private aedes: Aedes | undefined;
  private server: Server | undefined;

  constructor(
    private readonly cfg: Config['mqtt']['embedded'],
    private readonly log: Logger,
  ) {}

  get url(): string {
    return listeningUrl('mqtt', this.server, this.cfg.host, this.cfg.port);
  }

  async start(): Promise<void> {
    const aedes = await Aedes.createBroker();
    this.aedes = aedes;
    const server = createServer((socket) => aedes.handle(socket));
    this.server = server;
    await listen(server, this.cfg.host, this.cfg.port, 'embedded MQTT broker');
    this.log.info({ url: this.url }, 'embedded MQTT broker listening');
  }

  async stop(): Promise<void> {
    const server = this.server;
    const aedes = this.aedes;
    this.server = undefined;
    this.aedes = undefined;
    // No new connections first (a reconnecting client would otherwise hold the server open).
    const closed = server && new Promise<void>((r) => server.close(() => r()));
    if (aedes) await new Promise<void>((r) => aedes.close(() => r()));
    await closed;
  }
}
