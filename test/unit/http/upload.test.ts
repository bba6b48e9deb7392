import assert from 'node:assert/strict';
import { once } from 'node:events';
import {
  Agent,
  createServer,
  request,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type Server,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { HttpError } from '../../../src/http/errors.js';
import { FORM_SLACK, readImageUpload, type Upload } from '../../../src/http/upload.js';

const LIMIT = 64 * 1024;

/**
 * Every byte value, CRLFs and near-misses of the delimiter (CRLF "--XyZ" would be one), so the
 * bytes must come back exactly.
 */
function image(size: number): Buffer {
  const b = Buffer.alloc(size);
  for (let i = 0; i < size; i++) b[i] = (i * 7 + (i >> 8)) & 0xff;
  Buffer.from('\r\n--Xy\r\n.--XyZ--\r\n').copy(b, Math.floor(size / 2));
  return b;
}

function form(...parts: { disposition: string; type?: string; body: Buffer | string }[]): Buffer {
  const out: Buffer[] = [];
  for (const p of parts) {
    out.push(Buffer.from(`--XyZ\r\nContent-Disposition: ${p.disposition}\r\n`));
    if (p.type) out.push(Buffer.from(`Content-Type: ${p.type}\r\n`));
    out.push(Buffer.from('\r\n'), Buffer.from(p.body), Buffer.from('\r\n'));
  }
  out.push(Buffer.from('--XyZ--\r\n'));
  return Buffer.concat(out);
}

const FORM_TYPE = 'multipart/form-data; boundary=XyZ';

type Outcome = { upload: Upload } | { error: unknown };

/**
 * A node:http server that answers with what readImageUpload returned: the image bytes (its
 * name in a header), or the HttpError's status and message, with `Connection: close` as
 * upload.ts asks unless `close` is false. Each outcome is also emitted as 'outcome'.
 */
async function serve(t: { after: (fn: () => Promise<void>) => void }, close = true): Promise<Server> {
  const server = createServer((req, res) => {
    readImageUpload(req, LIMIT).then(
      (upload) => {
        server.emit('outcome', { upload } satisfies Outcome);
        res.writeHead(200, { 'X-Name': encodeURIComponent(upload.name) }).end(upload.data);
      },
      (error: unknown) => {
        server.emit('outcome', { error } satisfies Outcome);
        if (error instanceof HttpError)
          res
            .writeHead(error.status, {
              'Content-Type': 'application/json',
              ...(close ? { Connection: 'close' } : {}),
            })
            .end(JSON.stringify({ error: error.message }));
        else res.writeHead(500).end();
      },
    );
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });
  return server;
}

interface Answer {
  status: number;
  body: Buffer;
  name: string | undefined;
}

/**
 * POSTs `chunks` (sent chunked unless headers give a Content-Length) on a keep-alive
 * connection of its own, unless `agent` is given (then the caller destroys it). The answer
 * may come before the whole body is sent.
 */
async function post(
  server: Server,
  headers: OutgoingHttpHeaders,
  chunks: Buffer[],
  agent?: Agent,
): Promise<Answer> {
  const { port } = server.address() as AddressInfo;
  // Not Node's global agent: it would hand a socket still sending a refused body to the next
  // request.
  const own = agent ?? new Agent({ keepAlive: true });
  try {
    const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/', headers, agent: own });
    req.on('error', () => undefined); // EPIPE/ECONNRESET once the server stops reading
    const answered = once(req, 'response') as Promise<[IncomingMessage]>;
    for (const c of chunks) req.write(c);
    req.end();
    const [res] = await answered;
    const body: Buffer[] = [];
    for await (const c of res) body.push(c as Buffer);
    const name = res.headers['x-name'];
    return {
      status: res.statusCode ?? 0,
      body: Buffer.concat(body),
      name: typeof name === 'string' ? decodeURIComponent(name) : undefined,
    };
  } finally {
    if (!agent) own.destroy();
  }
}

function refusal(answer: Answer): { status: number; error: string } {
  return { status: answer.status, error: (JSON.parse(answer.body.toString()) as { error: string }).error };
}

// A wrong refusal shows as a request left waiting: fail it rather than hang.
describe('readImageUpload', { timeout: 20_000 }, () => {
  it('takes a raw body as the image, up to exactly the limit', async (t) => {
    const server = await serve(t);
    const small = image(1000);
    assert.deepEqual(await post(server, { 'Content-Type': 'image/jpeg' }, [small]), {
      status: 200,
      body: small,
      name: 'upload',
    });
    const full = image(LIMIT);
    const chunked = [full.subarray(0, 10_000), full.subarray(10_000)];
    assert.deepEqual(await post(server, { 'Content-Type': 'application/octet-stream' }, chunked), {
      status: 200,
      body: full,
      name: 'upload',
    });
    // No Content-Type at all is a raw body too.
    const bare = await post(server, { 'Content-Length': 3 }, [Buffer.from('abc')]);
    assert.equal(bare.body.toString(), 'abc');
  });

  it("takes a multipart form's first file part and its filename, reading the form to its end", async (t) => {
    const server = await serve(t);
    // One connection for both: the second answer shows the first form was read to its end.
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    t.after(() => agent.destroy());
    const pic = image(5000);
    const body = form(
      { disposition: 'form-data; name="note"', body: 'hello' },
      { disposition: 'form-data; name="image"; filename="caméra 1.jpg"', type: 'image/jpeg', body: pic },
      { disposition: 'form-data; name="second"; filename="other.jpg"', body: 'OTHER' },
    );
    const a = await post(server, { 'Content-Type': FORM_TYPE, 'Content-Length': body.length }, [body], agent);
    assert.deepEqual(a, { status: 200, body: pic, name: 'caméra 1.jpg' });
    // Without a filename (a file by its content type), the name is 'upload'.
    const unnamed = form({
      disposition: 'form-data; name="image"',
      type: 'application/octet-stream',
      body: 'RAW',
    });
    const b = await post(server, { 'Content-Type': FORM_TYPE }, [unnamed], agent);
    assert.deepEqual(b, { status: 200, body: Buffer.from('RAW'), name: 'upload' });
  });

  it('takes a file part of exactly the limit, and refuses one byte more while streaming it', async (t) => {
    const server = await serve(t);
    const fits = image(LIMIT);
    const ok = await post(server, { 'Content-Type': FORM_TYPE }, [
      form({ disposition: 'form-data; name="f"; filename="a.jpg"', body: fits }),
    ]);
    assert.deepEqual(ok, { status: 200, body: fits, name: 'a.jpg' });
    const tooBig = form({ disposition: 'form-data; name="f"; filename="a.jpg"', body: image(LIMIT + 1) });
    const res = await post(server, { 'Content-Type': FORM_TYPE }, [tooBig]);
    assert.deepEqual(refusal(res), { status: 413, error: `file part is over the ${LIMIT}-byte limit` });
  });

  it('refuses a form whose other fields push it past the limit, though its file fits', async (t) => {
    const server = await serve(t);
    const body = form(
      { disposition: 'form-data; name="note"', body: Buffer.alloc(FORM_SLACK + LIMIT, 97) },
      { disposition: 'form-data; name="f"; filename="a.jpg"', body: image(10) },
    );
    const res = await post(server, { 'Content-Type': FORM_TYPE }, [body]);
    assert.equal(refusal(res).status, 413);
    assert.match(refusal(res).error, /form is over the \d+-byte limit/);
  });

  it('refuses a raw body one byte over the limit while streaming it', async (t) => {
    const server = await serve(t);
    const res = await post(server, { 'Content-Type': 'image/jpeg' }, [image(LIMIT + 1)]);
    assert.deepEqual(refusal(res), { status: 413, error: `body is over the ${LIMIT}-byte limit` });
  });

  it('stops reading at a refusal, even when the answer keeps the connection open', async (t) => {
    const server = await serve(t, false);
    let read = 0;
    server.on('request', (req: IncomingMessage) => req.on('data', (c: Buffer) => (read += c.length)));
    const rest = Array.from({ length: 64 }, () => Buffer.alloc(LIMIT / 2));
    const bodies: [string, Buffer[]][] = [
      ['image/jpeg', rest],
      [
        FORM_TYPE,
        [form({ disposition: 'form-data; name="f"; filename="a"', body: image(LIMIT + 1) }), ...rest],
      ],
    ];
    for (const [type, chunks] of bodies) {
      read = 0;
      const agent = new Agent({ keepAlive: true });
      t.after(() => agent.destroy());
      const res = await post(server, { 'Content-Type': type }, chunks, agent);
      assert.equal(res.status, 413);
      const atAnswer = read;
      // A later request (no body, so it reads nothing) answered: the refused body, still being
      // sent, would have been read meanwhile.
      await post(server, { 'Content-Type': 'image/jpeg' }, []);
      assert.equal(read, atAnswer, `${type}: reading went on after the refusal`);
      assert.ok(read < 4 * LIMIT, `${type}: read ${read} of ${33 * LIMIT} bytes`);
    }
  });

  it('refuses a declared Content-Length over the limit before any of the body is sent', async (t) => {
    const server = await serve(t);
    const { port } = server.address() as AddressInfo;
    const req = request({
      host: '127.0.0.1',
      port,
      method: 'POST',
      headers: { 'Content-Type': FORM_TYPE, 'Content-Length': LIMIT + 1 },
    });
    req.on('error', () => undefined);
    req.flushHeaders();
    const [res] = (await once(req, 'response')) as [IncomingMessage];
    let text = '';
    for await (const c of res) text += String(c);
    req.destroy();
    assert.equal(res.statusCode, 413);
    assert.deepEqual(JSON.parse(text), {
      error: `body of ${LIMIT + 1} bytes is over the ${LIMIT}-byte limit`,
    });
  });

  it('refuses an empty body, raw or multipart', async (t) => {
    const server = await serve(t);
    const empty = { status: 400, error: 'empty body: send the image bytes, or a multipart form with a file' };
    assert.deepEqual(refusal(await post(server, { 'Content-Length': 0 }, [])), empty);
    assert.deepEqual(refusal(await post(server, { 'Content-Type': 'image/png' }, [])), empty);
    assert.deepEqual(
      refusal(await post(server, { 'Content-Type': FORM_TYPE, 'Content-Length': 0 }, [])),
      empty,
    );
  });

  it('refuses a multipart form without a file part', async (t) => {
    const server = await serve(t);
    const body = form({ disposition: 'form-data; name="a"', body: 'b' });
    assert.deepEqual(refusal(await post(server, { 'Content-Type': FORM_TYPE }, [body])), {
      status: 400,
      error: 'multipart form has no file part',
    });
  });

  it('answers garbage multipart with 400, never a 500 or a crash', async (t) => {
    const server = await serve(t);
    const file = form({ disposition: 'form-data; name="f"; filename="a.jpg"', body: image(3000) });
    const cases: [string, Buffer][] = [
      [FORM_TYPE, Buffer.from('this is not a form')],
      // Cut off inside the file part: no closing boundary.
      [FORM_TYPE, file.subarray(0, 2000)],
      [FORM_TYPE, Buffer.from('--XyZ\r\nContent-Disposition form-data\x00\r\n\r\nx\r\n--XyZ--\r\n')],
      ['multipart/form-data', file],
      ['multipart/mixed; boundary=XyZ', file],
      ['multipart/form-data; boundary=', file],
    ];
    for (const [type, body] of cases) {
      const { status, error } = refusal(await post(server, { 'Content-Type': type }, [body]));
      assert.equal(status, 400, `${type}: ${body.subarray(0, 40).toString('latin1')}`);
      assert.match(error, /^malformed multipart form: /);
    }
  });

  it('rejects with 400 when the client goes away in the middle of the body', async (t) => {
    const server = await serve(t);
    const { port } = server.address() as AddressInfo;
    for (const type of ['image/jpeg', FORM_TYPE]) {
      const outcome = once(server, 'outcome') as Promise<[Outcome]>;
      const req = request({
        host: '127.0.0.1',
        port,
        method: 'POST',
        headers: { 'Content-Type': type, 'Content-Length': 1000 },
      });
      req.on('error', () => undefined);
      req.write('--XyZ\r\nContent-Disposition: form-data; name="f"; filename="a"\r\n\r\nabc');
      await once(server, 'request');
      req.destroy();
      const [settled] = await outcome;
      assert.ok('error' in settled && settled.error instanceof HttpError, type);
      assert.equal(settled.error.status, 400);
      assert.equal(settled.error.message, 'the client went away before the end of the body');
    }
  });
});
