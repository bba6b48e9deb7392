import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { chmod } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { CONFIG_FILE, ENV_FILE, freeDynamicId, UNIT_FILE } from '../../src/commands/install.js';
import { tempDir } from '../helpers/env.js';

const has = (command: string, ...args: string[]): boolean => spawnSync(command, args).status === 0;
const skip =
  process.getuid?.() !== 0
    ? 'not root: the install test (a fresh clone, checked as an unprivileged uid) skipped'
    : !has('git', '--version')
      ? 'git not found: the install test skipped'
      : !has('setpriv', '--version')
        ? 'setpriv not found (util-linux): the install test skipped'
        : false;
const hasAnalyze = has('systemd-analyze', '--version');

/** The environment without what `npm test` sets for its script (npm_*), which would steer a nested npm. */
const cleanEnv = (): NodeJS.ProcessEnv =>
  Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_|^INIT_CWD$/i.test(k)));

interface Ran {
  code: number | null;
  output: string;
}

function run(
  command: string,
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<Ran> {
  return new Promise((done, fail) => {
    const child = spawn(command, args, { cwd: opts.cwd ?? '/', env: opts.env ?? cleanEnv() });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('error', fail);
    child.on('close', (code) => done({ code, output }));
  });
}

const mode = (path: string): number => statSync(path).mode & 0o777;
const literal = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe(
  'install: the operator sequence (docs/operations.md) on a fresh clone',
  { skip, timeout: 600_000 },
  () => {
    it('npm ci without warnings, npm prune --omit=dev, argus install --root: the service’s user reads the config', async (t) => {
      const dir = await tempDir(t);
      await chmod(dir, 0o755); // mkdtemp's 0700 would keep the unprivileged uid out
      const top = spawnSync('git', ['rev-parse', '--show-toplevel'], {
        cwd: dirname(fileURLToPath(import.meta.url)),
        encoding: 'utf8',
      }).stdout.trim();
      const app = join(dir, 'argus');
      const clone = await run('git', ['clone', '--quiet', top, app]);
      assert.equal(clone.code, 0, clone.output);

      const ci = await run('npm', ['ci', '--prefer-offline', '--no-audit', '--no-fund'], { cwd: app });
      assert.equal(ci.code, 0, ci.output);
      assert.deepEqual(
        ci.output.split('\n').filter((l) => /^npm warn/i.test(l)),
        [],
        'npm ci printed warnings',
      );
      // A rebuild (npm test's pretest) keeps the bin executable, for npx argus.
      const build = await run('npm', ['run', 'build'], { cwd: app });
      assert.equal(build.code, 0, build.output);
      assert.equal(
        mode(join(app, 'dist/src/cli.js')) & 0o111,
        0o111,
        'dist/src/cli.js lost its execute bits',
      );

      const prune = await run('npm', ['prune', '--omit=dev', '--no-audit', '--no-fund'], { cwd: app });
      assert.equal(prune.code, 0, prune.output);
      assert.ok(
        !existsSync(join(app, 'node_modules/typescript')),
        'npm prune --omit=dev left the dev dependencies',
      );
      assert.ok(existsSync(join(app, 'dist/src/cli.js')), 'npm prune --omit=dev removed dist/');
      assert.ok(
        existsSync(join(app, 'models/argus-fixture.onnx')),
        'npm prune --omit=dev removed the fixture model',
      );
      // Without TypeScript a build (npx argus runs prepare, hence one) fails, and leaves dist/ alone.
      const unbuilt = await run('npm', ['run', 'build'], { cwd: app });
      assert.notEqual(unbuilt.code, 0, unbuilt.output);
      assert.match(unbuilt.output, /TypeScript is not installed/);
      await run('npx', ['argus', '--version'], { cwd: app });
      assert.ok(existsSync(join(app, 'dist/src/cli.js')), 'a build without TypeScript removed dist/');

      const root = join(dir, 'root');
      const cli = join(app, 'dist/src/cli.js');
      const install = () => run(process.execPath, [cli, 'install', '--root', root]);
      const installed = await install();
      assert.equal(installed.code, 0, installed.output);
      assert.match(installed.output, /checked as uid \d+: .*argus\.yaml: valid;/);
      assert.match(installed.output, /checked as uid \d+: .*ffmpeg runs/);
      assert.ok(
        installed.output.includes(`systemctl --root=${root} enable argus`),
        `the next steps are for the root it installed in: ${installed.output}`,
      );
      assert.doesNotMatch(installed.output, /^next: systemctl enable --now argus/m);
      assert.match(
        installed.output,
        /PrivateTmp=yes/,
        'no warning that the service cannot see a checkout in /tmp',
      );

      const [unit, config, env] = [UNIT_FILE, CONFIG_FILE, ENV_FILE].map((f) => join(root, f)) as [
        string,
        string,
        string,
      ];
      assert.deepEqual([mode(unit), mode(config), mode(env)], [0o644, 0o644, 0o600]);
      assert.match(
        readFileSync(unit, 'utf8'),
        new RegExp(
          `^ExecStart=${literal(`${process.execPath} ${cli}`)} run -c /etc/argus/argus\\.yaml$`,
          'm',
        ),
      );
      assert.match(
        readFileSync(config, 'utf8'),
        new RegExp(`^  path: ${literal(app)}/models/argus-fixture\\.onnx$`, 'm'),
      );

      // As the service would: an unprivileged uid with no groups, systemd's environment.
      const uid = String(
        freeDynamicId(readFileSync('/etc/passwd', 'utf8'), readFileSync('/etc/group', 'utf8')),
      );
      const asService = () =>
        run(
          'setpriv',
          [
            '--reuid',
            uid,
            '--regid',
            uid,
            '--clear-groups',
            '--',
            process.execPath,
            cli,
            'validate',
            '-c',
            config,
          ],
          {
            env: { PATH: '/usr/bin:/bin', HOME: '/' },
          },
        );
      const validated = await asService();
      assert.equal(validated.code, 0, validated.output);
      assert.match(validated.output, /argus\.yaml: valid;/);

      if (hasAnalyze) {
        const verified = await run('systemd-analyze', ['verify', unit]);
        assert.equal(verified.code, 0, verified.output);
      } else t.diagnostic('systemd-analyze not found: the installed unit was not verified');

      // The bug put back: a config only root can read (install -m 0640, as the unit once said).
      await chmod(config, 0o640);
      const refused = await asService();
      assert.notEqual(refused.code, 0, refused.output);
      assert.match(refused.output, /permission denied/);
      const again = await install();
      assert.equal(again.code, 1, again.output);
      assert.match(again.output, /is 0640: the service's dynamic user cannot read it/);
    });
  },
);
