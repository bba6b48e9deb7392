import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { decodeInferRequest, encodeInferResponse, type DecodedRequest } from '../../src/kserve/codec.js';
import type { MetadataTensor, ModelConfigJson } from '../../src/kserve/protocol.js';
import type { Tensor } from '../../src/kserve/tensor.js';

/**
 * An in-process KServe v2 server for unit tests: real HTTP on a local port, the documented
 * endpoints, and a model whose answers a test writes (`infer`). Tests script failures (`statuses`
 * answered before the model's, or `misbehave`: any answer written by hand), delays, readiness,
 * and stop and restart it on the same port.
 */

export interface FakeModelSpec {
  name: string;
  inputs: MetadataTensor[];
  outputs: MetadataTensor[];
  /** Absent: /config answers 404, as on a server without Triton's model configuration extension. */
  config?: ModelConfigJson;
  /** The output tensors for a request (named as the request asks). */
  infer: (req: DecodedRequest) => Tensor[];
}

export interface SeenRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** Inference requests: what the body decoded to. */
  infer?: DecodedRequest;
}

export class FakeKServe {
  readonly seen: SeenRequest[] = [];
  /** Statuses answered to the next inference requests, before the model is asked. */
  statuses: number[] = [];
  /** The `error` of a scripted status. */
  errorText = (status: number): string => `scripted ${status}`;
  /**
   * While set, every inference request (recorded, then after `delayMs`) is answered by it instead
   * of the model, as it writes `res`: a 500, a 200 with garbage, an endless body.
   */
  misbehave: ((res: ServerResponse) => void) | undefined = undefined;
  /** How long an inference waits before it is answered. */
  delayMs = 0;
  ready = true;
  extensions: string[] = ['binary_tensor_data', 'model_configuration'];
  /** Inference requests being answered now, and the most at once. */
  active = 0;
  maxActive = 0;
  /** TCP connections accepted. */
  connections = 0;
  private server: Server | undefined;
  private sockets = new Set<Socket>();
  port = 0;

  constructor(readonly model: FakeModelSpec) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get inferences(): SeenRequest[] {
    return this.seen.filter((r) => r.infer);
  }

  async start(): Promise<void> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        void this.answer(req.method ?? '', req.url ?? '', req.headers, Buffer.concat(chunks)).then((a) => {
          if (a === 'misbehave') return this.misbehave?.(res);
          res.writeHead(a.status, a.headers);
          res.end(a.body);
        });
      });
    });
    server.on('connection', (s: Socket) => {
      this.connections++;
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  /** Closes the port and cuts every connection: clients now get ECONNREFUSED. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((r) => server.close(() => r()));
  }

  private async answer(
    method: string,
    path: string,
    headers: IncomingHttpHeaders,
    body: Buffer,
  ): Promise<{ status: number; headers: Record<string, string>; body: Buffer } | 'misbehave'> {
    const seen: SeenRequest = { method, path, headers };
    this.seen.push(seen);
    const json = (status: number, v: unknown) => ({
      status,
      headers: { 'Content-Type': 'application/json' },
      body: Buffer.from(JSON.stringify(v)),
    });
    const m = this.model;
    const base = `/v2/models/${m.name}`;
    if (path === '/v2') return json(200, { name: 'fake', version: '0', extensions: this.extensions });
    if (path === '/v2/health/ready' || path === `${base}/ready`)
      return json(this.ready ? 200 : 400, { ready: this.ready });
    if (path === base)
      return json(200, { name: m.name, platform: 'onnxruntime_onnx', inputs: m.inputs, outputs: m.outputs });
    if (path === `${base}/config`) return m.config ? json(200, m.config) : json(404, { error: 'no config' });
    if (path !== `${base}/infer` || method !== 'POST')
      return json(404, { error: `unknown: ${method} ${path}` });
    const header = headers['inference-header-content-length'];
    seen.infer = decodeInferRequest(body, Array.isArray(header) ? header[0] : header);
    this.active++;
    this.maxActive = Math.max(this.maxActive, this.active);
    try {
      if (this.delayMs) await new Promise((r) => setTimeout(r, this.delayMs));
      if (this.misbehave) return 'misbehave';
      const status = this.statuses.shift();
      if (status !== undefined) return json(status, { error: this.errorText(status) });
      const req = seen.infer;
      const wanted = req.outputs ?? [];
      const tensors = m.infer(req);
      const encoded = encodeInferResponse({
        modelName: m.name,
        outputs: wanted.map((o) => ({ ...tensors.find((t) => t.name === o.name)!, binary: o.binary })),
      });
      const out: Record<string, string> = { 'Content-Type': 'application/octet-stream' };
      if (encoded.headerLength !== undefined)
        out['Inference-Header-Content-Length'] = String(encoded.headerLength);
      return { status: 200, headers: out, body: Buffer.concat(encoded.chunks) };
    } finally {
      this.active--;
    }
  }
}
