import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFile, mkdir, readdir, readFile, realpath, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { cliPath, needsShared, repoRoot, shared, tempDir } from '../helpers/env.js';

/**
 * The docs hold to the product: every `argus validate -c <file>` the docs show for a file of the
 * repository prints what they show, on a copy of a fresh checkout (after `npm ci`: the config
 * files and the fixture model), or once the one thing the docs say to prepare is there (a YOLOv8n
 * at models/yolov8n.onnx, docs/config.md); and every config file under config/ validates, or
 * the docs show what it says instead.
 */

/** Where the docs' examples say the checkout is. */
const DOCS_ROOT = '/opt/argus';
const PREPARED_MODEL = 'models/yolov8n.onnx';

interface Example {
  doc: string;
  file: string;
  output: string[];
}

/** The `argus validate -c FILE` commands of the docs' console blocks, each with the output shown. */
async function examples(): Promise<Example[]> {
  const docs = [
    'README.md',
    'models/README.md',
    ...(await readdir(join(repoRoot, 'docs'))).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`),
  ];
  const out: Example[] = [];
  for (const doc of docs) {
    const text = await readFile(join(repoRoot, doc), 'utf8');
    for (const block of text.matchAll(/^```console\n([\s\S]*?)^```$/gm)) {
      let current: Example | undefined;
      for (const line of block[1]!.split('\n')) {
        if (line.startsWith('$ ') || line.startsWith('# ')) {
          const m = /^\$ (?:npx argus|argus|node dist\/src\/cli\.js) validate -c (\S+)$/.exec(line);
          current = m ? { doc, file: m[1]!, output: [] } : undefined;
          if (current) out.push(current);
        } else if (current && line !== '') current.output.push(line);
      }
    }
  }
  return out;
}

/** A copy of what a fresh checkout has for `validate`: config/ and the fixture model; `prepared`: and the model the docs say to put there. */
async function checkout(t: { after: (fn: () => Promise<void>) => void }, prepared: boolean): Promise<string> {
  const dir = await realpath(await tempDir(t));
  await mkdir(join(dir, 'config'));
  await mkdir(join(dir, 'models'));
  await mkdir(join(dir, 'home'));
  for (const f of await readdir(join(repoRoot, 'config')))
    await copyFile(join(repoRoot, 'config', f), join(dir, 'config', f));
  await copyFile(join(repoRoot, 'models/argus-fixture.onnx'), join(dir, 'models/argus-fixture.onnx'));
  if (prepared) await symlink(shared('models', 'yolov8n_int8.onnx'), join(dir, PREPARED_MODEL));
  return dir;
}

/** `argus validate -c file` run in `dir`, its output as the docs would show it (the checkout in /opt/argus). */
function validate(dir: string, file: string): Promise<{ code: number | null; output: string[] }> {
  return new Promise((resolve, reject) => {
    const env: NodeJS.ProcessEnv = { ...process.env, HOME: join(dir, 'home') };
    delete env.STATE_DIRECTORY;
    const child = spawn(process.execPath, [cliPath, 'validate', '-c', file], { cwd: dir, env });
    let text = '';
    child.stdout.on('data', (d: Buffer) => (text += d.toString()));
    child.stderr.on('data', (d: Buffer) => (text += d.toString()));
    child.on('error', reject);
    child.on('close', (code) =>
      resolve({ code, output: text.split(dir).join(DOCS_ROOT).trimEnd().split('\n') }),
    );
  });
}

describe('the docs against the product', () => {
  it('every `argus validate -c <repo file>` in the docs prints what they show, fresh or after what they say to prepare', async (t) => {
    const all = await examples();
    const runnable = all.filter((e) => e.file.startsWith('config/'));
    for (const e of all.filter((x) => !runnable.includes(x)))
      t.diagnostic(`${e.doc}: validate -c ${e.file}: a file the docs do not ship, not run`);
    assert.ok(runnable.length >= 2, `the docs' examples of config/example.yaml: ${JSON.stringify(all)}`);
    const fresh = await checkout(t, false);
    const prepared = needsShared ? undefined : await checkout(t, true);
    if (needsShared) t.diagnostic(`${needsShared}: only the examples of a fresh checkout are checked`);
    for (const e of runnable) {
      const [before, after] = [
        await validate(fresh, e.file),
        prepared ? await validate(prepared, e.file) : undefined,
      ];
      const matches = [before, after].some((r) => r && JSON.stringify(r.output) === JSON.stringify(e.output));
      if (!matches && !after) {
        t.diagnostic(
          `${e.doc}: validate -c ${e.file}: not what a fresh checkout prints; needs ${PREPARED_MODEL}`,
        );
        continue;
      }
      assert.ok(
        matches,
        `${e.doc}: argus validate -c ${e.file} shows\n${e.output.join('\n')}\nbut a fresh checkout prints\n` +
          `${before.output.join('\n')}\nand one with ${PREPARED_MODEL}\n${after?.output.join('\n')}`,
      );
    }
  });

  it('every config file under config/ validates, or the docs show what it says on a fresh checkout', async (t) => {
    const documented = await examples();
    const fresh = await checkout(t, false);
    const prepared = needsShared ? undefined : await checkout(t, true);
    if (needsShared) t.diagnostic(`${needsShared}: the files are not checked with ${PREPARED_MODEL}`);
    const files = (await readdir(join(repoRoot, 'config'))).filter((f) => /\.ya?ml$/.test(f));
    assert.ok(files.includes('example.yaml') && files.includes('demo.yaml'), files.join(', '));
    for (const f of files) {
      const file = `config/${f}`;
      const r = await validate(fresh, file);
      if (r.code !== 0) {
        const shown = documented.some(
          (e) => e.file === file && JSON.stringify(e.output) === JSON.stringify(r.output),
        );
        assert.ok(
          shown,
          `${file} does not validate on a fresh checkout, and no doc shows it:\n${r.output.join('\n')}`,
        );
      }
      if (prepared) {
        const p = await validate(prepared, file);
        assert.equal(p.code, 0, `${file} with ${PREPARED_MODEL}:\n${p.output.join('\n')}`);
      }
    }
  });
});
