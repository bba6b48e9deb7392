import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { loadConfig } from '../../../src/config/load.js';
import {
  chooseDefaultDir,
  configStateName,
  CONTROL_FILE,
  HISTORY_DIR,
  holdsCameras,
  LINE_COUNTS_FILE,
  OWNER_FILE,
  realConfigPath,
} from '../../../src/state/index.js';
import { tempDir } from '../../helpers/env.js';

const CONFIG = '/etc/argus/argus.yaml';

/** Line counts of `cameras`, as events/line-counts.ts writes them. */
const lineCounts = (...cameras: string[]): string =>
  JSON.stringify({
    version: 1,
    counts: Object.fromEntries(cameras.map((c) => [c, { door: { person: { in: 3 } } }])),
  });

/** An event record of `camera`, as events/event-record.ts writes it. */
const record = (camera: string): string =>
  `${JSON.stringify({ version: 1, id: `${camera}-1`, camera, label: 'person', zones: [], start: 1, event: {} })}\n`;

describe('the shared state directory of earlier versions', () => {
  it('recognises a config’s cameras in its line counts, control.json or history; what does not parse says nothing', async (t) => {
    const shared = await tempDir(t);
    assert.deepEqual(await holdsCameras(shared, ['gate']), [], 'an empty directory');
    await writeFile(join(shared, LINE_COUNTS_FILE), lineCounts('bcam', 'crossing'));
    assert.deepEqual(await holdsCameras(shared, ['gate']), []);
    assert.deepEqual(await holdsCameras(shared, ['gate', 'crossing']), ['crossing']);
    await writeFile(
      join(shared, CONTROL_FILE),
      JSON.stringify({ version: 1, mode: 'none', overrides: { gate: { fps: { value: 2, base: 5 } } } }),
    );
    assert.deepEqual(await holdsCameras(shared, ['gate', 'yard']), ['gate']);
    await mkdir(join(shared, HISTORY_DIR));
    await writeFile(join(shared, HISTORY_DIR, 'aaaaaaaaaaaaaaaaaaaaaaaa.json'), record('yard'));
    await writeFile(join(shared, HISTORY_DIR, 'bbbbbbbbbbbbbbbbbbbbbbbb.json'), '{ not json');
    assert.deepEqual(await holdsCameras(shared, ['gate', 'yard', 'drive']), ['gate', 'yard']);
    await writeFile(join(shared, LINE_COUNTS_FILE), '{ cut short');
    assert.deepEqual(await holdsCameras(shared, ['crossing']), []);
  });

  it('a config keeps it when it holds its cameras’ state (no owner yet), or names it as owner; else the config gets its own', async (t) => {
    const home = await tempDir(t);
    const shared = join(home, 'argus');
    const own = join(shared, configStateName(CONFIG));
    assert.deepEqual(
      await chooseDefaultDir(own, shared, CONFIG, ['gate']),
      { dir: own, from: 'default' },
      'nothing there',
    );
    await mkdir(shared);
    await writeFile(join(shared, LINE_COUNTS_FILE), lineCounts('bcam'));
    assert.deepEqual(
      await chooseDefaultDir(own, shared, CONFIG, ['gate']),
      { dir: own, from: 'default' },
      'another config’s cameras only',
    );
    await writeFile(join(shared, LINE_COUNTS_FILE), lineCounts('bcam', 'gate'));
    assert.deepEqual(await chooseDefaultDir(own, shared, CONFIG, ['gate', 'yard']), {
      dir: shared,
      from: 'legacy',
      cameras: ['gate'],
    });
    // Once a config has run there, its owner record decides: this config keeps it, any other does not.
    await writeFile(join(shared, OWNER_FILE), JSON.stringify({ version: 1, config: CONFIG }));
    assert.deepEqual(await chooseDefaultDir(own, shared, CONFIG, ['gate']), { dir: shared, from: 'legacy' });
    const other = '/home/me/other.yaml';
    const othersOwn = join(shared, configStateName(other));
    assert.deepEqual(await chooseDefaultDir(othersOwn, shared, other, ['gate']), {
      dir: othersOwn,
      from: 'default',
    });
    // A config that has its own directory uses it, whatever the shared one holds.
    await writeFile(join(shared, OWNER_FILE), JSON.stringify({ version: 1, config: '/somewhere/else.yaml' }));
    await mkdir(own);
    assert.deepEqual(await chooseDefaultDir(own, shared, CONFIG, ['gate']), { dir: own, from: 'default' });
  });

  it('loadConfig: without state_dir, an existing user’s default directory keeps working; another config gets its own', async (t) => {
    const dir = await tempDir(t);
    const xdg = join(dir, 'xdg');
    const shared = join(xdg, 'argus');
    await mkdir(join(shared, HISTORY_DIR), { recursive: true });
    await writeFile(join(shared, HISTORY_DIR, 'cccccccccccccccccccccccc.json'), record('gate'));
    const write = async (name: string, camera: string): Promise<string> => {
      const file = join(dir, name);
      await writeFile(file, `model:\n  path: m.onnx\ncameras:\n  ${camera}:\n    url: rtsp://h/s\n`);
      return file;
    };
    const env = { XDG_STATE_HOME: xdg };
    const mine = await loadConfig(await write('mine.yaml', 'gate'), env);
    assert.equal(mine.config.state_dir, shared);
    assert.equal(mine.config.events.clips.ring_dir, join(shared, 'ring'));
    assert.deepEqual(mine.state, { from: 'legacy', config: realConfigPath(join(dir, 'mine.yaml')) });
    const theirs = await loadConfig(await write('theirs.yaml', 'yard'), env);
    const theirsOwn = join(shared, configStateName(realConfigPath(join(dir, 'theirs.yaml'))));
    assert.equal(theirs.config.state_dir, theirsOwn);
    assert.equal(theirs.config.events.clips.ring_dir, join(theirsOwn, 'ring'));
    assert.equal(theirs.state?.from, 'default');
    // $STATE_DIRECTORY and state_dir are as they were: the shared directory is not looked at.
    const systemd = await loadConfig(join(dir, 'mine.yaml'), { ...env, STATE_DIRECTORY: '/var/lib/argus' });
    assert.deepEqual([systemd.config.state_dir, systemd.state?.from], ['/var/lib/argus', 'systemd']);
  });
});
