import { z } from 'zod';

/**
 * Camera health (src/health, docs/config.md "health"): the defaults under `health:` and each
 * camera's own `health:` over them. Every key of a camera's is optional; absent, the default's
 * value holds.
 */

/** The faults, in the order one is reported over another when several hold. */
export const HEALTH_FAULTS = ['blackout', 'frozen', 'covered', 'moved', 'defocused'] as const;
export type HealthFault = (typeof HEALTH_FAULTS)[number];

const seconds = z.number().min(0).max(3600);

/** How long each fault's measure must hold before the fault is said (seconds). */
const WINDOWS = { blackout: 3, frozen: 8, covered: 4, moved: 5, defocused: 5 } as const;

/** Where each fault starts (docs/config.md says what each measures). */
const thresholdKeys = {
  /** The share of the reference's detailed view whose detail is gone. */
  covered: z.number().gt(0).max(1),
  /** Sharpness ÷ the reference's at or below this. */
  defocused: z.number().gt(0).lt(1),
  /** The picture shifted by at least this share of its width or height. */
  moved: z.number().min(0.01).max(0.25),
  /** The luma's spread at or below this (levels), the picture near black or white. */
  blackout: z.number().min(0).max(64),
  /** The picture changed by at most this (mean levels) between samples. */
  frozen: z.number().min(0).max(8),
};
const THRESHOLDS = { covered: 0.5, defocused: 0.5, moved: 0.03, blackout: 6, frozen: 0.02 } as const;

const common = {
  enabled: z.boolean(),
  /** A camera whose picture may stay the same (a still image, a test pattern): never `frozen`. */
  still: z.boolean(),
  /** A sample every this long. */
  sample_s: z.number().min(0.2).max(60),
  /** The reference of a time-of-day bucket is learnt over this long. */
  learn_s: z.number().min(5).max(3600),
  /** The day is cut into buckets this long (hours, dividing 24), each with its own reference. */
  bucket_hours: z
    .number()
    .int()
    .min(1)
    .max(24)
    .refine((h) => 24 % h === 0, { message: 'must divide 24 (1, 2, 3, 4, 6, 8, 12 or 24)' }),
  /** A fault ends once its measure has been back past its clearing threshold this long. */
  clear_s: seconds,
};

const windowsOf = <T extends z.ZodTypeAny>(f: (d: number) => T) =>
  z.strictObject({
    blackout: f(WINDOWS.blackout),
    frozen: f(WINDOWS.frozen),
    covered: f(WINDOWS.covered),
    moved: f(WINDOWS.moved),
    defocused: f(WINDOWS.defocused),
  });

/** `health:` at the top: every camera's, unless the camera says otherwise. */
export const health = z
  .strictObject({
    enabled: common.enabled.default(true),
    still: common.still.default(false),
    sample_s: common.sample_s.default(1),
    learn_s: common.learn_s.default(30),
    bucket_hours: common.bucket_hours.default(6),
    clear_s: common.clear_s.default(5),
    windows: windowsOf((d) => seconds.default(d)).prefault({}),
    thresholds: z
      .strictObject({
        covered: thresholdKeys.covered.default(THRESHOLDS.covered),
        defocused: thresholdKeys.defocused.default(THRESHOLDS.defocused),
        moved: thresholdKeys.moved.default(THRESHOLDS.moved),
        blackout: thresholdKeys.blackout.default(THRESHOLDS.blackout),
        frozen: thresholdKeys.frozen.default(THRESHOLDS.frozen),
      })
      .prefault({}),
  })
  .prefault({});

/** A camera's `health:`: any key of the defaults', over them. */
export const cameraHealth = z
  .strictObject({
    enabled: common.enabled.optional(),
    still: common.still.optional(),
    sample_s: common.sample_s.optional(),
    learn_s: common.learn_s.optional(),
    bucket_hours: common.bucket_hours.optional(),
    clear_s: common.clear_s.optional(),
    windows: windowsOf(() => seconds.optional())
      .partial()
      .optional(),
    thresholds: z
      .strictObject({
        covered: thresholdKeys.covered.optional(),
        defocused: thresholdKeys.defocused.optional(),
        moved: thresholdKeys.moved.optional(),
        blackout: thresholdKeys.blackout.optional(),
        frozen: thresholdKeys.frozen.optional(),
      })
      .optional(),
  })
  .optional();

export type HealthSettings = z.output<typeof health>;
export type CameraHealth = z.output<typeof cameraHealth>;

const defined = <T extends object>(o: T | undefined): Partial<T> =>
  Object.fromEntries(Object.entries(o ?? {}).filter(([, v]) => v !== undefined)) as Partial<T>;

/** A camera's health settings: its own keys over the defaults. */
export function healthOf(defaults: HealthSettings, cam: CameraHealth): HealthSettings {
  const { windows, thresholds, ...rest } = cam ?? {};
  return {
    ...defaults,
    ...defined(rest),
    windows: { ...defaults.windows, ...defined(windows) },
    thresholds: { ...defaults.thresholds, ...defined(thresholds) },
  };
}
