import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { defaultFfmpegPath } from '../../src/ingest/ffmpeg-process.js';
import type { HealthPayload } from '../../src/publish/topics.js';
import { httpBase, startDaemon, writeDaemonConfig } from '../helpers/daemon.js';
import { tempDir } from '../helpers/env.js';
import { discoveryProblems } from '../helpers/ha-schema.js';
import { startBroker, Subscriber } from '../helpers/mqtt.js';
import { startRtspServer } from '../helpers/rtsp.js';
import { seededRandom } from '../helpers/random.js';

/**
 * Camera health end to end (issue 49 item 6): a real RTSP camera whose stream turns, mid-run,
 * into a blurred, covered, shifted and frozen version of itself (one prepared clip, played once),
 * and a second camera whose scene darkens slowly as at dusk; `argus run` with a real broker. The
 * retained health topic and what Home Assistant's problem sensor makes of it go to each fault and
 * back to `ok`; the dusk camera says nothing.
 *
 * The scene is synthetic (lavfi and ffmpeg filters, nothing from ../shared): rectangles of many
 * sizes and greys on a gradient, wider than the view so that the camera can pan over it, a box
 * moving across it and sensor noise on every frame.
 */

/** The view (the camera's picture) and the scene it looks at (wider: a pan shows more of it). */
const W = 480;
const H = 270;
const SCENE_W = 560;
const FPS = 5;
/** Seconds of learning (config `learn_s`) and of each stretch of the clip. */
const LEARN_S = 8;
const STRETCH_S = 20;
/** When each tamper starts in the clip (s); each lasts STRETCH_S, with as long untouched after it. */
const FIRST = 25;
const TAMPERS = ['defocused', 'covered', 'moved', 'frozen'] as const;
const startOf = (i: number): number => FIRST + 2 * STRETCH_S * i;
const END = startOf(TAMPERS.length) + 5;

/** The scene's filters: rectangles on a gradient, and a box moving across. */
function sceneFilters(): string {
  const r = seededRandom(49);
  const boxes: string[] = [];
  for (let i = 0; i < 70; i++) {
    const w = 8 + Math.floor(r() * 60);
    const h = 8 + Math.floor(r() * 50);
    const x = Math.floor(r() * (SCENE_W - w));
    const y = Math.floor(r() * (H - h));
    const grey = Math.floor(r() * 255)
      .toString(16)
      .padStart(2, '0');
    boxes.push(`drawbox=x=${x}:y=${y}:w=${w}:h=${h}:color=0x${grey}${grey}${grey}:t=fill`);
  }
  return [
    // A left-to-right gradient under them.
    `geq=lum='40+120*X/W':cb=128:cr=128`,
    ...boxes,
    `drawbox=x='mod(t*40,${SCENE_W})':y=${H - 70}:w=40:h=30:color=0xe0e0e0:t=fill`,
  ].join(',');
}

/** A still picture with sensor noise, then a tamper from `at` to `at + STRETCH_S`. */
const between = (i: number): string => `between(t,${startOf(i)},${startOf(i) + STRETCH_S})`;

/**
 * The tampered camera's clip: learning and untouched stretches, a blur (defocused), a dark blurred
 * patch over 85 % of the view (a cloth), a pan of 80 px (1/6 of the view: moved), and the picture
 * frozen (noise included). The freeze repeats one frame; every other stretch runs on.
 */
function tamperedGraph(): string {
  const [blur, cover, pan, freeze] = [0, 1, 2, 3];
  const view = `crop=${W}:${H}:x='if(${between(pan)},80,0)':y=0`;
  const cloth = `split[a][b];[b]crop=iw*0.85:ih*0.85:0:0,boxblur=20:2,eq=brightness=-0.25[p];[a][p]overlay=0:0:enable='${between(cover)}'`;
  const f0 = startOf(freeze);
  return [
    `color=c=black:s=${SCENE_W}x${H}:r=${FPS}:d=${END},format=yuv420p,${sceneFilters()},${view},noise=alls=6:allf=t,gblur=sigma=5:enable='${between(blur)}',${cloth},split=3[s0][s1][s2]`,
    `[s0]trim=end=${f0},setpts=PTS-STARTPTS[before]`,
    `[s1]trim=start=${f0}:duration=0.2,setpts=PTS-STARTPTS,loop=loop=${STRETCH_S * FPS - 1}:size=1:start=0,setpts=N/${FPS}/TB[frozen]`,
    `[s2]trim=start=${f0 + STRETCH_S},setpts=PTS-STARTPTS[after]`,
    `[before][frozen][after]concat=n=3:v=1:a=0[out]`,
  ].join(';');
}

/** The dusk camera's clip: the same scene, its light falling to 30 % over 100 s, noise on top. */
function duskGraph(): string {
  const g = `(1-0.7*min(1,max(0,(t-${FIRST})/100)))`;
  return `color=c=black:s=${SCENE_W}x${H}:r=${FPS}:d=${END},format=yuv420p,${sceneFilters()},crop=${W}:${H}:0:0,eq=contrast='${g}':brightness='0.5*${g}-0.5':eval=frame,noise=alls=6:allf=t[out]`;
}

/** Encodes `graph`'s `[out]` to an H.264 MP4 (no B-frames; key frames where the stretches start). */
async function encode(graph: string, path: string): Promise<void> {
  const ffmpeg = await defaultFfmpegPath();
  const keys = [0, ...TAMPERS.flatMap((_, i) => [startOf(i), startOf(i) + STRETCH_S])].join(',');
  // The frozen stretch lossless (an x264 zone at q 0): its first picture is the source's own, so
  // every picture after it decodes the same, as a stuck encoder's do (at a normal quality x264
  // would go on refining the repeated picture for a few frames after its key frame).
  const f0 = startOf(TAMPERS.indexOf('frozen')) * FPS;
  const args = [
    '-hide_banner',
    '-loglevel',
    'error',
    '-filter_complex',
    graph,
    '-map',
    '[out]',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-bf',
    '0',
    '-g',
    String(STRETCH_S * FPS * 4),
    '-sc_threshold',
    '0',
    '-force_key_frames',
    keys,
    '-x264-params',
    `zones=${f0},${f0 + STRETCH_S * FPS - 1},q=0`,
    '-pix_fmt',
    'yuv420p',
    '-y',
    path,
  ];
  const child = spawn(ffmpeg, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((r) => child.on('close', r));
  assert.equal(code, 0, `ffmpeg could not make ${path}: ${err}`);
}

/**
 * What Home Assistant's binary sensor shows for a health payload: its `value_template` rendered
 * (the one form Argus announces, `{{ 'A' if value_json.<key> == 'V' else 'B' }}`, read from the
 * config as announced) and compared with its `payload_on`.
 */
function sensorShows(sensor: Record<string, string>, payload: HealthPayload): 'on' | 'off' {
  const m = /^\{\{\s*'(\w+)'\s+if\s+value_json\.(\w+)\s*==\s*'(\w+)'\s+else\s+'(\w+)'\s*\}\}$/.exec(
    sensor.value_template ?? '',
  );
  assert.ok(m, `a template this test can render: ${sensor.value_template}`);
  const value = (payload as unknown as Record<string, unknown>)[m[2]!] === m[3] ? m[1] : m[4];
  return value === sensor.payload_on ? 'on' : 'off';
}

/** The states a topic's payloads went through, repeats collapsed. */
const sequence = (payloads: HealthPayload[]): string[] =>
  payloads.map((p) => p.state).filter((s, i, all) => i === 0 || s !== all[i - 1]);

describe('camera health end to end (argus run, real RTSP, a real broker)', () => {
  it('a tampered stream: defocused, covered, moved and frozen said on the retained topic and HA sensor, and ok when undone; dusk says nothing', async (t) => {
    const dir = await tempDir(t);
    const tampered = join(dir, 'tampered.mp4');
    const dusk = join(dir, 'dusk.mp4');
    await encode(tamperedGraph(), tampered);
    await encode(duskGraph(), dusk);
    const broker = await startBroker(t);
    const rtsp = await startRtspServer(t, [
      { name: 'gate', source: { kind: 'clip', path: tampered, once: true } },
      { name: 'yard', source: { kind: 'clip', path: dusk, once: true } },
    ]);
    const camera = (mount: string) => ({ url: rtsp.url(mount), rtsp_transport: rtsp.transport, fps: 2 });
    const config = await writeDaemonConfig(dir, {
      mqtt: { url: broker.url },
      home_assistant: { enabled: true, default_labels: ['bright'] },
      // One time-of-day bucket: a run across a bucket's edge would learn again there.
      health: { learn_s: LEARN_S, bucket_hours: 24 },
      cameras: { gate: camera('gate'), yard: camera('yard') },
    });
    const sub = new Subscriber(broker.url, ['argus/cameras/+/health', 'homeassistant/binary_sensor/#']);
    t.after(() => sub.end());
    const daemon = startDaemon(t, config);
    // Its log, where a wait below fails: what the daemon said about its cameras and their health.
    const waitFor = async (what: string, cond: () => boolean, timeoutMs: number): Promise<void> =>
      sub.waitFor(what, cond, timeoutMs).catch((err: Error) => {
        throw new Error(`${err.message}\ndaemon output:\n${daemon.output().slice(-4000)}`);
      });
    const health = (cam: string) => sub.json<HealthPayload>(`argus/cameras/${cam}/health`);

    // The problem sensor as announced: on the health topic, with the template applied below.
    const sensorTopic = 'homeassistant/binary_sensor/argus/argus-gate-health/config';
    await waitFor('the health sensor announced', () => sub.on(sensorTopic).length > 0, 60_000);
    const sensor = JSON.parse(sub.on(sensorTopic).at(-1)!.payload) as Record<string, string>;
    assert.deepEqual(discoveryProblems(sensorTopic, JSON.stringify(sensor)), []);
    assert.equal(sensor.state_topic, 'argus/cameras/gate/health');
    assert.equal(sensor.device_class, 'problem');

    // Each fault in turn, said while its tamper lasts, then ok again once it is undone.
    const learnt = (cam: string) => health(cam).some((p) => !p.learning && p.state === 'ok');
    await waitFor('both references learnt', () => learnt('gate') && learnt('yard'), 120_000);
    const base = await httpBase(daemon.output, 60_000);
    for (const fault of TAMPERS) {
      await waitFor(`gate ${fault}`, () => health('gate').at(-1)?.state === fault, 120_000);
      const said = health('gate').at(-1)!;
      assert.equal(sensorShows(sensor, said), 'on', `the problem sensor during ${fault}`);
      assert.ok(said.measure !== undefined && said.faults.includes(fault), JSON.stringify(said));
      if (fault === 'covered') {
        // Retained: a client that comes now is told at once; and /metrics says the cause.
        const late = new Subscriber(broker.url, 'argus/cameras/gate/health');
        t.after(() => late.end());
        await late.retainedDone();
        const retained = late.messages.filter((m) => m.retain);
        assert.equal(retained.length, 1);
        assert.equal((JSON.parse(retained[0]!.payload) as HealthPayload).state, 'covered');
        const metrics = await (await fetch(`${base}/metrics`)).text();
        assert.match(metrics, /argus_camera_health\{camera="gate",cause="covered"\} 1/);
        assert.match(metrics, /argus_camera_health\{camera="gate",cause="ok"\} 0/);
      }
      await waitFor(`gate ok after ${fault}`, () => health('gate').at(-1)?.state === 'ok', 120_000);
      const ok = health('gate').at(-1)!;
      assert.equal(sensorShows(sensor, ok), 'off', `the problem sensor after ${fault}`);
      // How long the fault was said (stream time): its stretch, less the time it took to be said,
      // plus the clearing time (`clear_s`, 5 s by default).
      const saidS = (Date.parse(ok.since) - Date.parse(said.since)) / 1000;
      t.diagnostic(
        `${fault}: said from ${said.since} to ${ok.since} (${saidS.toFixed(1)} s: said about ${(STRETCH_S + 5 - saidS).toFixed(0)} s after the tamper began)`,
      );
    }
    assert.deepEqual(sequence(health('gate')), ['ok', ...TAMPERS.flatMap((f) => [f, 'ok'])]);

    // The dusk camera, run as long, said nothing but ok all along.
    assert.deepEqual(sequence(health('yard')), ['ok'], JSON.stringify(health('yard')));
    assert.ok(health('yard').every((p) => p.faults.length === 0));

    daemon.child.kill('SIGTERM');
    assert.equal((await daemon.exited).code, 0);
  });
});
