import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { stringify } from 'yaml';
import type {
  CameraStatusPayload,
  CrossingPayload,
  DetectionsPayload,
  EventPayload,
} from '../../src/publish/topics.js';
import { scoreScene, TRACKING_SCENES, type Recording } from '../../bench/tracking.js';
import { startDaemon } from '../helpers/daemon.js';
import { needsShared, shared, tempDir, waitFor } from '../helpers/env.js';
import { busyCores } from '../helpers/load.js';
import { Subscriber } from '../helpers/mqtt.js';
import { freePort } from '../helpers/rtsp.js';
import { writeSceneClip } from '../helpers/synthetic-scene.js';

/**
 * Tracking scored against known truth (issue 42): scenes of test/helpers/synthetic-scene.ts
 * played once in real time (`-re`) as a `file:` camera to the real daemon (real ffmpeg, real
 * ONNX Runtime with YOLOv8n, the embedded broker), default `events:` settings, cache on; the
 * scores (bench/tracking-score.ts) come from what a subscriber received: the camera's
 * detections with their ids, `argus/events` and `argus/crossings`. Goals: one id per object,
 * no identity switch, no track ended while its object is still in view, one `new` per object,
 * no extra line crossing. Every core is kept busy meanwhile (test/helpers/load.ts), as on an
 * edge box. No timing is asserted.
 */
const CASES = ['walkers_bus', 'parked', 'crossing'];

describe('tracking end to end (synthetic scenes with known truth)', () => {
  for (const name of CASES) {
    const spec = TRACKING_SCENES.find((s) => s.name === name)!;
    it(
      `${name}: one id per object, no switch, no early end, one new per object`,
      { skip: needsShared, timeout: (spec.scene.seconds + 90) * 1000 },
      async (t) => {
        const dir = await tempDir(t);
        const clip = join(dir, 'scene.mp4');
        await writeSceneClip(spec.scene, shared('media/bus.jpg'), clip);
        const port = await freePort();
        const config = join(dir, 'argus.yaml');
        // The daemon's own defaults everywhere but the test's: no HTTP, no restart of the clip.
        await writeFile(
          config,
          stringify({
            log_level: 'info',
            state_dir: join(dir, 'state'),
            model: { path: shared('models/yolov8n_int8.onnx') },
            mqtt: { embedded: { port }, detections: { publish: 'every_frame' } },
            http: { enabled: false },
            ffmpeg: { backoff_initial_s: 600, backoff_max_s: 600 },
            ...(spec.speed === undefined ? {} : { events: { speed_unit: 'm/s' } }),
            cameras: {
              scene: {
                url: `file://${clip}`,
                fps: spec.fps,
                input_args: ['-re'],
                ...(spec.lines ? { lines: spec.lines } : {}),
                ...(spec.zones ? { zones: spec.zones } : {}),
              },
            },
          }),
        );
        // Subscribed before the daemon starts: the clip plays from the daemon's start.
        const sub = new Subscriber(`mqtt://127.0.0.1:${port}`);
        t.after(() => sub.end());
        t.diagnostic(`${busyCores(t)} spinning processes keep every core busy`);
        const daemon = startDaemon(t, config);
        const states = (): string[] =>
          sub.json<CameraStatusPayload>('argus/cameras/scene/status').map((s) => s.state);
        await waitFor(
          'the clip to play to its end',
          () => states().includes('streaming') && states().at(-1) !== 'streaming',
          (spec.scene.seconds + 60) * 1000,
        );
        // Objects still tracked at the clip's end end after events.end_after_s (3 s by default).
        await new Promise((r) => setTimeout(r, 6000));
        daemon.child.kill('SIGTERM');
        await daemon.exited;

        const rec: Recording = {
          frames: sub.json<DetectionsPayload>('argus/cameras/scene/detections').map((d) => ({
            ts: Date.parse(d.ts),
            frame: d.frame,
            cached: d.cached,
            seen: d.detections.map((x) => ({ label: x.label, box: x.box, id: x.id ?? null })),
          })),
          events: sub.json<EventPayload>('argus/events'),
          crossings: sub.json<CrossingPayload>('argus/crossings'),
        };
        if (process.env.ARGUS_TRACKING_DUMP)
          await writeFile(
            join(process.env.ARGUS_TRACKING_DUMP, `${name}.json`),
            JSON.stringify(sub.json<DetectionsPayload>('argus/cameras/scene/detections')),
          );
        const row = scoreScene(spec, rec);
        const s = row.score;
        const story = [
          `frames ${row.frames} (${row.cached} cached), first at scene time ${row.offset_s} s (alignment IoU ${row.align_iou.toFixed(2)})`,
          `IDF1 ${s.idf1.toFixed(2)}, ids per object ${s.ids_per_object.toFixed(2)}, switches ${s.switches}, early ends ${s.early_ends}, new ${s.new_events} for ${s.objects} objects, ids never matched ${s.unmatched_ids}, crossings ${JSON.stringify(s.crossings)}`,
          ...s.per_object.map(
            (p) =>
              `  ${p.object}: counted in ${p.frames} frames, matched in ${p.matched}, ids ${p.ids.join(' ') || '–'}, switches ${p.switches}, early ends ${p.early_ends}, crossings ${p.crossings.join(', ') || '–'}`,
          ),
          ...rec.events
            .filter((e) => e.type !== 'update')
            .map((e) => `  ${e.type} ${e.label} ${e.id} [${e.box.map(Math.round).join(',')}]`),
        ].join('\n');
        t.diagnostic(story);
        assert.ok(row.align_iou > 0.5, `the frames line up with the truth:\n${story}`);
        assert.equal(s.ids_per_object, 1, `one id per object:\n${story}`);
        assert.equal(s.switches, 0, `no identity switch:\n${story}`);
        assert.equal(s.early_ends, 0, `no track ended while its object was in view:\n${story}`);
        assert.equal(s.new_events, s.objects, `one new per object:\n${story}`);
        assert.equal(s.crossings.wrong, 0, `no extra crossing:\n${story}`);
        assert.equal(s.crossings.published, s.crossings.truth, `every crossing counted:\n${story}`);
      },
    );
  }
});
