import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { z } from 'zod';
import { configSchema } from '../../../src/config/schema.js';
import { repoRoot } from '../../helpers/env.js';
import { dotted, schemaKeys, type SchemaKey, type Step } from '../../helpers/schema-keys.js';

/*
 * config/example.yaml and docs/config.md promise every key of the schema (src/config/schema.ts).
 * These tests hold them to it, walking the schema itself, so a key added to the schema without
 * its documentation fails here, naming its path.
 *
 * The rule for the example: a key counts only if it is a real YAML key of the file. Comments are
 * not read, so a commented-out key does not count. A key that is optional with no default is
 * written with nothing after it (`client_id:`), which the loader reads as "not set"
 * (src/config/load.ts); the file then shows the key, means what it says, and stays valid. Maps
 * of named entries (`cameras`, `zones`, `filters`) are checked through their first entry in the
 * example, so that entry must show every key.
 */

const exampleFile = join(repoRoot, 'config/example.yaml');
const docsFile = join(repoRoot, 'docs/config.md');
const example: unknown = parse(readFileSync(exampleFile, 'utf8'));
const keys = schemaKeys(configSchema, example);

describe('schemaKeys', () => {
  it('reaches keys inside maps of named entries, optional sections and tuples', () => {
    const paths = keys.map((k) => dotted(k.steps));
    for (const p of [
      'log_level',
      'mqtt.tls.reject_unauthorized',
      'mqtt.embedded.port',
      'cameras.front_door.objects.filters.person.min_area',
      'cameras.front_door.zones.porch.objects',
      'events.update_score',
    ])
      assert.ok(paths.includes(p), `${p} not found among ${paths.join(', ')}`);
  });

  it('walks wrappers, lists and tuples, and names an entry the example lacks', () => {
    const schema = z.strictObject({
      a: z.string().transform((s) => s.length),
      b: z.array(z.strictObject({ c: z.number().default(1) })).optional(),
      d: z.tuple([z.strictObject({ e: z.boolean() }), z.number()]).nullable(),
      f: z.record(z.string(), z.strictObject({ g: z.string() })).prefault({}),
    });
    const found = schemaKeys(schema, { a: 'x', b: [{}], d: [{ e: true }, 2] });
    assert.deepEqual(
      found.map((k) => [dotted(k.steps), k.present, k.fill.kind]),
      [
        ['a', true, 'required'],
        ['b', true, 'optional'],
        ['b[0].c', false, 'default'],
        ['d', true, 'required'],
        ['d[0].e', true, 'required'],
        ['f', false, 'default'],
        ['f.<name>.g', false, 'required'],
      ],
    );
  });

  it('refuses a schema type it cannot walk', () => {
    const schema = z.strictObject({ u: z.union([z.strictObject({ x: z.string() }), z.number()]) });
    assert.throws(() => schemaKeys(schema, {}), /does not know zod type 'union' \(at u\)/);
  });
});

describe('config/example.yaml', () => {
  it('shows every key of the schema', () => {
    const missing = keys.filter((k) => !k.present).map((k) => dotted(k.steps));
    if (missing.length) assert.fail(`config/example.yaml lacks these keys:\n  ${missing.join('\n  ')}`);
  });

  it('shows each default (outside the example cameras), and leaves keys without one empty', () => {
    const wrong: string[] = [];
    for (const k of keys) {
      if (!k.present || !k.leaf || k.inEntry) continue;
      const shown = JSON.stringify(k.value);
      if (k.fill.kind === 'default' && !isDeepStrictEqual(k.value, k.fill.value))
        wrong.push(`${dotted(k.steps)}: shows ${shown}, the default is ${JSON.stringify(k.fill.value)}`);
      if (k.fill.kind === 'optional' && k.value !== null)
        wrong.push(`${dotted(k.steps)}: shows ${shown}; it has no default, so it should be empty (not set)`);
    }
    if (wrong.length) assert.fail(`config/example.yaml:\n  ${wrong.join('\n  ')}`);
  });
});

/**
 * The sections of docs/config.md: each `##`/`###` heading that is a key path in backticks, e.g.
 * `### \`mqtt\`` or `### \`cameras.<name>\``, with its text up to the next `##` or `###` heading.
 */
function docSections(markdown: string): { path: string[]; body: string }[] {
  const sections: { path: string[]; body: string }[] = [];
  let current: { path: string[]; body: string } | undefined;
  for (const line of markdown.split('\n')) {
    const heading = /^#{2,3} (.*)$/.exec(line);
    if (heading) {
      const path = /^`([^`]+)`$/.exec(heading[1]!.trim());
      current = path ? { path: path[1]!.split('.'), body: '' } : undefined;
      if (current) sections.push(current);
    } else if (current) current.body += `${line}\n`;
  }
  return sections;
}

/** A heading segment matches a key step: `<…>` stands for any entry name. */
const segmentMatches = (segment: string, step: Step): boolean =>
  step.kind === 'entry' ? /^<[^>]+>$/.test(segment) : step.kind === 'key' && segment === step.name;

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Whether docs/config.md documents a key: a heading names it (or a path below it), or the
 * section of the longest heading above it mentions the rest of its path in backticks, entries
 * written as `<name>`: `tls.ca` under `mqtt`, `objects.filters.<label>.min_score` under
 * `cameras.<name>`. A path that goes on (`tls.ca`) also documents its start (`tls`).
 */
function documented(key: SchemaKey, sections: { path: string[]; body: string }[]): boolean {
  const steps = key.steps;
  const prefixOf = (path: string[], n: number): boolean =>
    path.length >= n && steps.slice(0, n).every((s, i) => segmentMatches(path[i]!, s));
  if (sections.some((s) => prefixOf(s.path, steps.length))) return true;
  const above = sections
    .filter((s) => s.path.length < steps.length && prefixOf(s.path, s.path.length))
    .sort((a, b) => b.path.length - a.path.length)[0];
  if (!above) return false;
  const rest = steps
    .slice(above.path.length)
    .map((s, i) =>
      s.kind === 'item'
        ? '\\[\\]'
        : `${i ? '\\.' : ''}${s.kind === 'entry' ? '<[^>`]+>' : escapeRegExp(s.name!)}`,
    )
    .join('');
  return new RegExp(`\`${rest}(?:[.[][^\`]*)?\``).test(above.body);
}

describe('docs/config.md', () => {
  it('documents every key of the schema under its section', () => {
    const sections = docSections(readFileSync(docsFile, 'utf8'));
    const missing = keys
      .filter((k) => !documented(k, sections))
      .map((k) => dotted(k.steps.map((s) => (s.kind === 'entry' ? { ...s, name: '<name>' } : s))));
    if (missing.length) assert.fail(`docs/config.md does not document:\n  ${missing.join('\n  ')}`);
  });
});
