import assert from 'node:assert/strict';
import { readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Control, CONTROL_FILE, type ApplyOutcome } from '../../../src/control/index.js';
import type { Config } from '../../../src/config/index.js';
import { NO_MODE } from '../../../src/config/runtime.js';
import { topics } from '../../../src/publish/topics.js';
import { config, LINE_POINTS, ZONE_POINTS } from '../../helpers/config.js';
import { tempDir, waitFor } from '../../helpers/env.js';
import { FakeClock, recordingLog } from '../../helpers/fakes.js';
import { FakeOutput } from '../../helpers/fake-output.js';

function file(over: { porch?: Record<string, unknown>; control?: unknown } = {}): Config {
  return config({
    cameras: {
      porch: {
        url: 'lavfi:a',
        zones: { door: { points: ZONE_POINTS } },
        lines: { gate: { points: LINE_POINTS } },
        ...over.porch,
      },
      yard: { url: 'lavfi:b' },
    },
    modes: {
      away: { cameras: { porch: { detect: true, priority: 9 } } },
      home: { cameras: { yard: { enabled: false } } },
    },
    ...(over.control ? { control: over.control } : {}),
  });
}

async function setUp(t: { after: (fn: () => Promise<void>) => void }, cfg = file(), stateDir?: string) {
  const dir = stateDir ?? (await tempDir(t));
  const out = new FakeOutput();
  const { log, lines } = recordingLog();
  let applied = 0;
  const resets: string[] = [];
  const control = new Control(
    { ...cfg, state_dir: dir },
    {
      log,
      clock: new FakeClock(),
      out,
      topics: topics('argus'),
      apply: () => (applied++, Promise.resolve({ outcome: 'applied' as const })),
      resetLine: (camera, line) => (resets.push(`${camera}/${line}`), Promise.resolve(true)),
    },
  );
  await control.load();
  const running = control.effective(cfg);
  control.start();
  return { control, out, lines, dir, running, applied: () => applied, resets };
}

const states = (out: FakeOutput): Record<string, string> =>
  Object.fromEntries(out.of('state').map((s) => [s.topic, s.payload]));

describe('Control (runtime settings, modes, their states and their file)', () => {
  it('publishes every setting’s state, retained, and the mode', async (t) => {
    const { out } = await setUp(t);
    assert.deepEqual(states(out), {
      'argus/mode/state': 'none',
      'argus/cameras/porch/enabled/state': 'ON',
      'argus/cameras/porch/detect/state': 'ON',
      'argus/cameras/porch/snapshots/state': 'ON',
      'argus/cameras/porch/fps/state': '5',
      'argus/cameras/porch/priority/state': '5',
      'argus/cameras/porch/zones/door/enabled/state': 'ON',
      'argus/cameras/porch/lines/gate/enabled/state': 'ON',
      'argus/cameras/yard/enabled/state': 'ON',
      'argus/cameras/yard/detect/state': 'ON',
      'argus/cameras/yard/snapshots/state': 'ON',
      'argus/cameras/yard/fps/state': '5',
      'argus/cameras/yard/priority/state': '5',
    });
  });

  it('a change applies, is published, logged with the client, and kept across a restart', async (t) => {
    const a = await setUp(t);
    a.out.sent = [];
    assert.deepEqual(
      await a.control.change({ kind: 'set', camera: 'porch', key: 'detect', value: 'OFF' }, 'ha-1'),
      {
        ok: true,
        changed: true,
      },
    );
    assert.equal(a.applied(), 1);
    assert.equal(a.control.cameras().porch!.detect, false);
    a.control.camerasChanged();
    assert.deepEqual(states(a.out), { 'argus/cameras/porch/detect/state': 'OFF' }, 'only what changed');
    const logged = a.lines.find((l) => l.msg === 'control: camera setting changed') as unknown as Record<
      string,
      unknown
    >;
    assert.deepEqual(
      [logged.camera, logged.setting, logged.value, logged.client],
      ['porch', 'detect', false, 'ha-1'],
    );
    // The same again changes nothing.
    assert.deepEqual(
      await a.control.change({ kind: 'set', camera: 'porch', key: 'detect', value: false }, 'x'),
      {
        ok: true,
        changed: false,
      },
    );
    assert.equal(a.applied(), 1);
    await a.control.stop();
    const saved = JSON.parse(await readFile(join(a.dir, CONTROL_FILE), 'utf8')) as unknown;
    assert.deepEqual(saved, {
      version: 1,
      mode: 'none',
      overrides: { porch: { detect: { value: false, base: true } } },
    });

    const b = await setUp(t, file(), a.dir);
    assert.equal(b.running.cameras.porch!.detect, false, 'a restart keeps it');
    // Back to the file's value: the change is forgotten.
    await b.control.change({ kind: 'set', camera: 'porch', key: 'detect', value: 'ON' }, 'x');
    await b.control.stop();
    assert.deepEqual(JSON.parse(await readFile(join(a.dir, CONTROL_FILE), 'utf8')), {
      version: 1,
      mode: 'none',
      overrides: {},
    });
  });

  it('a reload that leaves a key’s file value keeps the runtime value; one that changes it takes the file’s', async (t) => {
    const { control, lines } = await setUp(t);
    await control.change({ kind: 'set', camera: 'porch', key: 'fps', value: '2' }, 'x');
    await control.change({ kind: 'set', camera: 'porch', key: 'zones.door.enabled', value: 'OFF' }, 'x');
    const same = control.effective(file({ porch: { priority: 7 } }));
    assert.equal(same.cameras.porch!.fps, 2);
    assert.equal(same.cameras.porch!.priority, 7);
    assert.equal(same.cameras.porch!.zones.door!.enabled, false);
    const changed = control.effective(file({ porch: { fps: 3 } }));
    assert.equal(changed.cameras.porch!.fps, 3, 'the new file value wins');
    assert.equal(changed.cameras.porch!.zones.door!.enabled, false, 'the other change stays');
    assert.ok(lines.some((l) => l.msg.startsWith('control: runtime changes dropped')));
    assert.deepEqual(Object.keys(control.view().overrides.porch!), ['zones.door.enabled']);
  });

  it('a mode applies its settings and clears runtime changes of the keys it sets; none leaves it', async (t) => {
    const { control, out, lines: logged } = await setUp(t);
    await control.change({ kind: 'set', camera: 'porch', key: 'priority', value: 2 }, 'x');
    await control.change({ kind: 'set', camera: 'porch', key: 'snapshots', value: 'OFF' }, 'x');
    out.sent = [];
    assert.deepEqual(await control.change({ kind: 'mode', mode: 'away' }, 'panel'), {
      ok: true,
      changed: true,
    });
    control.camerasChanged();
    assert.equal(control.cameras().porch!.priority, 9);
    assert.equal(control.cameras().porch!.snapshots, false, 'a key the mode does not set keeps its change');
    assert.equal(states(out)['argus/mode/state'], 'away');
    assert.equal(states(out)['argus/cameras/porch/priority/state'], '9');
    // The mode's state comes after the settings it brought: who sees it has seen them.
    assert.equal(
      out.of('state').at(-1)?.topic,
      'argus/mode/state',
      `the mode last: ${out
        .of('state')
        .map((s) => s.topic)
        .join(', ')}`,
    );
    await control.change({ kind: 'mode', mode: 'home' }, 'panel');
    assert.equal(control.cameras().yard!.enabled, false);
    assert.equal(control.cameras().porch!.priority, 5, 'away left: the file value');
    await control.change({ kind: 'mode', mode: 'none' }, 'panel');
    assert.equal(control.cameras().yard!.enabled, true);
    // A reload whose file no longer has the active mode: no mode, said once.
    await control.change({ kind: 'mode', mode: 'away' }, 'panel');
    const without = file();
    delete without.modes.away;
    assert.equal(control.effective(without).cameras.porch!.priority, 5);
    assert.equal(control.view().mode, 'none');
    assert.deepEqual(
      logged.filter((l) => l.msg.includes('no longer in the file')).map((l) => l.msg),
      ["control: mode 'away' is no longer in the file: no mode is active (none)"],
    );
    const bad = await control.change({ kind: 'mode', mode: 'party' }, 'panel');
    assert.deepEqual(bad, {
      ok: false,
      status: 404,
      error: "there is no mode 'party' (the modes are none, home)",
    });
  });

  it('refuses what it cannot do, with why, and changes nothing', async (t) => {
    const { control, applied } = await setUp(t);
    const refused = async (req: Parameters<Control['change']>[0]) => {
      const o = await control.change(req, 'x');
      assert.equal(o.ok, false, JSON.stringify(req));
      return o.ok ? undefined : [o.status, o.error];
    };
    assert.deepEqual(await refused({ kind: 'set', camera: 'garage', key: 'detect', value: 'ON' }), [
      404,
      "there is no camera 'garage'",
    ]);
    assert.deepEqual(
      await refused({ kind: 'set', camera: 'porch', key: 'zones.patio.enabled', value: 'ON' }),
      [404, "camera 'porch' has no setting 'zones.patio.enabled'"],
    );
    assert.deepEqual(await refused({ kind: 'set', camera: 'porch', key: 'fps', value: '0' }), [
      400,
      'fps takes a number from 0.1 to 60',
    ]);
    assert.deepEqual(await refused({ kind: 'reset', camera: 'porch', line: 'road' }), [
      404,
      "camera 'porch' has no line 'road'",
    ]);
    assert.equal(applied(), 0);
    const off = await setUp(t, file({ control: { enabled: false } }));
    assert.deepEqual(await off.control.change({ kind: 'mode', mode: 'away' }, 'x'), {
      ok: false,
      status: 403,
      error: 'control is off (control.enabled: false)',
    });
    assert.deepEqual(off.out.sent, [], 'no state topics either');
  });

  it('takes commands from topics: retained ones and bad ones get one log line each and change nothing', async (t) => {
    const { control, lines, applied, resets } = await setUp(t);
    const warns = () => lines.filter((l) => l.msg.startsWith('control: ')).map((l) => l.msg);
    control.onCommand('argus/cameras/porch/detect/set', 'OFF', true, 'c1', 'argus');
    control.onCommand('argus/cameras/porch/colour/set', 'red', false, 'c1', 'argus');
    control.onCommand('argus/cameras/porch/fps/set', 'fast', false, 'c1', 'argus');
    control.onCommand('argus/cameras/porch/fps/set', '5e-324', false, 'c1', 'argus');
    control.onCommand('argus/cameras/porch/lines/gate/reset/set', 'PRESS', false, 'c1', 'argus');
    control.onCommand('argus/cameras/porch/detect/set', 'OFF', false, 'c2', 'argus');
    await new Promise((r) => setImmediate(r));
    // A reset waits for the start (the events part's line counts are loaded by then): its line
    // may come after later commands' lines.
    assert.deepEqual(warns().sort(), [
      'control: a retained command is ignored (publish commands without retain)',
      'control: camera setting changed',
      'control: fps takes a number from 0.1 to 60; nothing changed',
      'control: fps takes a number from 0.1 to 60; nothing changed',
      'control: line counts reset',
      'control: no such command topic; nothing changed',
    ]);
    assert.equal(control.cameras().porch!.fps, 5);
    assert.deepEqual(resets, ['porch/gate']);
    assert.equal(applied(), 1);
    assert.equal(control.cameras().porch!.detect, false);
  });

  it('says what became of a change the pipeline did not apply: deferred, or refused and not kept; a failing apply over MQTT is one warn line (issue 44)', async (t) => {
    const cfg = file();
    const { log, lines } = recordingLog();
    let next: () => Promise<ApplyOutcome> = () =>
      Promise.resolve({ outcome: 'deferred', reason: 'Argus is stopping' });
    const control = new Control(
      { ...cfg, state_dir: await tempDir(t) },
      {
        log,
        clock: new FakeClock(),
        out: new FakeOutput(),
        topics: topics('argus'),
        apply: () => next(),
        resetLine: () => Promise.resolve(true),
      },
    );
    await control.load();
    control.effective(cfg);
    control.start();
    // Kept, but not applied yet: said as it is (a 202 over HTTP), never a plain `ok`.
    assert.deepEqual(
      await control.change({ kind: 'set', camera: 'porch', key: 'detect', value: false }, 'test'),
      { ok: true, changed: true, deferred: 'Argus is stopping' },
    );
    assert.equal(control.cameras().porch!.detect, false, 'kept: it runs at the next start');
    // Refused by the pipeline: a 500 that says why, and nothing kept.
    next = () => Promise.resolve({ outcome: 'refused', reason: 'the ingest is gone' });
    assert.deepEqual(await control.change({ kind: 'set', camera: 'porch', key: 'fps', value: 2 }, 'test'), {
      ok: false,
      status: 500,
      error: 'refused: the ingest is gone; nothing changed',
      applied: false,
    });
    assert.equal(control.cameras().porch!.fps, 5, 'not kept');
    assert.equal(control.view().overrides.porch!.fps, undefined);
    assert.deepEqual(await control.change({ kind: 'mode', mode: 'away' }, 'test'), {
      ok: false,
      status: 500,
      error: 'refused: the ingest is gone; nothing changed',
      applied: false,
    });
    assert.equal(control.view().mode, 'none', 'the mode is not kept either');
    // An apply that throws, over MQTT (no one to answer): one warn line, no unhandled rejection.
    const unhandled: unknown[] = [];
    const onUnhandled = (err: unknown): number => unhandled.push(err);
    process.on('unhandledRejection', onUnhandled);
    t.after(() => void process.off('unhandledRejection', onUnhandled));
    next = () => Promise.reject(new Error('the scheduler is gone'));
    control.onCommand('argus/cameras/porch/priority/set', '7', false, 'c1', 'argus');
    await waitFor('the refused command is logged', () =>
      lines.some((l) => l.msg.includes('the scheduler is gone')),
    );
    assert.deepEqual(unhandled, []);
    assert.deepEqual(
      lines.filter((l) => /not applied|refused/.test(l.msg)).map((l) => l.msg),
      [
        'control: kept, not applied yet: Argus is stopping',
        'control: refused: the ingest is gone; nothing changed',
        'control: refused: the ingest is gone; nothing changed',
        'control: refused: the scheduler is gone; nothing changed',
      ],
    );
    assert.equal(control.cameras().porch!.priority, 5, 'the refused command is not kept');
  });

  it('a control.json value out of range is dropped with one line naming camera, key and value; the file’s value runs', async (t) => {
    const dir = await tempDir(t);
    const kept = { 'zones.door.enabled': { value: false, base: true } };
    await writeFile(
      join(dir, CONTROL_FILE),
      JSON.stringify({
        version: 1,
        mode: 'none',
        overrides: {
          porch: {
            fps: { value: -5, base: 5 },
            detect: { value: 7, base: true },
            enabled: { value: 2, base: true },
            priority: { value: 1e9, base: 5 },
            ...kept,
          },
          yard: { fps: { value: true, base: 5 }, snapshots: { value: 0, base: true } },
        },
      }),
    );
    const { running, lines, control } = await setUp(t, file(), dir);
    const porch = running.cameras.porch!;
    assert.deepEqual(
      [porch.fps, porch.detect, porch.enabled, porch.priority, porch.zones.door!.enabled],
      [5, true, true, 5, false],
    );
    assert.deepEqual([running.cameras.yard!.fps, running.cameras.yard!.snapshots], [5, true]);
    const dropped = lines
      .filter((l) => l.msg.includes('out of range'))
      .map((l) => {
        const f = l as unknown as Record<string, unknown>;
        return [f.camera, f.setting, f.value];
      });
    assert.deepEqual(dropped, [
      ['porch', 'fps', -5],
      ['porch', 'detect', 7],
      ['porch', 'enabled', 2],
      ['porch', 'priority', 1e9],
      ['yard', 'fps', true],
      ['yard', 'snapshots', 0],
    ]);
    assert.match(
      lines.find((l) => l.msg.includes('out of range'))!.msg,
      /fps takes a number from 0\.1 to 60/,
    );
    await control.stop();
    assert.deepEqual(JSON.parse(await readFile(join(dir, CONTROL_FILE), 'utf8')), {
      version: 1,
      mode: 'none',
      overrides: { porch: kept },
    });
  });

  it('a change that cannot be saved runs, answers 500 saying so, and is saved by a retry once it can be', async (t) => {
    // The state directory's place taken by a file: control.json cannot be written.
    const dir = join(await tempDir(t), 'state');
    const { control, lines, applied, out } = await setUp(t, file(), dir);
    await writeFile(dir, 'not a directory');
    const off = { kind: 'set', camera: 'porch', key: 'detect', value: 'OFF' } as const;
    const o = await control.change(off, 'ha');
    assert.equal(o.ok, false);
    assert.ok(!o.ok && 'applied' in o && o.status === 500, JSON.stringify(o));
    assert.match(
      o.error,
      /^applied, but not saved to .*control\.json \(.+\): it lasts only until Argus stops$/,
    );
    assert.equal(control.cameras().porch!.detect, false, 'it runs');
    assert.equal(applied(), 1);
    out.sent = [];
    control.camerasChanged();
    assert.deepEqual(states(out), { 'argus/cameras/porch/detect/state': 'OFF' }, 'its state says what runs');
    assert.equal(lines.filter((l) => l.msg.startsWith('control: applied, but not saved')).length, 1);
    // The same again: nothing to change, but still not saved.
    assert.equal((await control.change(off, 'ha')).ok, false);
    // Over MQTT: the change's own line says so, and nothing claims it was refused.
    control.onCommand('argus/cameras/porch/snapshots/set', 'OFF', false, 'c1', 'argus');
    await control.stop().catch(() => undefined);
    const msgs = lines.map((l) => l.msg);
    assert.equal(msgs.filter((m) => m.startsWith('control: applied, but not saved')).length, 2);
    assert.ok(!msgs.some((m) => m.endsWith('nothing changed')), JSON.stringify(msgs));
    await rm(dir);
    assert.deepEqual(await control.change(off, 'ha'), { ok: true, changed: false }, 'the retry saved it');
    const saved = JSON.parse(await readFile(join(dir, CONTROL_FILE), 'utf8')) as { overrides: unknown };
    assert.deepEqual(saved.overrides, {
      porch: { detect: { value: false, base: true }, snapshots: { value: false, base: true } },
    });
  });

  it('with a control.json Argus may not write (a link in its place), a change runs and says it is not saved', async (t) => {
    const dir = await tempDir(t);
    await writeFile(join(dir, 'elsewhere.json'), '{}');
    await symlink(join(dir, 'elsewhere.json'), join(dir, CONTROL_FILE));
    const { control } = await setUp(t, file(), dir);
    const o = await control.change({ kind: 'mode', mode: 'away' }, 'x');
    assert.ok(!o.ok && o.status === 500, JSON.stringify(o));
    assert.match(o.error, /could not be read at start/);
    assert.equal(control.view().mode, 'away');
    assert.equal(
      await readFile(join(dir, 'elsewhere.json'), 'utf8'),
      '{}',
      'the link is not written through',
    );
  });

  it('a corrupt control.json is kept aside and the file’s settings run', async (t) => {
    const dir = await tempDir(t);
    await writeFile(join(dir, CONTROL_FILE), '{"version":1,"mode":');
    const { running, lines } = await setUp(t, file(), dir);
    assert.equal(running.cameras.porch!.detect, true);
    assert.ok(
      lines.some((l) => /corrupt|kept aside/i.test(l.msg)),
      JSON.stringify(lines.map((l) => l.msg)),
    );
  });

  it('with fleet: tells each change (camera, mode), and takes another box’s changes and mode (issue 48)', async (t) => {
    const told: string[] = [];
    const dir = await tempDir(t);
    const cfg = file();
    const out = new FakeOutput();
    const { log, lines } = recordingLog();
    const control = new Control(
      { ...cfg, state_dir: dir },
      {
        log,
        clock: new FakeClock(),
        out,
        topics: topics('argus'),
        apply: () => Promise.resolve({ outcome: 'applied' as const }),
        resetLine: () => Promise.resolve(true),
        onStateChange: (cameras) => told.push(cameras.join(',')),
        onModeChange: () => told.push('mode'),
      },
    );
    await control.load();
    control.effective(cfg);
    control.start();
    await control.change({ kind: 'set', camera: 'porch', key: 'fps', value: '2' }, 'x');
    assert.deepEqual(told, ['porch']);
    assert.equal(control.overridesOf('porch'), '{"fps":{"value":2,"base":5}}');
    assert.equal(control.overridesOf('yard'), '{}');
    // Mode away names porch's priority: the change of it goes, and the mode is told.
    await control.change({ kind: 'set', camera: 'porch', key: 'priority', value: '3' }, 'x');
    told.length = 0;
    await control.change({ kind: 'mode', mode: 'away' }, 'x');
    assert.deepEqual(told, ['porch', 'mode']);
    assert.equal(control.mode(), 'away');

    // Another box's changes of yard, taken with the camera: kept in control.json, in force.
    control.adoptOverrides('yard', '{"detect":{"value":false,"base":true},"fps":{"value":-5,"base":5}}');
    assert.equal(control.cameras().yard!.detect, false);
    assert.equal(control.cameras().yard!.fps, 5, 'an out-of-range change is dropped');
    assert.ok(lines.some((l) => /kept in etcd is out of range/.test(l.msg)));
    await control.stop(); // writes control.json (it goes on taking changes)
    const kept = JSON.parse(await readFile(join(dir, CONTROL_FILE), 'utf8')) as {
      overrides: Record<string, unknown>;
    };
    assert.deepEqual(kept.overrides.yard, { detect: { value: false, base: true } });
    control.adoptOverrides('yard', '{}');
    assert.equal(control.cameras().yard!.detect, true, 'none: the file’s value');
    assert.throws(() => control.adoptOverrides('yard', '{"detect":7}'));

    // The fleet's mode: adopted where the file has it, without telling the mode back.
    told.length = 0;
    assert.equal(control.adoptMode('home'), true);
    assert.equal(control.mode(), 'home');
    assert.equal(control.cameras().yard!.enabled, false);
    assert.equal(control.adoptMode('home'), false, 'already so');
    assert.equal(control.adoptMode('holiday'), false);
    assert.equal(control.mode(), 'home');
    assert.ok(lines.some((l) => /'holiday' is not in this box's file/.test(l.msg)));
    assert.ok(!told.includes('mode'));
  });

  it('with fleet: a mode its own control.json named, gone from the file, is not told at start; at a reload it is', async (t) => {
    const dir = await tempDir(t);
    await writeFile(join(dir, CONTROL_FILE), JSON.stringify({ version: 1, mode: 'party', overrides: {} }));
    const told: string[] = [];
    const cfg = file();
    const control = new Control(
      { ...cfg, state_dir: dir },
      {
        log: recordingLog().log,
        clock: new FakeClock(),
        out: new FakeOutput(),
        topics: topics('argus'),
        apply: () => Promise.resolve({ outcome: 'applied' as const }),
        resetLine: () => Promise.resolve(true),
        onModeChange: () => told.push('mode'),
      },
    );
    await control.load();
    control.effective(cfg);
    assert.equal(control.mode(), NO_MODE);
    assert.deepEqual(told, [], 'a stale mode ended at start is not pushed to the fleet');
    control.start();
    await control.change({ kind: 'mode', mode: 'away' }, 'x');
    told.length = 0;
    // A reload whose file has no mode `away` any more: every box reads it; this one says so.
    control.effective({ ...cfg, modes: { home: cfg.modes.home! } });
    assert.equal(control.mode(), NO_MODE);
    assert.deepEqual(told, ['mode']);
    await control.stop();
  });

  it('with fleet: publishes the states of the cameras this box runs, and leaves the others’ topics alone (issue 48)', async (t) => {
    const dir = await tempDir(t);
    const cfg = file();
    const out = new FakeOutput();
    const runs = new Set(['porch']);
    const control = new Control(
      { ...cfg, state_dir: dir },
      {
        log: recordingLog().log,
        clock: new FakeClock(),
        out,
        topics: topics('argus'),
        apply: () => Promise.resolve({ outcome: 'applied' as const }),
        resetLine: () => Promise.resolve(true),
        runsHere: (camera) => runs.has(camera),
      },
    );
    await control.load();
    control.effective(cfg);
    control.start();
    const topicsSent = () => out.of('state').map((m) => m.topic);
    assert.ok(topicsSent().includes('argus/mode/state'));
    assert.ok(topicsSent().includes('argus/cameras/porch/fps/state'));
    assert.ok(!topicsSent().some((x) => x.startsWith('argus/cameras/yard/')), 'yard runs elsewhere');
    // yard taken over, porch handed on: yard's states published; porch's not cleared (its new box publishes them).
    out.sent = [];
    runs.add('yard');
    runs.delete('porch');
    control.camerasChanged();
    assert.ok(topicsSent().includes('argus/cameras/yard/fps/state'));
    assert.deepEqual(
      out.of('state').filter((m) => m.topic.startsWith('argus/cameras/porch/')),
      [],
      'nothing sent on porch’s topics (no clearing)',
    );
  });
});
