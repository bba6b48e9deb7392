import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import {
  basicAuthorization,
  chooseChallenge,
  digestAuthorization,
  parseChallenges,
  RtspAuthenticator,
} from '../../../src/ingest/rtsp-auth.js';

/** A field of an Authorization value. */
const field = (auth: string, name: string): string | undefined =>
  new RegExp(`[ ,]${name}="?([^",]*)"?`).exec(auth)?.[1];

describe('RTSP authentication: the answers, by the RFCs’ own examples', () => {
  it('Digest MD5 with qop=auth: RFC 2617 §3.5', () => {
    const auth = digestAuthorization(
      {
        scheme: 'digest',
        params: {
          realm: 'testrealm@host.com',
          qop: 'auth,auth-int',
          nonce: 'dcd98b7102dd2f0e8b11d0f600bfb0c093',
          opaque: '5ccc069c403ebaf9f0171e9517f40e41',
        },
      },
      { user: 'Mufasa', password: 'Circle Of Life' },
      { method: 'GET', uri: '/dir/index.html', nc: 1, cnonce: '0a4f113b' },
    );
    assert.equal(field(auth, 'response'), '6629fae49393a05397450978507c4ef1');
    assert.equal(field(auth, 'qop'), 'auth');
    assert.equal(field(auth, 'nc'), '00000001');
    assert.equal(field(auth, 'cnonce'), '0a4f113b');
    assert.equal(field(auth, 'opaque'), '5ccc069c403ebaf9f0171e9517f40e41');
    assert.equal(field(auth, 'uri'), '/dir/index.html');
    assert.ok(auth.startsWith('Digest username="Mufasa", realm="testrealm@host.com"'));
  });

  it('Digest MD5 and SHA-256: RFC 7616 §3.9.1', () => {
    const answer = (algorithm: string): string =>
      digestAuthorization(
        {
          scheme: 'digest',
          params: {
            realm: 'http-auth@example.org',
            qop: 'auth, auth-int',
            algorithm,
            nonce: '7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v',
            opaque: 'FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS',
          },
        },
        { user: 'Mufasa', password: 'Circle of Life' },
        {
          method: 'GET',
          uri: '/dir/index.html',
          nc: 1,
          cnonce: 'f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ',
        },
      );
    assert.equal(field(answer('MD5'), 'response'), '8ca523f5e9506fed4657c9700eebdbec');
    assert.equal(
      field(answer('SHA-256'), 'response'),
      '753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1',
    );
    assert.equal(field(answer('SHA-256'), 'algorithm'), 'SHA-256');
  });

  it('Digest without qop (RFC 2069’s form, which GStreamer and many cameras send)', () => {
    const auth = digestAuthorization(
      {
        scheme: 'digest',
        params: { realm: 'testrealm@host.com', nonce: 'dcd98b7102dd2f0e8b11d0f600bfb0c093' },
      },
      { user: 'Mufasa', password: 'CircleOfLife' },
      { method: 'GET', uri: '/dir/index.html', nc: 1, cnonce: 'unused' },
    );
    assert.equal(field(auth, 'response'), '1949323746fe6a43ef61f9606e7febea');
    for (const absent of ['qop', 'nc', 'cnonce', 'algorithm', 'opaque'])
      assert.equal(field(auth, absent), undefined, `${absent} is not sent without qop`);
  });

  it('Digest MD5-sess and qop=auth-int hash what RFC 7616 says', () => {
    const md5 = (s: string) => createHash('md5').update(s).digest('hex');
    const body = Buffer.from('v=0\r\n');
    const auth = digestAuthorization(
      { scheme: 'digest', params: { realm: 'r', nonce: 'n', qop: 'auth-int', algorithm: 'MD5-sess' } },
      { user: 'u', password: 'p' },
      { method: 'ANNOUNCE', uri: 'rtsp://h/s', nc: 3, cnonce: 'c', body },
    );
    const ha1 = md5(`${md5('u:r:p')}:n:c`);
    const ha2 = md5(`ANNOUNCE:rtsp://h/s:${md5('v=0\r\n')}`);
    assert.equal(field(auth, 'response'), md5(`${ha1}:n:00000003:c:auth-int:${ha2}`));
    assert.equal(field(auth, 'qop'), 'auth-int');
  });

  it('Basic: RFC 7617 §2, in UTF-8', () => {
    assert.equal(
      basicAuthorization({ user: 'Aladdin', password: 'open sesame' }),
      'Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==',
    );
    assert.equal(basicAuthorization({ user: 'test', password: '123£' }), 'Basic dGVzdDoxMjPCow==');
  });
});

describe('RTSP authentication: challenges', () => {
  it('reads several challenges of one header, quoted strings with commas and escaped quotes', () => {
    assert.deepEqual(
      parseChallenges(
        'Digest realm="a, b", nonce="n1", qop="auth,auth-int", algorithm=SHA-256, Basic realm="q\\"r"',
      ),
      [
        {
          scheme: 'digest',
          params: { realm: 'a, b', nonce: 'n1', qop: 'auth,auth-int', algorithm: 'SHA-256' },
        },
        { scheme: 'basic', params: { realm: 'q"r' } },
      ],
    );
  });

  it('chooses Digest, the strongest algorithm it knows, over Basic; an unknown algorithm is no choice', () => {
    const all = [
      ...parseChallenges('Basic realm="x"'),
      ...parseChallenges('Digest realm="x", nonce="a"'),
      ...parseChallenges('Digest realm="x", nonce="b", algorithm=SHA-256'),
      ...parseChallenges('Digest realm="x", nonce="c", algorithm=SHA-512-256'),
    ];
    assert.equal(chooseChallenge(all)?.params.nonce, 'b');
    assert.equal(chooseChallenge(all.slice(0, 2))?.params.nonce, 'a');
    assert.equal(chooseChallenge(all.slice(0, 1))?.scheme, 'basic');
    assert.equal(chooseChallenge(all.slice(3)), undefined);
    assert.equal(chooseChallenge(parseChallenges('Bearer realm="x"')), undefined);
  });

  it('counts requests under a nonce (nc), from 1 again for a new nonce', () => {
    const auth = new RtspAuthenticator({ user: 'u', password: 'p' }, () => 'c');
    assert.equal(auth.header('OPTIONS', 'rtsp://h/s'), undefined, 'nothing before a challenge');
    assert.ok(auth.challenged(['Digest realm="r", nonce="n1", qop="auth"']));
    assert.equal(field(auth.header('DESCRIBE', 'rtsp://h/s')!, 'nc'), '00000001');
    assert.equal(field(auth.header('SETUP', 'rtsp://h/s/t1')!, 'nc'), '00000002');
    assert.ok(auth.challenged(['Digest realm="r", nonce="n2", qop="auth", stale=TRUE']));
    assert.ok(auth.stale);
    const next = auth.header('PLAY', 'rtsp://h/s')!;
    assert.equal(field(next, 'nc'), '00000001');
    assert.equal(field(next, 'nonce'), 'n2');
    assert.equal(auth.scheme, 'digest');
    assert.equal(auth.challenged(['Bearer realm="x"', 'NTLM']), false, 'nothing it can answer');
  });
});
