import { z } from 'zod';
import { int, LIMITS, namedMap, urlWithSchemes } from './primitives.js';

export const PROVIDERS = ['tensorrt', 'cuda', 'webgpu', 'cpu'] as const;
export type ProviderName = (typeof PROVIDERS)[number];

/**
 * The Vulkan drivers a WebGPU adapter may come from (`detector.webgpu.vendor`): Dawn picks the
 * first adapter among them, so on a box with two GPUs this is how one is chosen.
 */
export const WEBGPU_VENDORS = ['nvidia', 'amd', 'intel', 'software'] as const;
export type WebgpuVendor = (typeof WEBGPU_VENDORS)[number];

const providerList = z
  .array(z.enum(PROVIDERS))
  .min(1)
  .refine((p) => new Set(p).size === p.length, 'lists a provider twice');

/** What every model has, local or remote: how its output is read and filtered. */
const modelOutput = {
  /** Square input size, used only when the model does not fix it. */
  input_size: int().min(32).max(4096).multipleOf(32).optional(),
  /** Class names (JSON array, or one per line), for models without `names` metadata. */
  labels: z.string().min(1).optional(),
  conf: z.number().gt(0).max(1).default(0.25),
  iou: z.number().gt(0).max(1).default(0.45),
  max_detections: int().min(1).max(10000).default(300),
};

/** `model:`, the model named `default`: a local ONNX file, with `detector:`'s settings. */
export const model = z.strictObject({
  /** ONNX file; a relative path is relative to the config file. */
  path: z.string().min(1),
  ...modelOutput,
});

/** A model served by a KServe v2 (Open Inference Protocol) server: Triton, KServe, Argus. */
const remoteModel = z.strictObject({
  url: urlWithSchemes('KServe', ['http', 'https']),
  /** The model's name on the server. */
  model: z.string().min(1),
  version: z.string().min(1).optional(),
  /** Sent with every request; values may use ${NAME} (they are secrets then). */
  headers: namedMap(z.string(), {
    max: LIMITS.headers,
    what: 'headers',
    nameProblem: (n) => (n ? undefined : 'must not be empty'),
  }),
  /** PEM file of the CA that signed the server's certificate; relative to the config file. */
  ca: z.string().min(1).optional(),
  timeout_ms: int().min(100).max(600000).default(5000),
  retries: int().min(0).max(10).default(2),
  /** Batches sent to the server at once. */
  in_flight: int().min(1).max(64).default(2),
});

/** The keys that only a local model has: they override `detector:` for it. */
const LOCAL_ONLY = ['providers', 'device_ids', 'workers'] as const;

/** An entry of `models:`: a local ONNX file (`path`) or a remote one (`remote`), exactly one. */
export const namedModel = z
  .strictObject({
    path: z.string().min(1).optional(),
    remote: remoteModel.optional(),
    ...modelOutput,
    /** Override `detector.providers` for this model. */
    providers: providerList.optional(),
    /** GPUs to run it on: one session per device (`detector.device_id` when not set). */
    device_ids: z
      .array(int().min(0).max(64))
      .min(1)
      .max(64)
      .refine((d) => new Set(d).size === d.length, 'lists a device twice')
      .optional(),
    /** Override `detector.workers` for this model. */
    workers: int().min(0).max(32).optional(),
  })
  .superRefine((m, ctx) => {
    if (m.path === undefined && m.remote === undefined)
      ctx.addIssue({
        code: 'custom',
        message: 'needs path (a local ONNX file) or remote (a KServe v2 server)',
        params: { atKey: true },
      });
    if (m.path !== undefined && m.remote !== undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['remote'],
        message: 'a model is either a local file (path) or remote, not both',
        params: { atKey: true },
      });
    if (m.remote)
      for (const key of LOCAL_ONLY)
        if (m[key] !== undefined)
          ctx.addIssue({
            code: 'custom',
            path: [key],
            message: 'only for a local model (path): a remote model runs as its server says',
            params: { atKey: true },
          });
  });

export const detector = z
  .strictObject({
    providers: providerList.default(['cpu']),
    device_id: int().min(0).max(64).default(0),
    /** Sessions, each in its own worker thread; 0 = one per GPU, or up to 4 sharing the CPU cores. */
    workers: int().min(0).max(32).default(0),
    /** ONNX Runtime thread pools; 0 lets Argus (with workers: 0) or ONNX Runtime choose. */
    intra_op_threads: int().min(0).max(256).default(0),
    inter_op_threads: int().min(0).max(256).default(0),
    /** ONNX Runtime's idle threads spin for work (faster hand-off, burns CPU others could use). */
    thread_spinning: z.boolean().default(false),
    inference_timeout_ms: int().min(100).max(600000).default(10000),
    /**
     * fp16: cuda, tensorrt and webgpu (where the adapter offers shader-f16) run Argus'
     * half-precision conversion of the model (the CPU keeps fp32).
     */
    precision: z.enum(['fp32', 'fp16']).default('fp32'),
    /** The WebGPU adapter: which Vulkan driver it comes from (unset: Dawn's choice, a discrete GPU first). */
    webgpu: z
      .strictObject({
        vendor: z.enum(WEBGPU_VENDORS).optional(),
      })
      .prefault({}),
    /** TensorRT engines kept in the state directory (trt/), so a restart loads instead of building. */
    engine_cache: z.boolean().default(true),
  })
  .prefault({});

/** One model of `models:` (or `model:`, the model named `default`). */
export type ModelConfig = z.output<typeof namedModel>;
export type RemoteModelConfig = z.output<typeof remoteModel>;
