/**
 * Which camera's frame goes into the batch next: stride scheduling (weighted fair queuing).
 *
 * Each camera has a weight, its priority (1..10), and a "pass" that grows by 1/weight every
 * time one of its frames is taken. The next frame comes from the camera with frames waiting and
 * the lowest pass; ties go to the higher priority, then to the camera served longest ago
 * (round-robin among equals). So under overload every camera with frames waiting gets a share
 * of the detector proportional to its priority: a camera of priority 10 gets ten frames
 * analysed for each one of a priority-1 camera, a busy high-fps camera cannot take more than
 * its share, and a quiet camera's frames go straight in. Nobody starves, and when the detector
 * has spare capacity everyone is served in full.
 *
 * A camera that had nothing waiting does not bank credit for the time it was idle: when its
 * queue fills again its pass is brought up to the current virtual time.
 */
export interface Contender<K = string> {
  /** Who is contending: a camera's name, or any other value that identifies a queue. */
  key: K;
  priority: number;
  waiting: number;
}

export class FairShare<K = string> {
  private pass = new Map<K, number>();
  private lastServed = new Map<K, number>();
  private vtime = 0;
  private tick = 0;

  /** Picks up to `max` frames; returns the key of each, in order. */
  pick(contenders: readonly Contender<K>[], max: number): K[] {
    const left = new Map(contenders.filter((c) => c.waiting > 0).map((c) => [c.key, { ...c }]));
    for (const c of left.values()) this.pass.set(c.key, Math.max(this.pass.get(c.key) ?? 0, this.vtime));
    const picks: K[] = [];
    while (picks.length < max && left.size > 0) {
      let best: Contender<K> | undefined;
      for (const c of left.values()) {
        if (!best) {
          best = c;
          continue;
        }
        const pc = this.pass.get(c.key)!;
        const pb = this.pass.get(best.key)!;
        if (
          pc < pb - 1e-12 ||
          (Math.abs(pc - pb) <= 1e-12 &&
            (c.priority > best.priority ||
              (c.priority === best.priority &&
                (this.lastServed.get(c.key) ?? -1) < (this.lastServed.get(best.key) ?? -1))))
        ) {
          best = c;
        }
      }
      const b = best!;
      const p = this.pass.get(b.key)!;
      this.vtime = Math.max(this.vtime, p);
      this.pass.set(b.key, p + 1 / b.priority);
      this.lastServed.set(b.key, this.tick++);
      picks.push(b.key);
      if (--b.waiting === 0) left.delete(b.key);
    }
    return picks;
  }

  forget(key: K): void {
    this.pass.delete(key);
    this.lastServed.delete(key);
  }
}
