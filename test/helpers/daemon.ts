import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { rm, rmdir, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { stringify } from 'yaml';
import { cliPath, tempDir, waitFor, writeFixture } from './env.js';

/** The daemon as a real process (`argus run`), for end-to-end tests. */

type T = Parameters<typeof tempDir>[0];

export interface Daemon {
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: string | null }>;
  output: () => string;
}

export function startDaemon(t: T, config: string, extraEnv: NodeJS.ProcessEnv = {}): Daemon {
  // Under systemd, an inherited STATE_DIRECTORY would win over the test's own state_dir.
  const env = { ...process.env, ...extraEnv };
  if (!('STATE_DIRECTORY' in extraEnv)) delete env.STATE_DIRECTORY;
  const child = spawn(process.execPath, [cliPath, 'run', '-c', config], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env,
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<{ code: number | null; signal: string | null }>((r) =>
    child.on('exit', (code, signal) => r({ code, signal })),
  );
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
    // The test's temporary directory was removed first (hooks run in the order they were
    // added), while this daemon could still write its state there (writeDaemonConfig's state_dir).
    await rm(join(dirname(config), 'state'), { recursive: true, force: true });
    if (basename(dirname(config)).startsWith('argus-test-'))
      await rmdir(dirname(config)).catch(() => undefined);
  });
  return { child, exited, output: () => out };
}

/** What every daemon test shares: quick stats, events and restarts, HTTP on a free port. */
const TEST_DEFAULTS: Record<string, Record<string, unknown>> = {
  mqtt: { stats_interval_s: 2, reconnect_period_s: 1.5 },
  events: { min_frames: 2, end_after_s: 1.5 },
  http: { port: 0 },
  ffmpeg: { stall_timeout_s: 10, backoff_initial_s: 0.5, backoff_max_s: 2, stop_grace_s: 1 },
};

/**
 * Writes `argus.yaml` in `dir` (again, on a later call: a reload): the test defaults with
 * `settings` merged over them section by section, and the generated fixture model unless
 * `settings.model` names one. Returns its path.
 */
export async function writeDaemonConfig(dir: string, settings: Record<string, unknown>): Promise<string> {
  // Each test's own state directory, never the user's (~/.local/state/argus).
  const config: Record<string, unknown> = { log_level: 'info', state_dir: join(dir, 'state') };
  for (const key of new Set([...Object.keys(TEST_DEFAULTS), ...Object.keys(settings)])) {
    const mine = settings[key];
    config[key] =
      key !== 'cameras' && typeof mine === 'object' && mine !== null
        ? { ...TEST_DEFAULTS[key], ...mine }
        : (mine ?? TEST_DEFAULTS[key]);
  }
  const fixture = join(dir, 'fixture.onnx');
  if (!settings.model)
    config.model = { path: existsSync(fixture) ? fixture : await writeFixture(dir, 'fixture.onnx') };
  const path = join(dir, 'argus.yaml');
  await writeFile(path, stringify(config));
  return path;
}

/**
 * The HTTP server's address, from the daemon's log line (tests listen on port 0). `timeoutMs`:
 * longer for a daemon whose start is slow (a model on a software GPU compiles its shaders first).
 */
export async function httpBase(output: () => string, timeoutMs?: number): Promise<string> {
  let base = '';
  await waitFor(
    'the HTTP server',
    () => {
      const m = /"url":"(http:\/\/127\.0\.0\.1:\d+)","msg":"HTTP server listening"/.exec(output());
      if (m) base = m[1]!;
      return base !== '';
    },
    timeoutMs,
  );
  return base;
}
