import { spawn } from 'node:child_process';
import type { Logger } from 'pino';
import { systemClock, type Clock, type Timer } from '../core/clock.js';

/**
 * The systemd notify protocol (sd_notify): READY once started, WATCHDOG pings, STOPPING on
 * shutdown, STATUS lines. Node cannot send unix datagrams, so messages go through systemd's own
 * `systemd-notify` (the unit sets NotifyAccess=all). Without NOTIFY_SOCKET (not under systemd)
 * every call is a no-op.
 */
export class SystemdNotifier {
  private pingRunning = false;
  private watchdogTimer: Timer | undefined;

  constructor(
    private readonly env: NodeJS.ProcessEnv,
    private readonly log: Logger,
    private readonly clock: Clock = systemClock,
    private readonly command = 'systemd-notify',
  ) {}

  get enabled(): boolean {
    return Boolean(this.env.NOTIFY_SOCKET);
  }

  /** Half of WATCHDOG_USEC, as systemd recommends; undefined when no watchdog is set. */
  get watchdogIntervalMs(): number | undefined {
    const usec = Number(this.env.WATCHDOG_USEC);
    if (!this.enabled || !Number.isFinite(usec) || usec <= 0) return undefined;
    const pid = this.env.WATCHDOG_PID;
    if (pid && Number(pid) !== process.pid) return undefined;
    return Math.max(100, Math.floor(usec / 2000));
  }

  send(...assignments: string[]): Promise<void> {
    if (!this.enabled) return Promise.resolve();
    return new Promise((resolve) => {
      const child = spawn(this.command, assignments, { stdio: 'ignore', env: this.env });
      child.on('error', (err) => {
        this.log.warn({ err: err.message }, 'cannot notify systemd');
        resolve();
      });
      child.on('exit', () => resolve());
    });
  }

  ready(status: string): Promise<void> {
    return this.send('READY=1', `STATUS=${status}`);
  }

  stopping(): Promise<void> {
    return this.send('STOPPING=1', 'STATUS=stopping');
  }

  /** One watchdog ping; skipped while the previous one is still being sent. */
  watchdog(): void {
    if (this.pingRunning) return;
    this.pingRunning = true;
    void this.send('WATCHDOG=1').then(() => (this.pingRunning = false));
  }

  /**
   * Pings the watchdog from the event loop, but only while `healthy()` says so: a stuck loop or
   * a detector that cannot recover stops the pings, and systemd restarts Argus.
   */
  startWatchdog(healthy: () => boolean): void {
    const ms = this.watchdogIntervalMs;
    if (!ms) return;
    const tick = (): void => {
      this.watchdogTimer = this.clock.setTimeout(tick, ms);
      if (healthy()) this.watchdog();
      else this.log.warn('unhealthy: withholding the systemd watchdog ping');
    };
    this.watchdogTimer = this.clock.setTimeout(tick, ms);
  }

  /**
   * While `work` runs during start-up (the models loading: a TensorRT engine build takes minutes),
   * tells systemd every `everyMs` to wait `3 × everyMs` more before the start times out
   * (EXTEND_TIMEOUT_USEC) and feeds the watchdog, for at most `maxMs`: a load that hangs still
   * times out. Resolves or rejects as `work` does.
   */
  async extendWhile<T>(work: Promise<T>, status: string, everyMs = 10_000, maxMs = 30 * 60_000): Promise<T> {
    if (!this.enabled) return work;
    const t0 = this.clock.now();
    let timer: Timer | undefined;
    const tick = (): void => {
      if (this.clock.now() - t0 >= maxMs) return;
      timer = this.clock.setTimeout(tick, everyMs);
      void this.send(`EXTEND_TIMEOUT_USEC=${everyMs * 3 * 1000}`, 'WATCHDOG=1', `STATUS=${status}`);
    };
    tick();
    try {
      return await work;
    } finally {
      if (timer !== undefined) this.clock.clearTimeout(timer);
    }
  }

  stopWatchdog(): void {
    if (this.watchdogTimer !== undefined) this.clock.clearTimeout(this.watchdogTimer);
    this.watchdogTimer = undefined;
  }
}
