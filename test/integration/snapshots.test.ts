import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import sharp from 'sharp';
import { modelConfig, sectionConfig } from '../../src/config/index.js';
import { Detector, planModel } from '../../src/detector/index.js';
import { loadLetterboxed } from '../../src/ingest/index.js';
import type { EventPayload } from '../../src/publish/topics.js';
import { httpBase, startDaemon, writeDaemonConfig } from '../helpers/daemon.js';
import { needsShared, shared, tempDir, waitFor } from '../helpers/env.js';
import { boxIou } from '../helpers/images.js';
import { startBroker, Subscriber } from '../helpers/mqtt.js';
import { startRtspServer } from '../helpers/rtsp.js';
import { writeSceneClip, type Scene } from '../helpers/synthetic-scene.js';

/**
 * Event snapshots and the event history end to end: real ffmpeg pulls a clip from a real RTSP
 * server, real ONNX Runtime runs YOLOv8n, Argus publishes to Mosquitto and keeps its history in
 * a state directory; the daemon is stopped, started again, and killed with SIGKILL.
 */
const STARTED = '"msg":"argus started"';
const MODEL = (): string => shared('models/yolov8n_int8.onnx');

/**
 * 1280×720: 12 s of empty background (a stream takes a moment to start), then a person walks in
 * from beyond the left edge (cut by it at first) to x ≈ 420 in 3 s, and stands there.
 */
const WALK_IN: Scene = {
  width: 1280,
  height: 720,
  fps: 10,
  seconds: 34,
  movers: [
    { cut: 'personA', label: 'person', height: 300, start: [-40, 660], end: [420, 660], from: 12, to: 15 },
    { cut: 'personA', label: 'person', height: 300, start: [420, 660], end: [420, 660], from: 15.05, to: 34 },
  ],
};

async function getJson<T>(url: string): Promise<T> {
  const res = await fetch(url);
  assert.equal(res.status, 200, `${url}: ${res.status}`);
  return (await res.json()) as T;
}

/** A JPEG's size; fails when the bytes are not a whole JPEG. */
async function jpegSize(data: Buffer): Promise<[number, number]> {
  const meta = await sharp(data).metadata();
  assert.equal(meta.format, 'jpeg');
  await sharp(data).raw().toBuffer(); // decodes every byte: a torn file fails here
  return [meta.width, meta.height];
}

describe('event snapshots and history end to end (real RTSP, ONNX Runtime, Mosquitto)', () => {
  it(
    'an object appears: its new event names a snapshot, the JPEG on MQTT shows it, /api/events lists it across a restart and a kill -9',
    { skip: needsShared, timeout: 300_000 },
    async (t) => {
      const dir = await tempDir(t);
      const clip = join(dir, 'walk-in.mp4');
      await writeSceneClip(WALK_IN, shared('media/bus.jpg'), clip);
      const rtsp = await startRtspServer(
        t,
        [
          { name: 'scene', source: { kind: 'clip', path: clip, once: true } },
          { name: 'still', source: { kind: 'image', path: shared('media/bus.jpg'), fps: 5 } },
        ],
        { deferStart: true },
      );
      const broker = await startBroker(t);
      const stateDir = join(dir, 'state');
      const camera = (name: string) => ({
        url: rtsp.url(name),
        rtsp_transport: rtsp.transport,
        fps: 5,
        objects: { track: ['person'] },
      });
      const settings = (cameras: Record<string, unknown>) => ({
        model: { path: MODEL() },
        state_dir: stateDir,
        mqtt: { url: broker.url },
        events: { end_after_s: 3 },
        cameras,
      });
      const config = await writeDaemonConfig(dir, settings({ scene: camera('scene') }));
      const first = startDaemon(t, config);
      await waitFor('the daemon to start', () => first.output().includes(STARTED), 60_000);
      const sub = new Subscriber(broker.url);
      t.after(() => sub.end());
      await rtsp.start();

      // The new event names the snapshot; its JPEG follows on the camera's snapshot topic.
      const events = (camera: string): EventPayload[] =>
        sub.json<EventPayload>('argus/events').filter((e) => e.camera === camera);
      await sub.waitFor(
        'the person’s new event',
        () => events('scene').some((e) => e.type === 'new'),
        90_000,
      );
      const n = events('scene').find((e) => e.type === 'new')!;
      assert.equal(n.label, 'person');
      assert.ok(n.snapshot, 'the new event names a snapshot');
      assert.equal(n.snapshot.path, `/api/events/${encodeURIComponent(n.id)}/snapshot.jpg`);
      const topic = 'argus/cameras/scene/person/snapshot';
      await sub.waitFor('the snapshot JPEG', () => sub.on(topic).length > 0);
      const jpeg = sub.on(topic)[0]!.data;
      assert.deepEqual(await jpegSize(jpeg), [640, 360], 'the model’s 640 picture without its padding');

      // The model finds the person in the snapshot, where the event says it is (at half scale).
      const detector = new Detector(
        await planModel({ path: MODEL() }),
        {
          model: modelConfig({ path: MODEL() }),
          detector: sectionConfig('detector', { workers: 1, intra_op_threads: 1, inter_op_threads: 1 }),
        },
        pino({ level: 'silent' }),
      );
      await detector.start();
      t.after(() => detector.stop());
      const found = (await detector.detect([await loadLetterboxed(jpeg, detector.inputSize)])).detections[0]!;
      const where = n.snapshot.box.map((v) => v / 2);
      const person = found.find((d) => d.label === 'person' && boxIou(d.box, where) > 0.5);
      assert.ok(person, `a person at ${where.join(',')} in ${JSON.stringify(found)}`);

      // The history lists it, with its snapshot and crop.
      const base = await httpBase(first.output);
      const listed = await getJson<EventPayload[]>(`${base}/api/events?camera=scene&label=person`);
      assert.ok(
        listed.some((e) => e.id === n.id),
        `listed: ${JSON.stringify(listed)}`,
      );
      const snap = await fetch(`${base}${n.snapshot.path}`);
      assert.equal(snap.headers.get('content-type'), 'image/jpeg');
      assert.deepEqual(await jpegSize(Buffer.from(await snap.arrayBuffer())), [640, 360]);
      const crop = await fetch(`${base}${n.snapshot.path}?crop=1`);
      const [cw, ch] = await jpegSize(Buffer.from(await crop.arrayBuffer()));
      assert.ok(cw < 200 && ch > 100 && ch < 260, `the crop is about the person: ${cw}×${ch}`);

      // Standing whole in view, the person's snapshot is one clear of the edge by its end.
      await sub.waitFor(
        'the person standing',
        () => events('scene').some((e) => e.type === 'update' && e.stationary),
        60_000,
      );
      first.child.kill('SIGTERM');
      assert.deepEqual(await first.exited, { code: 0, signal: null });
      const end = events('scene').find((e) => e.type === 'end' && e.id === n.id);
      assert.ok(end?.snapshot, 'the end names the snapshot');
      assert.ok(
        end.snapshot.box[0] > 12.8,
        `the last snapshot is clear of the left edge: ${end.snapshot.box.join(',')}`,
      );

      // Started again (with a second camera): the event is still listed, with its snapshot.
      await writeDaemonConfig(dir, settings({ scene: camera('scene'), still: camera('still') }));
      const second = startDaemon(t, config);
      await waitFor('the daemon to start again', () => second.output().includes(STARTED), 60_000);
      const again = await getJson<EventPayload[]>(`${await httpBase(second.output)}/api/events?camera=scene`);
      assert.deepEqual(
        again.find((e) => e.id === n.id),
        end,
        'as its end event said',
      );
      const kept = await fetch(`${await httpBase(second.output)}${n.snapshot.path}`);
      assert.equal(kept.status, 200);
      await jpegSize(Buffer.from(await kept.arrayBuffer()));

      // Killed while it writes the still camera's new events and snapshots: the store opens.
      await sub.waitFor(
        'the still camera’s first new event',
        () => events('still').some((e) => e.type === 'new'),
        60_000,
      );
      await new Promise((r) => setTimeout(r, Math.random() * 100)); // within the burst of writes
      second.child.kill('SIGKILL');
      await second.exited;
      const third = startDaemon(t, config);
      await waitFor('the daemon to start after the kill', () => third.output().includes(STARTED), 60_000);
      assert.match(third.output(), /"msg":"event history loaded"/);
      assert.doesNotMatch(
        third.output(),
        /an event of the history is (corrupt|unreadable)|cannot read an event/,
        'every file of the history is whole',
      );
      const base3 = await httpBase(third.output);
      const history = await getJson<EventPayload[]>(`${base3}/api/events`);
      assert.ok(history.some((e) => e.id === n.id));
      let snapshots = 0;
      for (const e of history) {
        const res = await fetch(`${base3}/api/events/${encodeURIComponent(e.id)}/snapshot.jpg`);
        if (res.status === 404) continue;
        assert.equal(res.status, 200);
        await jpegSize(Buffer.from(await res.arrayBuffer()));
        snapshots++;
      }
      const still = history.filter((e) => e.camera === 'still').length;
      t.diagnostic(
        `after the kill: ${history.length} events (${still} of the killed run), ${snapshots} snapshots`,
      );
      third.child.kill('SIGTERM');
      assert.deepEqual(await third.exited, { code: 0, signal: null });
    },
  );
});
