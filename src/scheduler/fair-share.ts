/**
 * Which camera's frame goes into the batch next: weighted fair queuing by virtual finish time.
 *
 * Each camera has a weight, its priority (1..10), and a "pass": the virtual time up to which it
 * has been served, growing by 1/weight every time one of its frames is taken. The next frame
 * comes from the camera with frames waiting whose next frame would finish first (pass +
 * 1/weight, WFQ's finish tag); ties go to the higher priority, then to the camera served longest
 * ago (round-robin among equals). So under overload every camera with frames waiting gets a
 * share of the detector proportional to its priority: a camera of priority 10 gets ten frames
 * analysed for each one of a priority-1 camera, a busy high-fps camera cannot take more than its
 * share, and a quiet camera's frames go straight in. Nobody starves, and when the detector has
 * spare capacity everyone is served in full.
 *
 * Why the finish tag, not the pass itself (stride scheduling's start tag): a live camera with
 * `queue_size: 1` holds one frame at a time, so it cannot take the burst of ten frames in a row
 * that start tags hand a priority-10 camera once per round of priority-1 ones; it would lose the
 * rest of its share every round (measured: 2.7 : 1 where 10 : 1 was due). By finish tags its one
 * frame goes ahead of the priority-1 frames whenever it has not had its share yet.
 *
 * A camera that had nothing waiting does not bank credit for the time it was idle: when its
 * queue fills again its pass is brought up to the virtual time, the pass at which the last frame
 * was served, or the lowest pass among the cameras still waiting if that is lower (so bringing a
 * camera up never pushes it behind those that waited all along, and a camera served alone for
 * an hour does not leave the others an hour of credit).
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
        const pc = this.pass.get(c.key)! + 1 / c.priority;
        const pb = this.pass.get(best.key)! + 1 / best.priority;
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
      const start = this.pass.get(b.key)!;
      this.pass.set(b.key, start + 1 / b.priority);
      this.lastServed.set(b.key, this.tick++);
      picks.push(b.key);
      if (--b.waiting === 0) left.delete(b.key);
      // The virtual time: the start of the frame served, or a waiting camera's pass if lower.
      let min = start;
      for (const c of left.values()) min = Math.min(min, this.pass.get(c.key)!);
      this.vtime = Math.max(this.vtime, min);
    }
    return picks;
  }

  forget(key: K): void {
    this.pass.delete(key);
    this.lastServed.delete(key);
  }
}
