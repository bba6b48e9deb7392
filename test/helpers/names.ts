/**
 * Names a plain object answers for without holding them (`constructor`, `toString`, ...), or
 * whose assignment sets its prototype (`__proto__`): each must be a name like any other.
 */
export const SPECIAL_NAMES: readonly string[] = [
  '__proto__',
  'constructor',
  'toString',
  'hasOwnProperty',
  'valueOf',
];

const isRecord = (v: unknown): v is Record<string, unknown> => {
  if (typeof v !== 'object' || v === null) return false;
  const proto: unknown = Object.getPrototypeOf(v);
  return proto === null || proto === Object.prototype;
};

/**
 * A value with its Maps and objects without a prototype made plain objects, deeply (own keys
 * only, a `__proto__` key kept as a key): what object literals are compared with in assert/strict,
 * which tells the prototypes apart.
 */
export function plain(v: unknown): unknown {
  if (v instanceof Map) return Object.fromEntries([...v].map(([k, x]) => [k, plain(x)]));
  if (Array.isArray(v)) return v.map(plain);
  if (isRecord(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
  return v;
}

/** An object without a prototype holding `entries` (object literals' keys, or pairs). */
export function named<V>(entries: Record<string, V> | [string, V][] = []): Record<string, V> {
  const out = Object.create(null) as Record<string, V>;
  for (const [k, v] of Array.isArray(entries) ? entries : Object.entries(entries)) out[k] = v;
  return out;
}
