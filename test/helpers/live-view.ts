import { pino } from 'pino';
import { Registry } from 'prom-client';
import { HttpServer } from '../../src/http/server.js';
import type { HttpSource } from '../../src/http/source.js';
import { LiveView, type ViewSources } from '../../src/http/view.js';
import { FakeStages } from './fake-stages.js';

/**
 * The daemon's live view on `stages` (fresh ones unless given), with no rates, its own metrics
 * registry and a scheduler that finds nothing in a picture; `sources` names the cameras and adds
 * or replaces any other part.
 */
export function liveView(
  sources: Pick<ViewSources, 'cameras'> & Partial<ViewSources>,
  o: { detectPriority?: number; stages?: FakeStages } = {},
): LiveView {
  const stages = o.stages ?? new FakeStages();
  return new LiveView(
    { detect_priority: o.detectPriority ?? 0 },
    {
      ...stages,
      scheduler: { stats: stages.scheduler.stats, submit: () => Promise.resolve([]) },
      stats: { rates: () => ({}) },
      metrics: new Registry(),
      ...sources,
    },
  );
}

/** `src` served over HTTP on a free port of 127.0.0.1 (1 MB bodies, no inference unless asked) until the test ends: its URL. */
export async function serveHttp(
  t: { after: (fn: () => Promise<void>) => void },
  src: HttpSource,
  { inference = false }: { inference?: boolean } = {},
): Promise<string> {
  const server = new HttpServer(
    { host: '127.0.0.1', port: 0, max_body_mb: 1, inference },
    src,
    pino({ level: 'silent' }),
  );
  await server.start();
  t.after(() => server.stop());
  return server.url;
}
