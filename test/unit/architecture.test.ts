import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { repoRoot } from '../helpers/env.js';

/**
 * The import graph follows the pipeline (docs/architecture.md). Each part of src/ may import
 * the parts before it in this list, never one after it; a stage is reached only through its
 * index.ts (its public interface), never its internals. `core` (the shared vocabulary) imports
 * nothing at all; redact.ts, stderr-ring.ts, log.ts, listen.ts, addresses.ts, backoff.ts and version.ts are
 * ground-floor helpers every part may use. `record` (the rings of recent video, the clips) comes
 * before `ingest`: a camera's ffmpeg writes its ring's pipe, and its frames are timed by the
 * ring's `StreamClock`. `page` is the live page's browser code: it imports only its own modules (the browser
 * loads them from /page/, nothing else), and nothing in src/ imports it (`http` serves its build).
 */
const LAYERS = [
  'core',
  'redact.ts',
  'stderr-ring.ts',
  'log.ts',
  'listen.ts',
  'addresses.ts',
  'backoff.ts',
  'version.ts',
  'state',
  'onnx',
  'config',
  'record',
  'ingest',
  'queue',
  'scheduler',
  'cache',
  'detector',
  'kserve',
  'models',
  'track',
  'draw',
  'broker',
  'publish',
  'health',
  'events',
  'control',
  'fleet',
  'ops',
  'page',
  'http',
  'stop.ts',
  'root',
  'daemon.ts',
  'commands',
  'cli.ts',
] as const;
/** Reached file by file: the vocabulary (one-file parts such as log.ts have no index.ts either). */
const DIRECT = new Set(['core']);

const src = join(repoRoot, 'src');

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** The part of src/ a path belongs to: its top folder, or the file itself at the top. */
const partOf = (path: string): string => relative(src, path).split('/')[0]!;

function imports(file: string): { spec: string; target?: string }[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/^(?:import|export)\s[^;]*?from\s+'([^']+)'/gms)].map((m) => {
    const spec = m[1]!;
    if (!spec.startsWith('.')) return { spec };
    return { spec, target: join(dirname(file), spec).replace(/\.js$/, '.ts') };
  });
}

describe('architecture', () => {
  const all = files(src);

  it('every part of src/ is placed in the pipeline order', () => {
    const parts = [...new Set(all.map(partOf))].sort();
    assert.deepEqual(
      parts.filter((p) => !(LAYERS as readonly string[]).includes(p)),
      [],
    );
  });

  it('imports go down the pipeline, through each stage’s index.ts', () => {
    const wrong: string[] = [];
    for (const file of all) {
      const from = partOf(file);
      for (const { spec, target } of imports(file)) {
        const where = `${relative(src, file)} imports '${spec}'`;
        if (!target) {
          if (from === 'core') wrong.push(`${where}: core imports nothing`);
          if (from === 'page') wrong.push(`${where}: the page runs in the browser: it imports only src/page`);
          continue;
        }
        const to = partOf(target);
        if (to === from) continue;
        if (from === 'core') wrong.push(`${where}: core imports nothing`);
        else if (from === 'page')
          wrong.push(`${where}: the page runs in the browser: it imports only src/page`);
        else if (to === 'page') wrong.push(`${where}: the page is the browser's; http serves its build`);
        else if (LAYERS.indexOf(to as never) >= LAYERS.indexOf(from as never))
          wrong.push(`${where}: ${to} comes after ${from} in the pipeline`);
        else if (!DIRECT.has(to) && !to.endsWith('.ts') && relative(join(src, to), target) !== 'index.ts')
          wrong.push(`${where}: reach ${to} through ${to}/index.ts`);
      }
    }
    assert.deepEqual(wrong, []);
  });

  it('the composition root only wires, in order: no name before it is built, no squeezing, no loops', () => {
    const rootFiles = [join(src, 'daemon.ts'), join(src, 'root', 'pipeline.ts')];
    const wrong: string[] = [];
    for (const file of rootFiles) {
      const where = relative(src, file);
      const lines = readFileSync(file, 'utf8').split('\n');
      // Code only: comments say what the code does not.
      const code = lines.map((l) =>
        l
          .replace(/'[^']*'/g, "''")
          .replace(/\/\/.*$/, '')
          .replace(/^\s*\*.*$|^\s*\/\*\*.*$/, ''),
      );
      code.forEach((l, i) => {
        if (/\.\.\.\{/.test(l)) wrong.push(`${where}:${i + 1}: a spread literal (...{) squeezes lines`);
        if (/\b(for|while|switch)\s*\(/.test(l))
          wrong.push(`${where}:${i + 1}: a loop or switch is logic, not wiring`);
        if (/\bfor\s+await\b|\.forEach\(/.test(l))
          wrong.push(`${where}:${i + 1}: a loop is logic, not wiring`);
      });
      // In the root's one function, each const it builds is named only after the line that builds it.
      const body = code.findIndex((l) => /^export async function assemble\(/.test(l));
      if (file.endsWith('daemon.ts')) continue;
      assert.ok(body !== -1, 'root/pipeline.ts has its assemble()');
      code.forEach((l, i) => {
        if (i <= body) return;
        const m = /^\s*const (?:\{ ([^}]+) \}|(\w+))(?::[^=]+)? =/.exec(l);
        if (!m) return;
        const names = m[1] ? m[1].split(',').map((n) => n.trim().split(':').pop()!.trim()) : [m[2]!];
        for (const name of names) {
          const before = code
            .slice(body + 1, i)
            // A use, `...name` included; not a property (`x.name`) or a key (`name:`).
            .findIndex((b) => new RegExp(`(?<!\\w)(?<![^.]\\.)${name}\\b(?!:)`).test(b));
          if (before !== -1)
            wrong.push(`${where}:${body + before + 2}: '${name}' used before line ${i + 1} builds it`);
        }
      });
    }
    assert.deepEqual(wrong, []);
  });

  it('one running config: the parts read the cameras that run, none keeps a copy (issue 44)', () => {
    // The parts (publish, events, control, http) read them through a CamerasNow (the root's
    // RunningConfig); a field holding a camera section, or one replaced on a change, is a copy.
    const wrong: string[] = [];
    for (const room of ['publish', 'events', 'control', 'http'])
      for (const file of files(join(src, room))) {
        readFileSync(file, 'utf8')
          .split('\n')
          .forEach((l, i) => {
            const where = `${relative(src, file)}:${i + 1}`;
            if (/\bprivate (readonly )?cameras: Record<string, CameraConfig>/.test(l))
              wrong.push(`${where}: keeps its own camera section`);
            if (/\bthis\.cameras = /.test(l)) wrong.push(`${where}: replaces its own camera section`);
          });
      }
    assert.deepEqual(wrong, []);
  });

  it('no files import each other, directly or round a longer circle (type-only imports too)', () => {
    const nodes = [...all, ...files(join(repoRoot, 'bench'))];
    const edges = new Map(
      nodes.map((f) => [f, [...new Set(imports(f).flatMap(({ target }) => (target ? [target] : [])))]]),
    );
    // Tarjan's strongly connected components: each of more than one file (or a file that
    // imports itself) is a circle.
    const index = new Map<string, number>();
    const low = new Map<string, number>();
    const stack: string[] = [];
    const circles: string[][] = [];
    const visit = (f: string): void => {
      index.set(f, index.size);
      low.set(f, index.get(f)!);
      stack.push(f);
      for (const g of edges.get(f) ?? []) {
        if (!edges.has(g)) continue;
        if (!index.has(g)) {
          visit(g);
          low.set(f, Math.min(low.get(f)!, low.get(g)!));
        } else if (stack.includes(g)) low.set(f, Math.min(low.get(f)!, index.get(g)!));
      }
      if (low.get(f) !== index.get(f)) return;
      const part: string[] = [];
      let g: string;
      do {
        g = stack.pop()!;
        part.push(relative(repoRoot, g));
      } while (g !== f);
      if (part.length > 1 || edges.get(f)!.includes(f)) circles.push(part.sort());
    };
    for (const f of nodes) if (!index.has(f)) visit(f);
    assert.deepEqual(circles, []);
  });
});
