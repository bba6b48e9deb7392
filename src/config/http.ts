import { z } from 'zod';
import { addressProblem } from '../addresses.js';
import { int, urlWithSchemes } from './primitives.js';

export const http = z
  .strictObject({
    enabled: z.boolean().default(true),
    host: z.string().min(1).default('127.0.0.1'),
    port: int().min(0).max(65535).default(8080),
    /**
     * How others reach this HTTP server (e.g. http://argus.lan:8080, or a proxy's URL): event
     * clips' `url` on MQTT is this with the clip's path after it (Home Assistant opens it).
     */
    public_url: urlWithSchemes('http.public_url', ['http', 'https'])
      .refine((s) => {
        try {
          const u = new URL(s);
          return u.username === '' && u.password === '';
        } catch {
          return true; // said above
        }
      }, 'must not hold a user or password: it is copied into every clip URL on MQTT and in the history')
      .optional(),
    /** Largest image POST /api/detect accepts. */
    max_body_mb: z.number().gt(0).max(200).default(10),
    /** Priority of POST /api/detect images (and KServe inference pictures) among the cameras (1..10). */
    detect_priority: int().min(1).max(10).default(5),
    /** Serve the models over KServe v2 / Open Inference Protocol under /v2 (docs/http.md). */
    inference: z.boolean().default(false),
    /**
     * A request from elsewhere than this machine changes settings (PUT /api/control...) only
     * with `Authorization: Bearer <token>`; a secret. Without it, only local requests may.
     */
    token: z
      .string()
      .min(16, 'must be at least 16 characters (a guessable token guards nothing)')
      // What `Authorization: Bearer <token>` can carry (RFC 6750's b64token): no spaces.
      .regex(
        /^[A-Za-z0-9\-._~+/]+=*$/,
        'may hold only letters, digits and - . _ ~ + / (then =): it goes in a Bearer header',
      )
      .optional(),
    /**
     * Addresses of the reverse proxies in front (IPs or CIDR blocks, e.g. 127.0.0.1): their
     * X-Forwarded-For / Forwarded / X-Real-IP name the client in logs; a request from one is never
     * taken as local.
     */
    trusted_proxies: z
      .array(
        z.string().superRefine((s, ctx) => {
          const problem = addressProblem(s);
          if (problem) ctx.addIssue({ code: 'custom', message: problem });
        }),
      )
      .max(64)
      .default([]),
    /**
     * Names this server answers to besides IP addresses, localhost, this machine's name and
     * public_url's (a proxy that passes the browser's Host, e.g. argus.example.com): a request
     * naming another host gets 403, so a DNS-rebinding page reads nothing. `.example.com` allows
     * the domain and its subdomains; `*` allows any name (the check off).
     */
    allowed_hosts: z
      .array(
        z
          .string()
          .regex(/^(\*|\.?[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*\.?)$/, 'must be a host name, .domain or *'),
      )
      .max(64)
      .default([]),
  })
  .prefault({});
