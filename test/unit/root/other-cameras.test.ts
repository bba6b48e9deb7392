import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { otherCameras, warnOtherCameras } from '../../../src/root/other-cameras.js';
import { recordingLog } from '../../helpers/fakes.js';

describe('state of cameras the config does not have (issue 45, item 3)', () => {
  it('names them by what holds them, and warns once at start; nothing when the state is all the config’s', () => {
    const stored = { history: ['bcam', 'gate'], line_counts: ['crossing', 'gate'], control: ['gate'] };
    assert.deepEqual(otherCameras(stored, ['gate']), { history: ['bcam'], line_counts: ['crossing'] });
    const { log, lines } = recordingLog();
    warnOtherCameras(log, '/s', stored, ['gate', 'bcam', 'crossing']);
    assert.deepEqual(lines, []);
    warnOtherCameras(log, '/s', stored, ['yard']);
    assert.equal(lines.length, 1);
    const line = lines[0] as unknown as Record<string, unknown>;
    assert.deepEqual(
      [line.state_dir, line.history, line.line_counts, line.control],
      ['/s', ['bcam', 'gate'], ['crossing', 'gate'], ['gate']],
    );
    assert.match(String(line.msg), /not listed \(page, \/api\/events\)/);
  });
});
