import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Point } from '../../../src/core/geometry.js';
import { groundPlane, GroundTrack, homography, project } from '../../../src/track/speed.js';

/** A camera looking down a road: 20 m wide and 40 m deep on the ground, a trapezoid in the picture. */
const ROAD: Point[] = [
  [220, 200], // far left
  [420, 200], // far right
  [620, 460], // near right
  [20, 460], // near left
];
const close = (a: number, b: number, tol: number): boolean => Math.abs(a - b) <= tol;

describe('speed on a calibrated ground plane', () => {
  it('a homography maps its four points onto their targets, and lines to lines', () => {
    const to: Point[] = [
      [0, 0],
      [20, 0],
      [20, 40],
      [0, 40],
    ];
    const h = homography(ROAD, to);
    ROAD.forEach((p, i) => {
      const [x, y] = project(h, p);
      assert.ok(close(x, to[i]![0], 1e-9) && close(y, to[i]![1], 1e-9), `${String(p)} → ${x},${y}`);
    });
    // The picture's centre line (x = 320) is the road's centre line (x = 10 m) at every depth.
    for (const y of [210, 300, 450]) assert.ok(close(project(h, [320, y])[0], 10, 1e-9));
    assert.throws(() => homography([ROAD[0]!, ROAD[0]!, ROAD[1]!, ROAD[2]!], to), /degenerate/);
  });

  it('the ground is a rectangle of the mean side lengths', () => {
    const g = groundPlane(ROAD, [20, 41, 20, 39]);
    assert.deepEqual(
      project(g, ROAD[2]!).map((v) => Math.round(v * 1e6) / 1e6),
      [20, 40],
    );
  });

  it('an object driving down the road at 15 m/s, seen through the perspective, measures 15 m/s within 1 %', () => {
    const g = groundPlane(ROAD, [20, 40, 20, 40]);
    // Where a point of the ground (metres) is in the picture: the inverse map.
    const toPicture = homography(
      [
        [0, 0],
        [20, 0],
        [20, 40],
        [0, 40],
      ],
      ROAD,
    );
    const track = new GroundTrack(g);
    let last: number | undefined;
    for (let i = 0; i <= 10; i++) {
      const ts = i * 200; // 5 fps
      last = track.add(ts, project(toPicture, [10, 5 + 15 * (ts / 1000)]));
      if (ts < 600) assert.equal(last, undefined, 'no speed over less than 0.6 s');
    }
    assert.ok(last !== undefined && close(last, 15, 0.15), `measured ${last}`);
    assert.ok(close(track.max, 15, 0.15));
  });

  it('measures over the last second only: a car that stops reads 0 a second later', () => {
    const g = groundPlane(
      [
        [0, 0],
        [100, 0],
        [100, 100],
        [0, 100],
      ],
      [10, 10, 10, 10],
    );
    const track = new GroundTrack(g);
    for (let ts = 0; ts <= 1000; ts += 200) track.add(ts, [ts / 10, 50]); // 100 px = 10 m in 1 s
    assert.ok(close(track.speed()!, 10, 1e-9));
    let s: number | undefined;
    for (let ts = 1200; ts <= 2400; ts += 200) s = track.add(ts, [100, 50]);
    assert.equal(s, 0);
    assert.ok(close(track.max, 10, 1e-9), 'the highest is kept');
  });
});

describe('speed: readings outside the zone', () => {
  it('give a speed (for speed_threshold at entry) but never raise the highest', () => {
    const g = groundPlane(
      [
        [0, 0],
        [100, 0],
        [100, 100],
        [0, 100],
      ],
      [10, 10, 10, 10],
    );
    const track = new GroundTrack(g);
    let s: number | undefined;
    for (let ts = 0; ts <= 1000; ts += 200) s = track.add(ts, [ts / 5, 50], false); // 20 m/s, outside
    assert.ok(s !== undefined && Math.abs(s - 20) < 1e-9);
    assert.equal(track.max, 0);
  });
});
