import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { needsShared, repoRoot, runCli, shared, tempDir, writeFixture } from '../helpers/env.js';
import { boxIou, BUS_REFERENCE, FIXTURE_SCENE, squaresPng } from '../helpers/images.js';
import { newcomerConfig } from '../helpers/newcomer-config.js';
import { COCO_LABELS } from '../../src/config/labels.js';

interface DetectLine {
  image: string;
  width: number;
  height: number;
  detections: { label: string; score: number; box: number[] }[];
}

const parseLines = (stdout: string): DetectLine[] =>
  stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as DetectLine);

/** Every expected box is matched by a distinct detection of the same label with IoU ≥ min. */
function assertMatches(
  got: DetectLine['detections'],
  expected: { label: string; box: number[] }[],
  min: number,
): void {
  assert.equal(got.length, expected.length, JSON.stringify(got));
  const free = [...got];
  for (const e of expected) {
    const i = free.findIndex((d) => d.label === e.label && boxIou(d.box, e.box) >= min);
    assert.ok(
      i >= 0,
      `no ${e.label} with IoU ≥ ${min} to ${JSON.stringify(e.box)} in ${JSON.stringify(got)}`,
    );
    free.splice(i, 1);
  }
}

describe('argus detect', () => {
  it('prints one JSON object per image with boxes in source pixels (fixture model)', async (t) => {
    const dir = await tempDir(t);
    const model = await writeFixture(dir, 'fixture.onnx');
    const a = join(dir, 'scene.png');
    const b = join(dir, 'portrait.png');
    await writeFile(a, await squaresPng(FIXTURE_SCENE.width, FIXTURE_SCENE.height, FIXTURE_SCENE.squares));
    // 480x640 portrait: scale 0.5, 40 columns of padding on the left; cell (3, 1) = source x 112..176, y 64..128.
    await writeFile(b, await squaresPng(480, 640, [{ x: 112, y: 64, size: 64, rgb: [255, 255, 255] }]));
    const r = await runCli(['detect', '--model', model, a, b]);
    assert.equal(r.code, 0, r.stderr);
    const lines = parseLines(r.stdout);
    assert.deepEqual(
      lines.map((l) => [l.image, l.width, l.height]),
      [
        [a, 640, 480],
        [b, 480, 640],
      ],
    );
    assertMatches(lines[0]!.detections, FIXTURE_SCENE.expected, 0.95);
    assertMatches(lines[1]!.detections, [{ label: 'bright', box: [112, 64, 176, 128] }], 0.95);
  });

  it('applies --conf', async (t) => {
    const dir = await tempDir(t);
    const model = await writeFixture(dir, 'fixture.onnx');
    const img = join(dir, 'scene.png');
    // A grey-white square: mean ≈ 0.63, score ≈ sigmoid(20 × 0.63 − 12) ≈ 0.65.
    await writeFile(img, await squaresPng(640, 480, [{ x: 128, y: 112, size: 64, rgb: [160, 160, 160] }]));
    const low = parseLines((await runCli(['detect', '--model', model, '--conf', '0.5', img])).stdout);
    assert.equal(low[0]!.detections.length, 1);
    const high = parseLines((await runCli(['detect', '--model', model, '--conf', '0.8', img])).stdout);
    assert.equal(high[0]!.detections.length, 0);
  });

  it('reproduces the reference result for yolov8n_int8 on bus.jpg', { skip: needsShared }, async () => {
    const r = await runCli([
      'detect',
      '--model',
      shared('models/yolov8n_int8.onnx'),
      shared('media/bus.jpg'),
    ]);
    assert.equal(r.code, 0, r.stderr);
    const [line] = parseLines(r.stdout);
    assert.equal(line!.width, 810);
    assert.equal(line!.height, 1080);
    assertMatches(line!.detections, BUS_REFERENCE, 0.9);
  });

  it('runs yolo11n at 320 and batches several images', { skip: needsShared }, async () => {
    const bus = shared('media/bus.jpg');
    const r = await runCli([
      'detect',
      '--model',
      shared('models/yolo11n_int8_320.onnx'),
      '--batch',
      '2',
      bus,
      bus,
      bus,
    ]);
    assert.equal(r.code, 0, r.stderr);
    const lines = parseLines(r.stdout);
    assert.equal(lines.length, 3);
    for (const l of lines) {
      assert.ok(l.detections.some((d) => d.label === 'bus'));
      assert.ok(l.detections.filter((d) => d.label === 'person').length >= 3);
    }
    assert.deepEqual(lines[0]!.detections, lines[2]!.detections, 'same image, same result in any batch slot');
  });

  it('rejects a YOLOX output layout, naming the model', { skip: needsShared }, async () => {
    const model = shared('models/yolox_nano.onnx');
    const r = await runCli([
      'detect',
      '--model',
      model,
      '--labels',
      shared('models/coco80.json'),
      shared('media/bus.jpg'),
    ]);
    assert.equal(r.code, 1);
    assert.ok(r.stderr.includes(`argus: ${model}: `), r.stderr);
    assert.match(r.stderr, /output shape \[1, 3549, 85\] does not fit 80 classes/);
    assert.equal(r.stdout, '');
  });

  it('names a missing model file', async () => {
    const r = await runCli(['detect', '--model', '/nonexistent/model.onnx', 'x.jpg']);
    assert.equal(r.code, 1);
    assert.equal(
      r.stderr.trim(),
      'argus: /nonexistent/model.onnx: cannot read the model file (no such file)',
    );
  });

  it('names a file that is not an ONNX model', async () => {
    const model = join(repoRoot, 'package.json');
    const r = await runCli(['detect', '--model', model, 'x.jpg']);
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      new RegExp(`^argus: ${model.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: not a valid ONNX model`),
    );
  });

  it('names an output layout it does not understand', async (t) => {
    const dir = await tempDir(t);
    const model = await writeFixture(dir, 'flat.onnx', { layout: 'flat' });
    const img = join(dir, 'a.png');
    await writeFile(img, await squaresPng(64, 64, []));
    const r = await runCli(['detect', '--model', model, img]);
    assert.equal(r.code, 1);
    assert.ok(r.stderr.includes(`${model}: output shape [1, 600] is not a YOLO detection output`), r.stderr);
  });

  it('names unreadable images, still answers for the good ones, and exits non-zero', async (t) => {
    const dir = await tempDir(t);
    const model = await writeFixture(dir, 'fixture.onnx');
    const good = join(dir, 'good.png');
    const bad = join(dir, 'bad.jpg');
    const missing = join(dir, 'missing.jpg');
    await writeFile(good, await squaresPng(FIXTURE_SCENE.width, FIXTURE_SCENE.height, FIXTURE_SCENE.squares));
    await writeFile(bad, 'not an image at all');
    const r = await runCli(['detect', '--model', model, bad, good, missing]);
    assert.equal(r.code, 1);
    assert.deepEqual(
      parseLines(r.stdout).map((l) => l.image),
      [good],
    );
    assert.ok(r.stderr.includes(`argus: ${bad}: cannot read the image`), r.stderr);
    assert.ok(r.stderr.includes(`argus: ${missing}: cannot read the image`), r.stderr);
  });

  it('rejects bad usage with exit code 2', async () => {
    assert.equal((await runCli(['detect', 'x.jpg'])).code, 2);
    assert.equal((await runCli(['detect', '--model', 'm.onnx', '--conf', '7', 'x.jpg'])).code, 2);
    const r = await runCli(['detect', '--model', 'm.onnx', '--providers', 'openvino', 'x.jpg']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /unknown provider 'openvino'/);
    assert.equal((await runCli(['frobnicate'])).code, 2);
  });
});

describe('argus validate', () => {
  it(
    'prints a one-line summary and exits 0 for the example config, with a real YOLOv8n',
    { skip: needsShared },
    async (t) => {
      // The example names ../models/yolov8n.onnx, which a user prepares: here, the shared YOLOv8n.
      const dir = await tempDir(t);
      const text = await readFile(join(repoRoot, 'config/example.yaml'), 'utf8');
      const file = join(dir, 'example.yaml');
      await writeFile(
        file,
        text.replace('path: ../models/yolov8n.onnx', `path: ${shared('models', 'yolov8n_int8.onnx')}`),
      );
      const r = await runCli(['validate', '-c', file]);
      assert.equal(r.code, 0, r.stderr);
      const lines = r.stdout.trim().split('\n');
      assert.equal(lines.length, 1);
      assert.match(
        lines[0]!,
        /example\.yaml: valid; 2 cameras \(2 enabled\), models default .*yolov8n_int8\.onnx, plates https:\/\/gpu-box\.lan:8000 \(yolov8n_plates\), providers cpu, batch 4\/50 ms, mqtt embedded 127\.0\.0\.1:1883$/,
      );
    },
  );

  it('reads each model and checks every label the config names, as run would', async (t) => {
    const dir = await tempDir(t);
    const jpeg = join(dir, 'picture.onnx');
    await writeFile(
      jpeg,
      Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46, 0x49, 0x46, 0, 1, 1, 0, 0, 1]),
    );
    await writeFile(join(dir, 'empty.onnx'), '');
    await writeFile(join(dir, 'bad-labels.txt'), 'person\nre+d\n');
    const fixture = await writeFixture(dir, 'm.onnx', {});
    const truncated = join(dir, 'truncated.onnx');
    await writeFile(truncated, (await readFile(fixture)).subarray(0, 2000));
    const cases: [string, string][] = [
      [
        'path: missing.onnx',
        'model.path: ' + join(dir, 'missing.onnx') + ': cannot read the model file (no such file)',
      ],
      ['path: empty.onnx', 'model.path: ' + join(dir, 'empty.onnx') + ': not a valid ONNX model'],
      ['path: truncated.onnx', 'model.path: ' + truncated + ': not a valid ONNX model'],
      ['path: picture.onnx', 'model.path: ' + jpeg + ': not a valid ONNX model'],
      [
        'path: m.onnx\n  labels: none.txt',
        'model.labels: ' + join(dir, 'none.txt') + ': cannot read the labels file (no such file)',
      ],
      [
        'path: m.onnx\n  labels: bad-labels.txt',
        `model.labels: ${join(dir, 'bad-labels.txt')}: label 1 "re+d" must not contain`,
      ],
    ];
    for (const [model, expected] of cases) {
      const file = join(dir, 'argus.yaml');
      await writeFile(file, `model:\n  ${model}\n`);
      const r = await runCli(['validate', '-c', file]);
      assert.equal(r.code, 1, `${model}: ${r.stdout}`);
      const line = model.split('\n').length + 1; // the last key given
      assert.ok(r.stderr.startsWith(`${file}:${line}: ${expected}`), `${model}: ${r.stderr}`);
    }
    const file = join(dir, 'labels.yaml');
    await writeFile(
      file,
      [
        'model:',
        '  path: m.onnx',
        'cameras:',
        '  gate:',
        '    url: rtsp://h/s',
        '    objects:',
        '      track: [brights, red]', // line 7
        '      filters:',
        '        Red: { min_score: 0.5 }', // line 9
        '  yard:',
        '    url: rtsp://h/s',
        '    zones:',
        '      z:',
        '        points: [[0, 0], [9, 0], [9, 9]]',
        '        objects: [car]', // line 15
        '',
      ].join('\n'),
    );
    const r = await runCli(['validate', '-c', file]);
    assert.equal(r.code, 1);
    assert.deepEqual(r.stderr.trim().split('\n'), [
      `${file}:7: cameras.gate.objects.track[0]: 'brights' is not a label of model 'default' (did you mean 'bright'?); its labels are bright, red`,
      `${file}:9: cameras.gate.objects.filters.Red: 'Red' is not a label of model 'default' (did you mean 'red'?); its labels are bright, red`,
      `${file}:15: cameras.yard.zones.z.objects[0]: 'car' is not a label of model 'default'; its labels are bright, red`,
      `${file}: 3 configuration errors`,
    ]);
  });

  it("reports a label typo at the line that is wrong, by the model's labels, else by COCO's (issue 45)", async (t) => {
    const dir = await tempDir(t);
    await writeFile(join(dir, 'coco.txt'), `${COCO_LABELS.join('\n')}\n`);
    const remote = 'remote: { url: "http://gpu.lan:8000", model: yolov8n }';
    const models: [string, [string, string]][] = [
      // The model's labels are known (its labels file; no server is asked).
      ['labels', [remote, 'labels: coco.txt']],
      // Not known until its server answers: the COCO names decide which name is the typo.
      ['server', [remote, 'conf: 0.4']],
    ];
    if (!needsShared) models.push(['real', [`path: ${shared('models', 'yolov8n_int8.onnx')}`, 'conf: 0.4']]);
    else t.diagnostic(needsShared);
    for (const [name, model] of models) {
      const validate = async (edit: Parameters<typeof newcomerConfig>[1]): Promise<string[]> => {
        const file = join(dir, `${name}.yaml`);
        await writeFile(file, newcomerConfig(model, edit));
        const r = await runCli(['validate', '-c', file]);
        return [
          String(r.code),
          ...`${r.stderr}${r.stdout}`
            .trim()
            .split('\n')
            .map((l) => l.replace(file, 'argus.yaml')),
        ];
      };
      const known = name !== 'server';
      assert.deepEqual(
        await validate({ track: '[persons, car, bicycle]' }),
        [
          '1',
          known
            ? "argus.yaml:58: cameras.street.objects.track[0]: 'persons' is not a label of model 'default' (did you mean 'person'?); `argus model inspect` lists its 80 labels"
            : "argus.yaml:58: cameras.street.objects.track[0]: 'persons' is not a COCO label, and zones.crosswalk.objects and lines.kerb.objects name 'person' (did you mean 'person'?)",
          'argus.yaml: 1 configuration error',
        ],
        name,
      );
      assert.deepEqual(
        await validate({ zone: '[preson]', line: '[person, bicyle]' }),
        [
          '1',
          known
            ? "argus.yaml:66: cameras.street.zones.crosswalk.objects[0]: 'preson' is not a label of model 'default' (did you mean 'person'?); `argus model inspect` lists its 80 labels"
            : "argus.yaml:66: cameras.street.zones.crosswalk.objects[0]: 'preson' is not one of the camera's objects.track (person, car, bicycle); did you mean 'person'?",
          known
            ? "argus.yaml:72: cameras.street.lines.kerb.objects[1]: 'bicyle' is not a label of model 'default' (did you mean 'bicycle'?); `argus model inspect` lists its 80 labels"
            : "argus.yaml:72: cameras.street.lines.kerb.objects[1]: 'bicyle' is not one of the camera's objects.track (person, car, bicycle); did you mean 'bicycle'?",
          'argus.yaml: 2 configuration errors',
        ],
        name,
      );
      // A label of the model the camera does not track: the zone is wrong, whoever judges.
      assert.deepEqual(
        await validate({ zone: '[dog]' }),
        [
          '1',
          "argus.yaml:66: cameras.street.zones.crosswalk.objects[0]: 'dog' is not one of the camera's objects.track (person, car, bicycle)",
          'argus.yaml: 1 configuration error',
        ],
        name,
      );
      const [code, summary] = await validate({});
      assert.equal(code, '0', name);
      assert.match(summary!, /^argus\.yaml: valid; 3 cameras \(3 enabled\)/, name);
    }
  });

  it('scrubs every substituted value from the summary', async (t) => {
    const dir = await tempDir(t);
    const file = join(dir, 'argus.yaml');
    await writeFile(
      file,
      [
        'model:',
        '  path: ${MODEL_DIR}/m.onnx', // validate reads it: a model must be there
        'mqtt:',
        '  url: mqtt://${MQ_USER}:${MQ_PW}@broker:1883',
        '',
      ].join('\n'),
    );
    const hidden = join(dir, 'hidden-dir');
    await mkdir(hidden);
    await writeFixture(hidden, 'm.onnx', {});
    const env = { MODEL_DIR: hidden, MQ_USER: 'bridge-user', MQ_PW: 'Pw@with:at' };
    const r = await runCli(['validate', '-c', file], env);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, / model \*\*\*\/m\.onnx, .* mqtt mqtt:\/\/\*\*\*:\*\*\*@broker:1883\n$/);
    assert.doesNotMatch(r.stdout, /hidden-dir|bridge-user|with|:at/);
  });

  it('warns in one line, exit 0, when a configured GPU provider cannot load on this machine (issue 46)', async (t) => {
    // TensorRT needs libonnxruntime_providers_tensorrt.so, CUDA and cuDNN: none is on a CI box.
    const dir = await tempDir(t);
    await writeFixture(dir, 'm.onnx', {});
    const file = join(dir, 'argus.yaml');
    await writeFile(
      file,
      ['model:', '  path: m.onnx', 'detector:', '  providers: [tensorrt, cpu]', ''].join('\n'),
    );
    const r = await runCli(['validate', '-c', file]);
    assert.equal(r.code, 0, r.stderr);
    const warnings = r.stderr.split('\n').filter((l) => l.includes('warning:'));
    assert.equal(warnings.length, 1, r.stderr);
    assert.match(
      warnings[0]!,
      /^argus: .*argus\.yaml: warning: a configured GPU provider cannot load on this machine: tensorrt \(.+\); the daemon would fall back along the providers list here$/,
    );
    // CPU alone: nothing to warn of.
    await writeFile(file, ['model:', '  path: m.onnx', 'detector:', '  providers: [cpu]', ''].join('\n'));
    const cpu = await runCli(['validate', '-c', file]);
    assert.equal(cpu.code, 0, cpu.stderr);
    assert.doesNotMatch(cpu.stderr, /warning:/);
  });

  it('prints every error with its line and exits 1, never echoing a secret', async (t) => {
    const dir = await tempDir(t);
    const file = join(dir, 'bad.yaml');
    await writeFile(
      file,
      [
        'model:',
        '  path: m.onnx',
        'mqtt:',
        '  url: http://user:${PW}@broker', // line 4: wrong scheme
        'cameras:',
        '  "bad/name":', // line 6
        '    url: rtsp://h/s',
        '  ok:',
        '    url: rtsp://h/s',
        '    fps: 500', // line 10
        '    colour: red', // line 11
        '',
      ].join('\n'),
    );
    const r = await runCli(['validate', '-c', file], { PW: 'hunter2' });
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    const lines = r.stderr.trim().split('\n');
    assert.deepEqual(lines.slice(0, -1), [
      `${file}:4: mqtt.url: MQTT URL scheme 'http' is not one of mqtt, mqtts, ws, wss`,
      `${file}:6: cameras.bad/name: name must not contain '/', '+' or '#' (it is used as an MQTT topic level)`,
      `${file}:10: cameras.ok.fps: must be at most 60`,
      `${file}:11: cameras.ok.colour: unknown key`,
    ]);
    assert.equal(lines.at(-1), `${file}: 4 configuration errors`);
    assert.doesNotMatch(r.stderr, /hunter2/);
  });

  it('names a missing config file', async () => {
    const r = await runCli(['validate', '-c', '/nonexistent/argus.yaml']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^\/nonexistent\/argus\.yaml: cannot read the config file \(no such file\)/);
  });

  it('needs -c', async () => {
    const r = await runCli(['validate']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /validate needs -c FILE/);
  });
});

describe('argus', () => {
  it('prints its version and help', async () => {
    const v = await runCli(['--version']);
    assert.equal(v.code, 0);
    assert.match(v.stdout.trim(), /^\d+\.\d+\.\d+$/);
    const h = await runCli(['--help']);
    assert.equal(h.code, 0);
    assert.match(h.stdout, /Usage: argus <command>/);
  });

  it('inspects a model: signature, batch, labels, quantization', async (t) => {
    const dir = await tempDir(t);
    const model = await writeFixture(dir, 'static.onnx', { batch: 1, layout: 'transposed' });
    const r = await runCli(['model', 'inspect', '--json', model]);
    assert.equal(r.code, 0, r.stderr);
    const info = JSON.parse(r.stdout) as Record<string, unknown>;
    assert.deepEqual(
      [info.batch, info.input_size, info.labels, info.quantization, info.label_names, info.outputs],
      ['static 1', 320, 2, 'none', ['bright', 'red'], [{ name: 'output0', shape: '[1, 100, 6]' }]],
    );
    const text = await runCli(['model', 'inspect', model]);
    assert.match(text.stdout, /batch {9}static 1/);
    const bad = await runCli(['model', 'inspect', join(repoRoot, 'package.json')]);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /package\.json: not a valid ONNX model/);
  });

  it('reports the real model as dynamic-int8 with 80 labels', { skip: needsShared }, async () => {
    const r = await runCli(['model', 'inspect', '--json', shared('models/yolov8n_int8.onnx')]);
    const info = JSON.parse(r.stdout) as Record<string, unknown>;
    assert.deepEqual([info.quantization, info.labels, info.batch], ['dynamic-int8', 80, 'static 1']);
  });

  it('writes the fixture model deterministically', async (t) => {
    const dir = await tempDir(t);
    const a = join(dir, 'a.onnx');
    const b = join(dir, 'sub', 'b.onnx');
    assert.equal((await runCli(['model', 'fixture', '--out', a])).code, 0);
    assert.equal((await runCli(['model', 'fixture', '--out', b])).code, 0);
    const { readFile } = await import('node:fs/promises');
    assert.deepEqual(await readFile(a), await readFile(b));
  });

  it('writes a slow fixture with --work N, and refuses a bad N', async (t) => {
    const dir = await tempDir(t);
    const slow = join(dir, 'slow.onnx');
    assert.equal((await runCli(['model', 'fixture', '--work', '3', '--out', slow])).code, 0);
    const r = await runCli(['model', 'inspect', '--json', slow]);
    assert.equal((JSON.parse(r.stdout) as { nodes: number }).nodes, 8 + 2 * 3 + 3);
    for (const bad of ['-1', '2.5', 'lots']) {
      const refused = await runCli(['model', 'fixture', `--work=${bad}`, '--out', slow]);
      assert.equal(refused.code, 2, bad);
      assert.match(refused.stderr, /--work must be/);
    }
  });
});
