import type { Logger } from 'pino';

/** What the root needs of a stage: start and stop; everything else goes through wiring. */
export interface Stage {
  start(): unknown;
  stop(): unknown;
}

/** A started stage, as the root stops it. */
export interface Started {
  name: string;
  stage: { stop(): unknown };
}

/** A camera as a hurried stop sees it (`Camera.killNow`). */
interface Killable {
  killNow(): number | undefined;
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
  /** The cameras being stopped, while they stop. */
  private cameras: Killable[] = [];

  constructor(
    private readonly log: Logger,
    /** The running cameras, from the cameras' stage. */
    private readonly running: () => Killable[],
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
      this.cameras = this.running();
      const done = Promise.resolve(stage.stop());
      if (this.quick) this.killFfmpeg();
      await done.finally(() => (this.cameras = []));
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
   * SIGKILLs the ffmpeg of the cameras being stopped, each through its own process handle (never
   * by a process id, which may name another process once its ffmpeg has exited): each camera's
   * stop sees the exit and settles in `stopped` at once.
   */
  private killFfmpeg(): void {
    const pids = this.cameras.splice(0).flatMap((c) => c.killNow() ?? []);
    if (pids.length > 0) this.log.info({ pids }, 'ffmpeg killed');
  }
}
