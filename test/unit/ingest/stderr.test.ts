import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { classifyExit, lastErrorLine, parsePadLine, parseScaleLine } from '../../../src/ingest/stderr.js';
import { StderrRing } from '../../../src/stderr-ring.js';

describe('ffmpeg stderr', () => {
  it('classifies real ffmpeg failures', () => {
    const c = (lines: string[], code: number | null = 1, signal: string | null = null) =>
      classifyExit(lines, code, signal);
    assert.equal(
      c([
        '[rtsp @ 0x1] method DESCRIBE failed: 401 Unauthorized',
        'rtsp://a:***@h/x: Server returned 401 Unauthorized (authorization failed)',
      ]),
      'auth',
    );
    assert.equal(
      c(['[rtsp @ 0x1] method DESCRIBE failed: 404 Not Found', 'rtsp://h/x: Server returned 404 Not Found']),
      'not_found',
    );
    assert.equal(
      c([
        '[tcp @ 0x1] Connection attempt to 127.0.0.1 port 1 failed: Connection refused',
        'rtsp://h/x: Connection refused',
      ]),
      'unreachable',
    );
    assert.equal(c(['rtsp://10.9.9.9/x: Connection timed out']), 'unreachable');
    assert.equal(c(['rtsp://h/x: Invalid data found when processing input']), 'decode');
    assert.equal(c(['[h264 @ 0x1] error while decoding MB 3 4']), 'decode');
    assert.equal(c([], null, 'SIGSEGV'), 'crashed');
    assert.equal(c([], 139, null), 'crashed');
    assert.equal(c(['Exiting normally, received signal 2.'], 255, null), 'exited');
    assert.equal(
      c(['[AVIOContext @ 0x1] Statistics: 0 seeks, 110 writeouts'], 0, null),
      'unreachable',
      'a live stream that ended',
    );
  });

  it('does not blame an old decoder complaint for a later exit', () => {
    const lines = [
      '[h264 @ 0x1] decode_slice_header error',
      ...Array.from({ length: 8 }, (_, i) => `Output stream #0:0: ${i} frames`),
    ];
    assert.equal(classifyExit(lines, 0, null), 'unreachable');
    assert.equal(classifyExit(lines, 1, null), 'exited');
  });

  it('a server that took the connection and never answered is unreachable, not a decode error', () => {
    const frozen = [
      '[tcp @ 0x1] Starting connection attempt to 127.0.0.1 port 8554',
      '[tcp @ 0x1] Successfully connected to 127.0.0.1 port 8554',
      'rtsp://127.0.0.1:8554/x: Invalid data found when processing input',
    ];
    assert.equal(classifyExit(frozen, 1, null, false), 'unreachable');
    // The same line once the input opened, or after frames came out, is a decode failure.
    assert.equal(classifyExit(["Input #0, rtsp, from 'rtsp://h/x':", ...frozen], 1, null, false), 'decode');
    assert.equal(classifyExit(frozen, 1, null, true), 'decode');
  });

  it('takes the last matching line as the cause', () => {
    assert.equal(
      classifyExit(['[h264 @ 0x1] error while decoding MB 1 2', 'rtsp://h/x: Connection refused'], 1, null),
      'unreachable',
    );
  });

  it('keeps the last lines only, scrubbed, and reassembles split lines', () => {
    const ring = new StderrRing(3, ['s3cret']);
    assert.deepEqual(ring.push('line one\nline '), ['line one']);
    assert.deepEqual(ring.push('two rtsp://u:pw@h/x\r\n'), ['line two rtsp://u:***@h/x']);
    ring.push('a\nb\nc password s3cret\n');
    assert.deepEqual(ring.get(), ['a', 'b', 'c password ***']);
    assert.equal(lastErrorLine(['x', 'Connection refused', 'Exiting']), 'Connection refused');
  });

  it("reads source and letterbox geometry from the log of the model picture's filters", () => {
    assert.deepEqual(
      parseScaleLine(
        '[scale@model @ 0x3194cfc0] w:810 h:1080 fmt:yuv420p sar:1/1 -> w:240 h:320 fmt:rgb24 sar:1/1 flags:0x2',
      ),
      { srcW: 810, srcH: 1080 },
    );
    assert.equal(
      parseScaleLine(
        "[scale@model @ 0x3194cfc0] w:round(iw*min(320/iw,320/ih)) h:round(ih) flags:'bicubic' interl:0",
      ),
      undefined,
    );
    // The thumbnail's filters have ffmpeg's own names.
    assert.equal(
      parseScaleLine(
        '[Parsed_scale_5 @ 0x3194cfc0] w:810 h:1080 fmt:yuv420p sar:1/1 -> w:24 h:32 fmt:rgb24 sar:1/1 flags:0x20',
      ),
      undefined,
    );
    assert.deepEqual(
      parsePadLine('[pad@model @ 0x3194de40] w:240 h:320 -> w:320 h:320 x:40 y:0 color:0x727272FF'),
      { innerW: 240, innerH: 320, padLeft: 40, padTop: 0 },
    );
    assert.equal(
      parsePadLine('[Parsed_pad_7 @ 0x3194de40] w:24 h:32 -> w:32 h:32 x:4 y:0 color:0x727272FF'),
      undefined,
    );
  });
});
