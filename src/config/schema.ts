import { z } from 'zod';
import { namedRecord } from '../core/names.js';
import { camera } from './camera.js';
import { events } from './events.js';
import { fleet } from './fleet.js';
import { health } from './health.js';
import { http } from './http.js';
import { detector, model, namedModel, type ModelConfig } from './models.js';
import { homeAssistant, mqtt } from './mqtt.js';
import { LIMITS, namedMap } from './primitives.js';
import { control, mode, NO_MODE } from './runtime.js';
import { cache, ffmpeg, scheduler } from './stages.js';

/**
 * The configuration schema: the one definition of what a config file may contain, used both to
 * validate files and (through z.infer) as the daemon's configuration type.
 */

/** Whether one topic prefix is the other, or under it. */
const overlaps = (a: string, b: string): boolean => a === b || a.startsWith(`${b}/`) || b.startsWith(`${a}/`);

/** The sections of a config file; `configSchema` adds the checks across sections. */
const sections = z.strictObject({
  log_level: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal']).default('info'),
  /**
   * What survives a restart (line counts, the event history, control.json). systemd's
   * $STATE_DIRECTORY wins when set; absent, the config's own directory,
   * ~/.local/state/argus/<name>-<hash> (state/dir.ts, state/legacy.ts). Relative to the config file.
   */
  state_dir: z.string().min(1).optional(),
  mqtt,
  model: model.optional(),
  models: namedMap(namedModel, { max: LIMITS.models, what: 'models' }),
  detector,
  scheduler,
  cache,
  http,
  ffmpeg,
  events,
  health,
  home_assistant: homeAssistant,
  control,
  modes: namedMap(mode, { max: LIMITS.modes, what: 'modes' }),
  /** Many boxes, one file: each runs the cameras etcd gives it (src/fleet). Absent: every camera runs here. */
  // The keys left empty (as config/example.yaml shows them): no fleet.
  fleet: z.preprocess(
    (f) =>
      f && typeof f === 'object' && !['endpoints', 'name', 'capacity'].some((k) => Object.hasOwn(f, k))
        ? undefined
        : f,
    fleet.optional(),
  ),
  cameras: namedMap(camera, { max: LIMITS.cameras, what: 'cameras' }),
});

/** A mode may name only cameras, zones and lines the file has; `none` is no mode's name. */
function checkModes(c: z.output<typeof sections>, ctx: z.RefinementCtx): void {
  for (const [name, m] of Object.entries(c.modes)) {
    if (name === NO_MODE)
      ctx.addIssue({
        code: 'custom',
        path: ['modes', name],
        message: `'${NO_MODE}' is reserved: choosing it leaves every mode`,
        params: { atKey: true },
      });
    for (const [cam, sw] of Object.entries(m.cameras)) {
      const at = ['modes', name, 'cameras', cam];
      const camera = c.cameras[cam];
      if (!camera) {
        const known = Object.keys(c.cameras).join(', ') || 'none';
        ctx.addIssue({
          code: 'custom',
          path: at,
          message: `there is no camera '${cam}' (the cameras are ${known})`,
          params: { atKey: true },
        });
        continue;
      }
      for (const kind of ['zones', 'lines'] as const)
        for (const area of Object.keys(sw[kind]))
          if (!Object.hasOwn(camera[kind], area))
            ctx.addIssue({
              code: 'custom',
              path: [...at, kind, area],
              message: `camera '${cam}' has no ${kind === 'zones' ? 'zone' : 'line'} '${area}'`,
              params: { atKey: true },
            });
    }
  }
}

/**
 * The whole file. `model:` becomes the entry `default` of `models` (the type has `models`
 * only): everything past the loader reads every model, the default included, from there.
 */
export const configSchema = sections
  .superRefine((c, ctx) => {
    const ha = c.home_assistant;
    if (ha.enabled && overlaps(ha.discovery_prefix, c.mqtt.base_topic))
      ctx.addIssue({
        code: 'custom',
        path: ['home_assistant', 'discovery_prefix'],
        message: `must not be mqtt.base_topic ('${c.mqtt.base_topic}'), nor above or below it: Argus' topics and Home Assistant's would mix`,
      });
    if (c.model && Object.hasOwn(c.models, 'default'))
      ctx.addIssue({
        code: 'custom',
        path: ['models', 'default'],
        message: 'the model named default is also defined by model:; keep one of them',
        params: { atKey: true },
      });
    checkModes(c, ctx);
    if (!c.fleet)
      for (const [name, cam] of Object.entries(c.cameras))
        if (cam.requires)
          ctx.addIssue({
            code: 'custom',
            path: ['cameras', name, 'requires'],
            message:
              'names labels of fleet boxes, but there is no fleet: section (one box runs every camera)',
          });
    for (const [name, cam] of Object.entries(c.cameras))
      if (cam.record === 'always' && !(cam.clips ?? c.events.clips.enabled))
        ctx.addIssue({
          code: 'custom',
          path: ['cameras', name, 'record'],
          message: `is always, but the camera keeps no recording: its clips are off (${cam.clips === false ? 'clips: false' : 'events.clips.enabled is false'}); turn them on`,
        });
    const clipping = Object.values(c.cameras).some((cam) => cam.clips ?? c.events.clips.enabled);
    if (clipping && c.events.history.max_events === 0)
      ctx.addIssue({
        code: 'custom',
        path: ['events', 'history', 'max_events'],
        message: 'is 0 (no history), but cameras keep clips (events.clips): clips are kept in the history',
      });
    const names = [...new Set([...(c.model ? ['default'] : []), ...Object.keys(c.models)])];
    if (names.length === 0)
      ctx.addIssue({
        code: 'custom',
        path: ['model'],
        message: 'is required: set model: (the default model), or name models under models:',
      });
    else
      for (const [name, cam] of Object.entries(c.cameras))
        if (!names.includes(cam.model))
          ctx.addIssue({
            code: 'custom',
            path: ['cameras', name, 'model'],
            message: `there is no model named '${cam.model}'${cam.model === 'default' ? ' (a camera without model: uses default)' : ''}; the models are ${names.join(', ')}`,
          });
  })
  .transform(({ model: legacy, models, ...rest }) => {
    // Kept without a prototype, as namedMap made it.
    const all = legacy ? Object.assign(namedRecord<ModelConfig>(), { default: legacy }, models) : models;
    return { ...rest, models: all };
  });

export type Config = z.output<typeof configSchema>;

/**
 * One section filled in with its defaults, for tools that run a stage outside the daemon
 * (`argus detect`, the bench): `sectionConfig('detector', { workers: 1 })`. Throws on values the
 * schema refuses.
 */
export function sectionConfig<K extends Exclude<keyof Config, 'cameras' | 'log_level' | 'models'>>(
  key: K,
  partial: z.input<(typeof sections.shape)[K]>,
): Config[K] {
  return sections.shape[key].parse(partial) as Config[K];
}

/** One model with its defaults, as an entry of `models:` (`modelConfig({ path })`). Throws when invalid. */
export function modelConfig(partial: z.input<typeof namedModel>): ModelConfig {
  return namedModel.parse(partial);
}
