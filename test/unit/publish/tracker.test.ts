import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ZonedDetection } from '../../../src/publish/filters.js';
import { Tracker } from '../../../src/publish/tracker.js';

const zd = (
  label: string,
  score: number,
  box: [number, number, number, number],
  zones: string[] = [],
): ZonedDetection => ({ label, score, box, zones });

describe('tracker', () => {
  const settings = { min_frames: 2, end_after_s: 1, update_iou: 0.7, update_score: 0.1 };

  it('announces an object after min_frames, keeps its id, and ends it when unseen', () => {
    const t = new Tracker('gate', settings);
    assert.deepEqual(t.update([zd('person', 0.6, [0, 0, 10, 20])], 0), [], 'tentative after one frame');
    const [n] = t.update([zd('person', 0.7, [1, 0, 11, 20])], 200);
    assert.equal(n!.type, 'new');
    assert.equal(n!.startTs, 0);
    assert.equal(n!.score, 0.7);
    assert.deepEqual(t.counts(), { person: 1 });
    assert.deepEqual(t.update([], 900), []);
    const [end] = t.update([], 1200);
    assert.deepEqual([end!.type, end!.id, end!.endTs], ['end', n!.id, 200]);
    assert.deepEqual(t.counts(), {});
  });

  it('sends update on a material move, a zone change, or a clear score gain; not for jitter', () => {
    const t = new Tracker('gate', settings);
    t.update([zd('car', 0.5, [0, 0, 100, 50])], 0);
    t.update([zd('car', 0.5, [0, 0, 100, 50])], 100);
    assert.deepEqual(t.update([zd('car', 0.55, [2, 0, 102, 50])], 200), [], 'jitter');
    const [moved] = t.update([zd('car', 0.55, [30, 0, 130, 50])], 300);
    assert.equal(moved!.type, 'update');
    const [zone] = t.update([zd('car', 0.55, [30, 0, 130, 50], ['drive'])], 400);
    assert.deepEqual(zone!.zones, ['drive']);
    const [better] = t.update([zd('car', 0.7, [30, 0, 130, 50], ['drive'])], 500);
    assert.equal(better!.score, 0.7);
  });

  it('matches by label and best overlap; a one-frame blip makes no event', () => {
    const t = new Tracker('gate', settings);
    t.update([zd('person', 0.9, [0, 0, 10, 10]), zd('dog', 0.9, [0, 0, 10, 10])], 0);
    const events = t.update([zd('person', 0.9, [0, 0, 10, 10]), zd('dog', 0.9, [0, 0, 10, 10])], 100);
    assert.deepEqual(events.map((e) => e.label).sort(), ['dog', 'person']);
    t.update([zd('cat', 0.9, [50, 50, 60, 60])], 200);
    const later = t.update([], 2000);
    assert.deepEqual(
      later.map((e) => [e.type, e.label]).sort(),
      [
        ['end', 'dog'],
        ['end', 'person'],
      ],
      'the cat seen once vanishes silently',
    );
  });

  it('ends everything on shutdown', () => {
    const t = new Tracker('gate', { ...settings, min_frames: 1 });
    t.update([zd('person', 0.9, [0, 0, 10, 10])], 0);
    assert.deepEqual(
      t.endAll().map((e) => e.type),
      ['end'],
    );
    assert.deepEqual(t.counts(), {});
  });
});
