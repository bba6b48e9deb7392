import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createLogger } from '../../../src/log.js';
import { SystemdNotifier } from '../../../src/ops/notify.js';
import { tempDir, waitFor } from '../../helpers/env.js';
import { FakeClock, silentLog } from '../../helpers/fakes.js';

/**
 * A stand-in for systemd-notify: appends one line per call, the NOTIFY_SOCKET it was given then
 * its arguments, tab-separated, to $ARGUS_NOTIFY_LOG.
 */
const RECORDER = `#!/bin/sh
line="$NOTIFY_SOCKET"
for a in "$@"; do line="$line	$a"; done
printf '%s\\n' "$line" >> "$ARGUS_NOTIFY_LOG"
`;

async function recorder(t: Parameters<typeof tempDir>[0]) {
  const dir = await tempDir(t);
  const command = join(dir, 'notify.sh');
  const file = join(dir, 'calls.log');
  await writeFile(command, RECORDER, { mode: 0o755 });
  /** The calls so far, each [NOTIFY_SOCKET, ...arguments]. */
  const calls = (): string[][] =>
    existsSync(file)
      ? readFileSync(file, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => l.split('\t'))
      : [];
  /** The number of watchdog pings so far. */
  const pings = (): number => calls().filter((c) => c.slice(1).join(' ') === 'WATCHDOG=1').length;
  return {
    command,
    file,
    calls,
    pings,
    env: { NOTIFY_SOCKET: '/run/argus-test/notify', ARGUS_NOTIFY_LOG: file },
  };
}

/** A notifier that counts its notify commands still running. */
class Counted extends SystemdNotifier {
  running = 0;

  override send(...assignments: string[]): Promise<void> {
    this.running++;
    return super.send(...assignments).finally(() => this.running--);
  }
}

function captureLog() {
  const lines: Record<string, unknown>[] = [];
  const log = createLogger({
    level: 'info',
    stream: { write: (s: string) => lines.push(JSON.parse(s) as Record<string, unknown>) },
  });
  const warnings = (): string[] => lines.filter((l) => l.level === 40).map((l) => String(l.msg));
  return { log, lines, warnings };
}

describe('SystemdNotifier', () => {
  it('does nothing outside systemd (no NOTIFY_SOCKET)', async (t) => {
    const rec = await recorder(t);
    const clock = new FakeClock();
    const notifier = new SystemdNotifier(
      { ARGUS_NOTIFY_LOG: rec.file, WATCHDOG_USEC: '200000' },
      silentLog,
      clock,
      rec.command,
    );
    assert.equal(notifier.enabled, false);
    assert.equal(notifier.watchdogIntervalMs, undefined);
    await notifier.send('STATUS=hello');
    await notifier.ready('up');
    await notifier.stopping();
    notifier.watchdog();
    let checked = 0;
    notifier.startWatchdog(() => {
      checked++;
      return true;
    });
    t.after(() => notifier.stopWatchdog());
    await clock.advance(1000); // ten intervals of the WATCHDOG_USEC it was given
    assert.equal(checked, 0, 'no watchdog timer');
    assert.deepEqual(rec.calls(), []);
  });

  it('pings the watchdog at half of WATCHDOG_USEC, only for this process', () => {
    const interval = (env: NodeJS.ProcessEnv): number | undefined =>
      new SystemdNotifier({ NOTIFY_SOCKET: '/run/notify', ...env }, silentLog).watchdogIntervalMs;
    assert.equal(interval({ WATCHDOG_USEC: '30000000' }), 15_000);
    assert.equal(interval({ WATCHDOG_USEC: '30000000', WATCHDOG_PID: String(process.pid) }), 15_000);
    assert.equal(interval({ WATCHDOG_USEC: '30000000', WATCHDOG_PID: String(process.pid + 1) }), undefined);
    assert.equal(interval({}), undefined);
    assert.equal(interval({ WATCHDOG_USEC: '0' }), undefined);
    assert.equal(interval({ WATCHDOG_USEC: 'soon' }), undefined);
    assert.equal(interval({ WATCHDOG_USEC: '50000' }), 100, 'never below 100 ms');
  });

  it('runs the notify command with the assignments and its environment', async (t) => {
    const rec = await recorder(t);
    const notifier = new SystemdNotifier(rec.env, silentLog, undefined, rec.command);
    assert.equal(notifier.enabled, true);
    await notifier.ready('2 cameras streaming');
    await notifier.send('STATUS=reloading');
    await notifier.stopping();
    assert.deepEqual(rec.calls(), [
      ['/run/argus-test/notify', 'READY=1', 'STATUS=2 cameras streaming'],
      ['/run/argus-test/notify', 'STATUS=reloading'],
      ['/run/argus-test/notify', 'STOPPING=1', 'STATUS=stopping'],
    ]);
  });

  it('sends one watchdog ping at a time', async (t) => {
    const rec = await recorder(t);
    const notifier = new SystemdNotifier(rec.env, silentLog, undefined, rec.command);
    notifier.watchdog();
    notifier.watchdog();
    notifier.watchdog();
    await waitFor('the ping', () => rec.pings() > 0, 2000);
    // A whole call later, any second ping started with the first would have landed too.
    await notifier.send('STATUS=after');
    assert.deepEqual(
      rec.calls().map((c) => c.slice(1)),
      [['WATCHDOG=1'], ['STATUS=after']],
    );
  });

  it('logs a warning and goes on when the command is missing', async (t) => {
    const dir = await tempDir(t);
    const { log, lines } = captureLog();
    const notifier = new SystemdNotifier(
      { NOTIFY_SOCKET: '/run/notify' },
      log,
      undefined,
      join(dir, 'no-such-notify'),
    );
    await notifier.ready('up');
    assert.equal(lines.length, 1);
    assert.equal(lines[0]!.msg, 'cannot notify systemd');
    assert.equal(lines[0]!.level, 40);
    assert.match(String(lines[0]!.err), /ENOENT/);
  });

  it('pings while healthy, withholds pings with a warning while not, and stops when told', async (t) => {
    const rec = await recorder(t);
    const { log, warnings } = captureLog();
    const clock = new FakeClock();
    const notifier = new Counted({ ...rec.env, WATCHDOG_USEC: '200000' }, log, clock, rec.command);
    assert.equal(notifier.watchdogIntervalMs, 100);
    /** One watchdog interval on the clock, and whatever notify command its tick ran, to its end. */
    const tick = async (): Promise<void> => {
      await clock.advance(100);
      await waitFor('the notify commands to end', () => notifier.running === 0, 3000);
    };
    let healthy = true;
    let checks = 0;
    notifier.startWatchdog(() => {
      checks++;
      return healthy;
    });
    t.after(() => notifier.stopWatchdog());
    await tick();
    await tick();
    await waitFor('two pings', () => rec.pings() >= 2, 3000);
    assert.deepEqual(warnings(), []);

    healthy = false;
    await tick();
    await tick();
    await waitFor('two withheld pings', () => warnings().length >= 2, 3000);
    const before = rec.pings();
    await tick();
    await tick();
    await waitFor('two more withheld pings', () => warnings().length >= 4, 3000);
    assert.equal(rec.pings(), before, 'no ping while unhealthy');
    assert.ok(warnings().every((w) => w === 'unhealthy: withholding the systemd watchdog ping'));

    healthy = true;
    await tick();
    await waitFor('pings again', () => rec.pings() > before, 3000);

    notifier.stopWatchdog();
    const checksAtStop = checks;
    await clock.advance(350);
    assert.equal(checks, checksAtStop, 'no more watchdog ticks');
  });
  it('asks systemd to wait and feeds the watchdog while start-up work runs, for at most maxMs', async (t) => {
    const rec = await recorder(t);
    const clock = new FakeClock();
    const notifier = new Counted(rec.env, silentLog, clock, rec.command);
    const settled = (): Promise<void> => waitFor('the notify commands', () => notifier.running === 0, 3000);
    let finish: (v: string) => void = () => undefined;
    const work = new Promise<string>((r) => (finish = r));
    const done = notifier.extendWhile(work, 'loading models', 1000, 2500);
    await settled();
    await clock.advance(1000);
    await settled();
    await clock.advance(1000);
    await settled();
    await clock.advance(1000); // past maxMs: no more extensions; systemd's own timeout runs out
    await settled();
    const extend = ['EXTEND_TIMEOUT_USEC=3000000', 'WATCHDOG=1', 'STATUS=loading models'];
    assert.deepEqual(
      rec.calls().map((c) => c.slice(1)),
      [extend, extend, extend],
    );
    finish('loaded');
    assert.equal(await done, 'loaded');
    await clock.advance(5000);
    assert.equal(rec.calls().length, 3, 'nothing once the work is done');
  });

  it('stops extending when the work fails, and passes its error on', async (t) => {
    const rec = await recorder(t);
    const clock = new FakeClock();
    const notifier = new Counted(rec.env, silentLog, clock, rec.command);
    await assert.rejects(
      notifier.extendWhile(Promise.reject(new Error('model did not load')), 'loading models', 1000),
      /model did not load/,
    );
    await waitFor('the notify commands', () => notifier.running === 0, 3000);
    await clock.advance(5000);
    assert.equal(rec.calls().length, 1, 'one extension, sent before the work ended');
  });

  it('only waits for the work outside systemd', async () => {
    const clock = new FakeClock();
    const notifier = new SystemdNotifier({}, silentLog, clock, '/nonexistent/notify');
    assert.equal(await notifier.extendWhile(Promise.resolve(7), 'loading models'), 7);
  });
});
