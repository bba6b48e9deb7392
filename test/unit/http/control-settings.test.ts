import assert from 'node:assert/strict';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { Control, type ApplyOutcome, type ControlView } from '../../../src/control/index.js';
import { HttpServer } from '../../../src/http/server.js';
import { topics } from '../../../src/publish/topics.js';
import { config } from '../../helpers/config.js';
import { tempDir } from '../../helpers/env.js';
import { FakeClock } from '../../helpers/fakes.js';
import { FakeOutput } from '../../helpers/fake-output.js';
import { controlSource } from '../../helpers/control-source.js';

/** The HTTP server in front of a real Control, whose control.json is in `stateDir`. */
async function serve(
  t: { after: (fn: () => Promise<void>) => void },
  stateDir: string,
  apply: () => Promise<ApplyOutcome> = () => Promise.resolve({ outcome: 'applied' }),
) {
  const cfg = config({ cameras: { gate: { url: 'lavfi:a' } } });
  const control = new Control(
    { ...cfg, state_dir: stateDir },
    {
      log: pino({ level: 'silent' }),
      clock: new FakeClock(),
      out: new FakeOutput(),
      topics: topics('argus'),
      apply,
      resetLine: () => Promise.resolve(false),
    },
  );
  await control.load();
  control.effective(cfg);
  const server = new HttpServer(
    { host: '127.0.0.1', port: 0, max_body_mb: 1, inference: false, token: undefined },
    controlSource(control),
    pino({ level: 'silent' }),
  );
  await server.start();
  t.after(() => server.stop());
  const put = (key: string, body: string): Promise<Response> =>
    fetch(`${server.url}/api/control/cameras/gate/${key}`, {
      method: 'PUT',
      body,
      headers: { 'Content-Type': 'application/json' },
    });
  return { control, put };
}

describe('PUT /api/control with the runtime settings behind it', () => {
  it('says what became of a change as it is: 200 applied, 202 kept for the next start, 500 refused and not kept (issue 44)', async (t) => {
    let outcome: ApplyOutcome = { outcome: 'deferred', reason: 'Argus is stopping' };
    const { control, put } = await serve(t, await tempDir(t), () => Promise.resolve(outcome));
    const deferred = await put('fps', '2');
    assert.equal(deferred.status, 202);
    const body = (await deferred.json()) as ControlView & { deferred: string };
    assert.equal(body.deferred, 'Argus is stopping');
    assert.equal(body.cameras.gate!.fps, 2, 'kept: it runs at the next start');
    outcome = { outcome: 'refused', reason: 'the ingest is gone' };
    const refused = await put('priority', '9');
    assert.equal(refused.status, 500);
    assert.match(await refused.text(), /refused: the ingest is gone; nothing changed/);
    assert.equal(control.view().cameras.gate!.priority, 5, 'not kept');
    outcome = { outcome: 'applied' };
    assert.equal((await put('priority', '9')).status, 200);
  });

  it('takes what the schema takes and refuses the rest with 400, saying what the key takes', async (t) => {
    const { control, put } = await serve(t, await tempDir(t));
    for (const [key, body] of [
      ['fps', '0.1'],
      ['fps', '60'],
      ['priority', '1'],
      ['priority', '10'],
      ['detect', 'false'],
    ] as const) {
      const res = await put(key, body);
      assert.equal(res.status, 200, `${key} ${body}`);
      assert.equal(((await res.json()) as ControlView).cameras.gate![key], JSON.parse(body));
    }
    for (const [key, body, takes] of [
      ['fps', '5e-324', 'a number from 0.1 to 60'],
      ['fps', '-5', 'a number from 0.1 to 60'],
      ['fps', 'true', 'a number from 0.1 to 60'],
      ['fps', '60.5', 'a number from 0.1 to 60'],
      ['priority', '1e9', 'a whole number from 1 to 10'],
      ['priority', '2.5', 'a whole number from 1 to 10'],
      ['detect', '7', 'ON or OFF (true or false in JSON)'],
      ['enabled', '2', 'ON or OFF (true or false in JSON)'],
    ] as const) {
      const res = await put(key, body);
      assert.equal(res.status, 400, `${key} ${body}`);
      assert.deepEqual(await res.json(), { error: `${key} takes ${takes}` });
    }
    const gate = control.cameras().gate!;
    assert.deepEqual([gate.fps, gate.priority, gate.detect, gate.enabled], [60, 10, false, true]);
  });

  it('answers 500 for a change it applied but could not save, and 200 once a retry saves it', async (t) => {
    const dir = join(await tempDir(t), 'state');
    const { control, put } = await serve(t, dir);
    // The state directory's place taken by a file: control.json cannot be written.
    await writeFile(dir, 'not a directory');
    const res = await put('detect', 'false');
    assert.equal(res.status, 500);
    const { error } = (await res.json()) as { error: string };
    assert.match(
      error,
      /^applied, but not saved to .*control\.json \(.+\): it lasts only until Argus stops$/,
    );
    assert.equal(control.cameras().gate!.detect, false);
    assert.equal((await put('detect', 'false')).status, 500, 'the same again: still not saved');
    await rm(dir);
    assert.equal((await put('detect', 'false')).status, 200, 'saved now');
  });
});
