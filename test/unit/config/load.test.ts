import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { stringify } from 'yaml';
import { ConfigError } from '../../../src/config/issues.js';
import { loadConfig, MAX_CONFIG_BYTES, parseConfig } from '../../../src/config/load.js';
import { MAX_NODES } from '../../../src/config/yaml.js';
import { LIMITS, topicLevelProblem } from '../../../src/config/primitives.js';
import { repoRoot } from '../../helpers/env.js';

const minimal = 'model:\n  path: m.onnx\n';

function errorsOf(
  text: string,
  env: NodeJS.ProcessEnv = {},
): { line?: number; path: string; message: string }[] {
  try {
    parseConfig(text, 'test.yaml', env);
  } catch (err) {
    assert.ok(err instanceof ConfigError, `expected ConfigError, got ${String(err)}`);
    return err.issues;
  }
  assert.fail('expected the config to be rejected');
}

describe('config', () => {
  it('names each bad line with its place, and a zone or line label the camera does not track', () => {
    const camera = (areas: string[]): string =>
      [
        minimal.trimEnd(),
        'cameras:',
        '  gate:',
        '    url: rtsp://h/s',
        '    objects:',
        '      track: [person]',
        ...areas,
        '',
      ].join('\n');
    const bad = camera([
      '    lines:',
      '      door:',
      '        points: [[5, 5], [5, 5]]',
      '        directions: [in, in]',
      '      kerb:',
      '        points: [[0, 0], [9, 9]]',
      '        anchor: feet',
    ]);
    const issues = errorsOf(bad).map((i) => `${i.line}: ${i.path}: ${i.message}`);
    assert.deepEqual(issues.slice(0, 2), [
      '10: cameras.gate.lines.door.points: the two points must differ',
      '11: cameras.gate.lines.door.directions: the two directions need different names',
    ]);
    assert.match(issues[2]!, /^14: cameras\.gate\.lines\.kerb\.anchor: .*center.*bottom_center/);
    const untracked = camera([
      '    zones:',
      '      drive:',
      '        points: [[0, 0], [10, 0], [10, 10]]',
      '        objects: [car]',
      '    lines:',
      '      kerb:',
      '        points: [[0, 0], [9, 9]]',
      '        objects: [person, peron]',
    ]);
    assert.deepEqual(
      errorsOf(untracked).map((i) => `${i.line}: ${i.path}: ${i.message}`),
      [
        "11: cameras.gate.zones.drive.objects[0]: 'car' is not one of the camera's objects.track (person)",
        "15: cameras.gate.lines.kerb.objects[1]: 'peron' is not one of the camera's objects.track (person); did you mean 'person'?",
      ],
    );
  });

  it("resolves state_dir: systemd's STATE_DIRECTORY, else the key relative to the file, else the config's own directory", () => {
    const withKey = `${minimal}state_dir: state\n`;
    assert.equal(parseConfig(withKey, '/etc/argus/a.yaml', {}).config.state_dir, '/etc/argus/state');
    assert.equal(
      parseConfig(withKey, '/etc/argus/a.yaml', { STATE_DIRECTORY: '/var/lib/argus' }).config.state_dir,
      '/var/lib/argus',
    );
    assert.equal(
      parseConfig(minimal, '/etc/argus/a.yaml', { XDG_STATE_HOME: '/x' }).config.state_dir,
      `/x/argus/a-${createHash('sha256').update('/etc/argus/a.yaml').digest('hex').slice(0, 8)}`,
    );
  });

  it('refuses clips where they cannot be kept, and a public URL with a password, naming the key', () => {
    const lavfi = errorsOf(`${minimal}cameras:\n  demo:\n    url: "lavfi:testsrc"\n    clips: true\n`);
    assert.deepEqual(
      lavfi.map((e) => [e.path, e.line]),
      [['cameras.demo.clips', 6]],
    );
    assert.match(lavfi[0]!.message, /lavfi: camera sends no encoded stream/);
    const noHistory = errorsOf(
      `${minimal}events:\n  history:\n    max_events: 0\n  clips:\n    enabled: true\ncameras:\n  gate:\n    url: rtsp://h/s\n`,
    );
    assert.deepEqual(
      noHistory.map((e) => e.path),
      ['events.history.max_events'],
    );
    assert.match(noHistory[0]!.message, /clips are kept in the history/);
    const url = errorsOf(`${minimal}http:\n  public_url: https://me:hunter22@proxy.lan/\n`);
    assert.deepEqual(
      url.map((e) => e.path),
      ['http.public_url'],
    );
    assert.match(url[0]!.message, /must not hold a user or password/);
    assert.doesNotMatch(JSON.stringify(url), /hunter22/);
    // Off by default; the defaults where it is on.
    const on = parseConfig(`${minimal}events:\n  clips:\n    enabled: true\n`, '/etc/argus/argus.yaml', {});
    assert.deepEqual(
      { ...on.config.events.clips, ring_dir: undefined },
      {
        enabled: true,
        pre_capture_s: 5,
        post_capture_s: 5,
        max_clip_s: 120,
        ring_dir: undefined,
        ring_max_mb: 256,
        // Issue 47: retention of the one recording, and the cache of MP4s made on request.
        retain_days: 7,
        record_days: 1,
        max_gb: 0,
        cache_mb: 256,
      },
    );
  });

  it('record: always (issue 47): continuous recording of a camera that keeps clips, with its own days', () => {
    const cams = (body: string, clips = true): string =>
      `${minimal}events:\n  clips:\n    enabled: ${clips}\n    record_days: 2\ncameras:\n${body}`;
    const ok = parseConfig(
      cams(
        '  gate:\n    url: rtsp://h/s\n    record: always\n    record_days: 0.5\n  yard:\n    url: rtsp://h/y\n    record: always\n  door:\n    url: rtsp://h/d\n',
      ),
      '/etc/argus/argus.yaml',
      {},
    ).config;
    assert.deepEqual(
      Object.entries(ok.cameras).map(([n, c]) => [n, c.record, c.record_days]),
      [
        ['gate', 'always', 0.5],
        ['yard', 'always', undefined],
        ['door', 'events', undefined],
      ],
    );
    assert.equal(ok.events.clips.record_days, 2);
    const wrong = errorsOf(
      cams(
        '  a:\n    url: "lavfi:testsrc"\n    record: always\n  b:\n    url: rtsp://h/b\n    record_days: 3\n  c:\n    url: rtsp://h/c\n    record: sometimes\n  e:\n    url: rtsp://h/e\n    record: always\n    record_days: 0\n',
      ),
    );
    assert.deepEqual(
      wrong.map((e) => [e.path, e.line]),
      [
        ['cameras.a.record', 10],
        ['cameras.b.record_days', 13],
        ['cameras.c.record', 16],
        ['cameras.e.record_days', 20],
      ],
    );
    assert.match(wrong[0]!.message, /lavfi: camera sends no encoded stream to record/);
    assert.match(wrong[1]!.message, /retention of record: always/);
    // Recording always needs the camera's recording: its clips on.
    for (const [body, clips, why] of [
      ['  d:\n    url: rtsp://h/d\n    clips: false\n    record: always\n', true, 'clips: false'],
      ['  d:\n    url: rtsp://h/d\n    record: always\n', false, 'events.clips.enabled is false'],
    ] as const)
      assert.deepEqual(
        errorsOf(cams(body, clips)).map((e) => [e.path, e.message]),
        [
          [
            'cameras.d.record',
            `is always, but the camera keeps no recording: its clips are off (${why}); turn them on`,
          ],
        ],
      );
  });

  it('accepts a minimal file and fills every default', () => {
    const { config } = parseConfig(minimal, '/etc/argus/config.yaml', {});
    assert.equal(
      config.models.default!.path,
      '/etc/argus/m.onnx',
      'model path is relative to the config file',
    );
    assert.equal(config.mqtt.base_topic, 'argus');
    assert.equal(config.mqtt.url, undefined);
    assert.deepEqual(config.mqtt.embedded, {
      host: '127.0.0.1',
      port: 1883,
      max_clients: 100,
      max_message_kb: 256,
      max_retained_messages: 1000,
      max_retained_kb: 4096,
      max_queued_kb: 1024,
      max_behind_s: 10,
      max_connecting: 100,
      connect_timeout_s: 10,
    });
    assert.deepEqual(config.detector.providers, ['cpu']);
    assert.equal(config.scheduler.max_batch, 4);
    assert.equal(config.cache.enabled, true);
    assert.equal(config.events.snapshots.quality, 70, "snapshots' JPEG quality: Frigate's 70 (issue 47)");
    assert.equal(config.http.host, '127.0.0.1');
    assert.deepEqual(config.cameras, Object.create(null), 'no cameras, in a map without a prototype');
    assert.equal(config.models.default!.conf, 0.25);
    assert.deepEqual(Object.keys(config.models), ['default'], 'model: is the model named default');
  });

  it('fills camera defaults', () => {
    const { config } = parseConfig(`${minimal}cameras:\n  gate:\n    url: rtsp://10.0.0.2/s\n`, 'c.yaml', {});
    const gate = config.cameras.gate!;
    assert.equal(gate.enabled, true);
    assert.equal(gate.fps, 5);
    assert.equal(gate.priority, 5);
    assert.equal(gate.rtsp_transport, 'tcp');
    assert.deepEqual(gate.zones, Object.create(null));
  });

  it('validates the shipped example', async () => {
    const { config } = await loadConfig(join(repoRoot, 'config/example.yaml'), {});
    assert.ok(Object.keys(config.cameras).length >= 2);
    assert.equal(config.cameras.front_door?.priority, 8);
    assert.equal(config.cameras.front_door?.zones.porch?.points.length, 4);
  });

  it('reports an unknown key with its line', () => {
    const issues = errorsOf(`${minimal}scheduler:\n  max_batch: 2\n  max_batchh: 3\n`);
    assert.deepEqual(issues, [{ path: 'scheduler.max_batchh', line: 5, message: 'unknown key' }]);
  });

  it('reports an unknown top-level section', () => {
    const issues = errorsOf(`${minimal}detectors:\n  workers: 2\n`);
    assert.deepEqual(issues, [{ path: 'detectors', line: 3, message: 'unknown key' }]);
  });

  it('reports wrong types, naming what was given', () => {
    const issues = errorsOf(`${minimal}cache:\n  enabled: "yes"\n  max_age_s: [1]\n`);
    assert.deepEqual(issues, [
      { path: 'cache.enabled', line: 4, message: 'must be a boolean, not a string' },
      { path: 'cache.max_age_s', line: 5, message: 'must be a number, not a list' },
    ]);
  });

  it('reports out-of-range values', () => {
    const text = `${minimal}  conf: 1.5\nscheduler:\n  max_batch: 0\nhttp:\n  port: 70000\ncameras:\n  a:\n    url: rtsp://h/s\n    fps: 0\n    priority: 11\n`;
    assert.deepEqual(errorsOf(text), [
      { path: 'model.conf', line: 3, message: 'must be at most 1' },
      { path: 'scheduler.max_batch', line: 5, message: 'must be at least 1' },
      { path: 'http.port', line: 7, message: 'must be at most 65535' },
      { path: 'cameras.a.fps', line: 11, message: 'must be at least 0.1' },
      { path: 'cameras.a.priority', line: 12, message: 'must be at most 10' },
    ]);
  });

  it('reports a missing required key at its parent', () => {
    assert.deepEqual(errorsOf('model:\n  conf: 0.3\n'), [
      { path: 'model.path', line: 2, message: 'is required' },
    ]);
    assert.deepEqual(errorsOf(`${minimal}cameras:\n  a:\n    fps: 3\n`), [
      { path: 'cameras.a.url', line: 5, message: 'is required' },
    ]);
  });

  it('reports enum errors with the choices', () => {
    const issues = errorsOf(`${minimal}detector:\n  providers: [cuda, openvino]\n`);
    assert.equal(issues.length, 1);
    assert.equal(issues[0]!.path, 'detector.providers[1]');
    assert.equal(issues[0]!.line, 4);
    assert.match(issues[0]!.message, /must be one of tensorrt, cuda, webgpu, cpu/);
  });

  it('rejects a provider listed twice', () => {
    const issues = errorsOf(`${minimal}detector:\n  providers: [cpu, cpu]\n`);
    assert.equal(issues[0]!.path, 'detector.providers');
    assert.match(issues[0]!.message, /twice/);
  });

  it('rejects bad URLs without echoing them', () => {
    const text = `${minimal}mqtt:\n  url: "http://user:hunter2@broker"\ncameras:\n  a:\n    url: "not a url hunter2"\n  b:\n    url: "ftp://x:hunter2@cam/s"\n`;
    const issues = errorsOf(text);
    assert.deepEqual(
      issues.map((i) => [i.path, i.line]),
      [
        ['mqtt.url', 4],
        ['cameras.a.url', 7],
        ['cameras.b.url', 9],
      ],
    );
    assert.match(issues[0]!.message, /scheme 'http' is not one of mqtt, mqtts, ws, wss/);
    assert.match(issues[1]!.message, /not a valid camera URL/);
    for (const i of issues) assert.doesNotMatch(i.message, /hunter2/);
  });

  it('rejects camera names that cannot be an MQTT topic level, at the name line', () => {
    const cams = ['"a/b"', '"+"', '"#"', '""', '"bad\\u0001"', '"$SYS"', '".."'];
    const text = `${minimal}cameras:\n${cams.map((c) => `  ${c}:\n    url: rtsp://h/s`).join('\n')}\n`;
    const issues = errorsOf(text);
    assert.equal(issues.length, cams.length);
    issues.forEach((issue, i) => {
      assert.equal(issue.line, 4 + 2 * i, `line of ${cams[i]}`);
      assert.match(issue.message, /^name must/);
    });
  });

  it('checks the settings of a badly named camera too', () => {
    const issues = errorsOf(`${minimal}cameras:\n  "a/b":\n    url: rtsp://h/s\n    fps: 0\n`);
    assert.deepEqual(
      issues.map((i) => [i.path, i.line]),
      [
        ['cameras.a/b', 4],
        ['cameras.a/b.fps', 6],
      ],
    );
  });

  it('checks zone and label names too', () => {
    const text = `${minimal}cameras:\n  a:\n    url: rtsp://h/s\n    zones:\n      "x#":\n        points: [[0,0],[1,0],[1,1]]\n    objects:\n      filters:\n        "per+son": { min_score: 0.5 }\n`;
    const issues = errorsOf(text);
    assert.deepEqual(
      issues.map((i) => [i.path, i.line]),
      [
        ['cameras.a.zones.x#', 7],
        ['cameras.a.objects.filters.per+son', 11],
      ],
    );
  });

  it('turns Home Assistant discovery off by default, and keeps its topics apart from Argus', () => {
    assert.deepEqual(parseConfig(minimal, 'c.yaml', {}).config.home_assistant, {
      enabled: false,
      discovery_prefix: 'homeassistant',
      device_name: 'Argus',
      default_labels: ['person'],
    });
    for (const [base, prefix] of [
      ['homeassistant', 'homeassistant'],
      ['home/argus', 'home'],
      ['ha', 'ha/discovery'],
    ]) {
      const text = `${minimal}mqtt:\n  base_topic: ${base}\nhome_assistant:\n  enabled: true\n  discovery_prefix: ${prefix}\n`;
      assert.deepEqual(
        errorsOf(text).map((i) => [i.path, i.line]),
        [['home_assistant.discovery_prefix', 7]],
        `${base} and ${prefix}`,
      );
    }
    const apart = `${minimal}mqtt:\n  base_topic: home/argus\nhome_assistant:\n  enabled: true\n  discovery_prefix: home/ha\n`;
    assert.equal(parseConfig(apart, 'c.yaml', {}).config.home_assistant.discovery_prefix, 'home/ha');
    assert.match(
      errorsOf(`${minimal}home_assistant:\n  discovery_prefix: 'a/#'\n`)[0]!.message,
      /each level/,
    );
  });

  it('reports every error at once, in line order', () => {
    const text = `${minimal}  bogus: 1\nscheduler:\n  max_wait_ms: -1\ncameras:\n  x:\n    url: rtsp://h/s\n    zones:\n      z:\n        points: [[0, 0], [1, 1]]\n`;
    const issues = errorsOf(text);
    assert.deepEqual(
      issues.map((i) => i.line),
      [3, 5, 11],
    );
    assert.match(issues[2]!.message, /at least 3 items/);
  });

  it('substitutes ${ENV} and reports unset variables with their line', () => {
    const text = `${minimal}mqtt:\n  url: mqtt://broker:1883\n  username: \${MQ_USER}\n  password: \${MQ_PASS}\ncameras:\n  a:\n    url: rtsp://u:\${CAM_PW}@h/s\n`;
    const ok = parseConfig(text, 'c.yaml', { MQ_USER: 'argus', MQ_PASS: 's3cret!', CAM_PW: 'p%40ss' });
    assert.equal(ok.config.mqtt.username, 'argus');
    assert.equal(ok.config.mqtt.password, 's3cret!');
    assert.equal(ok.config.cameras.a!.url, 'rtsp://u:p%40ss@h/s');
    assert.deepEqual(ok.secrets.sort(), ['argus', 'p%40ss', 'p@ss', 's3cret!']);
    const issues = errorsOf(text, { MQ_USER: 'argus' });
    assert.deepEqual(issues, [
      { path: 'mqtt.password', line: 6, message: 'environment variable MQ_PASS is not set' },
      { path: 'cameras.a.url', line: 9, message: 'environment variable CAM_PW is not set' },
    ]);
  });

  it("takes the embedded broker's subscriber login from ${ENV}, its password as a secret, and wants both or neither", () => {
    const text = `${minimal}mqtt:\n  embedded:\n    username: viewer\n    password: \${VIEWER_PW}\n`;
    const ok = parseConfig(text, 'c.yaml', { VIEWER_PW: 'Sub-Secret-5' });
    assert.equal(ok.config.mqtt.embedded.password, 'Sub-Secret-5');
    assert.deepEqual(ok.secrets, ['Sub-Secret-5']);
    assert.deepEqual(errorsOf(`${minimal}mqtt:\n  embedded:\n    username: viewer\n`), [
      {
        path: 'mqtt.embedded.password',
        line: 5,
        message: 'username and password go together: set both, or neither',
      },
    ]);
  });

  it('takes every substituted value as a secret, wherever it is, and every URL password', () => {
    const text = [
      minimal,
      'mqtt:',
      '  url: mqtt://bridge:Br0ker-pw@broker:1883',
      '  client_id: ${CLIENT}',
      'cameras:',
      '  a:',
      '    url: rtsp://${CAM_USER}:${CAM_PW}@${CAM_HOST}:554/${CAM_PATH}?token=${TOKEN}#${FRAG}',
      '  b:',
      '    url: rtsp://viewer:p%zz@h/s',
      '',
    ].join('\n');
    const env = {
      CLIENT: 'argus-7',
      CAM_USER: 'op@site',
      CAM_PW: 'Stro@ng:Pw',
      CAM_HOST: 'cam-17.internal',
      CAM_PATH: 'live/main',
      TOKEN: 'a&b=c%2F',
      FRAG: 'frag-1',
    };
    const ok = parseConfig(text, 'c.yaml', env);
    assert.equal(
      ok.config.cameras.a!.url,
      'rtsp://op@site:Stro@ng:Pw@cam-17.internal:554/live/main?token=a&b=c%2F#frag-1',
    );
    assert.deepEqual(
      ok.secrets.sort(),
      [...Object.values(env), 'Br0ker-pw', 'p%zz'].sort(),
      'a password that is not valid percent-encoding is kept as written',
    );
  });

  it('never echoes a substituted value in an error', () => {
    const issues = errorsOf(`${minimal}mqtt:\n  url: \${SCHEME}://broker\n`, { SCHEME: 'secret-scheme' });
    assert.deepEqual(
      issues.map((i) => i.message),
      ["MQTT URL scheme '***' is not one of mqtt, mqtts, ws, wss"],
    );
  });

  it('reads ${credential:NAME} from the systemd credentials directory, as a secret', async (t) => {
    const { mkdtemp, writeFile, rm } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const dir = await mkdtemp(join(tmpdir(), 'argus-cred-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    await writeFile(join(dir, 'mqtt_password'), 'from-systemd\n');
    const text = `${minimal}mqtt:\n  url: mqtt://b:1883\n  password: \${credential:mqtt_password}\n`;
    const ok = parseConfig(text, 'c.yaml', { CREDENTIALS_DIRECTORY: dir });
    assert.equal(ok.config.mqtt.password, 'from-systemd');
    assert.deepEqual(ok.secrets, ['from-systemd']);
    assert.match(errorsOf(text, {})[0]!.message, /CREDENTIALS_DIRECTORY is not set/);
    assert.match(
      errorsOf(text.replace('mqtt_password', 'other'), { CREDENTIALS_DIRECTORY: dir })[0]!.message,
      /credential other cannot be read/,
    );
  });

  it('keeps $${ as a literal', () => {
    const { config } = parseConfig(`${minimal}mqtt:\n  client_id: "a$\${b}"\n`, 'c.yaml', {});
    assert.equal(config.mqtt.client_id, 'a${b}');
  });

  it('treats an empty section as unset', () => {
    const { config } = parseConfig(`${minimal}ffmpeg:\ncache:\n`, 'c.yaml', {});
    assert.equal(config.ffmpeg.path, undefined);
    assert.equal(config.cache.max_distance, 2);
  });

  it('reports YAML syntax errors with a line', () => {
    const issues = errorsOf(`${minimal}cameras:\n  a: [unclosed\n`);
    assert.equal(issues.length >= 1, true);
    assert.match(issues[0]!.message, /^YAML:/);
    assert.equal(typeof issues[0]!.line, 'number');
  });

  it('reports duplicate keys', () => {
    const issues = errorsOf(`${minimal}scheduler:\n  max_batch: 2\n  max_batch: 3\n`);
    assert.equal(issues[0]!.line, 5);
    assert.match(issues[0]!.message, /given twice in one mapping \(first on line \d+\)/);
  });

  it('rejects an empty file and a non-mapping', () => {
    assert.deepEqual(errorsOf(''), [{ path: '', message: 'the file is empty' }]);
    assert.deepEqual(errorsOf('- a\n- b\n'), [
      { path: '', line: 1, message: 'the top level must be a mapping of sections' },
    ]);
  });

  it('says when the file cannot be read', async () => {
    await assert.rejects(loadConfig('/nonexistent/argus.yaml'), (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.match(
        err.format(),
        /^\/nonexistent\/argus\.yaml: cannot read the config file \(no such file\)$/,
      );
      return true;
    });
  });

  it('reads named models, local and remote: paths relative to the file, headers and URL passwords secret', () => {
    const text = [
      'models:',
      '  default:',
      '    path: m.onnx',
      '    labels: m.txt',
      '  gpus:',
      '    path: /opt/big.onnx',
      '    providers: [cuda, cpu]',
      '    device_ids: [0, 1]',
      '  plates:',
      '    remote:',
      '      url: https://argus:${PW}@gpu-box:8000',
      '      model: yolov8n_plates',
      '      headers: { Authorization: "Bearer ${TOKEN}", X-Site: plain-header-value }',
      '      ca: certs/ca.pem',
      '    conf: 0.4',
      'cameras:',
      '  gate:',
      '    url: rtsp://h/s',
      '    model: plates',
      '  yard:',
      '    url: rtsp://h/y',
      '',
    ].join('\n');
    const { config, secrets } = parseConfig(text, '/etc/argus/a.yaml', {
      PW: 'pw-secret',
      TOKEN: 'tok-secret',
    });
    assert.deepEqual(Object.keys(config.models), ['default', 'gpus', 'plates']);
    assert.equal(config.models.default!.labels, '/etc/argus/m.txt');
    assert.deepEqual(config.models['gpus']!.device_ids, [0, 1]);
    const plates = config.models['plates']!;
    assert.equal(plates.path, undefined);
    assert.deepEqual(
      [
        plates.remote?.ca,
        plates.remote?.timeout_ms,
        plates.remote?.retries,
        plates.remote?.in_flight,
        plates.conf,
      ],
      ['/etc/argus/certs/ca.pem', 5000, 2, 2, 0.4],
    );
    assert.deepEqual([config.cameras.gate!.model, config.cameras.yard!.model], ['plates', 'default']);
    for (const s of ['pw-secret', 'tok-secret', 'Bearer tok-secret', 'plain-header-value'])
      assert.ok(secrets.includes(s), `${s} is a secret`);
  });

  it('names what is wrong with a model, and a camera model that does not exist, at its line', () => {
    const issues = errorsOf(
      [
        'model:',
        '  path: m.onnx',
        'models:',
        '  default:',
        '    path: other.onnx',
        '  both:',
        '    path: x.onnx',
        '    remote: { url: "http://h:8000", model: x }',
        '  neither:',
        '    conf: 0.5',
        '  far:',
        '    remote: { url: "ftp://h", model: x }',
        '    device_ids: [0]',
        'cameras:',
        '  gate:',
        '    url: rtsp://h/s',
        '    model: plats',
        '',
      ].join('\n'),
    ).map((i) => `${i.line}: ${i.path}: ${i.message}`);
    assert.deepEqual(issues, [
      '4: models.default: the model named default is also defined by model:; keep one of them',
      '8: models.both.remote: a model is either a local file (path) or remote, not both',
      '9: models.neither: needs path (a local ONNX file) or remote (a KServe v2 server)',
      "12: models.far.remote.url: KServe URL scheme 'ftp' is not one of http, https",
      '13: models.far.device_ids: only for a local model (path): a remote model runs as its server says',
      "17: cameras.gate.model: there is no model named 'plats'; the models are default, both, neither, far",
    ]);
  });

  it('wants a model, and one named default for cameras that name none', () => {
    assert.deepEqual(
      errorsOf('mqtt: {}\n').map((i) => `${i.path}: ${i.message}`),
      ['model: is required: set model: (the default model), or name models under models:'],
    );
    assert.deepEqual(
      errorsOf('models:\n  plates:\n    path: p.onnx\ncameras:\n  gate:\n    url: rtsp://h/s\n').map(
        (i) => `${i.line}: ${i.path}: ${i.message}`,
      ),
      [
        "6: cameras.gate.model: there is no model named 'default' (a camera without model: uses default); the models are plates",
      ],
    );
  });

  it('takes __proto__, constructor and toString as names like any other, checked and kept', () => {
    const names = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf'];
    const cams = names.flatMap((n) => [
      `  ${n}:`,
      '    url: rtsp://h/s',
      `    zones:`,
      `      ${n}:`,
      '        points: [[0,0],[9,0],[9,9]]',
    ]);
    const { config } = parseConfig(`${minimal}cameras:\n${cams.join('\n')}\n`, 'c.yaml', {});
    assert.deepEqual(Object.keys(config.cameras), names);
    assert.equal(Object.getPrototypeOf(config.cameras), null);
    for (const n of names) {
      assert.ok(Object.hasOwn(config.cameras, n), n);
      assert.deepEqual(Object.keys(config.cameras[n]!.zones), [n]);
    }
    assert.equal(config.cameras.missing, undefined, 'a name not given is not found in a prototype');
    // A value under such a name is checked as any other: `fps: 999` was dropped unreported.
    const bad = `${minimal}cameras:\n  __proto__:\n    url: rtsp://h/s\n    fps: 999\nmodels:\n  __proto__:\n    path: x.onnx\n    conf: 7\n`;
    assert.deepEqual(
      errorsOf(bad).map((i) => `${i.line}: ${i.path}: ${i.message}`),
      ['6: cameras.__proto__.fps: must be at most 60', '10: models.__proto__.conf: must be at most 1'],
    );
  });

  it('refuses an alias bomb in one line, at the first alias', () => {
    const bomb = [
      'a: &a [x, x, x, x, x, x, x, x, x, x]',
      'b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]',
      'c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]',
      'd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]',
      'e: [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]',
    ].join('\n');
    const issues = errorsOf(bomb);
    assert.equal(issues.length, 1);
    assert.equal(issues[0]!.line, 2);
    assert.match(issues[0]!.message, /^YAML: its aliases \(\*name\) expand to more than 100 copies/);
    // A few aliases are still fine.
    const { config } = parseConfig(
      `${minimal}cameras:\n  a: &cam\n    url: rtsp://h/s\n  b: *cam\n`,
      'c.yaml',
      {},
    );
    assert.deepEqual(Object.keys(config.cameras), ['a', 'b']);
  });

  it('refuses nesting deeper than 64 levels and keys that are not names, each in one line', () => {
    assert.deepEqual(errorsOf(`a: ${'['.repeat(40000)}${']'.repeat(40000)}\n`), [
      { path: '', line: 1, message: 'YAML: nested more than 64 levels deep' },
    ]);
    assert.deepEqual(errorsOf(`${minimal}? [a, b]\n: 1\n`), [
      { path: '', line: 3, message: 'a key must be a plain name, not a list or a mapping' },
    ]);
  });

  it('turns any text into a config or a ConfigError, never another exception', () => {
    const yamlish = fc.stringMatching(/^[\w\s:[\]{}\-&*!|>'",#%@`?.\\$]{0,200}$/);
    const mapping = fc.dictionary(
      fc.constantFrom('model', 'cameras', 'mqtt', '__proto__', 'constructor', 'a'),
      fc.jsonValue(),
    );
    fc.assert(
      fc.property(
        fc.oneof(
          yamlish,
          mapping.map((m) => stringify(m)),
        ),
        (text) => {
          try {
            parseConfig(text, 'fuzz.yaml', {});
          } catch (err) {
            if (!(err instanceof ConfigError)) throw err;
            for (const i of err.issues) assert.equal(typeof i.message, 'string');
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it('refuses more entries than its limits, in one error at the key, and files above 4 MiB unread', () => {
    const cams = Array.from({ length: LIMITS.cameras + 1 }, (_, i) => `  c${i}:\n    url: rtsp://h/s${i}`);
    const issues = errorsOf(`${minimal}cameras:\n${cams.join('\n')}\n`);
    assert.deepEqual(issues, [
      {
        path: 'cameras',
        line: 3,
        message: `has ${LIMITS.cameras + 1} cameras; at most ${LIMITS.cameras} are allowed (docs/config.md, "Limits")`,
      },
    ]);
    const zones = Array.from(
      { length: LIMITS.zones + 1 },
      (_, i) => `      z${i}: { points: [[0,0],[9,0],[9,9]] }`,
    );
    assert.match(
      errorsOf(`${minimal}cameras:\n  a:\n    url: rtsp://h/s\n    zones:\n${zones.join('\n')}\n`)[0]!
        .message,
      /has 101 zones; at most 100/,
    );
    const big = `${minimal}# ${'x'.repeat(MAX_CONFIG_BYTES)}\n`;
    assert.deepEqual(errorsOf(big), [
      { path: '', message: 'the file is 4.0 MiB; a config may be at most 4 MiB (docs/config.md, "Limits")' },
    ]);
  });

  it('finds duplicate keys in many cameras, each at its line', () => {
    const cams = Array.from({ length: LIMITS.cameras }, (_, i) => `  c${i % 500}:\n    url: rtsp://h/s`);
    const issues = errorsOf(`${minimal}cameras:\n${cams.join('\n')}\n`);
    assert.equal(issues.length, 500);
    assert.deepEqual(issues[0], {
      path: '',
      line: 4 + 2 * 500,
      message: "'c0' is given twice in one mapping (first on line 4)",
    });
  });

  it('refuses a zone whose points enclose no area', () => {
    const text = `${minimal}cameras:\n  a:\n    url: rtsp://h/s\n    zones:\n      flat:\n        points: [[0,0],[5,5],[10,10]]\n`;
    assert.deepEqual(errorsOf(text), [
      {
        path: 'cameras.a.zones.flat.points',
        line: 8,
        message: 'the points enclose no area (they are all on one line): no object could ever be inside',
      },
    ]);
  });

  it('refuses, each at its line, the shapes the runtime cannot use: crossing polygons, degenerate calibrations, distances out of range', () => {
    const zone = (name: string, points: string, distances?: string): string[] => [
      `      ${name}:`,
      `        points: ${points}`,
      ...(distances ? [`        distances: ${distances}`] : []),
    ];
    const text = [
      minimal.trimEnd(),
      'cameras:',
      '  a:',
      '    url: rtsp://h/s',
      '    objects:',
      '      mask:',
      '        - [[0, 0], [10, 10], [10, 0], [0, 10]]',
      '    zones:',
      ...zone('bow', '[[0, 0], [10, 10], [10, 0], [0, 10]]'),
      ...zone('twice', '[[0, 0], [10, 0], [10, 0], [0, 10]]', '[4, 5, 4, 5]'),
      ...zone('straight', '[[0, 0], [10, 0], [20, 0], [0, 10]]', '[4, 5, 4, 5]'),
      ...zone('dent', '[[0, 0], [10, 0], [2, 2], [0, 10]]', '[4, 5, 4, 5]'),
      ...zone('tiny', '[[0, 0], [10, 0], [10, 10], [0, 10]]', '[1e-300, 5, 1e300, 5]'),
      ...zone('closed', '[[0, 0], [10, 0], [10, 10], [0, 0]]'),
      '',
    ].join('\n');
    const crossing =
      'the polygon crosses itself (the sides from point 1 and from point 3 meet): list the points in order around the area, without a bow-tie';
    assert.deepEqual(
      errorsOf(text).map((i) => `${i.line}: ${i.path}: ${i.message}`),
      [
        `8: cameras.a.objects.mask[0]: ${crossing}`,
        `11: cameras.a.zones.bow.points: ${crossing}`,
        '13: cameras.a.zones.twice.points: points 2 and 3 are the same point: a calibrated zone needs four distinct corners',
        '16: cameras.a.zones.straight.points: points 1, 2, 3 are on one line: a calibrated zone needs four corners of a quadrilateral',
        '19: cameras.a.zones.dent.points: the four points do not make a convex quadrilateral (a side crosses another, or one corner points inwards): give the corners of the patch of ground in order around it',
        '23: cameras.a.zones.tiny.distances[0]: must be at least 0.1',
        '23: cameras.a.zones.tiny.distances[2]: must be at most 10000',
      ],
      'a polygon closed onto its first point is one polygon, not a crossing',
    );
  });

  it('refuses a file of more than MAX_NODES nodes before parsing it, at the line where they pass it (a 100,000-point mask)', () => {
    const points = Array.from({ length: 100_000 }, (_, i) => `[${i % 1000}, ${Math.floor(i / 1000)}]`);
    const text = `${minimal}cameras:\n  a:\n    url: rtsp://h/s\n    cache_mask:\n      - [${points.join(', ')}]\n`;
    assert.deepEqual(errorsOf(text), [
      {
        path: '',
        line: 7,
        message: `YAML: the file holds more than ${MAX_NODES} keys, values and list items (docs/config.md, "Limits")`,
      },
    ]);
    const fewer = `${minimal}cameras:\n  a:\n    url: rtsp://h/s\n    cache_mask:\n      - [${points.slice(0, LIMITS.points + 1).join(', ')}]\n`;
    assert.deepEqual(errorsOf(fewer), [
      { path: 'cameras.a.cache_mask[0]', line: 7, message: `must have at most ${LIMITS.points} items` },
    ]);
  });

  it('formats issues as file:line: path: message', () => {
    const err = new ConfigError('c.yaml', [{ path: 'a.b', line: 3, message: 'is required' }]);
    assert.equal(err.format(), 'c.yaml:3: a.b: is required');
  });
});

describe('topicLevelProblem', () => {
  it('accepts ordinary names, including spaces inside and unicode', () => {
    for (const ok of ['front_door', 'Cam-2', 'back yard', 'café'])
      assert.equal(topicLevelProblem(ok), undefined, ok);
  });
  it('rejects wildcards, separators, control characters and reserved forms', () => {
    for (const bad of [
      '',
      'a/b',
      '+',
      'a#',
      'x\u0000',
      'tab\t',
      '$SYS',
      '.',
      '..',
      ' lead',
      'x'.repeat(65),
    ]) {
      assert.notEqual(topicLevelProblem(bad), undefined, JSON.stringify(bad));
    }
  });
});
