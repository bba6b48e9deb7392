import { z } from 'zod';
import { topicWord } from './names.js';
import { int } from './primitives.js';

/**
 * `fleet:` (docs/fleet.md): many boxes read one file and each runs only the cameras etcd's leases
 * and transactions give it. Absent: this box runs every camera, as a single box always did.
 */

/** An etcd endpoint: `host:port`, or `http(s)://host:port` (https wants `tls`). */
const endpoint = z.string().superRefine((s, ctx) => {
  const withScheme = /^[a-z]+:\/\//i.test(s) ? s : `http://${s}`;
  let u: URL;
  try {
    u = new URL(withScheme);
  } catch {
    ctx.addIssue({
      code: 'custom',
      message: 'not an etcd endpoint (expected host:port or http(s)://host:port)',
    });
    return;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    ctx.addIssue({
      code: 'custom',
      message: `etcd endpoint scheme '${u.protocol.slice(0, -1)}' is not http or https`,
    });
  else if (!u.hostname || !u.port)
    ctx.addIssue({ code: 'custom', message: 'etcd endpoint needs a host and a port (etcd listens on 2379)' });
  else if (u.username || u.password)
    ctx.addIssue({
      code: 'custom',
      message: 'etcd endpoint must not carry a login: use fleet.username and fleet.password',
    });
  else if (u.pathname !== '/' || u.search)
    ctx.addIssue({ code: 'custom', message: 'etcd endpoint is host:port only, without a path' });
});

/** etcd's key prefix for this fleet: `/`-separated words, no trailing `/`. */
const prefix = z
  .string()
  .regex(
    /^\/?[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.-]+)*$/,
    'must be words of letters, digits, _ . - separated by /',
  );

export const fleet = z
  .strictObject({
    /** etcd's client endpoints (every member of the cluster, so any one may be away). */
    endpoints: z.array(endpoint).min(1).max(16),
    /** This box's name among the members: unique in the fleet. */
    name: topicWord.pipe(z.string().max(64)),
    /** Cameras this box can analyse: its weight in the placement (a box of 20 gets twice a box of 10). */
    capacity: z.number().positive().max(100000),
    /** What this box offers (`gpu`, `site-a`): cameras that `require` a label run only on boxes that have it. */
    labels: z.array(topicWord).max(32).default([]),
    /**
     * Seconds etcd keeps this box's lease without a keep-alive: how long a dead box keeps its
     * cameras before another takes them over. Lower takes over sooner and asks more of etcd.
     */
    ttl_s: int().min(2).max(300).default(5),
    /** Keys under this prefix in etcd (several fleets may share one cluster). */
    prefix: prefix.default('/argus'),
    username: z.string().min(1).optional(),
    password: z.string().min(1).optional(),
    /** PEM files, relative to the config file: the CA that signed etcd's certificate, this box's client certificate and key. */
    tls: z
      .strictObject({
        ca: z.string().min(1),
        cert: z.string().min(1).optional(),
        key: z.string().min(1).optional(),
      })
      .refine((t) => (t.cert === undefined) === (t.key === undefined), {
        message: 'cert and key go together: set both, or neither',
        path: ['key'],
      })
      .optional(),
  })
  .refine((f) => (f.username === undefined) === (f.password === undefined), {
    message: 'username and password go together: set both, or neither',
    path: ['password'],
  })
  .superRefine((f, ctx) => {
    const https = f.endpoints.some((e) => e.toLowerCase().startsWith('https://'));
    if (https && !f.tls)
      ctx.addIssue({
        code: 'custom',
        path: ['tls'],
        message: 'https endpoints need tls.ca (the CA that signed etcd)',
      });
    if (f.tls && f.endpoints.some((e) => e.toLowerCase().startsWith('http://')))
      ctx.addIssue({
        code: 'custom',
        path: ['endpoints'],
        message: 'with tls, endpoints are https:// (or host:port)',
      });
  });

export type FleetConfig = z.output<typeof fleet>;
