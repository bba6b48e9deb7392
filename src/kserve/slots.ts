/**
 * A counting semaphore: at most `size` holders at once, the others wait in order. Closing it
 * fails every waiter (and every later `take`) with the error given.
 */
export class Slots {
  private free: number;
  private waiting: { resolve: () => void; reject: (e: Error) => void }[] = [];
  private closed: Error | undefined;

  constructor(readonly size: number) {
    this.free = size;
  }

  /** Holders now. */
  get busy(): number {
    return this.size - this.free;
  }

  take(): Promise<void> {
    if (this.closed) return Promise.reject(this.closed);
    if (this.free > 0) {
      this.free--;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => this.waiting.push({ resolve, reject }));
  }

  /** Gives a slot back: to the first waiter, if any. */
  give(): void {
    const next = this.waiting.shift();
    if (next) next.resolve();
    else this.free = Math.min(this.size, this.free + 1);
  }

  close(err: Error): void {
    this.closed = err;
    for (const w of this.waiting.splice(0)) w.reject(err);
  }
}
