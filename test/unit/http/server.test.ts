import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { HttpError, HttpServer, type HttpSource } from '../../../src/http/server.js';

function source(over: Partial<HttpSource> = {}): HttpSource {
  return {
    health: () => ({
      ok: false,
      detector: { ready_workers: 0, provider: null },
      mqtt: { connected: true, last_error: null },
      cameras: { gate: 'backoff' },
    }),
    cameras: () => [],
    cameraNames: () => ['gate'],
    latestJpeg: () => Promise.resolve(undefined),
    metrics: () => Promise.resolve({ contentType: 'text/plain', body: '' }),
    detect: () => Promise.reject(new HttpError(503, 'the detector is busy')),
    ...over,
  };
}

async function serve(
  t: { after: (fn: () => Promise<void>) => void },
  src: HttpSource,
  maxBody = 1024,
): Promise<string> {
  const server = new HttpServer(
    { host: '127.0.0.1', port: 0, max_body_mb: maxBody / (1024 * 1024) },
    src,
    pino({ level: 'silent' }),
  );
  await server.start();
  t.after(() => server.stop());
  return server.url;
}

describe('HTTP server', () => {
  it('answers 503 with the camera states when no detector session is ready', async (t) => {
    const base = await serve(t, source());
    const res = await fetch(`${base}/healthz`);
    assert.equal(res.status, 503);
    assert.deepEqual(await res.json(), {
      ok: false,
      detector: { ready_workers: 0, provider: null },
      mqtt: { connected: true, last_error: null },
      cameras: { gate: 'backoff' },
    });
  });

  it('404s unknown routes and cameras, 405s other methods, and passes detector errors through', async (t) => {
    const base = await serve(t, source());
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

  it('hands the uploaded image to detect: a form file with its name, or the raw body', async (t) => {
    const got: { data: string; name: string }[] = [];
    const base = await serve(
      t,
      source({
        detect: (data, name) => {
          got.push({ data: data.toString(), name });
          return Promise.resolve({ ok: true });
        },
      }),
    );
    const form = new FormData();
    form.append('note', 'hello');
    form.append('image', new Blob(['JPEGDATA']), 'cam.jpg');
    assert.equal((await fetch(`${base}/api/detect`, { method: 'POST', body: form })).status, 200);
    assert.equal((await fetch(`${base}/api/detect`, { method: 'POST', body: 'raw' })).status, 200);
    assert.deepEqual(got, [
      { data: 'JPEGDATA', name: 'cam.jpg' },
      { data: 'raw', name: 'upload' },
    ]);
    const big = await fetch(`${base}/api/detect`, { method: 'POST', body: new Uint8Array(2048) });
    assert.equal(big.status, 413);
  });
});
