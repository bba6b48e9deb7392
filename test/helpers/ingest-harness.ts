/**
 * A process that runs only the ingest stage from a real config file, for tests that must kill
 * or signal the process that owns the ffmpeg children. Prints JSON lines: statuses, ffmpeg
 * pids, and "stopped". SIGTERM/SIGINT stop the cameras and exit 0.
 * argv: CONFIG [SIZE]
 */
import { pino } from 'pino';
import { loadConfig } from '../../src/config/load.js';
import { Ingest } from '../../src/ingest/ingest.js';

const [file, sizeArg] = process.argv.slice(2);
const out = (o: unknown): void => void process.stdout.write(`${JSON.stringify(o)}\n`);

async function main(): Promise<void> {
  const { config, secrets } = await loadConfig(file!);
  const ingest = new Ingest(
    {
      cameras: config.cameras,
      ffmpeg: config.ffmpeg,
      size: () => Number(sizeArg ?? 320),
      secrets,
      cache: config.cache,
    },
    {
      log: pino({ level: 'warn' }, pino.destination(2)),
      onFrame: () => undefined,
      onStatus: (s) => {
        out({ type: 'status', ...s });
        if (s.state === 'streaming') out({ type: 'pids', pids: ingest.pids() });
      },
    },
  );
  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    ingest.stop().then(
      () => {
        out({ type: 'stopped' });
        process.exit(0);
      },
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  await ingest.start();
}

main().catch((err: unknown) => {
  process.stderr.write(`${String(err)}\n`);
  process.exit(1);
});
