import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { redactUrl, scrub } from '../../src/redact.js';

describe('redaction', () => {
  it('hides URL passwords and keeps the user', () => {
    assert.equal(redactUrl('rtsp://admin:hunter2@10.0.0.5:554/s'), 'rtsp://admin:***@10.0.0.5:554/s');
    assert.equal(redactUrl('mqtts://u:p%40ss@broker'), 'mqtts://u:***@broker');
    assert.equal(redactUrl('rtsp://10.0.0.5/s'), 'rtsp://10.0.0.5/s');
    assert.equal(
      redactUrl("Input #0, from 'rtsp://a:b@h/x': and rtsp://c:d@k/y"),
      "Input #0, from 'rtsp://a:***@h/x': and rtsp://c:***@k/y",
    );
  });

  it('scrubs known secrets wherever they appear, also percent-encoded', () => {
    assert.equal(scrub('auth failed for p@ss (p%40ss)', ['p@ss']), 'auth failed for *** (***)');
    assert.equal(scrub('a b', ['b']), 'a b', 'secrets shorter than 3 characters are not scrubbed blindly');
  });
});
