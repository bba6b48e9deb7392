import { KServeHttp, RemoteRequestError, type Answer } from './client.js';
import type { ServerFacts } from './plan.js';
import type { MetadataTensor, ModelConfigJson } from './protocol.js';

/**
 * What a client asks a server before using one of its models: is it ready (`GET v2/health/ready`,
 * `GET v2/models/<m>[/versions/<v>]/ready`), which extensions has it (`GET v2`), what does the
 * model take and give (`GET v2/models/<m>[/versions/<v>]`), and, from servers with Triton's model
 * configuration extension, its configuration (`.../config`: batch limit, class names).
 */

/** The path of a model (and version) under v2/models. */
export function modelPath(model: string, version: string | undefined): string {
  const v = version === undefined ? '' : `/versions/${encodeURIComponent(version)}`;
  return `/v2/models/${encodeURIComponent(model)}${v}`;
}

function json(answer: Answer, what: string): unknown {
  try {
    return JSON.parse(answer.body.toString('utf8'));
  } catch {
    throw new RemoteRequestError('protocol', `${what}: the answer is not JSON`);
  }
}

function tensors(list: unknown, what: string): MetadataTensor[] {
  if (!Array.isArray(list)) throw new RemoteRequestError('protocol', `${what}: not a model metadata object`);
  return list.map((t: unknown) => {
    const m = t as Partial<MetadataTensor>;
    if (
      typeof m?.name !== 'string' ||
      typeof m.datatype !== 'string' ||
      !Array.isArray(m.shape) ||
      !m.shape.every((d) => Number.isSafeInteger(d))
    )
      throw new RemoteRequestError(
        'protocol',
        `${what}: a tensor without name, datatype and whole-number shape`,
      );
    return { name: m.name, datatype: m.datatype, shape: m.shape };
  });
}

/**
 * Whether the server and `model` say they are ready (`v2/health/ready`, the model's `ready`):
 * resolves when both answer 200, rejects with RemoteRequestError naming which did not.
 */
export async function checkReady(
  http: KServeHttp,
  model: string,
  version: string | undefined,
): Promise<void> {
  const at = (path: string): string => `GET ${http.where}${path}`;
  const server = '/v2/health/ready';
  KServeHttp.check(await http.request('GET', server), `${at(server)} (server ready)`);
  const ready = `${modelPath(model, version)}/ready`;
  KServeHttp.check(await http.request('GET', ready), `${at(ready)} (model ready)`);
}

/** Asks the server about `model`; rejects with RemoteRequestError naming what failed. */
export async function probeServer(
  http: KServeHttp,
  model: string,
  version: string | undefined,
): Promise<ServerFacts> {
  const get = async (path: string): Promise<Answer> => http.request('GET', path);
  const at = (path: string): string => `GET ${http.where}${path}`;
  await checkReady(http, model, version);
  const base = modelPath(model, version);
  const meta = json(KServeHttp.check(await get(base), at(base)), at(base)) as Record<string, unknown>;
  // Optional parts: servers that lack them answer 404 (or 400), which changes nothing.
  const server = await get('/v2');
  const ext = server.status === 200 ? (json(server, at('/v2')) as { extensions?: unknown }).extensions : [];
  const config = await get(`${base}/config`);
  return {
    extensions: Array.isArray(ext) ? ext.filter((e): e is string => typeof e === 'string') : [],
    inputs: tensors(meta.inputs, at(base)),
    outputs: tensors(meta.outputs, at(base)),
    config: config.status === 200 ? (json(config, at(`${base}/config`)) as ModelConfigJson) : undefined,
  };
}
