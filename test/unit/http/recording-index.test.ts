import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CameraConfig } from '../../../src/config/index.js';
import type { EventQuery } from '../../../src/events/index.js';
import type { HttpSource, RecordingIndex } from '../../../src/http/source.js';
import type { KeptRange } from '../../../src/record/index.js';
import { cameraConfig } from '../../helpers/config.js';
import { httpSource } from '../../helpers/http-source.js';
import { liveView, serveHttp } from '../../helpers/live-view.js';

const T0 = Date.parse('2026-12-06T08:00:00Z');

/** A source with cameras `gate` and `a/b`, whose recordingIndex notes what it was asked. */
function source(asked: unknown[][]): HttpSource {
  return httpSource({
    cameraNames: () => ['gate', 'a/b'],
    recordingIndex: (camera, from, to) => {
      asked.push([camera, from, to]);
      return { camera, start: null, end: null, recording: true, ranges: [], events: [] };
    },
  });
}

describe('GET /api/cameras/<camera>/recording', () => {
  it('reads start and end as recording.mp4 does (ISO 8601 or ms), each optional, and answers the JSON', async (t) => {
    const asked: unknown[][] = [];
    const base = await serveHttp(t, source(asked));
    const all = await fetch(`${base}/api/cameras/gate/recording`);
    assert.equal(all.status, 200);
    assert.equal(all.headers.get('content-type'), 'application/json');
    assert.equal(all.headers.get('cache-control'), 'no-store');
    assert.equal(((await all.json()) as RecordingIndex).camera, 'gate');
    const iso = await fetch(
      `${base}/api/cameras/gate/recording?start=2026-12-06T08:00:00Z&end=${T0 + 60_000}`,
    );
    assert.equal(iso.status, 200);
    assert.equal((await fetch(`${base}/api/cameras/gate/recording?start=${T0}`)).status, 200);
    assert.equal((await fetch(`${base}/api/cameras/a%2Fb/recording?end=${T0}`)).status, 200);
    assert.deepEqual(asked, [
      ['gate', undefined, undefined],
      ['gate', T0, T0 + 60_000],
      ['gate', T0, undefined],
      ['a/b', undefined, T0],
    ]);
  });

  it('404s an unknown camera, 400s bad times naming the parameter, and a bad name', async (t) => {
    const asked: unknown[][] = [];
    const base = await serveHttp(t, source(asked));
    /** The status, and the body: a 400's `error`, else the text. */
    const answer = async (path: string): Promise<[number, string]> => {
      const r = await fetch(base + path);
      const text = await r.text();
      return [r.status, r.status === 400 ? (JSON.parse(text) as { error: string }).error : text];
    };
    assert.deepEqual(await answer('/api/cameras/yard/recording'), [404, 'no such camera\n']);
    const [s1, b1] = await answer('/api/cameras/gate/recording?start=yesterday');
    assert.equal(s1, 400);
    assert.match(b1, /start: "yesterday" is not a time/);
    const [s2, b2] = await answer(`/api/cameras/gate/recording?start=${T0}&end=${T0}`);
    assert.equal(s2, 400);
    assert.match(b2, /end: must be after start/);
    const [s3, b3] = await answer(`/api/cameras/gate/recording?end=${T0}&end=${T0 + 1}`);
    assert.equal(s3, 400);
    assert.match(b3, /end: give it once/);
    const [s4, b4] = await answer(`/api/cameras/gate/recording?from=${T0}`);
    assert.equal(s4, 400);
    assert.match(b4, /from: unknown parameter/);
    assert.equal((await answer('/api/cameras/%E0%A4%A/recording'))[0], 400);
    assert.equal(asked.length, 0, 'nothing asked of the daemon for a refused request');
  });

  it('is 404 on a daemon with no recordings', async (t) => {
    const src = source([]);
    delete src.recordingIndex;
    const base = await serveHttp(t, src);
    assert.equal((await fetch(`${base}/api/cameras/gate/recording`)).status, 404);
  });
});

describe('LiveView.recordingIndex', () => {
  const events = [
    // Newest first, as the history lists them.
    {
      id: 'e3',
      label: 'car',
      start_ts: new Date(T0 + 50_000).toISOString(),
      end_ts: null,
      clip: { state: 'recording' },
    },
    {
      id: 'e2',
      label: 'person',
      start_ts: new Date(T0 + 10_000).toISOString(),
      end_ts: new Date(T0 + 20_000).toISOString(),
      clip: { state: 'ready', path: '/api/events/e2/clip.mp4' },
    },
    {
      id: 'e1',
      label: 'person',
      start_ts: new Date(T0 - 60_000).toISOString(),
      end_ts: new Date(T0 - 50_000).toISOString(),
      clip: { state: 'failed', error: 'x' },
    },
  ];

  function view(kept: KeptRange[] | undefined) {
    const cameras: Record<string, CameraConfig> = { gate: cameraConfig() };
    const queries: EventQuery[] = [];
    const keptAsked: unknown[][] = [];
    const v = liveView({
      cameras: () => cameras,
      history: {
        list: (q: EventQuery) => {
          queries.push(q);
          return q.camera === undefined || q.camera === 'gate' ? events : [];
        },
        has: () => false,
        cameraOf: () => undefined,
        snapshotOrWhy: () => Promise.resolve(undefined),
        openClip: () => Promise.resolve(undefined),
        remove: () => Promise.resolve(false),
      },
      clips: {
        eventClip: () => Promise.resolve({ status: 404, error: 'none' }),
        dropEventClip: () => Promise.resolve(),
        recording: () => Promise.resolve({ status: 404, error: 'none' }),
        kept: (camera, from, to) => {
          keptAsked.push([camera, from, to]);
          return kept;
        },
      },
    });
    return { v, queries, keptAsked };
  }

  it("answers the recording's stretches with why, and the camera's events that overlap the window, oldest first", () => {
    const kept: KeptRange[] = [
      { start: T0 + 5000, end: T0 + 25_000, why: ['event'], events: ['e2'], bytes: 1000 },
      { start: T0 + 45_000, end: T0 + 60_000, why: ['event', 'recent'], events: ['e3'], bytes: 500 },
    ];
    const { v, queries, keptAsked } = view(kept);
    assert.deepEqual(v.recordingIndex('gate', T0, T0 + 60_000), {
      camera: 'gate',
      start: '2026-12-06T08:00:00.000Z',
      end: '2026-12-06T08:01:00.000Z',
      recording: true,
      ranges: [
        {
          start: '2026-12-06T08:00:05.000Z',
          end: '2026-12-06T08:00:25.000Z',
          duration_s: 20,
          why: ['event'],
          events: ['e2'],
          bytes: 1000,
        },
        {
          start: '2026-12-06T08:00:45.000Z',
          end: '2026-12-06T08:01:00.000Z',
          duration_s: 15,
          why: ['event', 'recent'],
          events: ['e3'],
          bytes: 500,
        },
      ],
      events: [
        {
          id: 'e2',
          label: 'person',
          start: '2026-12-06T08:00:10.000Z',
          end: '2026-12-06T08:00:20.000Z',
          clip: '/api/events/e2/clip.mp4',
        },
        { id: 'e3', label: 'car', start: '2026-12-06T08:00:50.000Z', end: null, clip: null },
      ],
    });
    assert.deepEqual(keptAsked, [['gate', T0, T0 + 60_000]]);
    assert.equal(queries[0]!.camera, 'gate', "only the camera's events are asked for");
    // No window: every event of the camera, everything kept.
    const all = v.recordingIndex('gate')!;
    assert.deepEqual(
      all.events.map((e) => e.id),
      ['e1', 'e2', 'e3'],
    );
    assert.equal(all.start, null);
    assert.equal(all.end, null);
  });

  it('says a camera that keeps no recording has none (its events still listed), and knows no other camera', () => {
    const { v } = view(undefined);
    const r = v.recordingIndex('gate', T0)!;
    assert.equal(r.recording, false);
    assert.deepEqual(r.ranges, []);
    assert.deepEqual(
      r.events.map((e) => e.id),
      ['e2', 'e3'],
    );
    assert.equal(v.recordingIndex('yard'), undefined);
  });
});
