import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Detection } from '../../../src/core/frame.js';
import { parseConfig } from '../../../src/config/index.js';
import { applyCameraFilters, insidePolygon, type ZonedDetection } from '../../../src/track/filters.js';

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
});
