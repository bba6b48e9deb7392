import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { resolveUrlHost } from '../../../src/ingest/resolve.js';

describe('host resolution', () => {
  const fake = (h: string): Promise<string> => {
    if (h === 'cam.lan') return Promise.resolve('10.1.2.3');
    if (h === 'v6.lan') return Promise.resolve('fd00::5');
    return Promise.reject(new Error('ENOTFOUND'));
  };
  it('replaces a host name with its address and keeps credentials, port and path', async () => {
    assert.equal(
      await resolveUrlHost('rtsp://u:p@cam.lan:8554/s?x=1', fake),
      'rtsp://u:p@10.1.2.3:8554/s?x=1',
    );
    assert.equal(await resolveUrlHost('rtsp://v6.lan/s', fake), 'rtsp://[fd00::5]/s');
  });
  it('leaves addresses and TLS URLs alone', async () => {
    assert.equal(await resolveUrlHost('rtsp://10.0.0.1/s', fake), 'rtsp://10.0.0.1/s');
    assert.equal(await resolveUrlHost('rtsps://cam.lan/s', fake), 'rtsps://cam.lan/s');
  });
  it('says which host did not resolve', async () => {
    await assert.rejects(resolveUrlHost('rtsp://nope.invalid/s', fake), /cannot resolve host nope\.invalid/);
  });
});
