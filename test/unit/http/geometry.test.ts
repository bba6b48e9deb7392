import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { asciiJson, boxCounts, cameraGeometry } from '../../../src/http/geometry.js';
import { lineArrow, toShown } from '../../../src/page/overlay.js';
import { crossings, type Side } from '../../../src/track/index.js';
import { cameraConfig } from '../../helpers/config.js';
import { named, SPECIAL_NAMES } from '../../helpers/names.js';

const square = (x: number, y: number, s: number): [number, number][] => [
  [x, y],
  [x + s, y],
  [x + s, y + s],
  [x, y + s],
];

describe('the page geometry (GET /api/cameras `geometry`)', () => {
  it("lists a camera's zones, lines, object masks (camera and label) and cache masks in source pixels", () => {
    const cam = cameraConfig({
      zones: { door: { points: square(0, 0, 64) }, yard: { points: square(100, 100, 50), enabled: false } },
      lines: {
        road: {
          points: [
            [0, 240],
            [640, 240],
          ],
          directions: ['south', 'north'],
        },
      },
      objects: {
        mask: [square(500, 0, 40)],
        filters: { person: { mask: [square(10, 300, 20), square(40, 300, 20)] }, car: { min_score: 0.5 } },
      },
      cache_mask: [square(300, 300, 30)],
    });
    assert.deepEqual(cameraGeometry(cam, { width: 640, height: 480 }), {
      width: 640,
      height: 480,
      zones: named({
        door: { points: square(0, 0, 64), enabled: true },
        yard: { points: square(100, 100, 50), enabled: false },
      }),
      lines: named({
        road: {
          points: [
            [0, 240],
            [640, 240],
          ],
          directions: ['south', 'north'],
          enabled: true,
        },
      }),
      masks: [
        { label: null, points: square(500, 0, 40) },
        { label: 'person', points: square(10, 300, 20) },
        { label: 'person', points: square(40, 300, 20) },
      ],
      cache_mask: [square(300, 300, 30)],
    });
    const bare = cameraGeometry(cameraConfig(), null);
    assert.deepEqual([bare.width, bare.height, bare.masks, bare.cache_mask], [null, null, [], []]);
  });

  it('counts the boxes drawn by label and by zone and label, whatever the names', () => {
    const det = (label: string, zones: string[]) => ({
      label,
      score: 0.9,
      box: [0, 0, 1, 1] as [number, number, number, number],
      zones,
    });
    const counts = boxCounts([det('person', ['door']), det('person', []), det('car', ['door', 'road'])]);
    assert.deepEqual(counts, {
      labels: named({ person: 2, car: 1 }),
      zones: named({ door: named({ person: 1, car: 1 }), road: named({ car: 1 }) }),
    });
    for (const name of SPECIAL_NAMES) {
      const c = boxCounts([det(name, [name]), det(name, [name])]);
      assert.deepEqual(c.labels[name], 2, name);
      assert.deepEqual(c.zones[name]?.[name], 2, name);
    }
  });

  it('writes JSON an HTTP header can carry (ASCII only) that parses back to the same names', () => {
    const value = { labels: { pérson: 1, 猫: 2, '"\\\n': 3 } };
    const text = asciiJson(value);
    assert.match(text, /^[\x20-\x7e]*$/);
    assert.deepEqual(JSON.parse(text), value);
  });
});

describe('the page overlay arithmetic (src/page/overlay.ts, which the browser runs)', () => {
  it('maps source pixels onto the image as shown, each axis by its own scale', () => {
    // A 640×480 source letterboxed into 320 (padding cut away: the JPEG is 320×240), shown at 500×375.
    assert.deepEqual(
      toShown(
        [
          [0, 0],
          [640, 480],
          [192, 112],
        ],
        { width: 640, height: 480 },
        { width: 500, height: 375 },
      ),
      [
        [0, 0],
        [500, 375],
        [150, 87.5],
      ],
    );
    // An image shown squashed (CSS) still has each point at its fraction of the width and height.
    assert.deepEqual(toShown([[320, 240]], { width: 640, height: 480 }, { width: 100, height: 300 }), [
      [50, 150],
    ]);
  });

  it("points a line's first arrow to the right of A→B, the way the tracker counts its first direction", () => {
    const a: [number, number] = [0, 240];
    const b: [number, number] = [640, 240];
    const { mid, normal } = lineArrow(a, b);
    assert.deepEqual(mid, [320, 240]);
    assert.deepEqual([normal[0] + 0, normal[1]], [0, 1], 'downwards for a line drawn left to right');
    // An object moving along the arrow is counted under the first direction.
    const lines = {
      road: {
        points: [a, b] as [[number, number], [number, number]],
        directions: ['in', 'out'] as [string, string],
        anchor: 'center' as const,
      },
    };
    const sides = new Map<string, Side>();
    const box = (cy: number): [number, number, number, number] => [300, cy - 20, 340, cy + 20];
    crossings(lines, sides, 'person', box(240 - normal[1] * 60));
    assert.deepEqual(crossings(lines, sides, 'person', box(240 + normal[1] * 60)), [
      { line: 'road', direction: 'in' },
    ]);
    const slanted = lineArrow([0, 0], [3, 4]);
    assert.deepEqual(slanted.normal, [-0.8, 0.6]);
    assert.ok(Math.abs(Math.hypot(...slanted.normal) - 1) < 1e-12);
  });
});
