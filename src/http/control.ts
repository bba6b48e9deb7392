import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ChangeRequest, Control } from '../control/index.js';
import { errorMessage } from '../core/errors.js';
import { parseControlPath, settingKey } from '../core/setting-keys.js';
import { HttpError } from './errors.js';
import { send } from './send.js';
import { changerOf, type ChangeAccess } from './trust.js';
import { readBody } from './upload.js';

/**
 * GET /api/control and its PUTs (docs/http.md): the routes and the JSON bodies, as plain
 * functions, and `serveControl`, which reads the request (who asks, then the body) and hands the
 * change to Control.
 */

/** What the HTTP API asks of the runtime settings. */
export type ControlApi = Pick<Control, 'enabled' | 'view' | 'change'>;

/** A PUT's body is one JSON value (`true`, `12`, `"away"`): a few KiB is ample. */
export const MAX_CONTROL_BODY = 4096;

/** A route under /api/control: what it reads or changes. */
export type ControlRoute =
  | { kind: 'view' }
  | { kind: 'mode' }
  | { kind: 'set'; camera: string; key: string }
  | { kind: 'reset'; camera: string; line: string }
  | { kind: 'relearn'; camera: string };

/**
 * The route of a path under /api/control (undefined: a path elsewhere; another path under it is a
 * 404). Each segment is decoded on its own, so a name may hold any character (`/` as %2F); a bad
 * escape is a 400. After `cameras/<camera>/` comes a setting as the one codec reads it
 * (core/setting-keys.ts `parseControlPath`): its levels as on MQTT (`zones/front.door/enabled`,
 * `lines/gate/reset`) or its flat key in one segment (`zones.front.door.enabled`). One segment
 * that is no setting's key still routes, so Control answers which camera has no such setting.
 */
export function controlRoute(path: string): ControlRoute | undefined {
  if (path !== '/api/control' && !path.startsWith('/api/control/')) return undefined;
  let parts: string[];
  try {
    parts = path.split('/').slice(3).map(decodeURIComponent);
  } catch {
    throw new HttpError(400, 'bad escape (%) in the path');
  }
  const [a, camera, b] = parts;
  if (parts.length === 0) return { kind: 'view' };
  if (parts.length === 1 && a === 'mode') return { kind: 'mode' };
  if (a === 'cameras' && camera && b) {
    const ref = parseControlPath(parts.slice(2));
    if (ref?.kind === 'reset') return { kind: 'reset', camera, line: ref.line };
    if (ref?.kind === 'relearn') return { kind: 'relearn', camera };
    if (ref) return { kind: 'set', camera, key: settingKey(ref) };
    if (parts.length === 3) return { kind: 'set', camera, key: b };
  }
  throw new HttpError(
    404,
    'no such route: /api/control, /api/control/mode, /api/control/cameras/<camera>/<key>, …/lines/<line>/reset or …/health/reset',
  );
}

/** A PUT's body as the JSON value it holds. */
function jsonBody(body: Buffer, expected: string): unknown {
  const text = body.toString('utf8').trim();
  if (text === '') throw new HttpError(400, `body: empty; send ${expected}`);
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new HttpError(400, `body: not JSON (${errorMessage(err)}); send ${expected}`);
  }
}

/** The change a PUT asks for, from its route and body; a body that cannot be one is a 400. */
export function changeRequest(route: Exclude<ControlRoute, { kind: 'view' }>, body: Buffer): ChangeRequest {
  if (route.kind === 'reset' || route.kind === 'relearn') {
    // The button needs no value; `true` is allowed for clients that always send one.
    if (body.toString('utf8').trim() !== '' && jsonBody(body, 'true') !== true)
      throw new HttpError(400, 'body: send nothing or true');
    return route;
  }
  if (route.kind === 'mode') {
    const mode = jsonBody(body, 'a mode name as a JSON string, e.g. "away" (or "none")');
    if (typeof mode !== 'string')
      throw new HttpError(400, 'body: a mode name as a JSON string, e.g. "away" (or "none")');
    return { kind: 'mode', mode };
  }
  const expected = 'true or false (a number for fps and priority) as JSON';
  const value = jsonBody(body, expected);
  if (typeof value !== 'boolean' && typeof value !== 'number')
    throw new HttpError(400, `body: send ${expected}`);
  return { kind: 'set', camera: route.camera, key: route.key, value };
}

/**
 * GET /api/control, and the PUTs that change a setting, the mode, or reset a line: each is
 * checked (who asks, then the body) before Control sees it, and answered with the settings as
 * they are now. `controlOf` gives the runtime settings (undefined where none run: tools).
 */
export async function serveControl(
  req: IncomingMessage,
  res: ServerResponse,
  route: ControlRoute,
  controlOf: () => ControlApi | undefined,
  access: ChangeAccess,
): Promise<void> {
  const allow = route.kind === 'view' ? 'GET, HEAD' : 'PUT';
  if (!allow.split(', ').includes(req.method ?? '')) {
    res.setHeader('Allow', allow);
    return send(res, 405, 'text/plain; charset=utf-8', 'method not allowed\n');
  }
  const control = controlOf();
  if (!control) throw new HttpError(404, 'no runtime settings in this process');
  if (route.kind !== 'view') {
    if (!control.enabled) throw new HttpError(403, 'control is off (control.enabled: false)');
    const by = changerOf(req, res, access);
    const outcome = await control.change(changeRequest(route, await readBody(req, MAX_CONTROL_BODY)), by);
    if (!outcome.ok) throw new HttpError(outcome.status, outcome.error);
    if (outcome.deferred !== undefined) {
      // Kept, not applied yet (Argus is stopping): 202, and why, beside the settings as they will run.
      res.setHeader('Cache-Control', 'no-store');
      return send(
        res,
        202,
        'application/json',
        JSON.stringify({ ...control.view(), deferred: outcome.deferred }),
      );
    }
  }
  res.setHeader('Cache-Control', 'no-store');
  return send(res, 200, 'application/json', JSON.stringify(control.view()));
}
