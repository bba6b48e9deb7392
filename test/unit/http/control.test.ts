import assert from 'node:assert/strict';
import { request } from 'node:http';
import { networkInterfaces } from 'node:os';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import type { ChangeOutcome, ChangeRequest, ControlView } from '../../../src/control/index.js';
import { namedRecord } from '../../../src/core/names.js';
import { changeRequest, controlRoute, MAX_CONTROL_BODY, type ControlApi } from '../../../src/http/control.js';
import { HttpError } from '../../../src/http/errors.js';
import { http } from '../../../src/config/http.js';
import { HttpServer } from '../../../src/http/server.js';
import { controlSource } from '../../helpers/control-source.js';

const TOKEN = 'a-token-of-sixteen-or-more';

/** A Control that records the changes asked for and answers each with `outcome`. */
class FakeControl implements ControlApi {
  readonly changes: { req: ChangeRequest; by: string }[] = [];
  outcome: ChangeOutcome = { ok: true, changed: true };
  detect = true;
  constructor(public enabled = true) {}
  view(): ControlView {
    const gate = Object.assign(namedRecord<boolean | number>(), {
      enabled: true,
      detect: this.detect,
      fps: 5,
    });
    return { enabled: this.enabled, mode: 'none', modes: ['none', 'away'], cameras: { gate }, overrides: {} };
  }
  change(req: ChangeRequest, by: string): Promise<ChangeOutcome> {
    this.changes.push({ req, by });
    if (this.outcome.ok && req.kind === 'set' && req.key === 'detect') this.detect = req.value as boolean;
    return Promise.resolve(this.outcome);
  }
}

async function serve(
  t: { after: (fn: () => Promise<void>) => void },
  control: ControlApi | undefined,
  opts: { host?: string; token?: string } = {},
): Promise<HttpServer> {
  const server = new HttpServer(
    { host: opts.host ?? '127.0.0.1', port: 0, max_body_mb: 1, inference: false, token: opts.token },
    controlSource(control),
    pino({ level: 'silent' }),
  );
  await server.start();
  t.after(() => server.stop());
  return server;
}

const put = (
  url: string,
  body: string | undefined,
  headers: Record<string, string> = {},
): Promise<Response> =>
  fetch(url, { method: 'PUT', body, headers: { 'Content-Type': 'application/json', ...headers } });

/** This machine's first address that is not loopback: requests to it come from it, not from 127.0.0.1. */
const outward = Object.values(networkInterfaces())
  .flat()
  .find((i) => i !== undefined && !i.internal && i.family === 'IPv4')?.address;

describe('control routes', () => {
  it('reads the route from the path, each segment decoded on its own', () => {
    assert.deepEqual(controlRoute('/api/control'), { kind: 'view' });
    assert.deepEqual(controlRoute('/api/control/mode'), { kind: 'mode' });
    assert.deepEqual(controlRoute('/api/control/cameras/gate/detect'), {
      kind: 'set',
      camera: 'gate',
      key: 'detect',
    });
    assert.deepEqual(controlRoute('/api/control/cameras/front%20door/zones.a%2Fb.enabled'), {
      kind: 'set',
      camera: 'front door',
      key: 'zones.a/b.enabled',
    });
    assert.deepEqual(controlRoute('/api/control/cameras/__proto__/lines/door/reset'), {
      kind: 'reset',
      camera: '__proto__',
      line: 'door',
    });
    assert.equal(controlRoute('/api/cameras'), undefined);
    assert.equal(controlRoute('/api/controls'), undefined);
    for (const bad of [
      '/api/control/',
      '/api/control/nope',
      '/api/control/cameras/gate',
      '/api/control/cameras//detect',
    ])
      assert.throws(
        () => controlRoute(bad),
        (e: HttpError) => e.status === 404,
        bad,
      );
    assert.throws(
      () => controlRoute('/api/control/cameras/%E0%A4%A/detect'),
      (e: HttpError) => e.status === 400,
    );
  });

  it('takes JSON bodies: booleans and numbers for settings, a string for the mode, nothing or true for a reset', () => {
    const set = { kind: 'set', camera: 'gate', key: 'detect' } as const;
    assert.deepEqual(changeRequest(set, Buffer.from('false')), { ...set, value: false });
    assert.deepEqual(changeRequest({ ...set, key: 'fps' }, Buffer.from(' 2.5\n')), {
      ...set,
      key: 'fps',
      value: 2.5,
    });
    assert.deepEqual(changeRequest({ kind: 'mode' }, Buffer.from('"away"')), { kind: 'mode', mode: 'away' });
    const reset = { kind: 'reset', camera: 'gate', line: 'door' } as const;
    assert.deepEqual(changeRequest(reset, Buffer.from('')), reset);
    assert.deepEqual(changeRequest(reset, Buffer.from('true')), reset);
    const refused = (route: Parameters<typeof changeRequest>[0], body: string, why: RegExp): void =>
      assert.throws(
        () => changeRequest(route, Buffer.from(body)),
        (e: HttpError) => e.status === 400 && why.test(e.message),
        body,
      );
    refused(set, '', /^body: empty; send true or false/);
    refused(set, 'OFF', /^body: not JSON \(.+\); send true or false/);
    refused(set, '"OFF"', /^body: send true or false \(a number for fps and priority\) as JSON$/);
    refused(set, '{"value": false}', /^body: send true or false/);
    refused({ kind: 'mode' }, 'away', /^body: not JSON .*a mode name as a JSON string/);
    refused({ kind: 'mode' }, '["away"]', /^body: a mode name as a JSON string/);
    refused(reset, 'false', /^body: send nothing or true$/);
  });
});

describe('HTTP control', () => {
  it('GET /api/control answers the settings; a PUT changes one through Control and answers them as they are now', async (t) => {
    const control = new FakeControl();
    const server = await serve(t, control);
    const got = await fetch(`${server.url}/api/control`);
    assert.equal(got.status, 200);
    assert.equal(got.headers.get('cache-control'), 'no-store');
    assert.deepEqual(await got.json(), JSON.parse(JSON.stringify(control.view())));
    assert.equal((await fetch(`${server.url}/api/control`, { method: 'HEAD' })).status, 200);

    const res = await put(`${server.url}/api/control/cameras/gate/detect`, 'false');
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as ControlView).cameras.gate!.detect, false);
    assert.equal((await put(`${server.url}/api/control/mode`, '"away"')).status, 200);
    assert.equal(
      (await put(`${server.url}/api/control/cameras/gate/lines/door/reset`, undefined)).status,
      200,
    );
    assert.deepEqual(control.changes, [
      { req: { kind: 'set', camera: 'gate', key: 'detect', value: false }, by: 'http 127.0.0.1' },
      { req: { kind: 'mode', mode: 'away' }, by: 'http 127.0.0.1' },
      { req: { kind: 'reset', camera: 'gate', line: 'door' }, by: 'http 127.0.0.1' },
    ]);
  });

  it("answers Control's refusals with their status, bad bodies with 400, and other methods with 405", async (t) => {
    const control = new FakeControl();
    const server = await serve(t, control);
    for (const status of [400, 403, 404] as const) {
      control.outcome = { ok: false, status, error: `refused ${status}` };
      const res = await put(`${server.url}/api/control/cameras/nope/detect`, 'true');
      assert.equal(res.status, status);
      assert.deepEqual(await res.json(), { error: `refused ${status}` });
    }
    const n = control.changes.length;
    const bad = await put(`${server.url}/api/control/cameras/gate/detect`, '{oops');
    assert.equal(bad.status, 400);
    assert.match(((await bad.json()) as { error: string }).error, /^body: not JSON/);
    const big = await put(`${server.url}/api/control/mode`, JSON.stringify('x'.repeat(MAX_CONTROL_BODY)));
    assert.equal(big.status, 413);
    assert.equal(control.changes.length, n, 'nothing bad reached Control');

    const wrong = await fetch(`${server.url}/api/control`, { method: 'PUT', body: 'true' });
    assert.equal(wrong.status, 405);
    assert.equal(wrong.headers.get('allow'), 'GET, HEAD');
    const get = await fetch(`${server.url}/api/control/cameras/gate/detect`);
    assert.equal(get.status, 405);
    assert.equal(get.headers.get('allow'), 'PUT');
    assert.equal((await put(`${server.url}/api/control/cameras/gate/zones/a/enabled`, 'true')).status, 404);
  });

  it('refuses every PUT with 403 while control is off, and answers 404 where no control runs', async (t) => {
    const control = new FakeControl(false);
    const server = await serve(t, control, { token: TOKEN });
    const res = await put(`${server.url}/api/control/cameras/gate/detect`, 'false', {
      Authorization: `Bearer ${TOKEN}`,
    });
    assert.equal(res.status, 403);
    assert.deepEqual(await res.json(), { error: 'control is off (control.enabled: false)' });
    assert.equal((await put(`${server.url}/api/control/mode`, '"away"')).status, 403);
    assert.equal(control.changes.length, 0);
    assert.equal(((await (await fetch(`${server.url}/api/control`)).json()) as ControlView).enabled, false);

    const none = await serve(t, undefined);
    assert.equal((await fetch(`${none.url}/api/control`)).status, 404);
  });

  it(
    'from another address: 403 without the token or with a wrong one, allowed with it',
    { skip: !outward && 'no address but loopback' },
    async (t) => {
      const control = new FakeControl();
      const server = await serve(t, control, { host: '0.0.0.0', token: TOKEN });
      const url = `http://${outward}:${new URL(server.url).port}/api/control/cameras/gate/detect`;
      assert.equal((await fetch(url.replace('/cameras/gate/detect', ''))).status, 200, 'GET needs no token');
      for (const headers of [{}, { Authorization: `Bearer ${TOKEN.toUpperCase()}` }] as Record<
        string,
        string
      >[]) {
        const res = await put(url, 'false', headers);
        assert.equal(res.status, 403);
        const body = await res.text();
        assert.ok(!body.includes(TOKEN) && !body.includes(TOKEN.toUpperCase()), body);
      }
      assert.equal(control.changes.length, 0);
      assert.equal((await put(url, 'false', { Authorization: `Bearer ${TOKEN}` })).status, 200);
      assert.deepEqual(control.changes, [
        { req: { kind: 'set', camera: 'gate', key: 'detect', value: false }, by: `http ${outward}` },
      ]);

      const local = await serve(t, control, { host: '0.0.0.0' });
      const res = await put(url.replace(new URL(server.url).port, new URL(local.url).port), 'true');
      assert.equal(res.status, 403);
      assert.match(((await res.json()) as { error: string }).error, /set http.token/);
    },
  );
});

describe('request targets', () => {
  it('takes a path only: `//host/…` and an absolute URL are 400, not read as another path', async (t) => {
    const control = new FakeControl();
    const server = await serve(t, control);
    const { port } = new URL(server.url);
    const raw = (path: string): Promise<number> =>
      new Promise((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port, path, method: 'PUT' }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.end('false');
      });
    assert.equal(await raw('//x/api/control/cameras/gate/detect'), 400);
    assert.equal(await raw('http://evil.test/api/control/cameras/gate/detect'), 400);
    assert.equal(control.changes.length, 0);
    assert.equal(await raw('/api/control/cameras/gate/detect'), 200);
  });

  it('http.token must be one a Bearer header can carry', () => {
    const token = (value: string) => http.safeParse({ token: value });
    assert.equal(token('correct-horse-battery-staple').success, true);
    const spaced = token('correct horse battery staple');
    assert.equal(spaced.success, false);
    assert.match(JSON.stringify(spaced.error?.issues), /may hold only letters, digits/);
  });
});
