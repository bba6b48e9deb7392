import type { StoredEvent } from './event-record.js';

/** Which events GET /api/events asks the history for (http/events.ts reads it from the URL). */
export interface EventQuery {
  camera?: string;
  label?: string;
  /** Events that have been in this zone. */
  zone?: string;
  /** Events that started after this time (ms since the epoch). */
  after?: number;
  limit: number;
  /** Only events of these cameras (the API's: the running config's, so that events another config left in a shared state directory are not listed). */
  cameras?: ReadonlySet<string>;
}

/** The events of `order` (oldest first) that match, newest first (by start), at most `limit`. */
export function newestMatching(order: readonly StoredEvent[], q: EventQuery): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (let i = order.length - 1; i >= 0 && out.length < q.limit; i--) {
    const e = order[i]!;
    if (q.after !== undefined && e.start <= q.after) break;
    if (q.camera !== undefined && e.camera !== q.camera) continue;
    if (q.cameras !== undefined && !q.cameras.has(e.camera)) continue;
    if (q.label !== undefined && e.label !== q.label) continue;
    if (q.zone !== undefined && !e.zones.includes(q.zone)) continue;
    out.push(e.event);
  }
  return out;
}
