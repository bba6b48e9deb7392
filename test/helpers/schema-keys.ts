import type { z } from 'zod';
import { namedMapValue } from '../../src/config/primitives.js';

/**
 * One step of a key's path: a key of a schema object, the name of an entry in a map of named
 * things (`cameras`, `zones`, `filters`: the user chooses the names), or an item of a list.
 */
export interface Step {
  kind: 'key' | 'entry' | 'item';
  /** The key, the entry's name in the example (undefined when the example has no entry), or the index. */
  name: string | undefined;
}

/** What the schema does when a key is left out. */
export type Fill = { kind: 'default'; value: unknown } | { kind: 'optional' } | { kind: 'required' };

export interface SchemaKey {
  steps: Step[];
  fill: Fill;
  /** Not a mapping (an object or a map of named entries): a value shown as it is. */
  leaf: boolean;
  /** Below an entry of a map, whose values are examples rather than defaults. */
  inEntry: boolean;
  /** Whether the example has this key (with any value, null included). */
  present: boolean;
  /** The example's value, when present. */
  value: unknown;
}

/** `mqtt.tls.ca`, `cameras.front_door.zones.porch.points`; an entry the example lacks is `<name>`. */
export function dotted(steps: readonly Step[]): string {
  return steps
    .map((s, i) =>
      s.kind === 'item'
        ? `[${s.name ?? ''}]`
        : `${i ? '.' : ''}${s.kind === 'entry' ? (s.name ?? '<name>') : s.name}`,
    )
    .join('');
}

type Def = z.core.$ZodTypeDef;

/**
 * Strips the wrappers that do not change which keys exist (optional, nullable, default, prefault,
 * readonly, pipe: a pipe's input side is what the file holds). Refinements in zod 4 are checks on
 * the schema itself, so they need no unwrapping. Returns the inner schema and, from the outermost
 * wrapper that says, what happens when the key is left out.
 */
function peel(schema: z.core.$ZodType): { inner: z.core.$ZodType; fill: Fill } {
  let s = schema;
  let fill: Fill | undefined;
  for (;;) {
    const def: Def = s._zod.def;
    switch (def.type) {
      case 'default':
      case 'prefault': {
        const d = def as z.core.$ZodDefaultDef | z.core.$ZodPrefaultDef;
        fill ??= { kind: 'default', value: d.defaultValue };
        s = d.innerType;
        break;
      }
      case 'optional':
        fill ??= { kind: 'optional' };
        s = (def as z.core.$ZodOptionalDef).innerType;
        break;
      case 'nullable':
      case 'readonly':
        s = (def as z.core.$ZodNullableDef | z.core.$ZodReadonlyDef).innerType;
        break;
      case 'pipe':
        // A map of named entries (namedMap) is a pipe; absent, it is an empty map.
        if (namedMapValue(s)) return { inner: s, fill: fill ?? { kind: 'default', value: {} } };
        // z.preprocess: a transform into the schema that holds the keys.
        s =
          (def as z.core.$ZodPipeDef).in._zod.def.type === 'transform'
            ? (def as z.core.$ZodPipeDef).out
            : (def as z.core.$ZodPipeDef).in;
        break;
      default:
        return { inner: s, fill: fill ?? { kind: 'required' } };
    }
  }
}

/** Types that hold no keys. */
const LEAVES = new Set<Def['type']>([
  'string',
  'number',
  'int',
  'boolean',
  'bigint',
  'enum',
  'literal',
  'null',
]);

const isMapping = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * Every key of a zod object schema, walked together with an example value (e.g. a parsed YAML
 * file). Maps of named entries (z.record) are walked into through the example's first entry;
 * lists and tuples through their items. A schema type it does not know (union, lazy, …) throws,
 * so a new kind of schema cannot hide keys from the caller.
 */
export function schemaKeys(schema: z.core.$ZodType, example: unknown): SchemaKey[] {
  const out: SchemaKey[] = [];
  const walk = (s: z.core.$ZodType, value: unknown, steps: Step[], inEntry: boolean): void => {
    const def: Def = s._zod.def;
    const where = dotted(steps) || 'the top level';
    if (LEAVES.has(def.type)) return;
    const entries = namedMapValue(s);
    if (entries) {
      const name = isMapping(value) ? Object.keys(value)[0] : undefined;
      const v = name !== undefined && isMapping(value) ? value[name] : undefined;
      walk(peel(entries).inner, v, [...steps, { kind: 'entry', name }], true);
      return;
    }
    switch (def.type) {
      case 'object': {
        for (const [key, child] of Object.entries((def as z.core.$ZodObjectDef).shape)) {
          const { inner, fill } = peel(child);
          const present = isMapping(value) && Object.hasOwn(value, key);
          const v = present ? value[key] : undefined;
          const at = [...steps, { kind: 'key' as const, name: key }];
          const t = inner._zod.def.type;
          const leaf = t !== 'object' && t !== 'record' && !namedMapValue(inner);
          out.push({ steps: at, fill, leaf, inEntry, present, value: v });
          walk(inner, v, at, inEntry);
        }
        return;
      }
      case 'record': {
        const name = isMapping(value) ? Object.keys(value)[0] : undefined;
        const v = name !== undefined && isMapping(value) ? value[name] : undefined;
        walk(
          peel((def as z.core.$ZodRecordDef).valueType).inner,
          v,
          [...steps, { kind: 'entry', name }],
          true,
        );
        return;
      }
      case 'array': {
        const v = Array.isArray(value) ? (value as unknown[])[0] : undefined;
        walk(
          peel((def as z.core.$ZodArrayDef).element).inner,
          v,
          [...steps, { kind: 'item', name: '0' }],
          inEntry,
        );
        return;
      }
      case 'tuple': {
        const d = def as z.core.$ZodTupleDef;
        const items = [...d.items, ...(d.rest ? [d.rest] : [])];
        items.forEach((item, i) => {
          const v = Array.isArray(value) ? (value as unknown[])[i] : undefined;
          walk(peel(item).inner, v, [...steps, { kind: 'item', name: String(i) }], inEntry);
        });
        return;
      }
      default:
        throw new Error(`schemaKeys does not know zod type '${def.type}' (at ${where}): teach it`);
    }
  };
  walk(peel(schema).inner, example, [], false);
  return out;
}
