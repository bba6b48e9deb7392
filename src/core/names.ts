/**
 * Objects keyed by names a user chose: cameras, models, zones, lines, directions, labels. No
 * such name is special to the code: `__proto__`, `constructor`, `toString` or `valueOf` is a
 * name like any other. State of Argus' own is kept in `Map`s; what is handed on (an API answer,
 * an MQTT payload, the config's maps) is one of these objects, which `JSON.stringify` writes as
 * it is.
 */

/**
 * An empty object without a prototype, to key by such names: an entry `__proto__` is an entry
 * (on `{}` it would set the prototype instead), and `constructor` is absent until set.
 */
export function namedRecord<V>(): Record<string, V> {
  return Object.create(null) as Record<string, V>;
}

/**
 * `record[name]` when the record holds it itself; never what its prototype has (`Object` for
 * `constructor` on `{}`). For records that may come from elsewhere with a prototype.
 */
export function own<V>(record: Readonly<Record<string, V>> | undefined, name: string): V | undefined {
  return record !== undefined && Object.hasOwn(record, name) ? record[name] : undefined;
}
