import { pino, type Logger, type DestinationStream } from 'pino';
import { scrub } from './redact.js';

export type { Logger };

export interface LogOptions {
  level: string;
  /** File descriptor to write to: 1 for the daemon (journald), 2 for commands whose stdout is data. */
  fd?: 1 | 2;
  /** Secret values to scrub from every line, besides URL passwords. */
  secrets?: readonly string[];
  stream?: DestinationStream;
}

/**
 * pino JSON logs. Every line passes through `scrub`, so a URL password or a configured secret
 * never reaches the journal even if some code path forgets to redact.
 */
export function createLogger(opts: LogOptions): Logger {
  const dest = opts.stream ?? pino.destination({ fd: opts.fd ?? 1, sync: true });
  const secrets = opts.secrets ?? [];
  const scrubbing: DestinationStream = {
    write: (line: string) => dest.write(scrub(line, secrets)),
  };
  return pino(
    { level: opts.level, base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime },
    scrubbing,
  );
}
