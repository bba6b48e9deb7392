import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';

/**
 * Keeps every core busy for the rest of a test: one spinning process per core, at the same
 * priority as everything else, killed when the test ends. Edge boxes are busy; a test that holds
 * only on a quiet machine does not hold. `ARGUS_TEST_LOAD=0` turns it off (to compare).
 */
export function busyCores(t: { after: (fn: () => void) => void }, cores = availableParallelism()): number {
  if (process.env.ARGUS_TEST_LOAD === '0') return 0;
  const hogs = Array.from({ length: cores }, () =>
    spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }),
  );
  t.after(() => {
    for (const h of hogs) h.kill('SIGKILL');
  });
  return hogs.length;
}
