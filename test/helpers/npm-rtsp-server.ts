/**
 * Runs the npm `rtsp-streaming-server` (pure JavaScript) as its own process, so a test can kill
 * it like a camera going away. argv: publishPort clientPort rtpPortStart. Prints READY.
 */
import RtspServerModule from 'rtsp-streaming-server';

type ServerCtor = new (opts: {
  serverPort: number;
  clientPort: number;
  rtpPortStart: number;
  rtpPortCount: number;
}) => {
  start(): Promise<void>;
};

const [publishPort, clientPort, rtpPortStart] = process.argv.slice(2).map(Number);
const mod = RtspServerModule as unknown as { default?: ServerCtor } & ServerCtor;
const Server: ServerCtor = mod.default ?? mod;
const server = new Server({
  serverPort: publishPort!,
  clientPort: clientPort!,
  rtpPortStart: rtpPortStart!,
  rtpPortCount: 1000,
});
server.start().then(
  () => process.stdout.write('READY\n'),
  (err: unknown) => {
    process.stderr.write(`${String(err)}\n`);
    process.exit(1);
  },
);
