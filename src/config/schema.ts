import { z } from 'zod';
import { addressProblem } from '../addresses.js';
import { namedRecord } from '../core/names.js';
import { calibrationProblem, polygonProblem } from '../core/polygon.js';

/**
 * The configuration schema: the one definition of what a config file may contain, used both to
 * validate files and (through z.infer) as the daemon's configuration type.
 */

export const PROVIDERS = ['tensorrt', 'cuda', 'webgpu', 'cpu'] as const;
export type ProviderName = (typeof PROVIDERS)[number];

/** GPU decoding presets of a camera (`hwaccel`). */
export const HWACCELS = ['none', 'nvidia', 'vaapi', 'qsv'] as const;
export type HwaccelName = (typeof HWACCELS)[number];

/** Why a name cannot be one level of an MQTT topic (or a URL path segment), or undefined if it can. */
export function topicLevelProblem(name: string): string | undefined {
  if (name.length === 0) return 'must not be empty';
  if (name.length > 64) return 'must be at most 64 characters';
  if (/[/+#]/.test(name)) return "must not contain '/', '+' or '#' (it is used as an MQTT topic level)";
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(name)) return 'must not contain control characters';
  if (name.startsWith('$')) return "must not start with '$' (reserved for broker topics)";
  if (name === '.' || name === '..') return "must not be '.' or '..'";
  if (name.trim() !== name) return 'must not start or end with spaces';
  return undefined;
}

const topicLevel = z.string().superRefine((s, ctx) => {
  const problem = topicLevelProblem(s);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

/** Topic levels separated by '/', without wildcards: the start of a family of topics. */
const topicPrefix = z.string().superRefine((s, ctx) => {
  for (const level of s.split('/')) {
    const problem = topicLevelProblem(level);
    if (problem) ctx.addIssue({ code: 'custom', message: `each level ${problem}` });
  }
});

/**
 * The most entries of each kind a file may hold (docs/config.md, "Limits"): far above what one
 * box can run (each camera is an ffmpeg), and low enough that a mistaken or hostile file is
 * refused at once instead of taking minutes and gigabytes.
 */
export const LIMITS = {
  cameras: 1000,
  models: 64,
  zones: 100,
  lines: 100,
  filters: 1000,
  headers: 64,
  points: 1000,
  modes: 64,
};

/** The mode name that leaves every mode: the file's values (and runtime changes) alone apply. */
export const NO_MODE = 'none';

interface NamedMapOptions {
  /** Entries allowed; more is one error, and the entries are then not checked one by one. */
  max: number;
  /** What the entries are, for that error: `cameras`. */
  what: string;
  nameProblem?: (name: string) => string | undefined;
}

const namedMapValues = new WeakMap<z.core.$ZodType, z.core.$ZodType>();
/** The schema of a `namedMap`'s values, for code that walks the schema (the example's key check). */
export const namedMapValue = (schema: z.core.$ZodType): z.core.$ZodType | undefined =>
  namedMapValues.get(schema);

/** A YAML mapping as the loader hands it over: an object that is not a list. */
const isMapping = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A mapping whose keys are names a user chose (cameras, models, zones, lines, labels). The result
 * has no prototype, so no name is special: `__proto__`, `constructor` or `toString` is a name like
 * any other (zod's record drops `__proto__` unchecked, and a plain object answers `constructor`
 * for a name it does not hold). Each value is checked with `value`, and each name with
 * `nameProblem` beside it (not as a record key, which would leave a badly named entry's value
 * unchecked), so every error is reported at once.
 */
export function namedMap<V extends z.ZodType>(
  value: V,
  { max, what, nameProblem = topicLevelProblem }: NamedMapOptions,
) {
  // Typed by what it holds, checked by hand below.
  const holder = z.custom<Record<string, z.input<V>>>(() => true).optional();
  const map = holder.transform((input: unknown, ctx): Record<string, z.output<V>> => {
    const out = namedRecord<z.output<V>>();
    if (input === undefined) return out;
    if (!isMapping(input)) {
      ctx.issues.push({ code: 'invalid_type', expected: 'record', input, message: 'must be a mapping' });
      return out;
    }
    const names = Object.keys(input);
    if (names.length > max) {
      ctx.issues.push({
        code: 'custom',
        input,
        message: `has ${names.length} ${what}; at most ${max} are allowed (docs/config.md, "Limits")`,
        params: { atKey: true },
      });
      return out;
    }
    for (const name of names) {
      const problem = nameProblem(name);
      if (problem)
        ctx.issues.push({
          code: 'custom',
          path: [name],
          input: name,
          message: `name ${problem}`,
          params: { atKey: true },
          // As a refinement's issue: the checks across sections still run.
          continue: true,
        });
      // As zod's record runs its values (its own internal step, which `safeParse` would finalize):
      // each issue keeps its `continue`, so a value of the wrong type stops the checks across
      // sections, as in a record, while a refinement's issue lets them run.
      const result = value._zod.run({ value: input[name], issues: [] }, { async: false });
      if (result instanceof Promise) throw new Error('namedMap: asynchronous schemas are not supported');
      for (const issue of result.issues) ctx.issues.push({ ...issue, path: [name, ...(issue.path ?? [])] });
      out[name] = result.value as z.output<V>;
    }
    return out;
  });
  namedMapValues.set(map, value);
  return map;
}

function urlWithSchemes(what: string, schemes: readonly string[]) {
  return z.string().superRefine((s, ctx) => {
    let u: URL;
    try {
      u = new URL(s);
    } catch {
      // Never echo the value: URLs carry passwords.
      ctx.addIssue({
        code: 'custom',
        message: `not a valid ${what} URL (expected ${schemes[0]}://host[:port]/...)`,
      });
      return;
    }
    const scheme = u.protocol.slice(0, -1);
    if (!schemes.includes(scheme)) {
      ctx.addIssue({
        code: 'custom',
        message: `${what} URL scheme '${scheme}' is not one of ${schemes.join(', ')}`,
      });
    } else if (scheme !== 'file' && scheme !== 'lavfi' && !u.hostname) {
      ctx.addIssue({ code: 'custom', message: `${what} URL has no host` });
    }
  });
}

const int = () => z.number().int();

const mqtt = z
  .strictObject({
    /** Broker URL; absent means Argus' embedded broker. */
    url: urlWithSchemes('MQTT', ['mqtt', 'mqtts', 'ws', 'wss']).optional(),
    base_topic: topicPrefix.default('argus'),
    client_id: z.string().min(1).max(128).optional(),
    username: z.string().optional(),
    password: z.string().optional(),
    keepalive_s: int().min(5).max(3600).default(30),
    tls: z
      .strictObject({
        ca: z.string().min(1).optional(),
        cert: z.string().min(1).optional(),
        key: z.string().min(1).optional(),
        reject_unauthorized: z.boolean().default(true),
      })
      .optional(),
    /** Seconds between `stats` messages. */
    stats_interval_s: z.number().min(1).max(3600).default(30),
    /** Messages on <base>/cameras/<camera>/detections. */
    detections: z
      .strictObject({
        /** `changes`: when a camera's detections change, and every `heartbeat_s`; `every_frame`: every answered frame. */
        publish: z.enum(['changes', 'every_frame']).default('changes'),
        /** With `changes`: a camera's detections again after this long without a message. */
        heartbeat_s: z.number().min(1).max(3600).default(10),
      })
      .prefault({}),
    /** Events and state changes kept while the broker is away (oldest dropped beyond). */
    buffer_size: int().min(1).max(100000).default(1000),
    /** Seconds between reconnection attempts (mqtt.js reconnects; Argus only watches). */
    reconnect_period_s: z.number().min(0.1).max(300).default(2),
    embedded: z
      .strictObject({
        host: z.string().min(1).default('127.0.0.1'),
        port: int().min(0).max(65535).default(1883),
        /** Largest packet (topic and payload) another client may send; Argus' own are not limited. */
        max_message_kb: int().min(1).max(262144).default(256),
        /** Clients connected at once, Argus' own not counted; the next is refused until one leaves. */
        max_clients: int().min(1).max(100000).default(100),
        /** Retained messages of other clients: at most this many, of at most this many KiB together. */
        max_retained_messages: int().min(0).max(1000000).default(1000),
        max_retained_kb: int().min(0).max(1048576).default(4096),
        /** KiB that may wait in another client's socket; beyond, its QoS 0 messages are dropped. */
        max_queued_kb: int().min(16).max(1048576).default(1024),
        /** Seconds another client may stay over max_queued_kb before it is disconnected. */
        max_behind_s: z.number().min(1).max(3600).default(10),
        /** Connections that have not sent their CONNECT yet; the next is closed at once. */
        max_connecting: int().min(1).max(100000).default(100),
        /** Seconds a connection has to send its CONNECT. */
        connect_timeout_s: z.number().min(1).max(300).default(10),
        /** The login subscribers must give; not set: anyone who can reach the port may connect. */
        username: z.string().min(1).optional(),
        password: z.string().min(1).optional(),
      })
      .refine((e) => (e.username === undefined) === (e.password === undefined), {
        message: 'username and password go together: set both, or neither',
        path: ['password'],
      })
      .prefault({}),
  })
  .prefault({});

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
const model = z.strictObject({
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
const namedModel = z
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

const detector = z
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
    /** fp16: cuda and tensorrt run Argus' half-precision conversion of the model (the CPU keeps fp32). */
    precision: z.enum(['fp32', 'fp16']).default('fp32'),
    /** TensorRT engines kept in the state directory (trt/), so a restart loads instead of building. */
    engine_cache: z.boolean().default(true),
  })
  .prefault({});

const scheduler = z
  .strictObject({
    max_batch: int().min(1).max(64).default(4),
    /** How long a partial batch may wait to fill while the detector is busy. */
    max_wait_ms: int().min(0).max(10000).default(50),
    /** Also wait max_wait_ms when the detector is idle (fuller batches, more latency). */
    fill_when_idle: z.boolean().default(false),
    /** Batches running at once; 0 means one per detector worker. */
    max_in_flight: int().min(0).max(64).default(0),
    /** Frames per camera waiting for the detector; when full the oldest is dropped. */
    queue_size: int().min(1).max(64).default(1),
    /** A frame older than this when its turn comes is dropped as stale. */
    max_frame_age_ms: int().min(50).max(60000).default(2000),
    /**
     * A streaming camera whose newest answered frame is this much older than its newest frame is
     * `lagging` (its status says so): the detector cannot keep up with it.
     */
    lagging_after_s: z.number().min(1).max(3600).default(10),
  })
  .prefault({});

const cache = z
  .strictObject({
    enabled: z.boolean().default(true),
    /** Most cells of the 32×32 frame hash that may change for a frame to count as unchanged. */
    max_distance: int().min(0).max(1024).default(2),
    /** Brightness change (0–255) of a cell that counts as a change. */
    cell_threshold: int().min(1).max(255).default(10),
    /**
     * ffmpeg sends a frame's picture again when some 8×8 block changed by more than this (0–255,
     * the block's mean absolute difference) since the last picture it sent; 0 sends every picture.
     */
    picture_threshold: int().min(0).max(255).default(12),
    /** A cached result is reused for at most this long. */
    max_age_s: z.number().positive().max(3600).default(10),
    /**
     * While the last two analysed frames of a camera show an object moving, analyse every frame
     * (the hash alone can miss a small object moving slowly, and freeze it in place).
     */
    analyse_moving: z.boolean().default(true),
  })
  .prefault({});

const http = z
  .strictObject({
    enabled: z.boolean().default(true),
    host: z.string().min(1).default('127.0.0.1'),
    port: int().min(0).max(65535).default(8080),
    /**
     * How others reach this HTTP server (e.g. http://argus.lan:8080, or a proxy's URL): event
     * clips' `url` on MQTT is this with the clip's path after it (Home Assistant opens it).
     */
    public_url: urlWithSchemes('http.public_url', ['http', 'https'])
      .refine((s) => {
        try {
          const u = new URL(s);
          return u.username === '' && u.password === '';
        } catch {
          return true; // said above
        }
      }, 'must not hold a user or password: it is copied into every clip URL on MQTT and in the history')
      .optional(),
    /** Largest image POST /api/detect accepts. */
    max_body_mb: z.number().gt(0).max(200).default(10),
    /** Priority of POST /api/detect images (and KServe inference pictures) among the cameras (1..10). */
    detect_priority: int().min(1).max(10).default(5),
    /** Serve the models over KServe v2 / Open Inference Protocol under /v2 (docs/http.md). */
    inference: z.boolean().default(false),
    /**
     * A request from elsewhere than this machine changes settings (PUT /api/control...) only
     * with `Authorization: Bearer <token>`; a secret. Without it, only local requests may.
     */
    token: z.string().min(16, 'must be at least 16 characters (a guessable token guards nothing)').optional(),
    /**
     * Addresses of the reverse proxies in front (IPs or CIDR blocks, e.g. 127.0.0.1): their
     * X-Forwarded-For / Forwarded / X-Real-IP name the client in logs; a request from one is never
     * taken as local.
     */
    trusted_proxies: z
      .array(
        z.string().superRefine((s, ctx) => {
          const problem = addressProblem(s);
          if (problem) ctx.addIssue({ code: 'custom', message: problem });
        }),
      )
      .max(64)
      .default([]),
    /**
     * Names this server answers to besides IP addresses, localhost, this machine's name and
     * public_url's (a proxy that passes the browser's Host, e.g. argus.example.com): a request
     * naming another host gets 403, so a DNS-rebinding page reads nothing. `.example.com` allows
     * the domain and its subdomains; `*` allows any name (the check off).
     */
    allowed_hosts: z
      .array(
        z
          .string()
          .regex(/^(\*|\.?[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*\.?)$/, 'must be a host name, .domain or *'),
      )
      .max(64)
      .default([]),
  })
  .prefault({});

const ffmpeg = z
  .strictObject({
    /** A system ffmpeg (e.g. with NVDEC/VAAPI); default: the one from @ffmpeg-installer/ffmpeg. */
    path: z.string().min(1).optional(),
    /** ffmpeg's own connect and read timeout. */
    timeout_s: z.number().min(1).max(300).default(10),
    /** Threads decoding each camera's stream (-threads); 0: ffmpeg's choice (one per core and more). */
    threads: int().min(0).max(64).default(1),
    /** A camera that sends no frame for this long has its ffmpeg restarted. */
    stall_timeout_s: z.number().min(1).max(600).default(20),
    /** Restart delays grow from the first to the longest, doubling, with jitter. */
    backoff_initial_s: z.number().min(0.1).max(600).default(1),
    backoff_max_s: z.number().min(1).max(3600).default(60),
    /** Consecutive authentication failures before a camera is reported offline. */
    auth_failures_before_offline: int().min(1).max(100).default(3),
    /** Stopping waits this long after 'q', then after SIGTERM, before SIGKILL. */
    stop_grace_s: z.number().min(0.1).max(60).default(2),
  })
  .refine((f) => f.backoff_max_s >= f.backoff_initial_s, {
    message: 'backoff_max_s must not be less than backoff_initial_s',
    path: ['backoff_max_s'],
  })
  .prefault({});

const point = z.tuple([z.number().min(0), z.number().min(0)]);

/**
 * A polygon in source pixels: at least three points, at most LIMITS.points (counted before any
 * other check), that enclose some area without crossing themselves (core/polygon.ts).
 */
const polygon = z
  .array(point)
  .min(3)
  .max(LIMITS.points)
  .superRefine((p, ctx) => {
    if (p.length > LIMITS.points) return;
    const problem = polygonProblem(p);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

/**
 * A side of a calibrated zone, in metres (docs/config.md, "Speed"): from 10 cm (less is below what
 * a box's jitter allows to measure) to 10 km (more is no patch of flat ground one camera sees).
 */
export const DISTANCE_M = { min: 0.1, max: 10_000 };
const distance = z.number().min(DISTANCE_M.min).max(DISTANCE_M.max);

/** Masks: polygons in source pixels (a detection whose box's bottom centre is inside one is dropped). */
const masks = z.array(polygon).max(LIMITS.zones).default([]);

const labelFilter = z.strictObject({
  min_score: z.number().min(0).max(1).default(0),
  /** In source pixels². */
  min_area: z.number().min(0).default(0),
  /** Polygons where this label is dropped before tracking (a car on a poster, a person on a TV). */
  mask: masks,
});

/**
 * The slowest a camera may run: a frame every 10 s. Slower, a camera sends nothing for longer than
 * `ffmpeg.stall_timeout_s` (20 s by default) and its ffmpeg is restarted as stalled; a rate of
 * 5e-324 makes ffmpeg's fps filter fail (`Invalid argument`) at every start.
 */
export const FPS_MIN = 0.1;
/** The frame rate and priority a camera runs at; also their ranges at run time (`cameraSettings`). */
export const cameraFps = z.number().min(FPS_MIN).max(60);
export const cameraPriority = int().min(1).max(10);

/**
 * The camera settings that can be changed at run time, each with its one range: the file, a
 * mode, and every runtime path (control topics, PUT /api/control, control.json) check a value
 * with these, so nothing runs that the file could not hold. A zone's or line's `enabled` is a
 * switch too (`z.boolean()`).
 */
export const cameraSettings = {
  enabled: z.boolean(),
  detect: z.boolean(),
  snapshots: z.boolean(),
  fps: cameraFps,
  priority: cameraPriority,
};

/**
 * The words Argus' own topics use where a label, a zone, a line or a direction is a topic level
 * (src/publish/topics.ts; docs/config.md, "Reserved names"), so a name that is one would land on
 * a topic of another kind: a label `status` on the camera's status, a direction `state` under a
 * label `enabled` on a line's switch state, a direction `set` on a command topic Argus reads.
 * The one list: every such name is checked against it, in the file and in a model's labels.
 */
export const RESERVED_NAMES: readonly string[] = [
  'status',
  'detections',
  'zones',
  'lines',
  'active',
  'snapshot',
  'dwell_s',
  'state',
  'set',
  'reset',
  ...Object.keys(cameraSettings),
];

/** Why a label, zone, line or direction name cannot be a topic level of Argus' topics, or undefined. */
export function topicWordProblem(name: string): string | undefined {
  const problem = topicLevelProblem(name);
  if (problem) return problem;
  if (RESERVED_NAMES.includes(name))
    return `must not be one of the words of Argus' own topics (${RESERVED_NAMES.join(', ')}): it would publish onto, or be read as, another of its topics`;
  return undefined;
}

/** A label (or direction) that becomes a topic level: not a word of Argus' own topics. */
const topicWord = z.string().superRefine((s, ctx) => {
  const problem = topicWordProblem(s);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

/**
 * The names in a camera that become topic levels under it, each checked as a `topicWord` at its
 * line: its zones' and lines' names, their `objects`, the lines' directions (objects.track is a
 * list of `topicWord`s).
 */
function checkTopicWords(
  cam: {
    zones: Record<string, { objects?: string[] | undefined }>;
    lines: Record<string, { objects?: string[] | undefined; directions: readonly string[] }>;
  },
  ctx: z.RefinementCtx,
): void {
  const flag = (path: (string | number)[], name: string, atKey = false): void => {
    const problem = RESERVED_NAMES.includes(name) ? topicWordProblem(name) : undefined;
    if (problem)
      ctx.addIssue({ code: 'custom', path, message: problem, ...(atKey ? { params: { atKey } } : {}) });
  };
  for (const kind of ['zones', 'lines'] as const)
    for (const [name, area] of Object.entries<{ objects?: string[] | undefined }>(cam[kind])) {
      flag([kind, name], name, true);
      area.objects?.forEach((label, i) => flag([kind, name, 'objects', i], label));
    }
  for (const [name, line] of Object.entries(cam.lines))
    line.directions.forEach((d, i) => flag(['lines', name, 'directions', i], d));
}

const camera = z
  .strictObject({
    /** Also `lavfi:<filtergraph>`: a synthetic camera made by ffmpeg (demos, tests). */
    url: urlWithSchemes('camera', ['rtsp', 'rtsps', 'rtmp', 'http', 'https', 'file', 'lavfi']),
    /** Off: its ffmpeg does not run. */
    enabled: cameraSettings.enabled.default(true),
    /** Off: ffmpeg goes on decoding (the live view updates) but no frame reaches the model: no events. */
    detect: cameraSettings.detect.default(true),
    /** Off: its events carry no snapshot (none on MQTT, in the history or over HTTP). */
    snapshots: cameraSettings.snapshots.default(true),
    /**
     * A video clip per event, with pre-roll, from the stream as the camera sends it (absent:
     * `events.clips.enabled`). Not for `lavfi:` cameras, which send no encoded stream.
     */
    clips: z.boolean().optional(),
    /** The name of the model that analyses its frames (`default`: `model:`). */
    model: z.string().min(1).default('default'),
    fps: cameraSettings.fps.default(5),
    /** 1..10; higher is served first when the detector is busy. */
    priority: cameraSettings.priority.default(5),
    rtsp_transport: z.enum(['tcp', 'udp']).default('tcp'),
    /** Extra ffmpeg arguments placed before -i. */
    input_args: z.array(z.string()).default([]),
    hwaccel_args: z.array(z.string()).default([]),
    /** GPU decoding preset (docs/operations.md, Hardware decoding); the software path when ffmpeg lacks it. */
    hwaccel: z.enum(HWACCELS).default('none'),
    /** The VAAPI/QSV render node, or the CUDA device index, for `hwaccel`. */
    hwaccel_device: z.string().min(1).optional(),
    objects: z
      .strictObject({
        /** Labels to report; absent means all. */
        track: z.array(topicWord).min(1).optional(),
        filters: namedMap(labelFilter, { max: LIMITS.filters, what: 'filters' }),
        /** Polygons where every label is dropped before tracking. */
        mask: masks,
      })
      .prefault({}),
    /**
     * Polygons the frame cache ignores when it decides whether a frame looks like the last one
     * analysed (a swaying tree, a flag, a fountain, a clock). Detections there are still reported.
     */
    cache_mask: masks,
    zones: namedMap(
      z
        .strictObject({
          /** Polygon in source pixels, at least three points. */
          points: polygon,
          objects: z.array(topicLevel).min(1).optional(),
          /** An object in the zone this long is loitering: one `update` event says so. */
          loiter_s: z.number().positive().max(86400).optional(),
          /** Off: the zone counts nothing and events do not name it. */
          enabled: z.boolean().default(true),
          /**
           * What must be inside: the box's bottom centre (where it stands), its centre, or any
           * part of the box (`any`: the box overlaps the polygon).
           */
          anchor: z.enum(['bottom_center', 'center', 'any']).default('bottom_center'),
          /** Consecutive analysed frames an object must be inside before it has entered (box jitter at the edge). */
          inertia: int().min(1).max(100).default(3),
          /**
           * The real lengths, in metres, of the zone's four sides (points 1→2, 2→3, 3→4, 4→1): the
           * zone is then a calibrated patch of flat ground and objects in it get a speed.
           */
          distances: z.tuple([distance, distance, distance, distance]).optional(),
          /** With distances: an object enters the zone only faster than this (in events.speed_unit). */
          speed_threshold: z.number().positive().optional(),
        })
        .refine((zn) => !zn.distances || zn.points.length === 4, {
          message: 'distances needs a zone of exactly four points (one length per side)',
          path: ['distances'],
        })
        .refine((zn) => zn.speed_threshold === undefined || zn.distances !== undefined, {
          message: 'speed_threshold needs distances (a calibrated zone)',
          path: ['speed_threshold'],
        })
        .superRefine((zn, ctx) => {
          // A polygon that is no polygon is refused as such, once.
          const problem = zn.distances && !polygonProblem(zn.points) && calibrationProblem(zn.points);
          if (problem) ctx.addIssue({ code: 'custom', message: problem, path: ['points'] });
        }),
      { max: LIMITS.zones, what: 'zones' },
    ),
    lines: namedMap(
      z
        .strictObject({
          /** From A to B, in source pixels. */
          points: z.tuple([point, point]),
          /** Labels counted; absent means all the camera tracks. */
          objects: z.array(topicLevel).min(1).optional(),
          /**
           * Names of the two ways across: the first for objects going from the left of A→B to
           * its right (as drawn on the picture: top to bottom for A on the left, B on the right).
           */
          directions: z.tuple([topicLevel, topicLevel]).default(['in', 'out']),
          /** The point of the box that crosses: its centre, or its bottom centre (where it stands). */
          anchor: z.enum(['center', 'bottom_center']).default('center'),
          /** Off: crossings are not counted (the counts so far are kept). */
          enabled: z.boolean().default(true),
        })
        .refine((l) => l.points[0][0] !== l.points[1][0] || l.points[0][1] !== l.points[1][1], {
          message: 'the two points must differ',
          path: ['points'],
        })
        .refine((l) => l.directions[0] !== l.directions[1], {
          message: 'the two directions need different names',
          path: ['directions'],
        }),
      { max: LIMITS.lines, what: 'lines' },
    ),
  })
  .superRefine((cam, ctx) => {
    if (cam.clips === true && cam.url.toLowerCase().startsWith('lavfi:'))
      ctx.addIssue({
        code: 'custom',
        message: 'a lavfi: camera sends no encoded stream to keep clips of',
        path: ['clips'],
      });
    // A zone or line listing a label the camera does not track would never see it.
    const track = cam.objects.track;
    if (!track) return;
    for (const kind of ['zones', 'lines'] as const)
      for (const [name, area] of Object.entries<{ objects?: string[] }>(cam[kind]))
        area.objects?.forEach((label, i) => {
          if (!track.includes(label))
            ctx.addIssue({
              code: 'custom',
              message: `'${label}' is not one of the camera's objects.track (${track.join(', ')})`,
              path: [kind, name, 'objects', i],
            });
        });
  })
  .superRefine((cam, ctx) => checkTopicWords(cam, ctx))
  .superRefine((cam, ctx) => {
    if (cam.hwaccel !== 'none' && cam.hwaccel_args.length > 0)
      ctx.addIssue({ code: 'custom', path: ['hwaccel'], message: 'set hwaccel or hwaccel_args, not both' });
    if (cam.hwaccel === 'none' && cam.hwaccel_device !== undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['hwaccel_device'],
        message: 'needs hwaccel (nvidia, vaapi or qsv)',
      });
  });

const events = z
  .strictObject({
    /** Frames an object must be matched in before its `new` event. */
    min_frames: int().min(1).max(100).default(2),
    /** The unit of `speed` in events and of zones' `speed_threshold`. */
    speed_unit: z.enum(['km/h', 'mph', 'm/s']).default('km/h'),
    /** An object unseen for more than this ends: its track is kept, predicted on, this long. */
    end_after_s: z.number().min(0.1).max(3600).default(3),
    /** Detections scoring at least this start tracks; lower ones only keep existing tracks. */
    high_score: z.number().gt(0).max(1).default(0.5),
    /** An object that has not moved materially for this long becomes stationary. */
    stationary_after_s: z.number().min(1).max(86400).default(10),
    /**
     * Labels the model confuses for one object (a van called `truck` and `car` by turns): one
     * track, labelled by the vote of its detections' scores. A label belongs to one group at most.
     */
    label_groups: z
      .array(z.array(topicLevel).min(2).max(20))
      .max(20)
      .default([
        ['car', 'truck', 'bus'],
        ['bicycle', 'motorcycle'],
      ])
      .superRefine((groups, ctx) => {
        const seen = new Set<string>();
        groups.forEach((g, i) =>
          g.forEach((label, j) => {
            if (seen.has(label))
              ctx.addIssue({ code: 'custom', path: [i, j], message: `'${label}' is in more than one group` });
            seen.add(label);
          }),
        );
      }),
    /** Colour histograms of the objects join the motion cost, so crossing objects keep their ids. */
    appearance: z.boolean().default(true),
    /** A lost object whose place something else covers (a walker behind a bus) is held this long at most. */
    hold_hidden_s: z.number().min(0).max(600).default(10),
    /** An `update` is sent when the box's centre moved this many box diagonals from the last report... */
    update_move: z.number().gt(0).max(100).default(1),
    /** ...or its best score rose this much. */
    update_score: z.number().min(0).max(1).default(0.1),
    /** Each event's best frame, as JPEGs: on MQTT, in the history, over HTTP. */
    snapshots: z
      .strictObject({
        enabled: z.boolean().default(true),
        /** An object's snapshot is replaced by a better frame at most this often. */
        min_interval_s: z.number().min(0).max(3600).default(2),
        quality: int().min(1).max(100).default(80),
      })
      .prefault({}),
    /** The latest events with their snapshots, kept in the state directory. */
    history: z
      .strictObject({
        /** 0 keeps no history. */
        max_events: int().min(0).max(20000).default(1000),
        max_mb: z.number().gt(0).max(1048576).default(100),
        /** Events that started longer ago than this go, with their snapshots and clips; 0: no limit. */
        max_days: z.number().min(0).max(3650).default(30),
      })
      .prefault({}),
    /**
     * A video clip per event (cameras' `clips`): from `pre_capture_s` before the object was
     * first seen to `post_capture_s` after it was last seen, copied from the camera's stream
     * (no re-encoding) out of a ring of its recent video.
     */
    clips: z
      .strictObject({
        /** Cameras keep clips unless their own `clips` says otherwise (off: the ring writes all the time). */
        enabled: z.boolean().default(false),
        pre_capture_s: z.number().min(0).max(60).default(5),
        post_capture_s: z.number().min(0).max(300).default(5),
        /** A longer event's clip stops here (from its start, pre-roll included). */
        max_clip_s: z.number().min(5).max(3600).default(120),
        /** Where each camera's ring of recent video is written (a tmpfs spares an SD card); absent: `<state_dir>/ring`. Relative to the config file. */
        ring_dir: z.string().min(1).optional(),
        /** The most a camera's ring may hold, video kept for clips in the making included. */
        ring_max_mb: z.number().min(1).max(1048576).default(256),
      })
      .prefault({}),
  })
  .prefault({});

/** What a mode (or a runtime change) may set on a camera: every key optional. */
const switchable = z.strictObject({
  enabled: cameraSettings.enabled.optional(),
  detect: cameraSettings.detect.optional(),
  snapshots: cameraSettings.snapshots.optional(),
  fps: cameraSettings.fps.optional(),
  priority: cameraSettings.priority.optional(),
  zones: namedMap(z.strictObject({ enabled: z.boolean() }), { max: LIMITS.zones, what: 'zones' }),
  lines: namedMap(z.strictObject({ enabled: z.boolean() }), { max: LIMITS.lines, what: 'lines' }),
});
export type CameraSwitches = z.output<typeof switchable>;

/** Arming modes: named sets of camera settings, one active at a time (`<base>/mode/set`). */
const mode = z.strictObject({
  cameras: namedMap(switchable, { max: LIMITS.cameras, what: 'cameras' }),
});

/** Steering at run time: control topics, Home Assistant switches, PUT /api/control. */
const control = z
  .strictObject({
    /** Off: no control topic is heard and every change over HTTP is refused; the file alone rules. */
    enabled: z.boolean().default(true),
  })
  .prefault({});

const homeAssistant = z
  .strictObject({
    /** Announce every camera's entities to Home Assistant (MQTT discovery). */
    enabled: z.boolean().default(false),
    /** Home Assistant's discovery prefix (its MQTT integration's setting). */
    discovery_prefix: topicPrefix.default('homeassistant'),
    /** The name of the device that stands for this Argus in Home Assistant. */
    device_name: z.string().min(1).max(128).default('Argus'),
    /** Labels given entities on cameras without `objects.track` (which report every label). */
    default_labels: z.array(topicWord).min(1).default(['person']),
  })
  .prefault({});

/** Whether one topic prefix is the other, or under it. */
const overlaps = (a: string, b: string): boolean => a === b || a.startsWith(`${b}/`) || b.startsWith(`${a}/`);

/** The sections of a config file; `configSchema` adds the checks across sections. */
const sections = z.strictObject({
  log_level: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal']).default('info'),
  /**
   * What survives a restart (line counts, the event history). systemd's $STATE_DIRECTORY wins
   * when set; absent,
   * ~/.local/state/argus. Relative to the config file.
   */
  state_dir: z.string().min(1).optional(),
  mqtt,
  model: model.optional(),
  models: namedMap(namedModel, { max: LIMITS.models, what: 'models' }),
  detector,
  scheduler,
  cache,
  http,
  ffmpeg,
  events,
  home_assistant: homeAssistant,
  control,
  modes: namedMap(mode, { max: LIMITS.modes, what: 'modes' }),
  cameras: namedMap(camera, { max: LIMITS.cameras, what: 'cameras' }),
});

/** A mode may name only cameras, zones and lines the file has; `none` is no mode's name. */
function checkModes(c: z.output<typeof sections>, ctx: z.RefinementCtx): void {
  for (const [name, m] of Object.entries(c.modes)) {
    if (name === NO_MODE)
      ctx.addIssue({
        code: 'custom',
        path: ['modes', name],
        message: `'${NO_MODE}' is reserved: choosing it leaves every mode`,
        params: { atKey: true },
      });
    for (const [cam, sw] of Object.entries(m.cameras)) {
      const at = ['modes', name, 'cameras', cam];
      const camera = c.cameras[cam];
      if (!camera) {
        const known = Object.keys(c.cameras).join(', ') || 'none';
        ctx.addIssue({
          code: 'custom',
          path: at,
          message: `there is no camera '${cam}' (the cameras are ${known})`,
          params: { atKey: true },
        });
        continue;
      }
      for (const kind of ['zones', 'lines'] as const)
        for (const area of Object.keys(sw[kind]))
          if (!Object.hasOwn(camera[kind], area))
            ctx.addIssue({
              code: 'custom',
              path: [...at, kind, area],
              message: `camera '${cam}' has no ${kind === 'zones' ? 'zone' : 'line'} '${area}'`,
              params: { atKey: true },
            });
    }
  }
}

/**
 * The whole file. `model:` becomes the entry `default` of `models` (the type has `models`
 * only): everything past the loader reads every model, the default included, from there.
 */
export const configSchema = sections
  .superRefine((c, ctx) => {
    const ha = c.home_assistant;
    if (ha.enabled && overlaps(ha.discovery_prefix, c.mqtt.base_topic))
      ctx.addIssue({
        code: 'custom',
        path: ['home_assistant', 'discovery_prefix'],
        message: `must not be mqtt.base_topic ('${c.mqtt.base_topic}'), nor above or below it: Argus' topics and Home Assistant's would mix`,
      });
    if (c.model && Object.hasOwn(c.models, 'default'))
      ctx.addIssue({
        code: 'custom',
        path: ['models', 'default'],
        message: 'the model named default is also defined by model:; keep one of them',
        params: { atKey: true },
      });
    checkModes(c, ctx);
    const clipping = Object.values(c.cameras).some((cam) => cam.clips ?? c.events.clips.enabled);
    if (clipping && c.events.history.max_events === 0)
      ctx.addIssue({
        code: 'custom',
        path: ['events', 'history', 'max_events'],
        message: 'is 0 (no history), but cameras keep clips (events.clips): clips are kept in the history',
      });
    const names = [...new Set([...(c.model ? ['default'] : []), ...Object.keys(c.models)])];
    if (names.length === 0)
      ctx.addIssue({
        code: 'custom',
        path: ['model'],
        message: 'is required: set model: (the default model), or name models under models:',
      });
    else
      for (const [name, cam] of Object.entries(c.cameras))
        if (!names.includes(cam.model))
          ctx.addIssue({
            code: 'custom',
            path: ['cameras', name, 'model'],
            message: `there is no model named '${cam.model}'${cam.model === 'default' ? ' (a camera without model: uses default)' : ''}; the models are ${names.join(', ')}`,
          });
  })
  .transform(({ model: legacy, models, ...rest }) => {
    // Kept without a prototype, as namedMap made it.
    const all = legacy ? Object.assign(namedRecord<ModelConfig>(), { default: legacy }, models) : models;
    return { ...rest, models: all };
  });

export type Config = z.output<typeof configSchema>;
export type CameraConfig = z.infer<typeof camera>;
/** One model of `models:` (or `model:`, the model named `default`). */
export type ModelConfig = z.output<typeof namedModel>;
export type RemoteModelConfig = z.output<typeof remoteModel>;

/**
 * One section filled in with its defaults, for tools that run a stage outside the daemon
 * (`argus detect`, the bench): `sectionConfig('detector', { workers: 1 })`. Throws on values the
 * schema refuses.
 */
export function sectionConfig<K extends Exclude<keyof Config, 'cameras' | 'log_level' | 'models'>>(
  key: K,
  partial: z.input<(typeof sections.shape)[K]>,
): Config[K] {
  return sections.shape[key].parse(partial) as Config[K];
}

/** One model with its defaults, as an entry of `models:` (`modelConfig({ path })`). Throws when invalid. */
export function modelConfig(partial: z.input<typeof namedModel>): ModelConfig {
  return namedModel.parse(partial);
}
