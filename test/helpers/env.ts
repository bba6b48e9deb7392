import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildFixtureModel, DEFAULT_FIXTURE, type FixtureOptions } from '../../src/onnx/fixture.js';

/** The repository root (tests run from dist/test/...). */
export const repoRoot = resolve(fileURLToPath(import.meta.url), '../../../..');
export const cliPath = join(repoRoot, 'dist/src/cli.js');

/** `../shared` beside the repository: real models and media, never copied into it. */
export const sharedDir = process.env.ARGUS_SHARED_DIR ?? resolve(repoRoot, '..', 'shared');
export const hasShared = existsSync(join(sharedDir, 'models', 'yolov8n_int8.onnx'));
/** Pass as `skip` to tests that need ../shared: node:test prints the reason. */
export const needsShared = hasShared ? false : `../shared not found at ${sharedDir}: real-model test skipped`;
export const shared = (...parts: string[]): string => join(sharedDir, ...parts);

/**
 * The screenshots in docs/images come from the page tests; a run writes them there only when
 * asked (`ARGUS_UPDATE_DOC_IMAGES=1`), so a plain run leaves the checkout as it was. Says what it did.
 */
export async function updateDocImage(png: string, name: string): Promise<string> {
  const doc = join(repoRoot, 'docs', 'images', name);
  if (process.env.ARGUS_UPDATE_DOC_IMAGES !== '1')
    return `${png} not copied to ${doc} (ARGUS_UPDATE_DOC_IMAGES=1 does)`;
  await copyFile(png, doc);
  return `${png} copied to ${doc}`;
}

export async function tempDir(t: { after: (fn: () => Promise<void>) => void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'argus-test-'));
  // Retried: a daemon a test started may still be writing its state here (it is stopped after).
  t.after(() => rm(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 }));
  return dir;
}

export async function writeFixture(
  dir: string,
  name: string,
  opts: Partial<FixtureOptions> = {},
): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, buildFixtureModel({ ...DEFAULT_FIXTURE, ...opts }));
  return path;
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs the real CLI as a child process. */
export function runCli(args: string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 60_000): Promise<CliResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [cliPath, ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolvePromise({ code, signal, stdout, stderr });
    });
  });
}

/** Polls `cond` every 100 ms until it holds; fails naming `what` after `timeoutMs`. */
export async function waitFor(what: string, cond: () => boolean, timeoutMs = 30_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Whether a process of that id is running. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
