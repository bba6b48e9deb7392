import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Detection } from '../../../src/core/frame.js';
import { parseConfig } from '../../../src/config/index.js';
import {
  applyCameraFilters,
  boxMeetsPolygon,
  inZone,
  insidePolygon,
  type ZonedDetection,
} from '../../../src/track/filters.js';

const cameraConfig = (yaml: string) =>
  parseConfig(`model:\n  path: m.onnx\ncameras:\n  gate:\n    url: rtsp://h/s\n${yaml}`, 'c.yaml', {}).config;

const det = (label: string, score: number, box: [number, number, number, number]): Detection => ({
  label,
  score,
  box,
});

const zd = (
  label: string,
  score: number,
  box: [number, number, number, number],
  zones: string[] = [],
): ZonedDetection => ({ label, score, box, zones });

describe('camera filters', () => {
  it('point in polygon', () => {
    const square: [number, number][] = [
      [0, 0],
      [10, 0],
      [10, 10],
      [0, 10],
    ];
    assert.equal(insidePolygon([5, 5], square), true);
    assert.equal(insidePolygon([15, 5], square), false);
    const l: [number, number][] = [
      [0, 0],
      [10, 0],
      [10, 4],
      [4, 4],
      [4, 10],
      [0, 10],
    ];
    assert.equal(insidePolygon([7, 7], l), false, 'outside the concave corner');
    assert.equal(insidePolygon([2, 7], l), true);
  });

  it('keeps tracked labels only, applies per-label min_score and min_area, and names zones by the foot of the box', () => {
    const cfg = cameraConfig(
      [
        '    objects:',
        '      track: [person, car]',
        '      filters:',
        '        person: { min_score: 0.5, min_area: 100 }',
        '    zones:',
        '      porch:',
        '        points: [[0, 50], [100, 50], [100, 100], [0, 100]]',
        '      drive:',
        '        points: [[0, 0], [100, 0], [100, 100], [0, 100]]',
        '        objects: [car]',
      ].join('\n'),
    );
    const out = applyCameraFilters(
      [
        det('person', 0.9, [10, 10, 30, 60]), // foot (20, 60): porch
        det('person', 0.4, [10, 10, 30, 60]), // score too low
        det('person', 0.9, [10, 10, 15, 15]), // area 25 too small
        det('dog', 0.99, [10, 10, 30, 60]), // not tracked
        det('car', 0.3, [50, 0, 90, 40]), // foot (70, 40): drive only
      ],
      cfg.cameras.gate!,
    );
    assert.deepEqual(out, [
      zd('person', 0.9, [10, 10, 30, 60], ['porch']),
      zd('car', 0.3, [50, 0, 90, 40], ['drive']),
    ]);
  });

  it('drops a detection whose bottom centre is in an object mask: the camera’s for every label, a label’s for it alone', () => {
    const cfg = cameraConfig(
      [
        '    objects:',
        '      mask:',
        '        - [[0, 0], [100, 0], [100, 100], [0, 100]]',
        '      filters:',
        '        car:',
        '          mask: [[[200, 0], [300, 0], [300, 100], [200, 100]]]',
      ].join('\n'),
    );
    const out = applyCameraFilters(
      [
        det('person', 0.9, [10, 10, 30, 60]), // foot (20, 60): in the camera's mask
        det('person', 0.9, [10, 60, 30, 160]), // foot (20, 160): its head in the mask, its feet not
        det('car', 0.9, [210, 10, 250, 90]), // foot (230, 90): in the car mask
        det('person', 0.9, [210, 10, 250, 90]), // the same place: the car mask is not a person's
      ],
      cfg.cameras.gate!,
    );
    assert.deepEqual(
      out.map((d) => [d.label, d.box[1]]),
      [
        ['person', 60],
        ['person', 10],
      ],
    );
  });

  it('a zone’s anchor: the bottom centre, the centre, or any overlap of the box', () => {
    const points: [number, number][] = [
      [0, 0],
      [100, 0],
      [100, 100],
      [0, 100],
    ];
    const standing: [number, number, number, number] = [40, 60, 60, 140]; // foot (50, 140), centre (50, 100)
    assert.equal(inZone(standing, { points, anchor: 'bottom_center' }), false);
    assert.equal(inZone([40, 20, 60, 90], { points, anchor: 'bottom_center' }), true);
    assert.equal(inZone([40, 50, 60, 140], { points, anchor: 'center' }), true, 'centre (50, 95)');
    assert.equal(inZone([40, 80, 60, 160], { points, anchor: 'center' }), false, 'centre (50, 120)');
    assert.equal(inZone(standing, { points, anchor: 'any' }), true, 'its top is inside');
    assert.equal(inZone([120, 20, 160, 60], { points, anchor: 'any' }), false, 'beside it');
    assert.equal(inZone([40, 20, 60, 90], { points }), true, 'bottom centre by default');
  });

  it('a box and a polygon overlap when a corner of either is inside the other or their edges cross', () => {
    const triangle: [number, number][] = [
      [0, 0],
      [100, 0],
      [0, 100],
    ];
    assert.equal(boxMeetsPolygon([10, 10, 20, 20], triangle), true, 'box inside');
    assert.equal(boxMeetsPolygon([-50, -50, 200, 200], triangle), true, 'polygon inside the box');
    assert.equal(boxMeetsPolygon([60, 60, 90, 90], triangle), false, 'beyond the hypotenuse');
    assert.equal(boxMeetsPolygon([40, -10, 45, 110], triangle), true, 'a thin box across it: edges cross');
    const bar: [number, number][] = [
      [-10, 40],
      [110, 40],
      [110, 45],
      [-10, 45],
    ];
    assert.equal(boxMeetsPolygon([20, 0, 30, 100], bar), true, 'a cross: no corner inside either');
  });

  it('drops masked detections before zones are named, and names zones by each zone’s anchor', () => {
    const cfg = cameraConfig(
      [
        '    zones:',
        '      ground:',
        '        points: [[0, 0], [100, 0], [100, 100], [0, 100]]',
        '      touch:',
        '        points: [[0, 0], [100, 0], [100, 100], [0, 100]]',
        '        anchor: any',
      ].join('\n'),
    );
    const out = applyCameraFilters([det('person', 0.9, [40, 60, 60, 140])], cfg.cameras.gate!);
    assert.deepEqual(out, [zd('person', 0.9, [40, 60, 60, 140], ['touch'])]);
  });
});
