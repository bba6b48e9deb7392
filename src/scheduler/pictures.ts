import { fitsModel, type Detection, type Picture } from '../core/frame.js';
import { FrameQueue } from '../queue/index.js';
import { FrameDropped, type Drop, type PictureJob, type PictureLane } from './jobs.js';

/** Pictures submitted at one priority wait here; beyond it the oldest is dropped. */
export const SUBMIT_QUEUE = 16;

/** Why `picture` cannot go to a model that takes `size` × `size` pictures; undefined when it can. */
export function misfitOf(picture: Picture, size: number): RangeError | undefined {
  if (fitsModel(picture, size)) return undefined;
  const g = picture.geometry;
  return new RangeError(
    `picture is ${g.dstW}x${g.dstH} (${picture.data.length} bytes); the model takes ${size}x${size} RGB`,
  );
}

/**
 * The pictures submitted one by one (not from a camera, e.g. an image posted to the HTTP API):
 * their lanes, by model then priority, how many were answered and dropped, and what a picture
 * that gets no answer is told.
 */
export class Submissions {
  private readonly byKey = new Map<string, PictureLane>();
  private readonly counts = { answered: 0, dropped: 0 };

  /** The lane of `model` at `priority`, made when it is the first. */
  lane(model: string, priority: number): PictureLane {
    const key = `${model}\n${priority}`;
    let lane = this.byKey.get(key);
    if (!lane) {
      lane = { model, priority, queue: new FrameQueue<PictureJob>(SUBMIT_QUEUE) };
      this.byKey.set(key, lane);
    }
    return lane;
  }

  lanes(): IterableIterator<PictureLane> {
    return this.byKey.values();
  }

  /** Takes away the lanes whose model is gone (`has` says no), to drop what waits in them. */
  removeGone(has: (model: string) => boolean): PictureLane[] {
    const gone: PictureLane[] = [];
    for (const [key, lane] of this.byKey) {
      if (has(lane.model)) continue;
      this.byKey.delete(key);
      gone.push(lane);
    }
    return gone;
  }

  answered(job: PictureJob, detections: Detection[]): void {
    this.counts.answered++;
    job.resolve(detections);
  }

  /** A picture leaves without an answer: its promise is rejected, saying why. */
  dropped(job: PictureJob, reason: Drop | 'stopped', why?: string): void {
    this.counts.dropped++;
    const text: Record<Drop | 'stopped', string> = {
      full: 'the detector is busy: the picture was dropped (too many pictures waiting)',
      stale: 'the detector is busy: the picture was dropped (it waited too long)',
      error: `the picture's batch failed${why ? `: ${why}` : ''}`,
      stopped: why ?? 'Argus is stopping',
    };
    job.reject(new FrameDropped(reason, text[reason]));
  }

  stats(): { answered: number; dropped: number } {
    return { ...this.counts };
  }
}
