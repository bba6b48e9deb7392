import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  header,
  requestLine,
  rewriteUri,
  RtspSplitter,
  RtspWireError,
  statusCode,
  writeRequest,
  type RtspItem,
} from '../../../src/ingest/rtsp-wire.js';

const frame = (channel: number, payload: Buffer): Buffer =>
  Buffer.concat([Buffer.from([0x24, channel, payload.length >> 8, payload.length & 0xff]), payload]);

const SDP = 'v=0\r\no=- 0 0 IN IP4 127.0.0.1\r\n';
const RESPONSE = Buffer.from(
  `RTSP/1.0 200 OK\r\nCSeq: 3\r\nContent-Base: rtsp://10.0.0.5:554/s/\r\nContent-Length: ${SDP.length}\r\n\r\n${SDP}`,
);

describe('RTSP on the wire', () => {
  it('cuts a stream into messages and interleaved frames, however it is split', () => {
    const rtp = frame(0, Buffer.alloc(1400, 7));
    const rtcp = frame(1, Buffer.from('RTSP/1.0 inside a frame is data'));
    const stream = Buffer.concat([rtp, RESPONSE, rtcp, frame(0, Buffer.alloc(0))]);
    for (const step of [1, 3, 17, 1500, stream.length]) {
      const s = new RtspSplitter();
      const items: RtspItem[] = [];
      for (let i = 0; i < stream.length; i += step) items.push(...s.push(stream.subarray(i, i + step)));
      assert.deepEqual(
        items.map((i) => i.kind),
        ['data', 'message', 'data', 'data'],
        `split every ${step} bytes`,
      );
      assert.deepEqual(Buffer.concat(items.map((i) => i.raw)), stream, 'every byte, in order');
      const m = items[1]!;
      assert.ok(m.kind === 'message');
      assert.equal(m.start, 'RTSP/1.0 200 OK');
      assert.equal(statusCode(m), 200);
      assert.equal(header(m.headers, 'content-base'), 'rtsp://10.0.0.5:554/s/');
      assert.equal(m.body.toString(), SDP);
      assert.equal(s.pending, 0);
    }
  });

  it('reads a request line; writes a request back with its body', () => {
    const [m] = new RtspSplitter().push(
      Buffer.from('SETUP rtsp://127.0.0.1:9/s/trackID=1 RTSP/1.0\r\nCSeq: 4\r\n\r\n'),
    );
    assert.ok(m?.kind === 'message');
    assert.deepEqual(requestLine(m), {
      method: 'SETUP',
      uri: 'rtsp://127.0.0.1:9/s/trackID=1',
      version: 'RTSP/1.0',
    });
    assert.equal(statusCode(m), undefined);
    assert.equal(
      writeRequest(
        'SET_PARAMETER rtsp://h/s RTSP/1.0',
        [
          ['CSeq', '5'],
          ['Content-Length', '3'],
        ],
        Buffer.from('a=b'),
      ).toString(),
      'SET_PARAMETER rtsp://h/s RTSP/1.0\r\nCSeq: 5\r\nContent-Length: 3\r\n\r\na=b',
    );
  });

  it('refuses bytes that are not RTSP, heads without end and impossible lengths', () => {
    assert.throws(() => new RtspSplitter().push(Buffer.from('\x16\x03\x01 TLS hello')), RtspWireError);
    assert.throws(() => new RtspSplitter().push(Buffer.from('HELLO\r\n\r\n')), /neither RTSP nor/);
    assert.throws(
      () => new RtspSplitter().push(Buffer.from(`OPTIONS * RTSP/1.0\r\nX: ${'a'.repeat(70_000)}`)),
      /longer than/,
    );
    assert.throws(
      () => new RtspSplitter().push(Buffer.from('RTSP/1.0 200 OK\r\nContent-Length: -1\r\n\r\n')),
      /Content-Length/,
    );
  });

  it("rewrites the relay's URIs to the camera's, and leaves the camera's own", () => {
    const from = 'rtsp://127.0.0.1:4000';
    const to = 'rtsp://10.0.0.5:554';
    assert.equal(
      rewriteUri('rtsp://127.0.0.1:4000/stream1?x=1', from, to),
      'rtsp://10.0.0.5:554/stream1?x=1',
    );
    assert.equal(rewriteUri('rtsp://127.0.0.1:4000', from, to), 'rtsp://10.0.0.5:554');
    assert.equal(
      rewriteUri('rtsp://127.0.0.1:40001/s', from, to),
      'rtsp://127.0.0.1:40001/s',
      'another port',
    );
    assert.equal(
      rewriteUri('rtsp://10.0.0.5:554/stream1/trackID=1', from, to),
      'rtsp://10.0.0.5:554/stream1/trackID=1',
    );
    assert.equal(rewriteUri('*', from, to), '*');
    // A camera whose path holds a secret: ffmpeg is given a neutral path.
    const hidden = 'rtsp://127.0.0.1:4000/camera';
    const real = 'rtsp://10.0.0.5:554/s?token=abc';
    assert.equal(rewriteUri(hidden, hidden, real), real);
    assert.equal(rewriteUri(`${hidden}/trackID=1`, hidden, real), `${real}/trackID=1`);
  });
});
