import { readFileSync } from 'node:fs';
import type { Logger } from 'pino';

/** A started stage, as the root stops it. */
export interface Started {
  name: string;
  stage: { stop(): unknown };
}

/** The stages whose stop waits for work in flight: batches, and the detector workers busy with them. */
const WAITS_FOR_WORK = new Set(['scheduler', 'models']);

/**
 * Stops the root's started stages in reverse order, each stop on its own, so a failing one does
 * not keep the others from running. `hurry()` makes it quicker and still clean: the cameras'
 * ffmpeg is killed at once, without 'q' or the grace periods, and the stops of the scheduler and
 * the models are not waited for (batches in flight, detector workers busy with them). The other
 * stops run in full: objects in view end, cameras report `stopped`, MQTT gets `offline`, the state
 * files are written.
 */
export class Shutdown {
  private quick = false;
  private onHurry: () => void = () => undefined;
  private readonly hurriedNow = new Promise<void>((resolve) => (this.onHurry = resolve));
  /** The ids of the cameras' ffmpeg processes, while the cameras stop. */
  private ffmpeg: number[] = [];

  constructor(
    private readonly log: Logger,
    /** The running ffmpeg processes' ids, from the cameras' stage. */
    private readonly ffmpegPids: () => number[],
  ) {}

  /** Whether hurry() was called: answers that still come back are dropped. */
  get hurried(): boolean {
    return this.quick;
  }

  /** Stops `started`, the last started first. */
  async run(started: Started[]): Promise<void> {
    for (const { name, stage } of [...started].reverse()) {
      try {
        await this.stopStage(name, stage);
      } catch (err) {
        this.log.error({ stage: name, err: String(err) }, 'error while stopping');
      }
    }
  }

  /** Makes the stop in progress, or the next, quicker. */
  hurry(): void {
    if (this.quick) return;
    this.quick = true;
    this.killFfmpeg();
    this.onHurry();
  }

  private async stopStage(name: string, stage: Started['stage']): Promise<void> {
    if (name === 'cameras') {
      // Read first: the stage forgets its cameras as it stops them (which marks each stopping).
      this.ffmpeg = this.ffmpegPids();
      const done = Promise.resolve(stage.stop());
      if (this.quick) this.killFfmpeg();
      await done.finally(() => (this.ffmpeg = []));
      return;
    }
    const done = Promise.resolve(stage.stop());
    if (!WAITS_FOR_WORK.has(name)) {
      await done;
      return;
    }
    if (await Promise.race([done.then(() => false), this.hurriedNow.then(() => true)])) {
      this.log.info({ stage: name }, 'not waiting for the work in flight');
      done.catch((err: unknown) => this.log.error({ stage: name, err: String(err) }, 'error while stopping'));
    }
  }

  /**
   * SIGKILLs the ffmpeg processes of the cameras being stopped: each camera's stop sees its exit
   * and settles in `stopped` at once. An id whose ffmpeg has exited meanwhile is skipped, lest it
   * name another process by now: only Argus' own children are killed.
   */
  private killFfmpeg(): void {
    const pids = this.ffmpeg.splice(0).filter(isChild);
    for (const pid of pids) process.kill(pid, 'SIGKILL');
    if (pids.length > 0) this.log.info({ pids }, 'ffmpeg killed');
  }
}

/** Whether `pid` is a child of this process (read from /proc); false once it is gone. */
function isChild(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === process.pid;
  } catch {
    return false;
  }
}
