import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pino from 'pino';
import { FrameFit, shapesOutside } from '../../../src/events/index.js';
import type { CameraStatus } from '../../../src/ingest/index.js';
import { CamerasBox } from '../../helpers/cameras-now.js';
import { cameraConfig } from '../../helpers/config.js';

const square = (x: number, y: number, s = 50): [number, number][] => [
  [x, y],
  [x + s, y],
  [x + s, y + s],
  [x, y + s],
];

const CAM = cameraConfig({
  url: 'rtsp://cam/1',
  zones: { door: { points: square(100, 100) }, yard: { points: square(2000, 100) } },
  lines: {
    gate: {
      points: [
        [10, 10],
        [600, 10],
      ],
    },
    // Both ends outside, but it crosses the picture.
    across: {
      points: [
        [-0, 300],
        [5000, 300],
      ],
    },
    beyond: {
      points: [
        [700, 10],
        [900, 400],
      ],
    },
  },
  objects: {
    mask: [square(0, 0), square(640, 480)],
    filters: { person: { mask: [square(900, 900)] } },
  },
  cache_mask: [square(630, 470, 100)],
});

function status(camera: string, source: CameraStatus['source']): CameraStatus {
  return {
    camera,
    state: 'streaming',
    since: 0,
    restarts: 0,
    framesReceived: 1,
    bytesReceived: 1,
    lastFrameAt: 0,
    lastError: null,
    retryAt: null,
    source,
  };
}

describe('shapes outside the picture', () => {
  it('names each zone, line and mask that lies wholly outside, not those that touch it', () => {
    assert.deepEqual(shapesOutside(CAM, 640, 480), [
      'zones.yard',
      'lines.beyond',
      'objects.filters.person.mask[0]',
    ]);
    // A mask from the corner (640, 480) outwards touches a 640 × 480 picture's last pixel; the
    // cache mask overlaps it. In a larger picture, everything is inside.
    assert.deepEqual(shapesOutside(CAM, 3000, 3000), []);
  });

  it('warns once per camera and picture size, again when the size changes or the cameras do', () => {
    const lines: { msg: string; shapes: string[] }[] = [];
    const log = pino(
      { level: 'warn' },
      { write: (s: string) => lines.push(JSON.parse(s) as { msg: string; shapes: string[] }) },
    );
    const box = new CamerasBox({ lot: CAM });
    const fit = new FrameFit(box.now, log);
    fit.onCameraStatus(status('lot', null));
    assert.equal(lines.length, 0, 'no picture size yet');
    fit.onCameraStatus(status('lot', { width: 640, height: 480 }));
    fit.onCameraStatus(status('lot', { width: 640, height: 480 }));
    assert.equal(lines.length, 1);
    assert.match(
      lines[0]!.msg,
      /^cameras\.lot: zones\.yard, lines\.beyond, objects\.filters\.person\.mask\[0\] lie wholly outside its 640x480 picture/,
    );
    fit.onCameraStatus(status('lot', { width: 3000, height: 3000 }));
    assert.equal(lines.length, 1, 'all inside a larger picture');
    fit.onCameraStatus(status('lot', { width: 640, height: 480 }));
    assert.equal(lines.length, 2, 'the size changed back');
    box.set({ lot: CAM }, fit);
    fit.onCameraStatus(status('lot', { width: 640, height: 480 }));
    assert.equal(lines.length, 3, 'checked again after a reload');
    fit.onCameraStatus(status('other', { width: 640, height: 480 }));
    assert.equal(lines.length, 3, 'a camera it does not know');
  });
});
