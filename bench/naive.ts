/**
 * The naive baseline for bench/pipeline.ts: how a first prototype handles the same cameras.
 * Same ffmpeg decoding and scaling, same model, same decoding of outputs and the same MQTT
 * messages, but one `session.run` per frame as it arrives, on the main thread, with no
 * batching, no queue bounds and no cache. argv: CONFIG
 */
import { spawn } from 'node:child_process';
import mqtt from 'mqtt';
import ort from 'onnxruntime-node';
import { letterbox } from '../src/core/geometry.js';
import { isoTime } from '../src/core/time.js';
import { loadConfig } from '../src/config/index.js';
import { decodeYolo, resolveLayout } from '../src/detector/decode.js';
import { planModel } from '../src/detector/index.js';
import { rgbToNchw } from '../src/detector/preprocess.js';
import { toDetections } from '../src/detector/results.js';
import { buildFfmpegArgs, defaultFfmpegPath, PnmSplitter, probeOptionNames } from '../src/ingest/index.js';

const { config } = await loadConfig(process.argv[2]!);
const model = config.models.default!;
const plan = await planModel({ ...model, path: model.path! });
const session = await ort.InferenceSession.create(plan.path);
const size = plan.inputSize;
// The bench's broker takes only its login under argus/ (as Argus' embedded broker does).
const client = mqtt.connect(config.mqtt.url!, {
  username: config.mqtt.username,
  password: config.mqtt.password,
});
const ffmpeg = await defaultFfmpegPath();
const names = await probeOptionNames(ffmpeg);
const children: ReturnType<typeof spawn>[] = [];

for (const [name, cam] of Object.entries(config.cameras)) {
  const a = buildFfmpegArgs(
    cam,
    { timeout_s: 10, threads: 1 },
    { url: cam.url, size, names, cache: { ...config.cache, enabled: false } },
  );
  const input = a.input.map((x) => (x === 'verbose' ? 'error' : x));
  const child = spawn(ffmpeg, [...input, '-i', a.url, ...a.output, 'pipe:1'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  children.push(child);
  let seq = 0;
  const g = letterbox(640, 480, size);
  const splitter = new PnmSplitter(size * size * 3, ({ data }) => {
    const ts = Date.now();
    const frame = ++seq;
    const input = new Float32Array(3 * size * size);
    rgbToNchw(data, size, size, input, 0);
    void session
      .run({ [plan.inputName]: new ort.Tensor('float32', input, [1, 3, size, size]) })
      .then((out) => {
        const t = out[plan.outputName]!;
        const raw = decodeYolo(t.data as Float32Array, resolveLayout(t.dims, plan.labels.length), 0, {
          conf: model.conf,
          iou: model.iou,
        });
        const detections = toDetections(raw, g, plan.labels);
        client.publish(
          `argus/cameras/${name}/detections`,
          JSON.stringify({
            camera: name,
            ts: isoTime(ts),
            frame,
            cached: false,
            width: 640,
            height: 480,
            detections,
          }),
        );
      });
  });
  child.stdout.on('data', (chunk: Buffer) => splitter.push(chunk));
}

process.on('SIGTERM', () => {
  for (const c of children) c.kill('SIGKILL');
  client.end(true);
  process.exit(0);
});
