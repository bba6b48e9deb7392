import type { ServerResponse } from 'node:http';

/** Answers a request with a whole body of `type` (never sniffed as another). */
export function send(res: ServerResponse, status: number, type: string, body: string | Buffer): void {
  res.statusCode = status;
  res.setHeader('Content-Type', type);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.end(body);
}
