import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { redactUrl, scrub } from '../../src/redact.js';

/** Passwords with every character that is reserved in a URL, or needs escaping in JSON. */
const RESERVED = ['p@ss', 'pa:ss', 'p/ss', 'p?ss', 'p#ss', 'p%ss', 'p&s=s', 'p ss', 'pässwörd', 'p"s\\s'];

describe('redaction', () => {
  it('hides URL passwords and keeps the user', () => {
    assert.equal(redactUrl('rtsp://admin:hunter2@10.0.0.5:554/s'), 'rtsp://admin:***@10.0.0.5:554/s');
    assert.equal(redactUrl('mqtts://u:p%40ss@broker'), 'mqtts://u:***@broker');
    assert.equal(redactUrl('rtsp://10.0.0.5/s'), 'rtsp://10.0.0.5/s');
    assert.equal(
      redactUrl('rtsp://u@10.0.0.5:554/s'),
      'rtsp://u@10.0.0.5:554/s',
      'no password, nothing hidden',
    );
    assert.equal(
      redactUrl("Input #0, from 'rtsp://a:b@h/x': and rtsp://c:d@k/y"),
      "Input #0, from 'rtsp://a:***@h/x': and rtsp://c:***@k/y",
    );
  });

  it("hides a password containing '@' or ':' whole: the userinfo ends at the last '@' before the host", () => {
    // ffmpeg's own words when such a camera refuses the connection.
    assert.equal(
      redactUrl('rtsp://viewer:Stro@ngPw:1@10.0.0.5:554/stream?token=t: Connection refused'),
      'rtsp://viewer:***@10.0.0.5:554/stream?token=t: Connection refused',
    );
    assert.equal(redactUrl('rtsp://me@example.com:pw@h/s'), 'rtsp://me@example.com:***@h/s');
    assert.equal(redactUrl('rtsp://u:a@b@c@h'), 'rtsp://u:***@h');
    // Several URLs in one line, or in a JSON log line: each ends where it ends.
    assert.equal(
      redactUrl('from rtsp://a:b@c@h/x?q=a@b and rtsp://d:e@f@k: failed, mail admin@example.com'),
      'from rtsp://a:***@h/x?q=a@b and rtsp://d:***@k: failed, mail admin@example.com',
    );
    assert.equal(
      redactUrl('{"url":"mqtt://u:p@ss@h:1883","msg":"sent to x@y"}'),
      '{"url":"mqtt://u:***@h:1883","msg":"sent to x@y"}',
    );
    assert.equal(redactUrl('rtsp://a:b@h,rtsp://c:d@k/'), 'rtsp://a:***@h,rtsp://c:***@k/');
    assert.equal(redactUrl('rtsp://cam:554/s (user@example.com)'), 'rtsp://cam:554/s (user@example.com)');
  });

  it('hides every password with reserved characters in a URL, raw or percent-encoded', () => {
    for (const pw of RESERVED) {
      const encoded = encodeURIComponent(pw);
      assert.equal(redactUrl(`rtsp://u:${encoded}@h/s`), 'rtsp://u:***@h/s', encoded);
      // Written raw, where a URL parser reads it as the password (and a quote does not end it).
      if (!/[/?# "]/.test(pw)) assert.equal(redactUrl(`rtsp://u:${pw}@h/s`), 'rtsp://u:***@h/s', pw);
    }
  });

  it('scrubs known secrets wherever they appear, also percent-encoded', () => {
    assert.equal(scrub('auth failed for p@ss (p%40ss)', ['p@ss']), 'auth failed for *** (***)');
    assert.equal(scrub('a b', ['b']), 'a b', 'secrets shorter than 3 characters are not scrubbed blindly');
    assert.equal(scrub('rtsp://u:ab@h', ['ab']), 'rtsp://u:***@h', 'short passwords are hidden in URLs');
    assert.equal(scrub('', ['', 'xyz']), '');
  });

  it('scrubs a secret in every position of a URL, with every reserved character', () => {
    for (const s of RESERVED.map((pw) => `${pw}-Secret`)) {
      const enc = encodeURIComponent(s);
      const u = new URL('rtsp://h');
      u.username = s;
      u.password = s;
      // The WHATWG encoding (what `new URL(...).toString()` writes) differs from encodeURIComponent.
      const texts = [
        `rtsp://${enc}:pw@h/s: 401 Unauthorized`,
        `rtsp://${u.username}:${u.password}@h/s`,
        `rtsp://u:${enc}@h/s`,
        `rtsp://${enc}.cameras.example/s`,
        `rtsp://h/${enc}/stream`,
        `rtsp://h/s?token=${enc}&x=1`,
        `rtsp://h/s?token=${new URLSearchParams({ s }).toString().slice(2)}`,
        `rtsp://h/s#${enc}`,
        `rtsp://h/s?token=${enc.replace(/%[0-9A-F]{2}/g, (h) => h.toLowerCase())}`,
        `rtsp://h/s?token=${s} refused`,
        `password '${s}' rejected`,
        JSON.stringify({ msg: `token ${s} refused`, url: `rtsp://h/s?token=${enc}` }),
      ];
      for (const text of texts) {
        const out = scrub(text, [s]);
        assert.ok(!out.includes('Secret'), `${s} leaks from ${text}: ${out}`);
        assert.ok(out.includes('***'), out);
      }
      const json = scrub(JSON.stringify({ msg: `token ${s} refused` }), [s]);
      assert.deepEqual(JSON.parse(json), { msg: 'token *** refused' }, 'a JSON line stays JSON');
    }
  });

  it('scrubs a secret given percent-encoded also where it is decoded, and a secret containing another whole', () => {
    assert.equal(scrub('p@ss-word and p%40ss-word', ['p%40ss-word']), '*** and ***');
    assert.equal(scrub('secret and secret-longer', ['secret', 'secret-longer']), '*** and ***');
    assert.equal(scrub('not%zzencoded', ['not%zzencoded']), '***');
  });

  it("hides a URL password containing '@' also when it is a known secret", () => {
    // Hiding URL passwords first would cut the secret in two (rtsp://viewer:***@ngPw...).
    assert.equal(
      scrub('rtsp://viewer:Stro@ngPw!@10.0.0.5/s?token=T0k3n-abc', ['Stro@ngPw!', 'T0k3n-abc', 'viewer']),
      'rtsp://***:***@10.0.0.5/s?token=***',
    );
  });
});
