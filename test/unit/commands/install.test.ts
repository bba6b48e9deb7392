import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  freeDynamicId,
  hiddenFromService,
  nextSteps,
  parseEnvFile,
  renderConfig,
  renderUnit,
  unitPathProblem,
} from '../../../src/commands/install.js';
import { repoRoot } from '../../helpers/env.js';

const template = readFileSync(join(repoRoot, 'systemd/argus.service'), 'utf8');
const directives = (unit: string): string[] => unit.split('\n').filter((l) => /^[A-Za-z]+=/.test(l));

describe('renderUnit', () => {
  const paths = { appDir: '/srv/argus', node: '/usr/local/bin/node', hasGroup: () => true };

  it('points every path at the checkout and the node it runs from', () => {
    const unit = renderUnit(template, paths);
    assert.doesNotMatch(unit, /\/opt\/argus|\/usr\/bin\/node/);
    const exec = directives(unit).filter((l) => l.startsWith('ExecStart'));
    assert.deepEqual(exec, [
      'ExecStartPre=/usr/local/bin/node /srv/argus/dist/src/cli.js validate -c /etc/argus/argus.yaml',
      'ExecStart=/usr/local/bin/node /srv/argus/dist/src/cli.js run -c /etc/argus/argus.yaml',
    ]);
    assert.ok(directives(unit).includes('ReadOnlyPaths=/srv/argus /etc/argus'));
  });

  it('changes nothing else but the header', () => {
    const unit = renderUnit(template, { appDir: '/opt/argus', node: '/usr/bin/node', hasGroup: () => true });
    assert.deepEqual(directives(unit), directives(template));
    assert.match(unit, /^# Written by `argus install` from \/opt\/argus\/systemd\/argus.service/);
    assert.doesNotMatch(unit, /npm ci/);
  });

  it('names only the supplementary groups that exist (systemd refuses to start with a missing one)', () => {
    const only = (name: string) => renderUnit(template, { ...paths, hasGroup: (g) => g === name });
    assert.ok(directives(only('video')).includes('SupplementaryGroups=video'));
    const none = renderUnit(template, { ...paths, hasGroup: () => false });
    assert.ok(!directives(none).some((l) => l.startsWith('SupplementaryGroups=')));
    assert.match(none, /^# SupplementaryGroups=video render: no such groups on this machine$/m);
  });
});

describe('renderConfig', () => {
  const config = renderConfig(readFileSync(join(repoRoot, 'config/demo.yaml'), 'utf8'), '/srv/argus');

  it('makes the demo’s model path absolute: relative paths are relative to the config file', () => {
    assert.match(config, /^ {2}path: \/srv\/argus\/models\/argus-fixture\.onnx$/m);
    assert.doesNotMatch(config, /^\s*path: \.\.\//m);
  });

  it('says where it came from and where every key is, instead of how to run the demo', () => {
    assert.match(config, /^# Written by `argus install` from \/srv\/argus\/config\/demo\.yaml/);
    assert.match(config, /^# is in \/srv\/argus\/config\/example\.yaml\./m);
    assert.doesNotMatch(config, /npx argus run/);
  });
});

describe('paths', () => {
  it('refuses what a unit file would need quoted', () => {
    assert.equal(unitPathProblem('/opt/argus-1.2/x_y+z@w'), undefined);
    assert.match(unitPathProblem('opt/argus') ?? '', /not an absolute path/);
    assert.match(unitPathProblem('/opt/my argus') ?? '', /quoted or escaped/);
    assert.match(unitPathProblem('/opt/100%') ?? '', /quoted or escaped/);
  });

  it('warns of paths the sandbox hides', () => {
    assert.equal(hiddenFromService('/opt/argus'), undefined);
    assert.equal(hiddenFromService('/homestead/argus'), undefined);
    assert.match(hiddenFromService('/home/me/argus') ?? '', /ProtectHome=yes/);
    assert.match(hiddenFromService('/root/.nvm/versions/node/v20/bin/node') ?? '', /ProtectHome=yes/);
    assert.match(hiddenFromService('/tmp/argus') ?? '', /PrivateTmp=yes/);
    assert.match(hiddenFromService('/var/tmp/argus') ?? '', /PrivateTmp=yes/);
  });
});

describe('parseEnvFile', () => {
  it('reads NAME=value lines as systemd’s EnvironmentFile= does, in its plain form', () => {
    const text = [
      '# a comment',
      '; another',
      '',
      'MQTT_PASSWORD=s3cr=t',
      '  SPACED = padded  ',
      'DOUBLE="two words"',
      "SINGLE='x'",
      'EMPTY=',
      'not a line',
    ].join('\n');
    assert.deepEqual(parseEnvFile(text), {
      MQTT_PASSWORD: 's3cr=t',
      SPACED: 'padded',
      DOUBLE: 'two words',
      SINGLE: 'x',
      EMPTY: '',
    });
  });
});

describe('freeDynamicId', () => {
  it('takes the first id of systemd’s dynamic range that no user or group has', () => {
    assert.equal(freeDynamicId('root:x:0:0::/root:/bin/sh\n', 'root:x:0:\n'), 61184);
    assert.equal(freeDynamicId('a:x:61184:61184::/:/bin/false\n', 'b:x:61185:\n'), 61186);
  });
});

describe('nextSteps', () => {
  it('starts the service below /, and says where and how below another root', () => {
    assert.deepEqual(nextSteps('/'), [
      'next: systemctl enable --now argus && journalctl -u argus -f',
      'then put your cameras and model in /etc/argus/argus.yaml (secrets in /etc/argus/argus.env): systemctl reload argus',
    ]);
    const staged = nextSteps('/srv/image');
    assert.deepEqual(staged, [
      'next: put your cameras and model in /srv/image/etc/argus/argus.yaml (secrets in /srv/image/etc/argus/argus.env)',
      'then, on the system /srv/image becomes: systemctl daemon-reload && systemctl enable --now argus (or from here, to start at its next boot: systemctl --root=/srv/image enable argus)',
    ]);
    // Nothing that would act on this machine's own service.
    assert.ok(staged.every((l) => !/^next: systemctl|systemctl reload/.test(l)));
  });
});
