import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError, loadConfig } from '../config/index.js';
import { defaultFfmpegPath } from '../ingest/index.js';

/** Where the files go, below `--root` (DESTDIR-style; the files' contents name the final paths). */
export const UNIT_FILE = '/etc/systemd/system/argus.service';
export const CONFIG_FILE = '/etc/argus/argus.yaml';
export const ENV_FILE = '/etc/argus/argus.env';

/** systemd's range for DynamicUser= ids: the check runs as one of them that no one has. */
const DYNAMIC_IDS = { first: 61184, last: 65519 };

const ENV_TEMPLATE = `# Secrets for /etc/argus/argus.yaml, one NAME=value a line, referenced there as \${NAME}
# (e.g. MQTT_PASSWORD=…). systemd reads this file as root (EnvironmentFile=): keep it 0600.
`;

export interface UnitPaths {
  /** The Argus checkout the unit runs, e.g. /opt/argus. */
  appDir: string;
  /** The node binary, e.g. /usr/bin/node. */
  node: string;
  /** Whether a group of that name exists here: systemd refuses to start a unit naming one that does not. */
  hasGroup: (name: string) => boolean;
}

/**
 * systemd/argus.service, written for /opt/argus and /usr/bin/node, with those paths rewritten, only
 * the supplementary groups that exist, and its header (how to install it) replaced by where it came from.
 */
export function renderUnit(template: string, { appDir, node, hasGroup }: UnitPaths): string {
  const header =
    `# Written by \`argus install\` from ${appDir}/systemd/argus.service, which running it again\n` +
    '# overwrites: put changes in a drop-in (systemctl edit argus).\n';
  return template
    .replace(/^(?:#.*\n)*/, header)
    .replace(/\/opt\/argus(?=[/\s]|$)/gm, appDir)
    .replace(/^(Exec[A-Za-z]*=[-+!@:]*)\/usr\/bin\/node(?= )/gm, `$1${node}`)
    .replace(/^SupplementaryGroups=(.*)$/m, (_line, groups: string) => {
      const all = groups.split(/\s+/).filter(Boolean);
      const kept = all.filter(hasGroup);
      return kept.length > 0
        ? `SupplementaryGroups=${kept.join(' ')}`
        : `# SupplementaryGroups=${all.join(' ')}: no such groups on this machine`;
    });
}

/**
 * config/demo.yaml for /etc/argus: it runs as it is (the fixture model, synthetic cameras, the
 * embedded broker on localhost), so a fresh install is a running service; its header replaced by
 * where to go from there, and its `../models/` paths made absolute (they are relative to the file).
 */
export function renderConfig(demo: string, appDir: string): string {
  const header =
    `# Written by \`argus install\` from ${appDir}/config/demo.yaml: Argus' generated test model and two\n` +
    '# synthetic cameras, so that the service runs as installed. Replace them with your cameras and\n' +
    `# model (absolute paths: relative ones are relative to this file); every key, with its default,\n` +
    `# is in ${appDir}/config/example.yaml. Secrets go in /etc/argus/argus.env, as \${NAME} here.\n`;
  return demo.replace(/^(?:#.*\n)*/, header).replace(/^(\s*path:\s*)\.\.\/models\//gm, `$1${appDir}/models/`);
}

/** Why a path cannot be written into a unit file as it is, if it cannot. */
export function unitPathProblem(path: string): string | undefined {
  if (!path.startsWith('/')) return `${path} is not an absolute path`;
  if (!/^[A-Za-z0-9._/+@-]+$/.test(path))
    return `${path} has characters a unit file would need quoted or escaped (spaces, %, …): use another directory`;
  return undefined;
}

/** Why the service would not see a path that the installing user sees, if it would not. */
export function hiddenFromService(path: string): string | undefined {
  const under = (dir: string): boolean => path === dir || path.startsWith(`${dir}/`);
  if (['/home', '/root', '/run/user'].some(under))
    return `${path} is in a home directory, which ProtectHome=yes hides from the service`;
  if (['/tmp', '/var/tmp'].some(under))
    return `${path} is in /tmp or /var/tmp, of which PrivateTmp=yes gives the service its own, empty`;
  return undefined;
}

/** An EnvironmentFile= in its plain form: NAME=value lines, # and ; comments, optional quotes. */
export function parseEnvFile(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    const eq = line.indexOf('=');
    if (!line || line.startsWith('#') || line.startsWith(';') || eq < 1) continue;
    let value = line.slice(eq + 1).trim();
    if (value.length >= 2 && (value[0] === '"' || value[0] === "'") && value.endsWith(value[0]))
      value = value.slice(1, -1);
    env[line.slice(0, eq).trim()] = value;
  }
  return env;
}

/** The first id of systemd's dynamic range that is neither a user's nor a group's in these files. */
export function freeDynamicId(passwd: string, group: string): number {
  const taken = new Set(
    [passwd, group].flatMap((text) => text.split('\n').map((l) => Number(l.split(':')[2]))),
  );
  for (let id = DYNAMIC_IDS.first; id <= DYNAMIC_IDS.last; id++) if (!taken.has(id)) return id;
  throw new Error('no free id in systemd’s dynamic user range');
}

interface Ran {
  code: number | null;
  output: string;
}

/** Runs a command as `uid` (its own group, no others: libuv drops supplementary groups), or as we are when undefined. */
function runAs(
  uid: number | undefined,
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<Ran> {
  return new Promise((done) => {
    const ids = uid === undefined ? {} : { uid, gid: uid };
    const child = spawn(command, args, { ...ids, cwd: '/', env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('error', (err) => done({ code: null, output: err.message }));
    child.on('close', (code) => done({ code, output: output.trim() }));
  });
}

const octal = (mode: number): string => `0${(mode & 0o777).toString(8)}`;

async function readOptional(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** Writes `text` with exactly `mode` (whatever the umask), creating the missing directories 0755. */
async function put(path: string, text: string, mode: number): Promise<void> {
  const missing: string[] = [];
  for (let dir = dirname(path); !existsSync(dir); dir = dirname(dir)) missing.unshift(dir);
  for (const dir of missing) {
    await mkdir(dir);
    await chmod(dir, 0o755);
  }
  await writeFile(path, text, { mode });
  await chmod(path, mode);
}

export interface InstallOptions {
  /** Install below this directory instead of / (and neither reload systemd nor touch the machine's /etc). */
  root: string;
}

/**
 * `argus install`: the unit for the Argus it runs from, the config and the secrets file if there
 * are none, `systemctl daemon-reload` when systemd runs, then the check the service would make,
 * as a user of systemd's dynamic range with no groups: the config validates (its models read),
 * ffmpeg runs.
 */
export async function runInstall(opts: InstallOptions): Promise<number> {
  const root = resolve(opts.root);
  const appDir = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
  const node = process.execPath;
  const at = (path: string): string => (root === '/' ? path : join(root, path));
  const say = (line: string): boolean => process.stdout.write(`${line}\n`);
  const fail = (line: string): number => (process.stderr.write(`argus install: ${line}\n`), 1);

  for (const path of [appDir, node]) {
    const problem = unitPathProblem(path);
    if (problem) return fail(problem);
    const hidden = hiddenFromService(path);
    if (hidden) process.stderr.write(`argus install: warning: ${hidden}; the unit will not start\n`);
  }

  const template = await readFile(join(appDir, 'systemd/argus.service'), 'utf8');
  const hasGroup = (name: string): boolean => spawnSync('getent', ['group', name]).status === 0;
  const unit = renderUnit(template, { appDir, node, hasGroup });
  const unitOld = await readOptional(at(UNIT_FILE));
  await put(at(UNIT_FILE), unit, 0o644);
  say(
    `${unitOld === unit ? 'unchanged' : unitOld ? 'updated' : 'installed'} ${at(UNIT_FILE)} (Argus in ${appDir}, ${node})`,
  );

  if (existsSync(at(CONFIG_FILE))) say(`kept ${at(CONFIG_FILE)}`);
  else {
    const demo = await readFile(join(appDir, 'config/demo.yaml'), 'utf8');
    await put(at(CONFIG_FILE), renderConfig(demo, appDir), 0o644);
    say(`installed ${at(CONFIG_FILE)} (0644, the demo: replace its cameras and model with yours)`);
  }
  if (existsSync(at(ENV_FILE))) {
    const mode = (await stat(at(ENV_FILE))).mode;
    say(`kept ${at(ENV_FILE)}`);
    if (mode & 0o077)
      process.stderr.write(
        `argus install: warning: ${at(ENV_FILE)} is ${octal(mode)}: it holds secrets, chmod 0600 it\n`,
      );
  } else {
    await put(at(ENV_FILE), ENV_TEMPLATE, 0o600);
    say(`installed ${at(ENV_FILE)} (0600, for the secrets the config names as \${NAME})`);
  }

  if (root !== '/') say(`--root: systemctl daemon-reload not run`);
  else if (!existsSync('/run/systemd/system')) say('systemd is not running: systemctl daemon-reload not run');
  else {
    const reload = spawnSync('systemctl', ['daemon-reload'], { encoding: 'utf8' });
    if (reload.status !== 0) return fail(`systemctl daemon-reload failed: ${reload.stderr.trim()}`);
    say('systemctl daemon-reload: done');
  }

  const ok = await check(at(CONFIG_FILE), at(ENV_FILE), appDir, node);
  if (!ok) return 1;
  for (const line of nextSteps(root)) say(line);
  return 0;
}

/**
 * What to do after a successful install: below / the service is there to start; below another
 * root (a staged image, a chroot, a disk mounted for another machine) it starts on the system
 * that root becomes, and `systemctl --root` can enable it from here without starting it.
 */
export function nextSteps(root: string): string[] {
  if (root === '/')
    return [
      'next: systemctl enable --now argus && journalctl -u argus -f',
      `then put your cameras and model in ${CONFIG_FILE} (secrets in ${ENV_FILE}): systemctl reload argus`,
    ];
  return [
    `next: put your cameras and model in ${join(root, CONFIG_FILE)} (secrets in ${join(root, ENV_FILE)})`,
    `then, on the system ${root} becomes: systemctl daemon-reload && systemctl enable --now argus ` +
      `(or from here, to start at its next boot: systemctl --root=${root} enable argus)`,
  ];
}

/** The service's view: as a user of the dynamic range (when we are root), with the secrets file's variables. */
async function check(configFile: string, envFile: string, appDir: string, node: string): Promise<boolean> {
  const root = process.getuid?.() === 0;
  const uid = root
    ? freeDynamicId((await readOptional('/etc/passwd')) ?? '', (await readOptional('/etc/group')) ?? '')
    : undefined;
  const who =
    uid === undefined
      ? `as uid ${process.getuid?.()} (not root: not as the service's user)`
      : `as uid ${uid}`;
  const env = {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    HOME: '/',
    ...parseEnvFile((await readOptional(envFile)) ?? ''),
  };
  const cli = join(appDir, 'dist/src/cli.js');
  const problems: string[] = [];

  const validated = await runAs(uid, node, [cli, 'validate', '-c', configFile], env);
  if (validated.code === 0) process.stdout.write(`checked ${who}: ${validated.output}\n`);
  else {
    problems.push(validated.output);
    const mode = (await stat(configFile)).mode;
    if (!(mode & 0o004))
      problems.push(
        `${configFile} is ${octal(mode)}: the service's dynamic user cannot read it. Keep the secrets in ` +
          `${envFile} (0600) or systemd credentials, and chmod 0644 ${configFile}`,
      );
  }

  let loaded;
  try {
    loaded = await loadConfig(configFile, env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
  }
  if (loaded) {
    const ffmpeg = loaded.config.ffmpeg.path ?? (await defaultFfmpegPath());
    const ran = await runAs(uid, ffmpeg, ['-hide_banner', '-version'], env);
    if (ran.code === 0) process.stdout.write(`checked ${who}: ${ffmpeg} runs\n`);
    else problems.push(`${ffmpeg} does not run: ${ran.output || `exit ${ran.code}`}`);
  }

  for (const p of problems) process.stderr.write(`argus install: ${who}: ${p}\n`);
  if (problems.length > 0)
    process.stderr.write(
      `argus install: the files are in place, but the service would fail: fix the above and run it again\n`,
    );
  return problems.length === 0;
}
