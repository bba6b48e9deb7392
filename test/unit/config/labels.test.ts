import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError } from '../../../src/config/issues.js';
import { COCO, COCO_LABELS, untrackedLabels } from '../../../src/config/labels.js';
import { parseConfig } from '../../../src/config/load.js';
import { LINE_LINE, newcomerConfig, TRACK_LINE, ZONE_LINE } from '../../helpers/newcomer-config.js';

const MODEL: [string, string] = ['path: models/yolov8n.onnx', 'conf: 0.4'];

/** What the loader refuses in `text`, one `line: path: message` each; none when it loads. */
function refused(text: string, tracked?: 'coco' | 'models'): string[] {
  try {
    parseConfig(text, 'argus.yaml', {}, tracked ? { tracked } : {});
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err));
    return err.issues.map((i) => `${i.line}: ${i.path}: ${i.message}`);
  }
  return [];
}

describe('labels the cameras do not track, at the line that is wrong', () => {
  it('loads the newcomer config as written, with the zone and line labels at the lines the test names', () => {
    const text = newcomerConfig(MODEL);
    assert.deepEqual(refused(text), []);
    const lines = text.split('\n');
    assert.equal(lines[TRACK_LINE - 1], '      track: [person, car, bicycle]');
    assert.equal(lines[ZONE_LINE - 1], '        objects: [person]');
    assert.equal(lines[LINE_LINE - 1], '        objects: [person]');
  });

  it('reports a typo in objects.track at line 58 with did you mean, and blames neither the zone (66) nor the line (72)', () => {
    assert.deepEqual(refused(newcomerConfig(MODEL, { track: '[persons, car, bicycle]' })), [
      `58: cameras.street.objects.track[0]: 'persons' is not a COCO label, and zones.crosswalk.objects and lines.kerb.objects name 'person' (did you mean 'person'?)`,
    ]);
  });

  it('reports a typo in a zone or a line at its own line, with did you mean from the tracked labels', () => {
    assert.deepEqual(refused(newcomerConfig(MODEL, { zone: '[preson]', line: '[person, bicyle]' })), [
      `66: cameras.street.zones.crosswalk.objects[0]: 'preson' is not one of the camera's objects.track (person, car, bicycle); did you mean 'person'?`,
      `72: cameras.street.lines.kerb.objects[1]: 'bicyle' is not one of the camera's objects.track (person, car, bicycle); did you mean 'bicycle'?`,
    ]);
  });

  it('says a label that is no typo is not tracked, without a guess', () => {
    assert.deepEqual(refused(newcomerConfig(MODEL, { zone: '[dog]' })), [
      `66: cameras.street.zones.crosswalk.objects[0]: 'dog' is not one of the camera's objects.track (person, car, bicycle)`,
    ]);
  });

  it("reports it beside the schema's own problems, and leaves a file that loads to the caller when asked", () => {
    const typo = newcomerConfig(MODEL, { track: '[persons, car, bicycle]' });
    // Loads: the caller (vouchFor) judges it by the model's labels.
    assert.deepEqual(refused(typo, 'models'), []);
    // Refused anyway (fps 0 at line 40): every problem at once, this one judged by COCO.
    const broken = typo.replace('    fps: 5\n    priority: 7', '    fps: 0\n    priority: 7');
    const issues = refused(broken, 'models');
    assert.equal(issues.length, 2, issues.join('\n'));
    assert.match(issues[0]!, /^40: cameras\.street\.fps: must be at least/);
    assert.match(issues[1]!, /^58: cameras\.street\.objects\.track\[0\]: 'persons' is not a COCO label/);
  });

  it('judges which name is wrong by the reference given, and reads a camera of any shape', () => {
    const cam = {
      objects: { track: ['brights', 7, 'red'] },
      zones: { z: { objects: ['bright', 'red'] }, y: { objects: ['bright'] } },
      lines: { l: { objects: ['redd'] } },
    };
    assert.deepEqual(untrackedLabels(cam, { labels: ['bright', 'red'], what: "a label of model 'm'" }), [
      {
        path: ['lines', 'l', 'objects', 0],
        message: "'redd' is not one of the camera's objects.track (brights, red); did you mean 'red'?",
      },
      {
        path: ['objects', 'track', 0],
        message:
          "'brights' is not a label of model 'm', and zones.z.objects and zones.y.objects name 'bright' (did you mean 'bright'?)",
      },
    ]);
    // By COCO neither 'brights' nor 'bright' is known: the zones' label is the one not tracked.
    assert.deepEqual(
      untrackedLabels(cam, COCO).map((f) => f.path.join('.')),
      ['zones.z.objects.0', 'zones.y.objects.0', 'lines.l.objects.0'],
    );
    for (const odd of [
      undefined,
      null,
      3,
      'x',
      [],
      { objects: { track: 'person' } },
      { objects: { track: ['a'] }, zones: [1] },
    ])
      assert.deepEqual(untrackedLabels(odd, COCO), []);
    assert.equal(COCO_LABELS.length, 80);
  });
});
