/**
 * Counters kept by name for the life of the process. A camera's pipeline objects come and go as
 * its settings change at run time or on a reload (its ffmpeg supervisor when its stream restarts,
 * its scheduler lane when its detection goes off and on or its stream restarts); its counters
 * stay here, so its totals never go down and rates taken from them are never below 0. A name
 * removed and added again goes on from its totals. Keyed in a Map: any name a user chose is safe.
 */
export class Tallies<T> {
  private readonly byName = new Map<string, T>();

  constructor(private readonly fresh: () => T) {}

  /** The counters of `name`, made at its first use. */
  of(name: string): T {
    let t = this.byName.get(name);
    if (t === undefined) this.byName.set(name, (t = this.fresh()));
    return t;
  }
}
