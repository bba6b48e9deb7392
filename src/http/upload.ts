import type { IncomingMessage } from 'node:http';
import busboy from 'busboy';
import { errorMessage } from '../core/errors.js';
import { HttpError } from './errors.js';

export interface Upload {
  data: Buffer;
  name: string;
}

/** What a form may add to its image: part headers, boundaries, small fields. */
export const FORM_SLACK = 64 * 1024;

const EMPTY = 'empty body: send the image bytes, or a multipart form with a file';

/**
 * The image a request uploads: a multipart/form-data body's first file part (named by its
 * filename), any other body as it is (named 'upload'). At most `maxBytes` of image: a larger
 * declared Content-Length is refused before reading, a larger body or file part as soon as it
 * gets there.
 *
 * Refused with an HttpError (400, 413); on one, the rest of the body is left unread and the request paused, not destroyed
 * (which would cut the connection before the error could be answered): the caller drains it
 * (`req.resume()`) so that the client can finish sending and read the answer.
 */
export async function readImageUpload(req: IncomingMessage, maxBytes: number): Promise<Upload> {
  refuseDeclared(req, maxBytes);
  if (/^\s*multipart\//i.test(req.headers['content-type'] ?? '')) return readForm(req, maxBytes);
  const data = await readBody(req, maxBytes);
  if (data.length === 0) throw new HttpError(400, EMPTY);
  return { data, name: 'upload' };
}

function refuseDeclared(req: IncomingMessage, maxBytes: number): void {
  const declared = Number(req.headers['content-length']);
  if (declared > maxBytes)
    throw new HttpError(413, `body of ${declared} bytes is over the ${maxBytes}-byte limit`);
}

/**
 * A request's whole body as it is (possibly empty), at most `maxBytes`: refused as
 * readImageUpload refuses (413 before reading when the declared length is over, or as soon as
 * the body gets there), leaving the rest for the caller to drain.
 */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  refuseDeclared(req, maxBytes);
  return new Promise((resolve, reject) => {
    const settle = settler(req, resolve, reject);
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) settle(new HttpError(413, `body is over the ${maxBytes}-byte limit`));
      else chunks.push(chunk);
    });
    req.on('end', () => settle(Buffer.concat(chunks, size)));
  });
}

function readForm(req: IncomingMessage, maxBytes: number): Promise<Upload> {
  return new Promise((resolve, reject) => {
    let form: busboy.Busboy;
    try {
      form = busboy({
        headers: req.headers,
        // Browsers send a filename's UTF-8 bytes as they are; busboy would read them as latin1.
        defParamCharset: 'utf8',
        // Later files are skipped unread. busboy's limit fires when a part *reaches* fileSize.
        limits: { files: 1, fileSize: maxBytes + 1 },
      });
    } catch (err) {
      return reject(new HttpError(400, `malformed multipart form: ${errorMessage(err)}`));
    }
    const settle = settler<Upload>(req, resolve, reject, () => {
      // Unpiped first, so that a 'drain' from the parser cannot resume the request.
      req.unpipe(form);
      // Not at once: busboy goes on touching the part's stream after emitting 'limit'.
      process.nextTick(() => form.destroy());
    });
    let received = 0;
    let upload: Upload | undefined;
    const malformed = (err: Error): void =>
      settle(new HttpError(400, received === 0 ? EMPTY : `malformed multipart form: ${err.message}`));
    form.on('file', (_field, file, info) => {
      const chunks: Buffer[] = [];
      file.on('data', (chunk: Buffer) => chunks.push(chunk));
      file.on('limit', () => settle(new HttpError(413, `file part is over the ${maxBytes}-byte limit`)));
      file.on('error', malformed);
      file.on('end', () => (upload = { data: Buffer.concat(chunks), name: info.filename || 'upload' }));
    });
    form.on('error', malformed);
    form.on('close', () => settle(upload ?? new HttpError(400, 'multipart form has no file part')));
    req.on('data', (chunk: Buffer) => {
      received += chunk.length;
      // The whole form counts, not just its file: other fields and parts are no way around it.
      if (received > maxBytes + FORM_SLACK)
        settle(new HttpError(413, `form is over the ${maxBytes}-byte limit (+${FORM_SLACK} for fields)`));
    });
    req.pipe(form);
  });
}

/**
 * Settles a read once: a later limit, parse error or 'end' changes nothing. A refusal stops
 * reading the request (`stop`, then pause); the client going away mid-body is one too.
 */
function settler<T>(
  req: IncomingMessage,
  resolve: (result: T) => void,
  reject: (err: HttpError) => void,
  stop?: () => void,
): (result: T | HttpError) => void {
  let done = false;
  const settle = (result: T | HttpError): void => {
    if (done) return;
    done = true;
    if (!(result instanceof HttpError)) return resolve(result);
    stop?.();
    req.pause();
    reject(result);
  };
  req.on('error', () => settle(new HttpError(400, 'the client went away before the end of the body')));
  return settle;
}
