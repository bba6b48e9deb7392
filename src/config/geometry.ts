import { z } from 'zod';
import { calibrationProblem, polygonProblem } from '../core/polygon.js';
import { int, LIMITS, topicLevel } from './primitives.js';

/** The shapes drawn on a camera's picture: points, polygons, masks, zones (calibrated or not), lines. */

const point = z.tuple([z.number().min(0), z.number().min(0)]);

/**
 * A polygon in source pixels: at least three points, at most LIMITS.points (counted before any
 * other check), that enclose some area without crossing themselves (core/polygon.ts).
 */
const polygon = z
  .array(point)
  .min(3)
  .max(LIMITS.points)
  .superRefine((p, ctx) => {
    if (p.length > LIMITS.points) return;
    const problem = polygonProblem(p);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

/**
 * A side of a calibrated zone, in metres (docs/config.md, "Speed"): from 10 cm (less is below what
 * a box's jitter allows to measure) to 10 km (more is no patch of flat ground one camera sees).
 */
export const DISTANCE_M = { min: 0.1, max: 10_000 };
const distance = z.number().min(DISTANCE_M.min).max(DISTANCE_M.max);

/** Masks: polygons in source pixels (a detection whose box's bottom centre is inside one is dropped). */
export const masks = z.array(polygon).max(LIMITS.zones).default([]);

/** A zone of a camera (`cameras.<camera>.zones.<zone>`). */
export const zone = z
  .strictObject({
    /** Polygon in source pixels, at least three points. */
    points: polygon,
    objects: z.array(topicLevel).min(1).optional(),
    /** An object in the zone this long is loitering: one `update` event says so. */
    loiter_s: z.number().positive().max(86400).optional(),
    /** Off: the zone counts nothing and events do not name it. */
    enabled: z.boolean().default(true),
    /**
     * What must be inside: the box's bottom centre (where it stands), its centre, or any
     * part of the box (`any`: the box overlaps the polygon).
     */
    anchor: z.enum(['bottom_center', 'center', 'any']).default('bottom_center'),
    /** Consecutive analysed frames an object must be inside before it has entered (box jitter at the edge). */
    inertia: int().min(1).max(100).default(3),
    /**
     * The real lengths, in metres, of the zone's four sides (points 1→2, 2→3, 3→4, 4→1): the
     * zone is then a calibrated patch of flat ground and objects in it get a speed.
     */
    distances: z.tuple([distance, distance, distance, distance]).optional(),
    /** With distances: an object enters the zone only faster than this (in events.speed_unit). */
    speed_threshold: z.number().positive().optional(),
  })
  .refine((zn) => !zn.distances || zn.points.length === 4, {
    message: 'distances needs a zone of exactly four points (one length per side)',
    path: ['distances'],
  })
  .refine((zn) => zn.speed_threshold === undefined || zn.distances !== undefined, {
    message: 'speed_threshold needs distances (a calibrated zone)',
    path: ['speed_threshold'],
  })
  .superRefine((zn, ctx) => {
    // A polygon that is no polygon is refused as such, once.
    const problem = zn.distances && !polygonProblem(zn.points) && calibrationProblem(zn.points);
    if (problem) ctx.addIssue({ code: 'custom', message: problem, path: ['points'] });
  });

/** A line of a camera (`cameras.<camera>.lines.<line>`). */
export const line = z
  .strictObject({
    /** From A to B, in source pixels. */
    points: z.tuple([point, point]),
    /** Labels counted; absent means all the camera tracks. */
    objects: z.array(topicLevel).min(1).optional(),
    /**
     * Names of the two ways across: the first for objects going from the left of A→B to
     * its right (as drawn on the picture: top to bottom for A on the left, B on the right).
     */
    directions: z.tuple([topicLevel, topicLevel]).default(['in', 'out']),
    /** The point of the box that crosses: its centre, or its bottom centre (where it stands). */
    anchor: z.enum(['center', 'bottom_center']).default('center'),
    /** Off: crossings are not counted (the counts so far are kept). */
    enabled: z.boolean().default(true),
  })
  .refine((l) => l.points[0][0] !== l.points[1][0] || l.points[0][1] !== l.points[1][1], {
    message: 'the two points must differ',
    path: ['points'],
  })
  .refine((l) => l.directions[0] !== l.directions[1], {
    message: 'the two directions need different names',
    path: ['directions'],
  });
