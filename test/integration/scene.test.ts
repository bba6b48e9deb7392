import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { DetectionsPayload, EventPayload } from '../../src/publish/topics.js';
import { startDaemon, writeDaemonConfig } from '../helpers/daemon.js';
import { tempDir, waitFor } from '../helpers/env.js';
import { Subscriber } from '../helpers/mqtt.js';
import { freePort } from '../helpers/rtsp.js';

/**
 * Issue 27's scene rules end to end: object masks, time in zone, track ids on detections and
 * speed on a calibrated zone, through the real daemon (real ffmpeg rendering synthetic cameras,
 * the fixture model, the embedded broker), asserted on what a subscriber receives.
 *
 * The fixture model sees a white cell of a 32-px grid of its 320-px input: a 640×480 frame is
 * scaled by 0.5 and letterboxed 40 px down, so a 64×64 white square at x = 64·i, y = 112 + 64·j
 * is one clean cell (and its box is the square itself, in source pixels).
 */

const STARTED = '"msg":"argus started"';
const FPS = 5;
const BG = `color=c=0x303030:s=640x480:r=${FPS}`;
const square = (name: string): string => `color=c=white:s=64x64:r=${FPS}[${name}]`;

/** Every answered frame on `…/detections` (not only changes): a still scene's frames count. */
const EVERY_FRAME = { mqtt: { detections: { publish: 'every_frame' } } };

/** A polygon around a point, `r` px each side. */
const around = (x: number, y: number, r = 20): [number, number][] => [
  [x - r, y - r],
  [x + r, y - r],
  [x + r, y + r],
  [x - r, y + r],
];

/** Starts the daemon with `cameras` on an embedded broker, and a subscriber of everything. */
async function scene(
  t: Parameters<typeof tempDir>[0],
  cameras: Record<string, unknown>,
  settings: Record<string, unknown> = {},
): Promise<{ sub: Subscriber; output: () => string }> {
  const dir = await tempDir(t);
  const port = await freePort();
  const { mqtt, ...rest } = settings;
  const config = await writeDaemonConfig(dir, {
    ...rest,
    mqtt: { embedded: { port }, ...(mqtt as object) },
    cameras,
  });
  const daemon = startDaemon(t, config);
  await waitFor('the daemon to start', () => daemon.output().includes(STARTED), 60_000);
  const sub = new Subscriber(`mqtt://127.0.0.1:${port}`);
  t.after(() => sub.end());
  await sub.retainedDone();
  return { sub, output: daemon.output };
}

const eventsOf = (sub: Subscriber, camera: string): EventPayload[] =>
  sub.json<EventPayload>('argus/events').filter((e) => e.camera === camera);

const centreX = (e: { box: readonly number[] }): number => (e.box[0]! + e.box[2]!) / 2;

describe('scene rules end to end (synthetic cameras, fixture model)', () => {
  it(
    'object masks: a square whose bottom centre is in the camera mask, or in its label mask, makes no event',
    { timeout: 180_000 },
    async (t) => {
      // Squares at x = 192 and x = 384 (bottom centres (224, 176) and (416, 176)).
      const url = `lavfi:${BG}[bg];${square('a')};${square('b')};[bg][a]overlay=x=192:y=112[s];[s][b]overlay=x=384:y=112`;
      const { sub } = await scene(
        t,
        {
          plain: { url, fps: FPS },
          masked: { url, fps: FPS, objects: { mask: [around(224, 176)] } },
          labelmask: { url, fps: FPS, objects: { filters: { bright: { mask: [around(416, 176)] } } } },
        },
        EVERY_FRAME,
      );
      const news = (camera: string): EventPayload[] => eventsOf(sub, camera).filter((e) => e.type === 'new');
      await sub.waitFor(
        'both squares on the unmasked camera, one on each masked one',
        () => news('plain').length >= 2 && news('masked').length >= 1 && news('labelmask').length >= 1,
        90_000,
      );
      // Ten more frames of each camera: a masked square's event would have come by then.
      const from = sub.messages.length;
      await sub.waitFor(
        'ten more frames of each camera',
        () =>
          ['plain', 'masked', 'labelmask'].every(
            (c) =>
              sub.messages.slice(from).filter((m) => m.topic === `argus/cameras/${c}/detections`).length >=
              10,
          ),
        60_000,
      );
      await sub.next('argus/stats');
      const story = (c: string): string =>
        eventsOf(sub, c)
          .map((e) => `${e.type} ${e.label} ${e.id} [${e.box.join(',')}]`)
          .join('\n');
      assert.deepEqual(
        news('plain')
          .map(centreX)
          .sort((a, b) => a - b),
        [224, 416],
        `unmasked, both squares:\n${story('plain')}`,
      );
      assert.deepEqual(
        news('masked').map(centreX),
        [416],
        `camera mask drops the left one:\n${story('masked')}`,
      );
      assert.deepEqual(
        news('labelmask').map(centreX),
        [224],
        `the label's mask drops the right one:\n${story('labelmask')}`,
      );
      for (const c of ['masked', 'labelmask']) {
        const shown = sub
          .json<DetectionsPayload>(`argus/cameras/${c}/detections`)
          .flatMap((d) => d.detections.map(centreX));
        assert.ok(shown.length > 0, `${c}: detections published`);
        assert.equal(
          new Set(shown).size,
          1,
          `${c}: a masked detection is not published either: ${[...new Set(shown)].join(' ')}`,
        );
      }
    },
  );
});
