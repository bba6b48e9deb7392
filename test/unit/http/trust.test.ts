import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { addressProblem, isLoopback } from '../../../src/addresses.js';
import { AllowedHosts, clientOf, mayChange, PROXY_HEADERS, Proxies } from '../../../src/http/trust.js';

const TOKEN = 'a-token-of-sixteen-or-more';
const NONE = new Proxies([]);
const why = (r: ReturnType<typeof mayChange>): string => (r.ok ? 'allowed' : r.error);

describe('addresses', () => {
  it('knows loopback addresses, IPv4 and IPv6', () => {
    for (const a of ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1', '::FFFF:127.0.0.9'])
      assert.equal(isLoopback(a), true, a);
    for (const a of [
      undefined,
      '',
      '192.0.2.2',
      '::ffff:192.0.2.2',
      '128.0.0.1',
      'fd00::1',
      '127.0.0.1.nip.io',
    ])
      assert.equal(isLoopback(a), false, String(a));
  });

  it('takes addresses and CIDR blocks for http.trusted_proxies, and says what is wrong with others', () => {
    for (const ok of ['127.0.0.1', '10.0.0.0/8', '::1', 'fd00::/8', '0.0.0.0/0'])
      assert.equal(addressProblem(ok), undefined);
    assert.match(addressProblem('proxy.lan') ?? '', /'proxy.lan' is not an IP address or a CIDR block/);
    assert.match(addressProblem('10.0.0.0/33') ?? '', /prefix length must be 0 to 32/);
    assert.match(addressProblem('fd00::/129') ?? '', /0 to 128/);
    assert.match(addressProblem('10.0.0.0/8/1') ?? '', /not an IP address/);
  });
});

describe('who a request comes from', () => {
  it('believes forwarded headers only from a trusted proxy, and then the first untrusted hop back', () => {
    const proxies = new Proxies(['127.0.0.1', '10.1.0.0/16']);
    const xff = { 'x-forwarded-for': '198.51.100.4, 10.1.2.3' };
    assert.deepEqual(clientOf('127.0.0.1', xff, proxies), { address: '198.51.100.4', proxied: true });
    assert.deepEqual(clientOf('::ffff:127.0.0.1', { 'x-real-ip': '192.0.2.9' }, proxies), {
      address: '192.0.2.9',
      proxied: true,
    });
    assert.deepEqual(clientOf('127.0.0.1', { forwarded: 'for="[2001:db8::1]:4711";proto=https' }, proxies), {
      address: '2001:db8::1',
      proxied: true,
    });
    // A trusted proxy that says nothing (nginx's minimal proxy_pass) is still a proxy.
    assert.deepEqual(clientOf('127.0.0.1', {}, proxies), { address: '127.0.0.1', proxied: true });
    // From anyone else the headers are not believed, but mark the request as proxied.
    assert.deepEqual(clientOf('192.0.2.7', xff, proxies), { address: '192.0.2.7', proxied: true });
    assert.deepEqual(clientOf('192.0.2.7', {}, proxies), { address: '192.0.2.7', proxied: false });
    // Only addresses are named: a value that is not one is left out; a port on IPv4 dropped.
    assert.equal(
      clientOf('127.0.0.1', { 'x-forwarded-for': '<script>, 198.51.100.4' }, proxies).address,
      '198.51.100.4',
    );
    assert.equal(clientOf('127.0.0.1', { 'x-forwarded-for': 'evil' }, proxies).address, '127.0.0.1');
    assert.equal(clientOf('127.0.0.1', { forwarded: 'for=192.0.2.1:4711' }, proxies).address, '192.0.2.1');
    assert.equal(clientOf('127.0.0.1', { 'x-real-ip': '3.3.3.3, 4.4.4.4' }, proxies).address, '4.4.4.4');
    // A client that claims to be a trusted proxy itself gets no further than the leftmost entry.
    assert.deepEqual(clientOf('127.0.0.1', { 'x-forwarded-for': '10.1.0.1' }, proxies).address, '10.1.0.1');
  });
});

describe('who may change settings', () => {
  it('without a token: a loopback request that names loopback, through no proxy', () => {
    const local = { host: '127.0.0.1:8080' };
    assert.deepEqual(mayChange('127.0.0.1', local, undefined, NONE), { ok: true, by: 'http 127.0.0.1' });
    assert.equal(mayChange('::ffff:127.0.0.1', { host: 'localhost' }, undefined, NONE).ok, true);
    assert.equal(mayChange('::1', { host: '[::1]:8080' }, undefined, NONE).ok, true);
    assert.equal(mayChange('127.0.0.1', {}, undefined, NONE).ok, true, 'HTTP/1.0 without Host');
    assert.match(
      why(mayChange('192.0.2.7', { host: 'argus.lan' }, undefined, NONE)),
      /only from this machine \(set http.token/,
    );
    // A page elsewhere whose name was pointed at 127.0.0.1.
    assert.equal(mayChange('127.0.0.1', { host: 'evil.example:8080' }, undefined, NONE).ok, false);
    // Each header a proxy adds, alone, with a loopback Host: the request came through a proxy.
    for (const h of PROXY_HEADERS)
      assert.match(
        why(
          mayChange(
            '127.0.0.1',
            { ...local, [h]: h === 'forwarded' ? 'for=198.51.100.4' : '198.51.100.4' },
            undefined,
            NONE,
          ),
        ),
        /through a proxy only with http.token set/,
        h,
      );
    // A proxy listed in trusted_proxies that adds nothing.
    assert.equal(mayChange('127.0.0.1', local, undefined, new Proxies(['127.0.0.1'])).ok, false);
  });

  it('with a token: every change needs it, from this machine too, and the log names the real client', () => {
    const local = { host: '127.0.0.1:8080' };
    assert.match(
      why(mayChange('127.0.0.1', local, TOKEN, NONE)),
      /only with Authorization: Bearer <http.token> \(from this machine too/,
    );
    const bearer = { authorization: `Bearer ${TOKEN}` };
    assert.deepEqual(mayChange('127.0.0.1', { ...local, ...bearer }, TOKEN, NONE), {
      ok: true,
      by: 'http 127.0.0.1',
    });
    assert.deepEqual(mayChange('192.0.2.7', { host: 'argus.lan', ...bearer }, TOKEN, NONE), {
      ok: true,
      by: 'http 192.0.2.7',
    });
    assert.equal(mayChange('192.0.2.7', { authorization: `bearer  ${TOKEN} ` }, TOKEN, NONE).ok, true);
    assert.deepEqual(
      mayChange(
        '127.0.0.1',
        { ...bearer, 'x-forwarded-for': '198.51.100.4' },
        TOKEN,
        new Proxies(['127.0.0.1']),
      ),
      { ok: true, by: 'http 198.51.100.4 via proxy' },
    );
    for (const wrong of [`Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(0, -1)}`, `Basic ${TOKEN}`, TOKEN]) {
      const r = why(mayChange('127.0.0.1', { ...local, authorization: wrong }, TOKEN, NONE));
      assert.notEqual(r, 'allowed', wrong);
      assert.ok(!r.includes(TOKEN.slice(0, 8)), r);
    }
  });
});

describe('the names this server answers to', () => {
  it('takes addresses, localhost and the names given; refuses others (DNS rebinding)', () => {
    const hosts = new AllowedHosts(['argus.lan', '.example.com']);
    for (const h of [
      '127.0.0.1:8080',
      '192.0.2.7',
      '[::1]:8080',
      '[2001:db8::1]',
      'localhost:8080',
      'cam.localhost',
      'argus.lan',
      'ARGUS.LAN.:8080',
      'example.com',
      'nvr.example.com',
      undefined,
    ])
      assert.equal(hosts.allows(h), true, String(h));
    for (const h of [
      'evil.test:8080',
      'argus.lan.evil.test',
      'notexample.com',
      'argus',
      '',
      'a b',
      '127.0.0.1.nip.io',
    ])
      assert.equal(hosts.allows(h), false, h);
    assert.equal(new AllowedHosts(['*']).allows('evil.test'), true);
  });

  it('checks the Host a proxy passes on as well', () => {
    const hosts = new AllowedHosts([]);
    assert.equal(hosts.foreign({ host: '127.0.0.1:8080' }), undefined);
    assert.equal(hosts.foreign({ host: '127.0.0.1:8080', 'x-forwarded-host': 'evil.test' }), 'evil.test');
    assert.equal(
      hosts.foreign({ host: 'localhost', forwarded: 'for=1.2.3.4;host="evil.test:80"' }),
      'evil.test:80',
    );
    assert.equal(hosts.foreign({ host: 'localhost', forwarded: 'for=1.2.3.4;host=127.0.0.1' }), undefined);
  });
});
