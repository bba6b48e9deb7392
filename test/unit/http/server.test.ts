import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { HttpServer } from '../../../src/http/server.js';
import type { HttpSource } from '../../../src/http/source.js';
import { parseRange } from '../../../src/http/range.js';
import { LIVE_PAGE, PageScripts } from '../../../src/http/page.js';
import { mkdir, open, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { tempDir } from '../../helpers/env.js';
import { httpSource } from '../../helpers/http-source.js';
import type { EventQuery } from '../../../src/events/index.js';

async function serve(
  t: { after: (fn: () => Promise<void>) => void },
  src: HttpSource,
  maxBody = 1024,
  inference = false,
  pageDir?: URL,
): Promise<string> {
  const server = new HttpServer(
    { host: '127.0.0.1', port: 0, max_body_mb: maxBody / (1024 * 1024), inference },
    src,
    pino({ level: 'silent' }),
    pageDir,
  );
  await server.start();
  t.after(() => server.stop());
  return server.url;
}

describe('HTTP server', () => {
  it('answers 503 with the camera states when no detector session is ready', async (t) => {
    const base = await serve(t, httpSource());
    const res = await fetch(`${base}/healthz`);
    assert.equal(res.status, 503);
    assert.deepEqual(await res.json(), {
      ok: false,
      detector: { ready_workers: 0, provider: null },
      models: { default: { ready_workers: 0, provider: null } },
      mqtt: { connected: true, last_error: null },
      cameras: { gate: 'backoff' },
      event_faults: {},
    });
  });

  it('404s unknown routes and cameras, 405s other methods, and passes detector errors through', async (t) => {
    const base = await serve(t, httpSource());
    assert.equal((await fetch(`${base}/nope`)).status, 404);
    assert.equal((await fetch(`${base}/api/cameras/other/latest.jpg`)).status, 404);
    assert.equal((await fetch(`${base}/api/cameras/gate/latest.jpg`)).status, 404);
    assert.equal((await fetch(`${base}/api/cameras/%E0%A4%A/latest.jpg`)).status, 400);
    assert.equal((await fetch(`${base}/metrics`, { method: 'DELETE' })).status, 405);
    const busy = await fetch(`${base}/api/detect`, { method: 'POST', body: 'x' });
    assert.equal(busy.status, 503);
    assert.deepEqual(await busy.json(), { error: 'the detector is busy' });
    const big = await fetch(`${base}/api/detect`, { method: 'POST', body: new Uint8Array(2048) });
    assert.equal(big.status, 413);
    assert.equal((await fetch(`${base}/api/detect`, { method: 'POST', body: '' })).status, 400);
  });

  it('serves the live page and its modules (JavaScript, nosniff) by file name only; a foreign Host gets neither', async (t) => {
    const dir = await tempDir(t);
    await writeFile(join(dir, 'main.js'), "import { el } from './dom.js';\n");
    await writeFile(join(dir, 'dom.js'), 'export const el = 1;\n');
    await writeFile(join(dir, 'notes.txt'), 'not a module\n');
    const base = await serve(t, httpSource(), 1024, false, pathToFileURL(dir + '/'));
    const page = await fetch(`${base}/`);
    assert.equal(page.headers.get('content-type'), 'text/html; charset=utf-8');
    const html = await page.text();
    assert.equal(html, LIVE_PAGE);
    assert.match(html, /<script type="module" src="\/page\/main\.js"><\/script>/);
    for (const [name, text] of [
      ['main.js', "import { el } from './dom.js';\n"],
      ['dom.js', 'export const el = 1;\n'],
    ]) {
      const res = await fetch(`${base}/page/${name}`);
      assert.equal(res.status, 200, name);
      assert.equal(res.headers.get('content-type'), 'text/javascript; charset=utf-8');
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
      assert.equal(await res.text(), text);
    }
    for (const path of ['/page/notes.txt', '/page/%2e%2e%2fpackage.json', '/page/', '/page/main.js/x'])
      assert.equal((await fetch(`${base}${path}`)).status, 404, path);
    assert.equal((await fetch(`${base}/page/main.js`, { method: 'POST' })).status, 405);
    for (const path of ['/', '/page/main.js']) {
      const res = await fetch(`${base}${path}`, { headers: { 'x-forwarded-host': 'evil.test' } });
      assert.equal(res.status, 403, path);
      assert.match(
        ((await res.json()) as { error: string }).error,
        /^Host 'evil\.test' is not a name of this server/,
      );
    }
  });

  it('says when the live page was not built: main.js answers 404 with why, the log names the file', async (t) => {
    const dir = await tempDir(t);
    const unbuilt = pathToFileURL(join(dir, 'page') + '/');
    const scripts = await PageScripts.load(unbuilt);
    assert.equal(scripts.get('main.js'), undefined);
    assert.equal(
      scripts.missing,
      `the live page's script is not built: ${join(dir, 'page', 'main.js')} is missing (npm run build builds it)`,
    );
    await mkdir(join(dir, 'page'));
    await writeFile(join(dir, 'page', 'dom.js'), 'export {};\n');
    assert.ok((await PageScripts.load(unbuilt)).missing, 'a folder without main.js is not the page');
    const base = await serve(t, httpSource(), 1024, false, unbuilt);
    const res = await fetch(`${base}/page/main.js`);
    assert.equal(res.status, 404);
    assert.equal(await res.text(), "the live page's script is not built on this server (see its log)\n");
    assert.equal(await (await fetch(`${base}/page/other.js`)).text(), 'not found\n');
  });

  it("says on latest.jpg the frame's time and the boxes drawn on it, as ASCII JSON", async (t) => {
    const boxes = { labels: { person: 2, pérson: 1 }, zones: { door: { person: 1 } } };
    const base = await serve(
      t,
      httpSource({ latestJpeg: () => Promise.resolve({ jpeg: Buffer.from('jpeg'), ts: 1000, boxes }) }),
    );
    const res = await fetch(`${base}/api/cameras/gate/latest.jpg`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('x-argus-frame-ts'), '1970-01-01T00:00:01.000Z');
    assert.match(res.headers.get('x-argus-boxes')!, /^[\x20-\x7e]+$/);
    assert.deepEqual(JSON.parse(res.headers.get('x-argus-boxes')!), boxes);
  });

  it('draws latest.jpg at the width asked for, 400 for a width out of range', async (t) => {
    const widths: (number | undefined)[] = [];
    const base = await serve(
      t,
      httpSource({
        latestJpeg: (_camera, width) => {
          widths.push(width);
          return Promise.resolve({ jpeg: Buffer.from('jpeg'), ts: 0, boxes: { labels: {}, zones: {} } });
        },
      }),
    );
    const url = `${base}/api/cameras/gate/latest.jpg`;
    assert.equal((await fetch(url)).status, 200);
    assert.equal((await fetch(`${url}?width=480&t=17`)).status, 200, 'a cache-buster is ignored');
    assert.deepEqual(widths, [undefined, 480]);
    for (const bad of ['10', '5000', 'wide', '3.5']) {
      const res = await fetch(`${url}?width=${bad}`);
      assert.equal(res.status, 400);
      assert.deepEqual(await res.json(), {
        error: 'width: must be a whole number of pixels from 64 to 1920',
      });
    }
  });

  it('hands the uploaded image to detect: a form file with its name, or the raw body, and the model', async (t) => {
    const got: { data: string; name: string; model: string }[] = [];
    const base = await serve(
      t,
      httpSource({
        detect: (data, name, model) => {
          got.push({ data: data.toString(), name, model });
          return Promise.resolve({ ok: true });
        },
      }),
    );
    const form = new FormData();
    form.append('note', 'hello');
    form.append('image', new Blob(['JPEGDATA']), 'cam.jpg');
    assert.equal((await fetch(`${base}/api/detect`, { method: 'POST', body: form })).status, 200);
    assert.equal(
      (await fetch(`${base}/api/detect?model=plates`, { method: 'POST', body: 'raw' })).status,
      200,
    );
    assert.deepEqual(got, [
      { data: 'JPEGDATA', name: 'cam.jpg', model: 'default' },
      { data: 'raw', name: 'upload', model: 'plates' },
    ]);
    for (const [query, error] of [
      ['model=plats', "model: there is no model named 'plats' (the models are default, plates)"],
      ['model=plates&model=default', 'model: give it once'],
      ['modle=plates', 'modle: unknown parameter (the one parameter is model)'],
    ]) {
      const res = await fetch(`${base}/api/detect?${query}`, { method: 'POST', body: 'raw' });
      assert.deepEqual([res.status, await res.json()], [400, { error }], query);
    }
    assert.equal(got.length, 2, 'a request naming no model that runs never reaches detect');
    const big = await fetch(`${base}/api/detect`, { method: 'POST', body: new Uint8Array(2048) });
    assert.equal(big.status, 413);
  });
  it('answers GET /api/events from the history with the query it was given, or 400 naming a bad parameter', async (t) => {
    const queries: EventQuery[] = [];
    const base = await serve(
      t,
      httpSource({
        events: (q) => {
          queries.push(q);
          return [{ id: 'e1' }];
        },
      }),
    );
    const res = await fetch(`${base}/api/events`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/json');
    assert.deepEqual(await res.json(), [{ id: 'e1' }]);
    await fetch(
      `${base}/api/events?camera=front%20door&label=person&zone=drive&after=2026-11-30T12:00:00Z&limit=5`,
    );
    await fetch(`${base}/api/events?after=2026-11-30T13:00:00+01:00`); // '+' arrives as a space
    await fetch(`${base}/api/events?after=2026-11-30`);
    assert.deepEqual(queries, [
      { limit: 100 },
      {
        camera: 'front door',
        label: 'person',
        zone: 'drive',
        after: Date.parse('2026-11-30T12:00:00Z'),
        limit: 5,
      },
      { limit: 100, after: Date.parse('2026-11-30T12:00:00Z') },
      { limit: 100, after: Date.parse('2026-11-30T00:00:00Z') },
    ]);
    const error = async (query: string): Promise<[number, string]> => {
      const r = await fetch(`${base}/api/events?${query}`);
      return [r.status, ((await r.json()) as { error: string }).error];
    };
    assert.deepEqual(await error('cam=gate'), [
      400,
      'cam: unknown parameter (the parameters are camera, label, zone, after, limit)',
    ]);
    assert.deepEqual(await error('label=a&label=b'), [400, 'label: given more than once']);
    assert.deepEqual(await error('camera=a%2Fb'), [
      400,
      "camera: must not contain '/', '+' or '#' (it is used as an MQTT topic level)",
    ]);
    assert.deepEqual(await error('zone='), [400, 'zone: must not be empty']);
    for (const after of ['yesterday', '1764504000000', '2026-13-45T00:00:00Z'])
      assert.deepEqual(await error(`after=${after}`), [
        400,
        'after: not an ISO 8601 time, e.g. 2026-11-30T12:00:00Z',
      ]);
    for (const limit of ['0', '1001', '-1', '2.5', 'ten'])
      assert.deepEqual(await error(`limit=${limit}`), [400, 'limit: must be a whole number from 1 to 1000']);
    assert.equal(queries.length, 4, 'bad queries never reach the history');
  });

  it('serves an event’s snapshot and its crop by id, 404 for unknown ids and events without one', async (t) => {
    const asked: [string, 'full' | 'crop'][] = [];
    const base = await serve(
      t,
      httpSource({
        hasEvent: (id) => id === '1-front door-1' || id === 'bare',
        eventSnapshot: (id, which) => {
          asked.push([id, which]);
          return Promise.resolve(id === 'bare' ? undefined : Buffer.from(which === 'crop' ? 'CROP' : 'FULL'));
        },
      }),
    );
    const url = `${base}/api/events/1-front%20door-1/snapshot.jpg`;
    const full = await fetch(url);
    assert.equal(full.status, 200);
    assert.equal(full.headers.get('content-type'), 'image/jpeg');
    assert.equal(await full.text(), 'FULL');
    assert.equal(await (await fetch(`${url}?crop=1`)).text(), 'CROP');
    assert.equal(await (await fetch(`${url}?crop=0`)).text(), 'FULL');
    assert.equal((await fetch(url, { method: 'HEAD' })).status, 200);
    assert.deepEqual(asked.slice(0, 3), [
      ['1-front door-1', 'full'],
      ['1-front door-1', 'crop'],
      ['1-front door-1', 'full'],
    ]);
    const answer = async (path: string): Promise<[number, string]> => {
      const r = await fetch(`${base}${path}`);
      return [r.status, await r.text()];
    };
    assert.deepEqual(await answer('/api/events/nope/snapshot.jpg'), [404, 'no such event\n']);
    assert.deepEqual(await answer('/api/events/bare/snapshot.jpg'), [404, 'no snapshot for this event\n']);
    assert.deepEqual(await answer('/api/events/%E0%A4%A/snapshot.jpg'), [400, 'bad event id\n']);
    assert.deepEqual(await answer('/api/events/bare/snapshot.jpg?crop=yes'), [
      400,
      '{"error":"crop: must be 0 or 1"}',
    ]);
    assert.deepEqual(await answer('/api/events/bare/snapshot.jpg?size=big'), [
      400,
      '{"error":"size: unknown parameter (the one parameter is crop)"}',
    ]);
    assert.equal((await fetch(url, { method: 'POST' })).status, 405);
  });

  it("serves an event's clip whole or by byte range (a player seeks), 416 past its end, 404 without one", async (t) => {
    const dir = await tempDir(t);
    const file = join(dir, 'clip.mp4');
    const body = Buffer.from(Array.from({ length: 1000 }, (_, i) => i % 251));
    await writeFile(file, body);
    let opened = 0;
    const base = await serve(
      t,
      httpSource({
        hasEvent: (id) => id === '1-gate-1' || id === 'bare',
        eventClip: async (id) => {
          if (id !== '1-gate-1') return undefined;
          opened++;
          return { file: await open(file, 'r'), size: body.length };
        },
      }),
    );
    const url = `${base}/api/events/1-gate-1/clip.mp4`;
    const whole = await fetch(url);
    assert.equal(whole.status, 200);
    assert.equal(whole.headers.get('content-type'), 'video/mp4');
    assert.equal(whole.headers.get('accept-ranges'), 'bytes');
    assert.deepEqual(Buffer.from(await whole.arrayBuffer()), body);
    const part = await fetch(url, { headers: { Range: 'bytes=100-199' } });
    assert.equal(part.status, 206);
    assert.equal(part.headers.get('content-range'), 'bytes 100-199/1000');
    assert.deepEqual(Buffer.from(await part.arrayBuffer()), body.subarray(100, 200));
    const tail = await fetch(url, { headers: { Range: 'bytes=-10' } });
    assert.deepEqual(Buffer.from(await tail.arrayBuffer()), body.subarray(990));
    const open_ = await fetch(url, { headers: { Range: 'bytes=995-' } });
    assert.equal(open_.headers.get('content-range'), 'bytes 995-999/1000');
    const past = await fetch(url, { headers: { Range: 'bytes=1000-' } });
    assert.equal(past.status, 416);
    assert.equal(past.headers.get('content-range'), 'bytes */1000');
    await past.text();
    const head = await fetch(url, { method: 'HEAD' });
    assert.equal(head.headers.get('content-length'), '1000');
    assert.equal((await fetch(`${base}/api/events/bare/clip.mp4`)).status, 404);
    assert.equal((await fetch(`${base}/api/events/nope/clip.mp4`)).status, 404);
    assert.equal(opened, 6);
  });

  it('reads one byte range; several, or none, mean the whole file', () => {
    assert.deepEqual(parseRange('bytes=0-0', 10), [0, 0]);
    assert.deepEqual(parseRange('bytes=5-100', 10), [5, 9]);
    assert.deepEqual(parseRange('bytes=-3', 10), [7, 9]);
    assert.deepEqual(parseRange('bytes=-30', 10), [0, 9]);
    assert.equal(parseRange('bytes=10-', 10), 'unsatisfiable');
    assert.equal(parseRange('bytes=-0', 10), 'unsatisfiable');
    assert.equal(parseRange('bytes=0-1,5-6', 10), undefined);
    assert.equal(parseRange('items=0-1', 10), undefined);
    assert.equal(parseRange(undefined, 10), undefined);
    assert.equal(parseRange('bytes=5-2', 10), undefined);
  });

  it('answers the edges of Range as RFC 9110 says: a zero-length file, suffixes past the start, several ranges, spaces, case', () => {
    // A zero-length clip: a suffix range is satisfiable (§14.1.1) but no Content-Range names zero
    // bytes: the Range is ignored (the whole, empty file); any other range is unsatisfiable.
    assert.equal(parseRange('bytes=-5', 0), undefined);
    assert.equal(parseRange('bytes=0-', 0), 'unsatisfiable');
    assert.equal(parseRange('bytes=0-0', 0), 'unsatisfiable');
    assert.equal(parseRange('bytes=-0', 0), 'unsatisfiable');
    // A suffix longer than the file is the whole file, as a range.
    assert.deepEqual(parseRange('bytes=-11', 10), [0, 9]);
    assert.deepEqual(parseRange('bytes=-99999999999999999999', 10), [0, 9]);
    assert.equal(parseRange('bytes=99999999999999999999-', 10), 'unsatisfiable');
    // Start past the end: invalid (ignored) when the end is given before the start, else 416.
    assert.equal(parseRange('bytes=9-3', 10), undefined);
    assert.equal(parseRange('bytes=12-20', 10), 'unsatisfiable');
    // Several ranges: the whole file, unless none is satisfiable.
    assert.equal(parseRange('bytes=0-1, 5-6', 10), undefined);
    assert.equal(parseRange('bytes=10-, 20-30', 10), 'unsatisfiable');
    assert.equal(parseRange('bytes=-0,12-', 10), 'unsatisfiable');
    // A list may have spaces around its commas, and empty elements; the unit any case.
    assert.deepEqual(parseRange('bytes=2-4 ,', 10), [2, 4]);
    assert.deepEqual(parseRange('bytes=, 2-4', 10), [2, 4]);
    assert.deepEqual(parseRange('Bytes=2-4', 10), [2, 4]);
    assert.deepEqual(parseRange('  bytes=2-4  ', 10), [2, 4]);
    // Not a range-spec: the header is ignored.
    assert.equal(parseRange('bytes=2 - 4', 10), undefined);
    assert.equal(parseRange('bytes =2-4', 10), undefined);
    assert.equal(parseRange('bytes=,', 10), undefined);
    assert.equal(parseRange('bytes=0x10-', 10), undefined);
    assert.equal(parseRange('bytes=1-2,x', 10), undefined);
  });

  it('a zero-length clip: 200 and no bytes for a suffix range, 416 bytes */0 for one from a start', async (t) => {
    const dir = await tempDir(t);
    const file = join(dir, 'empty.mp4');
    await writeFile(file, Buffer.alloc(0));
    const base = await serve(
      t,
      httpSource({
        hasEvent: () => true,
        eventClip: async () => ({ file: await open(file, 'r'), size: 0 }),
      }),
    );
    const url = `${base}/api/events/1-gate-1/clip.mp4`;
    const suffix = await fetch(url, { headers: { Range: 'bytes=-5' } });
    assert.equal(suffix.status, 200);
    assert.equal(suffix.headers.get('content-range'), null);
    assert.equal(suffix.headers.get('content-length'), '0');
    assert.equal((await suffix.arrayBuffer()).byteLength, 0);
    const from = await fetch(url, { headers: { Range: 'bytes=0-' } });
    assert.equal(from.status, 416);
    assert.equal(from.headers.get('content-range'), 'bytes */0');
    await from.text();
  });

  it('deletes an event from this machine only (or with the token), 404 when there is none', async (t) => {
    const deleted: string[] = [];
    const base = await serve(
      t,
      httpSource({
        deleteEvent: (id) => {
          deleted.push(id);
          return Promise.resolve(id === '1-gate-1');
        },
      }),
    );
    assert.equal((await fetch(`${base}/api/events/1-gate-1`, { method: 'DELETE' })).status, 204);
    assert.equal((await fetch(`${base}/api/events/nope`, { method: 'DELETE' })).status, 404);
    const proxied = await fetch(`${base}/api/events/1-gate-1`, {
      method: 'DELETE',
      headers: { 'X-Forwarded-For': '203.0.113.9' },
    });
    assert.equal(proxied.status, 403);
    assert.equal((await fetch(`${base}/api/events/1-gate-1`, { method: 'PUT' })).status, 405);
    assert.deepEqual(deleted, ['1-gate-1', 'nope']);
  });

  it('serves the KServe v2 endpoints under /v2 only with http.inference, their bodies bounded', async (t) => {
    const models = () => [
      { name: 'default', inputSize: 4, labels: ['a'], ready: () => true, detect: () => Promise.resolve([]) },
    ];
    const off = await serve(t, httpSource({ servedModels: models }));
    assert.equal((await fetch(`${off}/v2`)).status, 404);
    const on = await serve(t, httpSource({ servedModels: models }), 1024, true);
    const meta = await fetch(`${on}/v2/models/default`);
    assert.deepEqual(
      [meta.status, meta.headers.get('content-type'), ((await meta.json()) as { name: string }).name],
      [200, 'application/json', 'default'],
    );
    const big = await fetch(`${on}/v2/models/default/infer`, { method: 'POST', body: Buffer.alloc(2000) });
    assert.deepEqual(
      [big.status, await big.json()],
      [413, { error: 'body of 2000 bytes is over the 1024-byte limit' }],
    );
    const bad = await fetch(`${on}/v2/models/default/infer`, { method: 'POST', body: '{"inputs": 5}' });
    assert.deepEqual([bad.status, await bad.json()], [400, { error: '"inputs" is not an array' }]);
    assert.equal((await fetch(`${on}/v2/health/live`, { method: 'HEAD' })).status, 200);
  });
});

describe('GET /api/fleet (issue 48 item 2)', () => {
  it('answers the fleet view as JSON, 404 without fleet:, 405 to another method', async (t) => {
    const view = {
      box: 'b1',
      connected: true,
      members: [{ name: 'b1', capacity: 4, labels: ['gpu'], cameras: ['gate'], limit: 4 }],
      owners: { gate: { box: 'b1', epoch: 12 } },
      running: ['gate'],
      unplaced: ['yard'],
    };
    const base = await serve(t, httpSource({ fleet: () => view }));
    const res = await fetch(`${base}/api/fleet`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/json');
    assert.equal(res.headers.get('cache-control'), 'no-store');
    assert.deepEqual(await res.json(), view);
    assert.equal((await fetch(`${base}/api/fleet`, { method: 'POST' })).status, 405);
    const single = await serve(t, httpSource());
    const none = await fetch(`${single}/api/fleet`);
    assert.equal(none.status, 404);
    assert.match(await none.text(), /not in a fleet/);
  });
});
