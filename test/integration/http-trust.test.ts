import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EventPayload } from '../../src/publish/index.js';
import { chromiumSkip, launchChromium } from '../helpers/browser.js';
import { startDaemon, writeDaemonConfig } from '../helpers/daemon.js';
import { tempDir, waitFor } from '../helpers/env.js';
import { nginxSkip, send, startNginx, type ProxySite } from '../helpers/nginx.js';
import { freePort } from '../helpers/rtsp.js';

/**
 * Who may steer and read (issue 43, items 1 and 2), with a real nginx in front and a real
 * Chromium: the daemon decides from the connection and its config, not from the headers a proxy
 * may leave out, and answers no page whose name was pointed at this machine.
 */

/** A still scene with a white square: the fixture model sees one `bright` object in it. */
const SQUARE =
  'lavfi:color=c=0x303030:s=640x480:r=5[bg];color=c=white:s=64x64:r=5[box];[bg][box]overlay=x=192:y=112';
const TOKEN = 'proxy-test-token-0123456789';

/** nginx's minimal config, and the one tutorials give, in front of `upstream`. */
const DEFAULT_SITE = (upstream: number): string[] => [`proxy_pass http://127.0.0.1:${upstream};`];
const TUTORIAL_SITE = (upstream: number): string[] => [
  `proxy_pass http://127.0.0.1:${upstream};`,
  'proxy_set_header Host $host;',
  'proxy_set_header X-Real-IP $remote_addr;',
  'proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;',
  'proxy_set_header X-Forwarded-Proto $scheme;',
];

async function daemonWith(t: Parameters<typeof tempDir>[0], http: Record<string, unknown>) {
  const dir = await tempDir(t);
  const port = await freePort();
  const config = await writeDaemonConfig(dir, {
    mqtt: { embedded: { port: await freePort() } },
    http: { port, ...http },
    cameras: { gate: { url: SQUARE, fps: 2, objects: { track: ['bright'] } } },
  });
  const daemon = startDaemon(t, config);
  const base = `http://127.0.0.1:${port}`;
  await waitFor('argus started', () => daemon.output().includes('argus started'), 60_000);
  return { daemon, port, base };
}

const PUT_DETECT = '/api/control/cameras/gate/detect';

describe('HTTP behind a reverse proxy (real nginx)', { skip: nginxSkip('the reverse proxy test') }, () => {
  it('with http.token, every change and delete through nginx (default and tutorial configs) and from this machine needs the token', async (t) => {
    const { port, base, daemon } = await daemonWith(t, {
      token: TOKEN,
      allowed_hosts: ['argus.example.com'],
      trusted_proxies: ['127.0.0.1'],
    });
    const sites = { default: await freePort(), tutorial: await freePort() };
    await startNginx(t, [
      { port: sites.default, location: DEFAULT_SITE(port) },
      { port: sites.tutorial, location: TUTORIAL_SITE(port) },
    ]);
    let event = '';
    // An event to delete: the square, once the history has it.
    for (let i = 0; i < 120 && event === ''; i++) {
      const listed = JSON.parse((await send(`${base}/api/events`, 'GET')).body) as EventPayload[];
      event = listed[0]?.id ?? '';
      if (event === '') await new Promise((r) => setTimeout(r, 500));
    }
    assert.notEqual(event, '', 'the square made an event');
    const host = { Host: 'argus.example.com' };
    for (const [name, proxyPort] of Object.entries(sites)) {
      const via = `http://127.0.0.1:${proxyPort}`;
      const put = await send(`${via}${PUT_DETECT}`, 'PUT', host, 'false');
      assert.equal(put.status, 403, `${name}: PUT without the token: ${put.body}`);
      assert.match(put.body, /only with Authorization: Bearer <http.token>/);
      assert.equal(put.headers['www-authenticate'], 'Bearer realm="argus"');
      const del = await send(`${via}/api/events/${encodeURIComponent(event)}`, 'DELETE', host);
      assert.equal(del.status, 403, `${name}: DELETE without the token: ${del.body}`);
      const wrong = await send(
        `${via}${PUT_DETECT}`,
        'PUT',
        { ...host, Authorization: `Bearer ${TOKEN}x` },
        'false',
      );
      assert.equal(wrong.status, 403, `${name}: a wrong token`);
      const ok = await send(
        `${via}${PUT_DETECT}`,
        'PUT',
        { ...host, Authorization: `Bearer ${TOKEN}` },
        'true',
      );
      assert.equal(ok.status, 200, `${name}: with the token: ${ok.body}`);
    }
    // nginx appends its client to X-Forwarded-For; behind a trusted proxy the log names the
    // first address back that is not a trusted proxy.
    const named = await send(
      `http://127.0.0.1:${sites.tutorial}${PUT_DETECT}`,
      'PUT',
      { ...host, Authorization: `Bearer ${TOKEN}`, 'X-Forwarded-For': '198.51.100.4' },
      'false',
    );
    assert.equal(named.status, 200);
    await waitFor('the client named', () =>
      daemon.output().includes('"client":"http 198.51.100.4 via proxy"'),
    );
    // From this machine, straight to Argus, a token set is a token needed too.
    assert.equal((await send(`${base}${PUT_DETECT}`, 'PUT', {}, 'false')).status, 403);
    const listed = JSON.parse((await send(`${base}/api/events`, 'GET')).body) as EventPayload[];
    assert.ok(
      listed.some((e) => e.id === event),
      'no delete went through: the event is still there',
    );
    // The tutorial config passes the browser's Host on: a foreign one reads nothing.
    const foreign = await send(`http://127.0.0.1:${sites.tutorial}/api/events`, 'GET', { Host: 'evil.test' });
    assert.equal(foreign.status, 403, foreign.body);
    assert.match(foreign.body, /Host 'evil.test' is not a name of this server/);
    assert.equal((await send(`http://127.0.0.1:${sites.tutorial}/api/events`, 'GET', host)).status, 200);
  });

  it('without http.token, a request carrying any one of a proxy’s headers changes nothing; one straight from this machine does', async (t) => {
    const { port, base, daemon } = await daemonWith(t, {});
    const headers: [string, string][] = [
      ['X-Forwarded-For', '$proxy_add_x_forwarded_for'],
      ['X-Real-IP', '$remote_addr'],
      ['Forwarded', '"for=$remote_addr"'],
      ['X-Forwarded-Host', '$host'],
      ['X-Forwarded-Proto', '$scheme'],
      ['Via', '"1.1 nginx"'],
    ];
    const sites: (ProxySite & { header: string })[] = [];
    for (const [header, value] of headers)
      sites.push({
        header,
        port: await freePort(),
        location: [`proxy_pass http://127.0.0.1:${port};`, `proxy_set_header ${header} ${value};`],
      });
    await startNginx(t, sites);
    for (const site of sites) {
      const put = await send(`http://127.0.0.1:${site.port}${PUT_DETECT}`, 'PUT', {}, 'false');
      assert.equal(put.status, 403, `${site.header} alone: ${put.body}`);
      assert.match(put.body, /through a proxy only with http.token set/);
    }
    // Straight from this machine, through no proxy: allowed, and logged as local.
    assert.equal((await send(`${base}${PUT_DETECT}`, 'PUT', {}, 'false')).status, 200);
    await waitFor('the change logged', () => /"client":"http 127\.0\.0\.1"/.test(daemon.output()));
  });
});

describe('DNS rebinding (real Chromium)', { skip: chromiumSkip('the DNS rebinding test') }, () => {
  it('a page whose name was pointed at this machine reads nothing: page, events, frames, clips, metrics', async (t) => {
    const { port, base } = await daemonWith(t, {});
    const browser = await launchChromium(t, ['--host-resolver-rules=MAP evil.test 127.0.0.1']);
    const page = await browser.newPage();
    const paths = [
      '/',
      '/api/events',
      '/api/cameras',
      '/api/cameras/gate/latest.jpg',
      '/metrics',
      '/api/control',
    ];
    // The daemon's own name: the page and its data.
    const home = await page.goto(`${base}/`);
    assert.equal(home?.status(), 200);
    // The same server under a foreign name, as a rebinding page would reach it: its document
    // and every fetch it makes to its own origin are refused.
    const evil = await page.goto(`http://evil.test:${port}/`);
    assert.equal(evil?.status(), 403);
    const statuses = await page.evaluate(
      async (list) => Promise.all(list.map(async (p) => (await fetch(p)).status)),
      paths,
    );
    assert.deepEqual(
      statuses,
      paths.map(() => 403),
      `the statuses of ${paths.join(', ')}`,
    );
    const body = await page.evaluate(async () => (await fetch('/api/events')).text());
    assert.match(body, /is not a name of this server/);
  });
});
