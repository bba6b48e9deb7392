import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import type { Result } from '../../../src/core/frame.js';
import { letterbox, type Box } from '../../../src/core/geometry.js';
import { sectionConfig, type Config } from '../../../src/config/index.js';
import { isBetter, onEdge, Snapshots, type Candidate } from '../../../src/events/snapshots.js';
import { topics } from '../../../src/publish/topics.js';
import type { ObjectEvent } from '../../../src/track/events.js';
import type { Sighting } from '../../../src/track/tracker.js';
import { FakeClock, objectEvent, silentLog } from '../../helpers/fakes.js';
import { FakeOutput } from '../../helpers/fake-output.js';

const cand = (score: number, box: Box, edge = false): Candidate => ({
  ts: 0,
  score,
  box,
  edge,
  picture: null,
});

describe('snapshots: the best-frame rule', () => {
  const box: Box = [100, 100, 200, 300];
  const bigger: Box = [95, 90, 205, 310]; // 1.21 × the area

  it('a box clear of the edges beats one touching an edge, whatever the scores', () => {
    assert.equal(isBetter(cand(0.6, box), cand(0.95, box, true)), true);
    assert.equal(isBetter(cand(0.99, bigger, true), cand(0.6, box)), false);
  });

  it('a score higher by at least 0.05 wins; the jitter of a few hundredths does not', () => {
    assert.equal(isBetter(cand(0.85, box), cand(0.8, box)), true);
    assert.equal(isBetter(cand(0.84, box), cand(0.8, box)), false);
    assert.equal(isBetter(cand(0.8, box), cand(0.8, box)), false);
  });

  it('a box at least 10 % larger wins at about the same score, not at a much lower one', () => {
    assert.equal(isBetter(cand(0.77, bigger), cand(0.8, box)), true);
    assert.equal(isBetter(cand(0.74, bigger), cand(0.8, box)), false);
    assert.equal(isBetter(cand(0.8, [100, 100, 204, 304]), cand(0.8, box)), false, '6 % larger');
  });

  it('a box touches the edge within 1 % of the frame', () => {
    assert.equal(onEdge([100, 100, 200, 200], 1920, 1080), false);
    assert.equal(onEdge([19, 100, 200, 200], 1920, 1080), true);
    assert.equal(onEdge([20, 100, 200, 200], 1920, 1080), false);
    assert.equal(onEdge([100, 100, 1901, 200], 1920, 1080), true);
    assert.equal(onEdge([100, 5, 200, 200], 1920, 1080), true);
    assert.equal(onEdge([100, 100, 200, 1075], 1920, 1080), true);
  });
});

/** A 640×480 camera seen by a 64 model: 64×48 inside, 8 rows of padding above and below. */
const geometry = letterbox(640, 480, 64);

/** A frame whose picture is one grey level: which frame a snapshot came from shows in its pixels. */
function frame(ts: number, grey: number): Result {
  return {
    camera: 'gate',
    seq: ts,
    ts,
    geometry,
    cached: false,
    detections: [],
    data: Buffer.alloc(geometry.dstW * geometry.dstH * 3, grey),
  };
}

const seen = (score: number, box: Box = [200, 150, 400, 400]): Sighting[] => [
  { id: 'o1', label: 'person', detection: { label: 'person', score, box, zones: [] } },
];

const event = (type: ObjectEvent['type']): ObjectEvent => objectEvent(type);

/** The grey level of a JPEG's pixel (at the crop's centre: away from the drawn box). */
async function greyAt(jpeg: Buffer, x: number, y: number): Promise<number> {
  const { data, info } = await sharp(jpeg).raw().toBuffer({ resolveWithObject: true });
  return data[(y * info.width + x) * info.channels]!;
}

function setup(over: Partial<Config['events']['snapshots']> = {}) {
  const clock = new FakeClock();
  const out = new FakeOutput();
  // Quality 80, as these tests were written for: at 70 the label drawn near the sampled pixel rings into it by 8 grey levels.
  const cfg = { ...sectionConfig('events', {}).snapshots, quality: 80, ...over };
  const s = new Snapshots(cfg, { out, topics: topics('argus'), clock, log: silentLog });
  const published = () => out.of('state').filter((m) => m.topic === 'argus/cameras/gate/person/snapshot');
  return { clock, out, s, published };
}

describe('snapshots: choosing, making and publishing', () => {
  it('the new event names the best frame seen before it, and its JPEG is published retained', async () => {
    const { clock, s, published } = setup();
    const t0 = clock.now();
    s.offer(frame(t0, 200), seen(0.9), () => true); // tentative
    s.offer(frame(t0 + 200, 50), seen(0.7), () => true);
    const ref = s.onEvent(event('new'));
    assert.deepEqual(ref, {
      path: '/api/events/o1/snapshot.jpg',
      ts: new Date(t0).toISOString(),
      score: 0.9,
      box: [200, 150, 400, 400],
    });
    s.render();
    await s.idle();
    const [jpeg] = published();
    assert.ok(jpeg?.data, 'a binary message');
    assert.equal((await sharp(jpeg.data).metadata()).format, 'jpeg');
    const meta = await sharp(jpeg.data).metadata();
    assert.deepEqual([meta.width, meta.height], [64, 48], 'the model’s picture without its padding');
    assert.ok(Math.abs((await greyAt(jpeg.data, 2, 2)) - 200) < 8, 'made from the first frame');
  });

  it('replaces it at most once per min_interval_s, with the best frame that waited, and at the end', async () => {
    const { clock, s, published } = setup({ min_interval_s: 2 });
    s.offer(frame(clock.now(), 10), seen(0.6), () => true);
    s.onEvent(event('new'));
    s.render();
    await clock.advance(500);
    s.offer(frame(clock.now(), 20), seen(0.63), () => true); // within the jitter: not better
    s.offer(frame(clock.now(), 30), seen(0.8), () => true); // better: waits
    s.offer(frame(clock.now(), 40), seen(0.9), () => true); // better still: waits instead
    s.render();
    await s.idle();
    assert.equal(published().length, 1, 'not before 2 s');
    assert.equal(s.onEvent(event('update'))?.score, 0.6, 'events name the snapshot published');
    await clock.advance(1500);
    s.due(clock.now());
    s.render();
    await s.idle();
    assert.equal(published().length, 2);
    assert.ok(Math.abs((await greyAt(published()[1]!.data!, 2, 2)) - 40) < 8, 'the best that waited');
    assert.equal(s.onEvent(event('update'))?.score, 0.9);

    await clock.advance(100);
    s.offer(frame(clock.now(), 50), seen(0.97), () => true);
    s.due(clock.now());
    const end = s.onEvent(event('end'));
    assert.equal(end?.score, 0.97, 'the end shows the better frame still waiting');
    s.render();
    await s.idle();
    assert.equal(published().length, 3);
    assert.equal(s.onEvent(event('update')), null, 'the object is forgotten at its end');
  });

  it('makes nothing when off, for frames without pixels, or for tentative objects that vanish', async () => {
    const off = setup({ enabled: false });
    off.s.offer(frame(off.clock.now(), 10), seen(0.9), () => true);
    assert.equal(off.s.onEvent(event('new')), null);
    off.s.render();
    await off.s.idle();
    assert.equal(off.published().length, 0);

    const bare = setup();
    bare.s.offer({ ...frame(bare.clock.now(), 10), data: Buffer.alloc(0) }, seen(0.9), () => true);
    assert.equal(bare.s.onEvent(event('new')), null);

    const gone = setup();
    gone.s.offer(frame(gone.clock.now(), 10), seen(0.9), () => true);
    gone.s.offer(frame(gone.clock.now() + 200, 10), [], () => false);
    assert.equal(gone.s.onEvent(event('new')), null, 'its frame was let go');
    const quiet = setup();
    quiet.s.offer(frame(quiet.clock.now(), 10), seen(0.9), () => true);
    quiet.s.untracked('gate', () => false); // the tracker dropped it with no frame since (at a tick)
    assert.equal(quiet.s.onEvent(event('new')), null);
  });

  it('publishes each camera’s snapshots in the order they were chosen', async () => {
    const { clock, s, published } = setup({ min_interval_s: 0 });
    s.offer(frame(clock.now(), 10), seen(0.5), () => true);
    s.onEvent(event('new'));
    for (let i = 1; i <= 5; i++)
      s.offer(frame(clock.now() + i, 10 + 40 * i), seen(0.5 + 0.08 * i), () => true);
    s.render();
    await s.idle();
    const greys = await Promise.all(published().map((m) => greyAt(m.data!, 2, 2)));
    assert.equal(greys.length, 6);
    assert.ok(Math.abs(greys.at(-1)! - 210) < 8, `the last is the latest: ${greys.join(' ')}`);
  });
});
