import assert from 'node:assert/strict';
import { describe as suite, it } from 'node:test';
import {
  camPath,
  describe,
  eventDetails,
  fleetRows,
  has,
  keyName,
  lineOfKey,
  lineTotal,
  num,
  objectLine,
  pointList,
  seconds,
  span,
  stretchPath,
  timelineStart,
  topPoint,
  union,
} from '../../../src/page/format.js';

suite('the live page’s helpers (src/page/format.ts, which the browser runs)', () => {
  it('reads only own keys: a name such as __proto__ or constructor counts as any other', () => {
    const counts = JSON.parse('{"__proto__": 2, "person": 1}') as Record<string, number>;
    assert.equal(num(counts, '__proto__'), 2);
    assert.equal(num(counts, 'person'), 1);
    assert.equal(num(counts, 'constructor'), 0);
    assert.equal(num({}, 'toString'), 0);
    assert.equal(has(null, 'x'), false);
    assert.equal(has('text', 'length'), false);
    assert.deepEqual(union({ a: 1, b: 2 }, { b: 3, c: 4 }, {}), ['a', 'b', 'c']);
  });

  it("adds a line's crossings in one direction over its labels, 0 for a line without any", () => {
    const cam = { line_counts: { road: { car: { in: 3, out: 1 }, person: { in: 2 } } } };
    assert.equal(lineTotal(cam, 'road', 'in'), 5);
    assert.equal(lineTotal(cam, 'road', 'out'), 1);
    assert.equal(lineTotal(cam, 'gate', 'in'), 0);
    assert.equal(lineTotal({ line_counts: {} }, '__proto__', 'in'), 0);
  });

  it('describes an event: what, when, how long (whole seconds, never below 0) and its zones', () => {
    const time = (iso: string): string => iso.slice(11, 19);
    const ev = {
      label: 'person',
      camera: 'gate',
      start_ts: '2024-05-01T10:00:00.000Z',
      end_ts: '2024-05-01T10:00:12.600Z',
      entered_zones: ['door', 'yard'],
    };
    assert.deepEqual(describe(ev, time), { what: 'person on gate', when: '10:00:00 · 13 s · door, yard' });
    assert.deepEqual(describe({ ...ev, end_ts: null, entered_zones: [] }, time), {
      what: 'person on gate',
      when: '10:00:00 · in view',
    });
    assert.equal(seconds('2024-05-01T10:00:05Z', '2024-05-01T10:00:00Z'), 0);
  });

  it('labels settings as their switches are named, and finds the line a reset belongs to', () => {
    assert.equal(keyName('detect'), 'detect');
    assert.equal(keyName('zones.door.enabled'), 'zone door');
    assert.equal(keyName('lines.road.enabled'), 'line road');
    assert.equal(keyName('zones.front.door.enabled'), 'zone front.door');
    assert.equal(lineOfKey('lines.road.enabled'), 'road');
    assert.equal(lineOfKey('zones.road.enabled'), undefined);
    assert.equal(lineOfKey('fps'), undefined);
    assert.equal(camPath('front door', 'lines/a%2Fb/reset'), '/cameras/front%20door/lines/a%2Fb/reset');
  });

  it("writes points to 0.1 px, and puts a shape's name at its topmost, then leftmost, point", () => {
    assert.equal(
      pointList([
        [1, 2.25],
        [3.04, 4],
      ]),
      '1.0,2.3 3.0,4.0',
    );
    assert.deepEqual(
      topPoint([
        [5, 9],
        [7, 2],
        [3, 2],
        [1, 8],
      ]),
      [3, 2],
    );
  });

  it("gives an event's speed and loitering as its payload has them, nothing when it has neither", () => {
    const speed = { current: 7.2, max: 7.6, unit: 'km/h', zone: 'road' };
    assert.equal(eventDetails({ speed, loitering_zones: [] }), 'max 7.6 km/h in road · now 7.2 km/h');
    assert.equal(
      eventDetails({ speed: { ...speed, current: null, unit: 'mph' }, loitering_zones: ['door', 'porch'] }),
      'max 7.6 mph in road · loitering in door, porch',
    );
    assert.equal(eventDetails({ speed: null, loitering_zones: [] }), '');
    // A record kept from before these fields.
    assert.equal(eventDetails({}), '');
  });

  it('lists an object in view by its speed now and its loitering, and not one with neither', () => {
    const o = { id: '1-c-1', label: 'car', current_zones: ['road'], loitering_zones: [], stationary: false };
    const speed = { current: 31.5, max: 40, unit: 'km/h', zone: 'road' };
    assert.equal(objectLine({ ...o, speed }), 'car 31.5 km/h in road');
    assert.equal(objectLine({ ...o, speed: { ...speed, current: null } }), undefined, 'no speed now');
    assert.equal(objectLine({ ...o, speed: null }), undefined);
    assert.equal(
      objectLine({ ...o, label: 'person', speed: null, loitering_zones: ['door'] }),
      'person loitering in door',
    );
  });

  it('lists the fleet’s boxes: members with their load, then boxes that still hold a camera but are gone (issue 48)', () => {
    const rows = fleetRows({
      box: 'b',
      connected: true,
      members: [
        { name: 'b', capacity: 4, labels: [], cameras: ['porch'], limit: 2 },
        { name: 'a', capacity: 3, labels: ['gpu', 'north'], cameras: ['yard', 'gate'], limit: 2 },
      ],
      owners: {
        gate: { box: 'a', epoch: 10 },
        yard: { box: 'a', epoch: 11 },
        porch: { box: 'b', epoch: 12 },
        drive: { box: 'c', epoch: 5 },
      },
      running: ['porch'],
      unplaced: [],
    });
    assert.deepEqual(rows, [
      {
        box: 'a',
        labels: 'gpu, north',
        capacity: 3,
        load: '2/3 · 67 %',
        alive: true,
        here: false,
        cameras: ['gate', 'yard'],
      },
      {
        box: 'b',
        labels: '',
        capacity: 4,
        load: '1/4 · 25 %',
        alive: true,
        here: true,
        cameras: ['porch'],
      },
      { box: 'c', labels: '', capacity: null, load: '', alive: false, here: false, cameras: ['drive'] },
    ]);
  });

  it("places a stretch or an event on the timeline's scale, cut to it; one going on reaches now", () => {
    assert.deepEqual(span(1500, 2000, 1000, 3000), { left: 25, width: 25 });
    assert.deepEqual(span(500, 2000, 1000, 3000), { left: 0, width: 50 });
    assert.deepEqual(span(2000, null, 1000, 3000), { left: 50, width: 50 });
    assert.deepEqual(span(2500, 9000, 1000, 3000), { left: 75, width: 25 });
    assert.equal(span(100, 900, 1000, 3000), undefined);
    assert.equal(span(3100, 3200, 1000, 3000), undefined);
  });

  it('plays a stretch from where it enters the timeline, an hour at most, as recording.mp4 reads times', () => {
    const t = Date.parse('2026-12-06T08:00:00Z');
    assert.equal(
      stretchPath('a door', t + 10_000, t + 40_000, t, t + 3600_000),
      '/api/cameras/a%20door/recording.mp4?start=2026-12-06T08:00:10.000Z&end=2026-12-06T08:00:40.000Z',
    );
    // Started before the timeline: from its left edge; longer than an hour: an hour.
    assert.equal(
      stretchPath('door', t - 86_400_000, t + 7200_000, t, t + 7200_000),
      '/api/cameras/door/recording.mp4?start=2026-12-06T08:00:00.000Z&end=2026-12-06T09:00:00.000Z',
    );
  });

  it('starts the timeline at the oldest stretch or event, an hour back at most, 5 minutes at least', () => {
    const to = Date.parse('2026-12-06T09:00:00Z');
    const at = (iso: string) => ({ start: iso });
    const view = (ranges: string[], events: string[]) => ({ ranges: ranges.map(at), events: events.map(at) });
    assert.equal(timelineStart(view([], []), to, 3600_000, 300_000), to - 300_000);
    assert.equal(
      timelineStart(view(['2026-12-06T08:40:00Z'], ['2026-12-06T08:30:00Z']), to, 3600_000, 300_000),
      Date.parse('2026-12-06T08:30:00Z'),
    );
    assert.equal(timelineStart(view(['2026-12-06T08:58:00Z'], []), to, 3600_000, 300_000), to - 300_000);
    assert.equal(timelineStart(view(['2026-12-05T00:00:00Z'], []), to, 3600_000, 300_000), to - 3600_000);
  });
});
