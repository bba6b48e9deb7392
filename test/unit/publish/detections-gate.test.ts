import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Detection } from '../../../src/core/frame.js';
import type { Box } from '../../../src/core/geometry.js';
import { DetectionsGate, sameDetections } from '../../../src/publish/detections-gate.js';

const d = (label: string, score: number, x: number, w = 100): Detection => ({
  label,
  score,
  box: [x, 100, x + w, 300] as Box,
});

describe('detections: the same, or a change', () => {
  it('the same picture analysed again: boxes a pixel or two off, scores a hundredth off, any order', () => {
    const before = [d('person', 0.9, 100), d('car', 0.7, 400, 200)];
    assert.ok(sameDetections(before, [d('car', 0.71, 401, 199), d('person', 0.89, 102)]));
    assert.ok(sameDetections([], []));
    assert.ok(sameDetections(before, before));
  });

  it('an object that comes, goes, moves a tenth of its size, changes label or score is a change', () => {
    const before = [d('person', 0.9, 100)];
    assert.ok(!sameDetections(before, []), 'gone');
    assert.ok(!sameDetections(before, [d('person', 0.9, 100), d('person', 0.9, 400)]), 'one more');
    assert.ok(!sameDetections(before, [d('person', 0.9, 110)]), '10 px of a 100-px box');
    assert.ok(sameDetections(before, [d('person', 0.9, 104)]), '4 px: jitter');
    assert.ok(!sameDetections(before, [d('dog', 0.9, 100)]), 'another label');
    assert.ok(!sameDetections(before, [d('person', 0.8, 100)]), 'score 0.1 lower');
  });

  it('two objects of a label are matched one to one', () => {
    const two = [d('person', 0.9, 100), d('person', 0.9, 102)];
    assert.ok(!sameDetections(two, [d('person', 0.9, 101), d('person', 0.9, 400)]));
  });
});

describe('detections gate', () => {
  const still = [d('person', 0.9, 100)];

  it('publishes the first frame, a change at once, and the same detections once a heartbeat', () => {
    const gate = new DetectionsGate({ publish: 'changes', heartbeat_s: 10 });
    const published: number[] = [];
    // 5 frames/s for 60 s, the same detections but for a person who walks in at 30 s for 2 s.
    for (let ts = 0; ts < 60_000; ts += 200) {
      const dets =
        ts >= 30_000 && ts < 32_000 ? [...still, d('person', 0.8, 300 + (ts - 30_000) / 20)] : still;
      if (gate.due('gate', dets, ts)) published.push(ts);
    }
    const walking = published.filter((ts) => ts >= 30_000 && ts < 32_000);
    assert.deepEqual(
      published.filter((ts) => ts < 30_000 || ts >= 32_000),
      [0, 10_000, 20_000, 32_000, 42_000, 52_000],
      'heartbeats, and the frame the person left in',
    );
    // Walking 10 px a frame across a 100-px box: every frame says something new.
    assert.equal(walking.length, 10);
    assert.ok(published.length <= 6 + 10, `${published.length} messages in a minute`);
  });

  it('is per camera, restarts the heartbeat when the clock goes back, and forgets a removed camera', () => {
    const gate = new DetectionsGate({ publish: 'changes', heartbeat_s: 5 });
    assert.ok(gate.due('a', still, 1000));
    assert.ok(gate.due('b', still, 1000));
    assert.ok(!gate.due('a', still, 2000));
    assert.ok(gate.due('a', still, 500), 'clock set back');
    assert.ok(!gate.due('a', still, 600));
    gate.forget('a');
    assert.ok(gate.due('a', still, 700));
  });

  it('every_frame: every frame', () => {
    const gate = new DetectionsGate({ publish: 'every_frame', heartbeat_s: 10 });
    for (let ts = 0; ts < 1000; ts += 200) assert.ok(gate.due('a', still, ts));
  });
});
