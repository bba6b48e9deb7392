import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLogger } from '../../src/log.js';

describe('logger', () => {
  it('scrubs secrets from every line, also where JSON escapes them, and the line stays JSON', () => {
    const lines: string[] = [];
    const secrets = ['pw"with\\quote-Secret'];
    const log = createLogger({ level: 'info', secrets, stream: { write: (l: string) => lines.push(l) } });
    log.info({ url: 'rtsp://viewer:p@ss@h/s', err: `login with ${secrets[0]!} refused` }, 'camera failed');
    // Secrets added later (a reload) are scrubbed from then on.
    secrets.push('added-on-reload');
    log.warn('token added-on-reload refused');
    assert.deepEqual(
      lines
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .map(({ url, err, msg }) => ({ url, err, msg })),
      [
        { url: 'rtsp://viewer:***@h/s', err: 'login with *** refused', msg: 'camera failed' },
        { url: undefined, err: undefined, msg: 'token *** refused' },
      ],
    );
  });
});
