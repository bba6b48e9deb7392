import { z } from 'zod';
import { topicLevelProblem } from './primitives.js';
import { cameraSettings } from './runtime.js';

/**
 * The words Argus' own topics use where a label, a zone, a line or a direction is a topic level
 * (src/publish/topics.ts; docs/config.md, "Reserved names"), so a name that is one would land on
 * a topic of another kind: a label `status` on the camera's status, a direction `state` under a
 * label `enabled` on a line's switch state, a direction `set` on a command topic Argus reads.
 * The one list: every such name is checked against it, in the file and in a model's labels.
 */
export const RESERVED_NAMES: readonly string[] = [
  'status',
  'detections',
  'zones',
  'lines',
  'active',
  'snapshot',
  'dwell_s',
  'state',
  'set',
  'reset',
  'health',
  ...Object.keys(cameraSettings),
];

/** Why a label, zone, line or direction name cannot be a topic level of Argus' topics, or undefined. */
export function topicWordProblem(name: string): string | undefined {
  const problem = topicLevelProblem(name);
  if (problem) return problem;
  if (RESERVED_NAMES.includes(name))
    return `must not be one of the words of Argus' own topics (${RESERVED_NAMES.join(', ')}): it would publish onto, or be read as, another of its topics`;
  return undefined;
}

/** A label (or direction) that becomes a topic level: not a word of Argus' own topics. */
export const topicWord = z.string().superRefine((s, ctx) => {
  const problem = topicWordProblem(s);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

/**
 * The names in a camera that become topic levels under it, each checked as a `topicWord` at its
 * line: its zones' and lines' names, their `objects`, the lines' directions (objects.track is a
 * list of `topicWord`s).
 */
export function checkTopicWords(
  cam: {
    zones: Record<string, { objects?: string[] | undefined }>;
    lines: Record<string, { objects?: string[] | undefined; directions: readonly string[] }>;
  },
  ctx: z.RefinementCtx,
): void {
  const flag = (path: (string | number)[], name: string, atKey = false): void => {
    const problem = RESERVED_NAMES.includes(name) ? topicWordProblem(name) : undefined;
    if (problem)
      ctx.addIssue({ code: 'custom', path, message: problem, ...(atKey ? { params: { atKey } } : {}) });
  };
  for (const kind of ['zones', 'lines'] as const)
    for (const [name, area] of Object.entries<{ objects?: string[] | undefined }>(cam[kind])) {
      flag([kind, name], name, true);
      area.objects?.forEach((label, i) => flag([kind, name, 'objects', i], label));
    }
  for (const [name, line] of Object.entries(cam.lines))
    line.directions.forEach((d, i) => flag(['lines', name, 'directions', i], d));
}
