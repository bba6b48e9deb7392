import { z } from 'zod';
import { int, topicLevel } from './primitives.js';

export const events = z
  .strictObject({
    /** Frames an object must be matched in before its `new` event. */
    min_frames: int().min(1).max(100).default(2),
    /** The unit of `speed` in events and of zones' `speed_threshold`. */
    speed_unit: z.enum(['km/h', 'mph', 'm/s']).default('km/h'),
    /** An object unseen for more than this ends: its track is kept, predicted on, this long. */
    end_after_s: z.number().min(0.1).max(3600).default(3),
    /** Detections scoring at least this start tracks; lower ones only keep existing tracks. */
    high_score: z.number().gt(0).max(1).default(0.5),
    /** An object that has not moved materially for this long becomes stationary. */
    stationary_after_s: z.number().min(1).max(86400).default(10),
    /**
     * Labels the model confuses for one object (a van called `truck` and `car` by turns): one
     * track, labelled by the vote of its detections' scores. A label belongs to one group at most.
     */
    label_groups: z
      .array(z.array(topicLevel).min(2).max(20))
      .max(20)
      .default([
        ['car', 'truck', 'bus'],
        ['bicycle', 'motorcycle'],
      ])
      .superRefine((groups, ctx) => {
        const seen = new Set<string>();
        groups.forEach((g, i) =>
          g.forEach((label, j) => {
            if (seen.has(label))
              ctx.addIssue({ code: 'custom', path: [i, j], message: `'${label}' is in more than one group` });
            seen.add(label);
          }),
        );
      }),
    /** Colour histograms of the objects join the motion cost, so crossing objects keep their ids. */
    appearance: z.boolean().default(true),
    /** A lost object whose place something else covers (a walker behind a bus) is held this long at most. */
    hold_hidden_s: z.number().min(0).max(600).default(10),
    /** An `update` is sent when the box's centre moved this many box diagonals from the last report... */
    update_move: z.number().gt(0).max(100).default(1),
    /** ...or its best score rose this much. */
    update_score: z.number().min(0).max(1).default(0.1),
    /** Each event's best frame, as JPEGs: on MQTT, in the history, over HTTP. */
    snapshots: z
      .strictObject({
        enabled: z.boolean().default(true),
        /** An object's snapshot is replaced by a better frame at most this often. */
        min_interval_s: z.number().min(0).max(3600).default(2),
        /** JPEG quality of both pictures: 70 as Frigate (issue 47: a fifth fewer bytes than 80). */
        quality: int().min(1).max(100).default(70),
        /**
         * A recording camera's full snapshot is a frame of its recording (issue 47): true, it is
         * written as its own file before that footage goes (kept while its event is); false, it
         * goes with its footage (the crop stays), so no picture is written twice.
         */
        outlive_footage: z.boolean().default(true),
      })
      .prefault({}),
    /** The latest events with their snapshots, kept in the state directory. */
    history: z
      .strictObject({
        /** 0 keeps no history. */
        max_events: int().min(0).max(20000).default(1000),
        max_mb: z.number().gt(0).max(1048576).default(100),
        /** Events that started longer ago than this go, with their snapshots and clips; 0: no limit. */
        max_days: z.number().min(0).max(3650).default(30),
      })
      .prefault({}),
    /**
     * A video clip per event (cameras' `clips`): from `pre_capture_s` before the object was
     * first seen to `post_capture_s` after it was last seen, a time range of the camera's one
     * recording (the stream as sent, written once), made into an MP4 on request (no re-encoding).
     */
    clips: z
      .strictObject({
        /** Cameras keep clips unless their own `clips` says otherwise (off: the ring writes all the time). */
        enabled: z.boolean().default(false),
        pre_capture_s: z.number().min(0).max(60).default(5),
        post_capture_s: z.number().min(0).max(300).default(5),
        /** A longer event's clip stops here (from its start, pre-roll included). */
        max_clip_s: z.number().min(5).max(3600).default(120),
        /** Where each camera's ring of recent video is written (a tmpfs spares an SD card); absent: `<state_dir>/ring`. Relative to the config file. */
        ring_dir: z.string().min(1).optional(),
        /** The most a camera's recording may hold (events' footage and the recent margin); the oldest go first. */
        ring_max_mb: z.number().min(1).max(1048576).default(256),
        /** Events' footage is kept this many days at most (then freed, oldest first); 0: no limit but the bytes. */
        retain_days: z.number().min(0).max(3650).default(7),
        /** Days of continuous recording kept for cameras with `record: always` and no `record_days` of their own. */
        record_days: z.number().positive().max(3650).default(1),
        /** The most all cameras' recordings may hold together (each camera an equal share); 0: no total. */
        max_gb: z.number().min(0).max(1048576).default(0),
        /** The most bytes of MP4s made on request kept for repeat requests (the least recently asked go first). */
        cache_mb: z.number().min(1).max(1048576).default(256),
      })
      .prefault({}),
  })
  .prefault({});
