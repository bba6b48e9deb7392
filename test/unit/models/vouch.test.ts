import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { nearest, vouchFor } from '../../../src/models/vouch.js';
import { parseConfig } from '../../../src/config/index.js';
import { tempDir, writeFixture } from '../../helpers/env.js';

describe('vouchFor', () => {
  it('refuses a max_body_mb that cannot hold one picture of a model, and a state_dir that is a file', async (t) => {
    const dir = await tempDir(t);
    await writeFixture(dir, 'm.onnx', {}); // 320×320: 0.29 MB as RGB
    await writeFile(join(dir, 'not-a-dir'), '');
    const text = [
      'model:',
      '  path: m.onnx',
      'http:',
      '  max_body_mb: 0.25',
      'state_dir: not-a-dir',
      '',
    ].join('\n');
    const issues = await vouchFor(parseConfig(text, join(dir, 'c.yaml'), {}));
    assert.deepEqual(issues, [
      {
        path: 'http.max_body_mb',
        line: 4,
        message:
          "0.25 MB cannot hold one 320×320 picture of model 'default' (0.29 MB as RGB); set at least 0.3",
      },
      {
        path: 'state_dir',
        line: 5,
        message: `the state directory ${join(dir, 'not-a-dir')} is a file, not a directory`,
      },
    ]);
    const fine = ['model:', '  path: m.onnx', 'http:', '  max_body_mb: 0.3', 'state_dir: state', ''].join(
      '\n',
    );
    assert.deepEqual(await vouchFor(parseConfig(fine, join(dir, 'c.yaml'), {})), []);
  });

  it("checks Home Assistant's default labels against the models of cameras that track every label", async (t) => {
    const dir = await tempDir(t);
    await writeFixture(dir, 'm.onnx', {});
    const text = [
      'model:',
      '  path: m.onnx',
      'home_assistant:',
      '  enabled: true',
      '  default_labels: [bright, person]', // line 5
      'cameras:',
      '  a:',
      '    url: rtsp://h/s',
      '',
    ].join('\n');
    const issues = await vouchFor(parseConfig(text, join(dir, 'c.yaml'), {}));
    assert.deepEqual(
      issues.map((i) => `${i.line}: ${i.path}`),
      ['5: home_assistant.default_labels[1]'],
    );
  });

  it('names a model under models: at its own key, and leaves a remote model without labels to its server', async (t) => {
    const dir = await tempDir(t);
    const text = [
      'models:',
      '  default:',
      '    path: gone.onnx', // line 3
      '  far:',
      '    remote: { url: "http://gpu:8000", model: yolo }',
      'cameras:',
      '  a:',
      '    url: rtsp://h/s',
      '    model: far',
      '    objects:',
      '      track: [anything]',
      '',
    ].join('\n');
    const issues = await vouchFor(parseConfig(text, join(dir, 'c.yaml'), {}));
    assert.deepEqual(
      issues.map((i) => `${i.line}: ${i.path}: ${i.message}`),
      [`3: models.default.path: ${join(dir, 'gone.onnx')}: cannot read the model file (no such file)`],
    );
  });
});

describe('nearest', () => {
  it('suggests a label one typo away, or differing in case or a plural, and nothing far', () => {
    const coco = ['person', 'bicycle', 'car', 'dog', 'traffic light', 'cell phone'];
    assert.equal(nearest('persons', coco), 'person');
    assert.equal(nearest('Person', coco), 'person');
    assert.equal(nearest('cars', coco), 'car');
    assert.equal(nearest('trafic light', coco), 'traffic light');
    assert.equal(nearest('cellphone', coco), 'cell phone');
    assert.equal(nearest('giraffe', coco), undefined);
    assert.equal(nearest('xyz', coco), undefined);
  });
});
