import { errorMessage, errorStack } from '../core/errors.js';
import { ConfigError } from '../config/index.js';
import { loadVouchedConfig } from '../models/index.js';
import { Daemon, StoppedDuringStart } from '../daemon.js';
import { createLogger } from '../log.js';
import { scrub } from '../redact.js';

/** How long shutdown may take before Argus exits anyway. */
const STOP_TIMEOUT_MS = 20_000;
/** How often Argus, started by npm, looks whether the process that started it is still there. */
const LAUNCHER_CHECK_MS = 500;

/**
 * `argus run -c FILE`: validates the config (refusing to start on any error), starts the
 * daemon, and stops it on SIGTERM/SIGINT within a bounded time. Resolves with the exit code.
 *
 * The signal handlers stay for the life of the process, so no SIGTERM or SIGINT meets Node's
 * default handler (death by the signal: exit 143, nothing published). The first stops cleanly
 * (exit 0); one during the stop makes it quicker (Daemon.hurry, still clean, exit 0); one more
 * exits 1 at once; any after the stop has finished, while the process exits, is ignored.
 */
export async function runDaemon(file: string): Promise<number> {
  let loaded;
  try {
    loaded = await loadVouchedConfig(file);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.format()}\n${err.message}; not starting\n`);
      return 1;
    }
    throw err;
  }
  const log = createLogger({ level: loaded.config.log_level, fd: 1, secrets: loaded.secrets });
  const daemon = new Daemon(loaded, log);

  const launcher = watchLauncher(process.env, (pid) => {
    log.warn({ launcher: pid }, 'the process that started Argus has gone');
    void stop('launcher gone', 0);
  });

  let stopping: Promise<number> | undefined;
  let stopped = false;
  let hurried = false;
  let ended: (code: number) => void = () => undefined;
  const end = new Promise<number>((resolve) => (ended = resolve));
  const stop = (reason: string, code: number): Promise<number> => {
    stopping ??= (async () => {
      clearInterval(launcher);
      log.info({ reason }, 'stopping');
      const timer = setTimeout(() => {
        log.error(`shutdown took longer than ${STOP_TIMEOUT_MS / 1000} s; exiting`);
        process.exit(1);
      }, STOP_TIMEOUT_MS);
      timer.unref();
      await daemon.stop();
      clearTimeout(timer);
      stopped = true;
      return code;
    })();
    void stopping.then(ended);
    return stopping;
  };

  process.on('unhandledRejection', (err) => {
    log.fatal({ err: errorStack(err) }, 'unhandled rejection');
    process.exit(1);
  });

  process.on('SIGHUP', () => {
    if (stopping) return;
    log.info('SIGHUP: reloading the configuration');
    daemon.reload().catch((err: unknown) => log.error({ err: errorMessage(err) }, 'reload failed'));
  });

  const onSignal = (signal: NodeJS.Signals): void => {
    if (stopped) {
      log.info({ signal }, 'already stopped; signal ignored');
    } else if (!stopping) {
      void stop(signal, 0);
    } else if (!hurried) {
      hurried = true;
      log.warn(
        { signal },
        'signal during the stop: stopping quickly (ffmpeg killed at once, batches in flight not waited for); another signal exits at once',
      );
      daemon.hurry();
    } else {
      log.error({ signal }, 'signal during a quick stop: exiting at once, the stop unfinished');
      process.exit(1);
    }
  };
  for (const sig of ['SIGTERM', 'SIGINT'] as const) process.on(sig, onSignal);

  try {
    await daemon.start();
  } catch (err) {
    // A signal during start-up is a stop like any other: nothing more starts, all is unwound.
    if (err instanceof StoppedDuringStart && stopping) return stopping;
    // Startup errors name what is wrong (model file, broker port, ...); the stack is for debugging.
    const message = errorMessage(err);
    log.fatal({ err: message }, 'cannot start');
    log.debug({ stack: err instanceof Error ? err.stack : undefined }, 'startup failure');
    process.stderr.write(`argus: ${scrub(message, loaded.secrets)}\n`);
    return stop('cannot start', 1);
  }
  return end;
}

/**
 * `npx argus run` (npm exec, npm run) runs Argus under `sh -c` under npm, and npm passes
 * SIGTERM/SIGINT on to that shell alone, which dies of it without passing it on: Argus would run
 * on, orphaned, its ports held. So when npm started it (`npm_lifecycle_event` is set), Argus
 * takes its parent's going away for a SIGTERM: `onGone` is called once, with the parent's pid.
 * Started otherwise (systemd, `nohup`), a parent's exit is none of its business.
 */
function watchLauncher(env: NodeJS.ProcessEnv, onGone: (pid: number) => void): NodeJS.Timeout | undefined {
  if (env.npm_lifecycle_event === undefined) return undefined;
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    onGone(parent);
  }, LAUNCHER_CHECK_MS);
  return timer.unref();
}
