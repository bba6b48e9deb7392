import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildFfmpegArgs } from '../../../src/ingest/ffmpeg-args.js';
import { defaultFfmpegPath, probeCapabilities } from '../../../src/ingest/ffmpeg-process.js';
import {
  decodableCameras,
  decodePreset,
  DEFAULT_RENDER_NODE,
  hwaccelProblem,
  parseFilters,
  parseHwaccels,
  type FfmpegCapabilities,
} from '../../../src/ingest/hwaccel.js';
import { configSchema, sectionConfig, type HwaccelName } from '../../../src/config/index.js';
import { Ingest } from '../../../src/ingest/ingest.js';
import { waitFor } from '../../helpers/env.js';
import { FakeFfmpeg, recordingLog } from '../../helpers/fakes.js';

const camera = (hwaccel: HwaccelName, hwaccel_device?: string) =>
  buildFfmpegArgs(
    {
      url: 'rtsp://10.0.0.5/s1',
      fps: 5,
      rtsp_transport: 'tcp',
      input_args: [],
      hwaccel_args: [],
      hwaccel,
      hwaccel_device,
    },
    { timeout_s: 10, threads: 1 },
    {
      url: 'rtsp://10.0.0.5/s1',
      size: 640,
      names: { rtspTimeout: 'timeout', fpsMode: 'fps_mode' },
      cache: { enabled: true, picture_threshold: 12 },
    },
  );

const graph = (a: { output: string[] }): string => a.output[a.output.indexOf('-filter_complex') + 1]!;

/** A Debian ffmpeg 5.1 with every preset, and a device node for each. */
const full: FfmpegCapabilities = {
  hwaccels: new Set(['vdpau', 'cuda', 'vaapi', 'qsv', 'drm', 'opencl', 'vulkan']),
  filters: new Set(['hwdownload', 'hwupload', 'scale', 'fps']),
};
const everyDevice = (): boolean => true;

describe('GPU decoding presets', () => {
  it('adds nothing for none: the command line is the software one', () => {
    const soft = buildFfmpegArgs(
      { url: 'rtsp://10.0.0.5/s1', fps: 5, rtsp_transport: 'tcp', input_args: [], hwaccel_args: [] },
      { timeout_s: 10, threads: 1 },
      {
        url: 'rtsp://10.0.0.5/s1',
        size: 640,
        names: { rtspTimeout: 'timeout', fpsMode: 'fps_mode' },
        cache: { enabled: true, picture_threshold: 12 },
      },
    );
    assert.deepEqual(camera('none'), soft);
  });

  it('decodes on the GPU and downloads only the frames fps keeps, before the letterbox and thumbnail split', () => {
    for (const kind of ['nvidia', 'vaapi', 'qsv'] as const) {
      const g = graph(camera(kind));
      // GPU frames cannot be cropped or logged before the download: only the output's time probe.
      assert.match(
        g,
        /^\[0:v\]setpts='[^']+',fps=5,hwdownload,format=nv12,split=2\[head\]\[frame\];\[frame\]crop=2:2:0:0,showinfo@frame,nullsink;\[head\]split=2\[live\]\[all\];/,
        kind,
      );
    }
  });

  it('gives each preset its decoder, device and GPU output format, before the input', () => {
    assert.deepEqual(decodePreset('nvidia').input, ['-hwaccel', 'cuda', '-hwaccel_output_format', 'cuda']);
    assert.deepEqual(decodePreset('nvidia', '1').input, [
      '-hwaccel',
      'cuda',
      '-hwaccel_device',
      '1',
      '-hwaccel_output_format',
      'cuda',
    ]);
    assert.deepEqual(decodePreset('vaapi').input, [
      '-hwaccel',
      'vaapi',
      '-hwaccel_device',
      '/dev/dri/renderD128',
      '-hwaccel_output_format',
      'vaapi',
    ]);
    assert.deepEqual(decodePreset('vaapi', '/dev/dri/renderD129').input.slice(2, 4), [
      '-hwaccel_device',
      '/dev/dri/renderD129',
    ]);
    assert.deepEqual(decodePreset('qsv', '/dev/dri/renderD128').input, [
      '-hwaccel',
      'qsv',
      '-qsv_device',
      '/dev/dri/renderD128',
      '-hwaccel_output_format',
      'qsv',
    ]);
    const a = camera('vaapi');
    assert.ok(a.input.indexOf('-hwaccel') < a.input.indexOf('-rtsp_transport'), 'decoder options come first');
  });

  it('runs a preset only when ffmpeg reports its method and hwdownload, and its device is there', () => {
    assert.equal(
      hwaccelProblem('none', undefined, { hwaccels: new Set(), filters: new Set() }, () => false),
      undefined,
    );
    for (const kind of ['nvidia', 'vaapi', 'qsv'] as const)
      assert.equal(hwaccelProblem(kind, undefined, full, everyDevice), undefined, kind);
    const noCuda = { ...full, hwaccels: new Set(['vaapi']) };
    assert.equal(hwaccelProblem('nvidia', undefined, noCuda, everyDevice), 'this ffmpeg has no hwaccel cuda');
    assert.equal(
      hwaccelProblem('qsv', undefined, { hwaccels: new Set(), filters: new Set() }, everyDevice),
      'this ffmpeg has no hwaccel qsv and no filter hwdownload',
    );
    const seen: string[] = [];
    const none = (p: string): boolean => (seen.push(p), false);
    assert.equal(
      hwaccelProblem('nvidia', undefined, full, none),
      '/dev/nvidiactl is missing: no NVIDIA driver',
    );
    assert.equal(
      hwaccelProblem('vaapi', '/dev/dri/renderD129', full, none),
      '/dev/dri/renderD129 is missing: no GPU render node',
    );
    assert.deepEqual(seen, ['/dev/nvidiactl', '/dev/dri/renderD129']);
  });

  it("reads ffmpeg's -hwaccels and -filters listings", () => {
    assert.deepEqual(
      [...parseHwaccels('Hardware acceleration methods:\nvdpau\ncuda\nvaapi\n\n')],
      ['vdpau', 'cuda', 'vaapi'],
    );
    const filters = parseFilters(
      [
        'Filters:',
        '  T.. = Timeline support',
        '  | = Source or sink filter',
        ' ... hwdownload        V->V       Download a hardware frame to a normal frame',
        ' TSC scale             V->V       Scale the input video size and/or convert the image format.',
        ' ... buffer            |->V       Buffer video frames.',
      ].join('\n'),
    );
    assert.deepEqual([...filters], ['hwdownload', 'scale', 'buffer']);
  });

  it('asks the bundled ffmpeg: it lists vaapi and hwdownload, not cuda or qsv', async () => {
    const caps = await probeCapabilities(await defaultFfmpegPath());
    assert.ok(caps.hwaccels.has('vaapi') && !caps.hwaccels.has('cuda') && !caps.hwaccels.has('qsv'));
    assert.ok(caps.filters.has('hwdownload') && caps.filters.has('scale') && caps.filters.size > 100);
    assert.equal(hwaccelProblem('nvidia', undefined, caps, everyDevice), 'this ffmpeg has no hwaccel cuda');
  });

  it('finds nothing in a binary that cannot be run', async () => {
    const caps = await probeCapabilities('/nonexistent/ffmpeg');
    assert.equal(caps.hwaccels.size + caps.filters.size, 0);
    assert.match(hwaccelProblem('vaapi', undefined, caps, everyDevice) ?? '', /no hwaccel vaapi/);
  });
});

describe('a camera whose preset cannot run here', () => {
  const cameraConfig = (over: Record<string, unknown>) =>
    configSchema.parse({
      model: { path: 'm.onnx' },
      cameras: { gate: { url: 'rtsp://10.0.0.5/s1', ...over } },
    }).cameras.gate!;

  async function start(
    t: { after: (f: () => Promise<void>) => void },
    over: Record<string, unknown>,
    exists: (p: string) => boolean,
  ) {
    const fake = new FakeFfmpeg();
    const { log, lines } = recordingLog();
    const ingest = new Ingest(
      {
        cameras: { gate: cameraConfig(over) },
        ffmpeg: sectionConfig('ffmpeg', {}),
        size: () => 320,
        secrets: [],
        cache: sectionConfig('cache', {}),
      },
      { log, onFrame: () => undefined, onStatus: () => undefined, spawn: fake.spawn, exists },
    );
    await ingest.start();
    t.after(() => ingest.stop());
    await waitFor('ffmpeg', () => fake.procs.length > 0, 5000);
    return { fake, lines };
  }

  it('decodes in software, and one warning says why', async (t) => {
    // The bundled ffmpeg has no cuda.
    const { fake, lines } = await start(t, { hwaccel: 'nvidia' }, () => true);
    assert.ok(!fake.last.args.input.includes('-hwaccel'));
    assert.ok(!graph(fake.last.args).includes('hwdownload'));
    const warned = lines.filter((l) => /hwaccel/.test(l.msg));
    assert.deepEqual(
      warned.map((l) => l.msg),
      ['hwaccel nvidia cannot run (this ffmpeg has no hwaccel cuda); decoding in software: camera gate'],
    );
  });

  it('keeps the preset when ffmpeg and the device have it', async (t) => {
    // The bundled ffmpeg lists vaapi; the render node is said to be there.
    const { fake, lines } = await start(t, { hwaccel: 'vaapi' }, () => true);
    assert.deepEqual(fake.last.args.input.slice(4, 10), decodePreset('vaapi').input);
    assert.ok(graph(fake.last.args).includes('fps=5,hwdownload,format=nv12'));
    assert.deepEqual(
      lines.filter((l) => /hwaccel/.test(l.msg)),
      [],
    );
  });

  it('groups the cameras that fall back by preset and reason: one line each, not one per camera', () => {
    const cams = (['a', 'b', 'c', 'd', 'e'] as const).map(
      (n, i) =>
        [n, cameraConfig({ hwaccel: (['nvidia', 'vaapi', 'nvidia', 'none', 'vaapi'] as const)[i] })] as const,
    );
    const caps = { hwaccels: new Set(['vaapi']), filters: new Set(['hwdownload']) };
    const run = decodableCameras(cams, caps, (p) => p !== DEFAULT_RENDER_NODE);
    assert.deepEqual(
      run.fallbacks.map((f) => f.message),
      [
        'hwaccel nvidia cannot run (this ffmpeg has no hwaccel cuda); decoding in software: cameras a, c',
        'hwaccel vaapi cannot run (/dev/dri/renderD128 is missing: no GPU render node); decoding in software: cameras b, e',
      ],
    );
    assert.deepEqual(
      run.cameras.map(([n, c]) => [n, c.hwaccel]),
      [
        ['a', 'none'],
        ['b', 'none'],
        ['c', 'none'],
        ['d', 'none'],
        ['e', 'none'],
      ],
    );
    const ok = decodableCameras(cams, caps, () => true);
    assert.deepEqual(
      ok.cameras.map(([n, c]) => [n, c.hwaccel]).filter(([, h]) => h !== 'none'),
      [
        ['b', 'vaapi'],
        ['e', 'vaapi'],
      ],
      'a preset that can run is kept',
    );
  });

  it('refuses hwaccel with hwaccel_args, and hwaccel_device alone', () => {
    const r = configSchema.safeParse({
      model: { path: 'm.onnx' },
      cameras: {
        a: { url: 'rtsp://h/s', hwaccel: 'vaapi', hwaccel_args: ['-hwaccel', 'vaapi'] },
        b: { url: 'rtsp://h/s', hwaccel_device: '/dev/dri/renderD129' },
      },
    });
    assert.equal(r.success, false);
    assert.deepEqual(
      r.error.issues.map((i) => [i.path.join('.'), i.message]),
      [
        ['cameras.a.hwaccel', 'set hwaccel or hwaccel_args, not both'],
        ['cameras.b.hwaccel_device', 'needs hwaccel (nvidia, vaapi or qsv)'],
      ],
    );
  });
});
