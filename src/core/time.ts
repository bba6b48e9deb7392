/** A time (ms since the epoch) as its payloads and answers give it: ISO 8601, UTC. */
export const isoTime = (ms: number): string => new Date(ms).toISOString();

/** `isoTime`, or null for a time that has not come yet (no frame yet, never). */
export const isoTimeOrNull = (ms: number | null | undefined): string | null =>
  ms === null || ms === undefined ? null : isoTime(ms);
