import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';
import { describe, it } from 'node:test';
import {
  needsRelay,
  RtspRelay,
  type RelayFailure,
  type RtspRelayDeps,
} from '../../../src/ingest/rtsp-relay.js';
import { header, requestLine, RtspSplitter, type RtspMessage } from '../../../src/ingest/rtsp-wire.js';
import { argvHoldsSecret } from '../../../src/ingest/ingest.js';
import { cameraConfig } from '../../helpers/config.js';
import { waitFor } from '../../helpers/env.js';
import { recordingLog } from '../../helpers/fakes.js';

type T = { after: (fn: () => unknown) => void };

const md5 = (s: string): string => createHash('md5').update(s).digest('hex');
/** A field of an Authorization value. */
const field = (auth: string, name: string): string | undefined =>
  new RegExp(`[ ,]${name}="?([^",]*)"?`).exec(auth)?.[1];

/** What a fake camera answers a request with: a whole response, or raw bytes to send as they are. */
type Answer = (req: RtspMessage, socket: Socket) => string | Buffer | undefined;

/** A scripted RTSP camera on a local port: keeps every request (and raw upload) it receives. */
async function fakeCamera(t: T, answer: Answer) {
  const requests: RtspMessage[] = [];
  const uploads: Buffer[] = [];
  let connections = 0;
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    connections++;
    sockets.add(socket);
    const split = new RtspSplitter();
    socket.on('data', (chunk: Buffer) => {
      for (const item of split.push(chunk)) {
        if (item.kind === 'data') {
          uploads.push(item.raw);
          continue;
        }
        requests.push(item);
        const out = answer(item, socket);
        if (out !== undefined) socket.write(out);
      }
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(
    () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  );
  const port = (server.address() as AddressInfo).port;
  return { port, requests, uploads, connections: () => connections };
}

const reply = (req: RtspMessage, status: string, extra: string[] = [], body = ''): string =>
  [
    `RTSP/1.0 ${status}`,
    `CSeq: ${header(req.headers, 'cseq')}`,
    ...extra,
    ...(body ? [`Content-Length: ${body.length}`] : []),
    '',
    body,
  ].join('\r\n');

/** A relay for one camera URL; its failures and log lines kept. */
async function relayFor(t: T, url: string, deps: Partial<RtspRelayDeps> = {}, secrets: string[] = []) {
  const failures: RelayFailure[] = [];
  const { log, lines } = recordingLog();
  const relay = new RtspRelay(secrets, {
    log,
    connectTimeoutMs: 5000,
    onFailure: (f) => failures.push(f),
    ...deps,
  });
  await relay.start();
  t.after(() => relay.stop());
  return { relay, local: relay.target(url), failures, lines };
}

/** ffmpeg's part: a client sending requests one at a time and keeping what comes back. */
function client(t: T, local: string) {
  const u = new URL(local);
  const socket = connect(Number(u.port), u.hostname);
  t.after(() => socket.destroy());
  const split = new RtspSplitter();
  const received: Buffer[] = [];
  const responses: RtspMessage[] = [];
  let closed = false;
  socket.on('data', (chunk: Buffer) => {
    received.push(chunk);
    for (const item of split.push(chunk)) if (item.kind === 'message') responses.push(item);
  });
  socket.on('close', () => (closed = true));
  socket.on('error', () => undefined);
  let cseq = 0;
  return {
    socket,
    responses,
    received: () => Buffer.concat(received),
    closed: () => closed,
    /** Sends a request and waits for its answer. */
    async ask(method: string, uri: string, extra: string[] = []): Promise<RtspMessage> {
      const n = String(++cseq);
      socket.write(
        `${method} ${uri} RTSP/1.0\r\nCSeq: ${n}\r\nUser-Agent: Lavf58.20.100\r\n${extra.map((e) => `${e}\r\n`).join('')}\r\n`,
      );
      await waitFor(
        `the answer to ${method}`,
        () => responses.some((r) => header(r.headers, 'cseq') === n),
        10_000,
      );
      return responses.find((r) => header(r.headers, 'cseq') === n)!;
    },
  };
}

describe('the camera relay', () => {
  it('answers a Digest challenge (qop=auth) for ffmpeg, resends the request, and signs every later one, nc counting', async (t) => {
    const nonce = 'nonce-1';
    const cam = await fakeCamera(t, (req) => {
      const auth = header(req.headers, 'authorization');
      if (!auth)
        return reply(req, '401 Unauthorized', [
          `WWW-Authenticate: Digest realm="cam", nonce="${nonce}", qop="auth", opaque="op"`,
        ]);
      const { method, uri } = requestLine(req)!;
      const ha1 = md5('viewer:cam:p@ss w:rd');
      const ok =
        field(auth, 'response') ===
        md5(`${ha1}:${nonce}:${field(auth, 'nc')}:${field(auth, 'cnonce')}:auth:${md5(`${method}:${uri}`)}`);
      return ok
        ? reply(
            req,
            '200 OK',
            [`Content-Base: rtsp://127.0.0.1:${cam.port}/stream1/`],
            method === 'DESCRIBE' ? 'v=0\r\n' : '',
          )
        : reply(req, '401 Unauthorized', [
            `WWW-Authenticate: Digest realm="cam", nonce="${nonce}", qop="auth"`,
          ]);
    });
    const { local, failures } = await relayFor(
      t,
      `rtsp://viewer:p%40ss%20w%3Ard@127.0.0.1:${cam.port}/stream1?ch=1`,
    );
    assert.match(
      local,
      /^rtsp:\/\/127\.0\.0\.1:\d+\/stream1\?ch=1$/,
      'ffmpeg gets no credentials, the same path',
    );
    const c = client(t, local);
    assert.equal(statusCode((await c.ask('OPTIONS', local)).start), 200);
    const describe_ = await c.ask('DESCRIBE', local, ['Accept: application/sdp']);
    assert.equal(statusCode(describe_.start), 200);
    assert.equal(describe_.body.toString(), 'v=0\r\n');
    assert.equal(
      header(describe_.headers, 'content-base'),
      `rtsp://127.0.0.1:${cam.port}/stream1/`,
      'answers pass as they are',
    );
    assert.equal(
      statusCode((await c.ask('SETUP', `rtsp://127.0.0.1:${cam.port}/stream1/trackID=0`)).start),
      200,
    );
    assert.deepEqual(
      c.responses.map((r) => r.start),
      ['RTSP/1.0 200 OK', 'RTSP/1.0 200 OK', 'RTSP/1.0 200 OK'],
      'ffmpeg never sees the 401',
    );
    const seen = cam.requests.map((r) => {
      const auth = header(r.headers, 'authorization');
      return [r.start, header(r.headers, 'cseq'), auth && field(auth, 'nc')];
    });
    assert.deepEqual(seen, [
      [`OPTIONS rtsp://127.0.0.1:${cam.port}/stream1?ch=1 RTSP/1.0`, '1', undefined],
      [`OPTIONS rtsp://127.0.0.1:${cam.port}/stream1?ch=1 RTSP/1.0`, '1', '00000001'],
      [`DESCRIBE rtsp://127.0.0.1:${cam.port}/stream1?ch=1 RTSP/1.0`, '2', '00000002'],
      [`SETUP rtsp://127.0.0.1:${cam.port}/stream1/trackID=0 RTSP/1.0`, '3', '00000003'],
    ]);
    assert.equal(header(cam.requests[2]!.headers, 'accept'), 'application/sdp', 'other headers pass');
    assert.equal(field(header(cam.requests[1]!.headers, 'authorization')!, 'username'), 'viewer');
    assert.equal(field(header(cam.requests[1]!.headers, 'authorization')!, 'opaque'), 'op');
    assert.deepEqual(failures, []);
  });

  it('answers Basic, with the user and password percent-decoded', async (t) => {
    const expected = `Basic ${Buffer.from('admin:p@ss:w/rd').toString('base64')}`;
    const cam = await fakeCamera(t, (req) =>
      header(req.headers, 'authorization') === expected
        ? reply(req, '200 OK')
        : reply(req, '401 Unauthorized', ['WWW-Authenticate: Basic realm="cam"']),
    );
    const { local } = await relayFor(t, `rtsp://admin:p%40ss%3Aw%2Frd@127.0.0.1:${cam.port}/live`);
    const c = client(t, local);
    assert.equal(statusCode((await c.ask('DESCRIBE', local)).start), 200);
    assert.equal(statusCode((await c.ask('PLAY', local)).start), 200);
    assert.deepEqual(
      cam.requests.map((r) => header(r.headers, 'authorization') ?? null),
      [null, expected, expected],
    );
  });

  it('passes interleaved RTP and RTCP through untouched both ways, answers among them', async (t) => {
    const frame = (channel: number, n: number, fill: number): Buffer =>
      Buffer.concat([Buffer.from([0x24, channel, n >> 8, n & 0xff]), Buffer.alloc(n, fill)]);
    let burst = Buffer.alloc(0);
    const cam = await fakeCamera(t, (req, socket) => {
      if (!header(req.headers, 'authorization'))
        return reply(req, '401 Unauthorized', ['WWW-Authenticate: Basic realm="cam"']);
      if (!req.start.startsWith('PLAY')) return reply(req, '200 OK');
      // PLAY's answer, then frames with a keep-alive's answer among them, in awkward pieces.
      burst = Buffer.concat([
        Buffer.from(reply(req, '200 OK', ['Session: 1'])),
        frame(0, 1400, 1),
        frame(1, 60, 2),
        Buffer.from('RTSP/1.0 200 OK\r\nCSeq: 99\r\n\r\n'),
        frame(0, 36, 0x24),
        frame(0, 65535, 3),
      ]);
      for (let i = 0; i < burst.length; i += 977) socket.write(burst.subarray(i, i + 977));
      return undefined;
    });
    const { local } = await relayFor(t, `rtsp://u:pw@127.0.0.1:${cam.port}/s`);
    const c = client(t, local);
    await c.ask('PLAY', local);
    await waitFor('the whole burst', () => c.received().length >= burst.length, 10_000);
    assert.deepEqual(c.received(), burst, 'byte for byte');
    const rtcp = frame(1, 52, 9);
    c.socket.write(rtcp);
    await waitFor('the RTCP report at the camera', () => cam.uploads.length > 0, 10_000);
    assert.deepEqual(cam.uploads[0], rtcp);
  });

  it('hands a refusal of the credentials to ffmpeg and reports it as auth, without the password', async (t) => {
    const cam = await fakeCamera(t, (req) =>
      reply(req, '401 Unauthorized', ['WWW-Authenticate: Digest realm="cam", nonce="n"']),
    );
    const { local, failures, lines } = await relayFor(
      t,
      `rtsp://viewer:Wrong-Pass-77@127.0.0.1:${cam.port}/s`,
    );
    const c = client(t, local);
    const answer = await c.ask('DESCRIBE', local);
    assert.equal(
      answer.start,
      'RTSP/1.0 401 Unauthorized',
      'ffmpeg hears the refusal (and says 401 Unauthorized)',
    );
    assert.equal(cam.requests.length, 2, 'one try with the credentials, not more');
    assert.deepEqual(failures, [
      {
        cause: 'auth',
        message: `rtsp://viewer:***@127.0.0.1:${cam.port}/s: the camera refused the credentials (401 Unauthorized to Digest authentication)`,
      },
    ]);
    assert.doesNotMatch(JSON.stringify(lines), /Wrong-Pass-77/);
  });

  it('reports a camera that cannot be reached as ffmpeg would, and closes ffmpeg’s connection', async (t) => {
    // A port nothing listens on any more.
    const gone = await new Promise<number>((resolve) => {
      const s = createServer();
      s.listen(0, '127.0.0.1', () => {
        const p = (s.address() as AddressInfo).port;
        s.close(() => resolve(p));
      });
    });
    const { local, failures } = await relayFor(t, `rtsp://u:secret-pw@127.0.0.1:${gone}/s`);
    const c = client(t, local);
    c.socket.write('OPTIONS * RTSP/1.0\r\nCSeq: 1\r\n\r\n');
    await waitFor('the connection closed', () => c.closed(), 10_000);
    assert.deepEqual(failures, [
      { cause: 'unreachable', message: `rtsp://u:***@127.0.0.1:${gone}/s: Connection refused` },
    ]);
  });

  it("refuses a connection from another user's socket: the camera is never contacted", async (t) => {
    const cam = await fakeCamera(t, (req) => reply(req, '200 OK'));
    const asked: unknown[] = [];
    const { local, lines, failures } = await relayFor(t, `rtsp://u:pw@127.0.0.1:${cam.port}/s`, {
      uid: 1000,
      peerUid: (peer, us) => {
        asked.push([peer.address, us.port]);
        return Promise.resolve(4242);
      },
    });
    const c = client(t, local);
    c.socket.write('OPTIONS * RTSP/1.0\r\nCSeq: 1\r\n\r\n');
    await waitFor('the connection closed', () => c.closed(), 10_000);
    assert.equal(cam.connections(), 0);
    assert.deepEqual(c.responses, []);
    assert.deepEqual(asked, [['127.0.0.1', Number(new URL(local).port)]]);
    assert.ok(
      lines.some((l) => /refused a connection from uid 4242, not Argus' own \(uid 1000\)/.test(l.msg)),
    );
    assert.deepEqual(failures, [], "another user's try is not the camera's failure");
  });

  it('gives ffmpeg a neutral path when the camera’s path or query holds a secret', async (t) => {
    const cam = await fakeCamera(t, (req) => reply(req, '200 OK'));
    const { local } = await relayFor(t, `rtsp://u:pw@127.0.0.1:${cam.port}/s?token=Tok-3141`, {}, [
      'Tok-3141',
    ]);
    assert.match(local, /^rtsp:\/\/127\.0\.0\.1:\d+\/camera$/);
    const c = client(t, local);
    await c.ask('DESCRIBE', local);
    await c.ask('SETUP', `${local}/trackID=1`);
    assert.deepEqual(
      cam.requests.map((r) => requestLine(r)!.uri),
      [
        `rtsp://127.0.0.1:${cam.port}/s?token=Tok-3141`,
        `rtsp://127.0.0.1:${cam.port}/s?token=Tok-3141/trackID=1`,
      ],
    );
  });

  it('is used for RTSP URLs with credentials or secrets only', () => {
    assert.equal(needsRelay('rtsp://u:p@10.0.0.5/s', []), true);
    assert.equal(needsRelay('rtsps://u@cam.lan/s', []), true);
    assert.equal(needsRelay('rtsp://10.0.0.5/s?token=abcdef', ['abcdef']), true);
    assert.equal(needsRelay('rtsp://10.0.0.5/s', ['abcdef']), false);
    assert.equal(needsRelay('http://u:p@10.0.0.5/video.mjpg', []), false, 'the relay speaks RTSP only');
    assert.equal(needsRelay('lavfi:testsrc', []), false);
  });

  it('what it cannot cover is known, and warned of at start: secrets in other URLs and in extra arguments', () => {
    const cam = (c: Record<string, unknown>) => cameraConfig({ url: 'rtsp://u:pw@10.0.0.5/s', ...c });
    assert.equal(argvHoldsSecret(cam({}), ['pw-long']), false, 'through the relay');
    assert.equal(argvHoldsSecret(cam({ url: 'http://u:pw@10.0.0.5/v.mjpg' }), []), true);
    assert.equal(argvHoldsSecret(cam({ url: 'rtmp://10.0.0.5/live?key=Key-123' }), ['Key-123']), true);
    assert.equal(argvHoldsSecret(cam({ url: 'http://10.0.0.5/v.mjpg' }), []), false);
    assert.equal(
      argvHoldsSecret(cam({ input_args: ['-headers', 'Authorization: Bearer Tok-99'] }), ['Tok-99']),
      true,
    );
  });
});

function statusCode(start: string): number {
  return Number(start.split(' ')[1]);
}
