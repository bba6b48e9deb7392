import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { LineCounts, LINE_COUNTS_FILE } from '../../../src/events/line-counts.js';
import { tempDir } from '../../helpers/env.js';
import { FakeClock, silentLog } from '../../helpers/fakes.js';

describe('LineCounts: one camera’s counts, as a fleet keeps them in etcd (issue 48)', () => {
  it('tells each change, gives a camera’s counts as JSON and takes another box’s', async (t) => {
    const dir = await tempDir(t);
    const told: string[] = [];
    const counts = new LineCounts(dir, {
      clock: new FakeClock(),
      log: silentLog,
      onChange: (c) => told.push(c),
    });
    await counts.load();
    counts.add('gate', 'in', 'person', 'in');
    counts.add('gate', 'in', 'person', 'in');
    counts.add('yard', 'x', 'car', 'out');
    assert.deepEqual(told, ['gate', 'gate', 'yard']);
    assert.equal(counts.cameraCounts('gate'), '{"in":{"person":{"in":2}}}');
    assert.equal(counts.cameraCounts('none'), '{}');

    counts.adopt('gate', '{"in":{"person":{"in":12,"out":3}}}');
    assert.equal(counts.add('gate', 'in', 'person', 'in'), 13, 'counting goes on from the adopted count');
    assert.equal(counts.cameraCounts('yard'), '{"x":{"car":{"out":1}}}', 'other cameras untouched');
    await counts.flush();
    const saved = JSON.parse(await readFile(join(dir, LINE_COUNTS_FILE), 'utf8')) as { counts: unknown };
    assert.deepEqual(saved.counts, {
      gate: { in: { person: { in: 13, out: 3 } } },
      yard: { x: { car: { out: 1 } } },
    });
    counts.adopt('yard', '{}');
    assert.deepEqual(counts.cameras(), ['gate']);
    assert.throws(() => counts.adopt('gate', '{"in":{"person":{"in":-1}}}'), /gate\.in\.person\.in/);
    assert.equal(
      counts.cameraCounts('gate'),
      '{"in":{"person":{"in":13,"out":3}}}',
      'kept on a bad document',
    );
  });
});
