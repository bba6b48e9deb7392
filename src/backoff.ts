/**
 * Restart delays: exponential from `initialMs`, doubling per consecutive failure up to `maxMs`,
 * with "equal jitter" (half fixed, half random) so a fleet of cameras that failed together
 * does not reconnect in lockstep, yet no delay collapses to zero.
 */
export interface BackoffPolicy {
  initialMs: number;
  maxMs: number;
  factor: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = { initialMs: 1000, maxMs: 60_000, factor: 2 };

/** Delay before restart number `attempt` (0 = first restart). `random` returns [0, 1). */
export function backoffDelay(
  attempt: number,
  policy: BackoffPolicy = DEFAULT_BACKOFF,
  random: () => number = Math.random,
): number {
  const base = Math.min(policy.maxMs, policy.initialMs * policy.factor ** Math.max(0, attempt));
  return Math.round(base / 2 + (base / 2) * random());
}
