/**
 * The live page's script (served at /page/main.js, loaded by the HTML of src/http/page.ts): every
 * two seconds it reads the cameras, the settings, the events and (with `fleet:`) the fleet from the
 * HTTP API and shows them.
 */
import { json, type CameraView, type ControlView, type EventView, type FleetView } from './api.js';
import { cards, dropCard, showCamera } from './cards.js';
import { listenToMode, showControl } from './control.js';
import { $ } from './dom.js';
import { showEvents } from './events.js';
import { showFleet } from './fleet.js';

/**
 * One refresh: cameras, then events. Each refresh is a generation; one started since (a change
 * of the camera filter) makes this one's answers stale, and they are dropped.
 */
let generation = 0;
/** Whether this Argus is in a fleet: asked once (a 404 says no), then read at each refresh. */
let inFleet: boolean | undefined;
async function fleet(): Promise<FleetView | undefined> {
  if (inFleet === false) return undefined;
  const res = await fetch('/api/fleet');
  if (res.status === 404 && inFleet === undefined) return void (inFleet = false);
  if (!res.ok) throw new Error('/api/fleet answered ' + res.status);
  inFleet = true;
  return (await res.json()) as FleetView;
}

async function refresh(mine: number): Promise<void> {
  const updated = $('updated');
  try {
    const [cams, control, boxes] = await Promise.all([
      json<CameraView[]>('/api/cameras'),
      json<ControlView>('/api/control'),
      fleet(),
    ]);
    if (mine !== generation) return;
    const names = new Set(cams.map((c) => c.camera));
    for (const name of cards.keys()) if (!names.has(name)) dropCard(name);
    const loads = cams.map(showCamera);
    showControl(control);
    showFleet(boxes);
    const camera = $<HTMLSelectElement>('camera-filter').value;
    const events = await json<EventView[]>(
      '/api/events?limit=50' + (camera ? '&camera=' + encodeURIComponent(camera) : ''),
    );
    if (mine !== generation) return;
    loads.push(...showEvents(events));
    const failed = (await Promise.allSettled(loads)).find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
    updated.textContent = 'updated ' + new Date().toLocaleTimeString();
    updated.className = '';
  } catch (e) {
    if (mine !== generation) return;
    const message = e instanceof Error ? e.message : String(e);
    updated.textContent = (e instanceof TypeError ? 'cannot reach Argus' : message) + '; retrying';
    updated.className = 'stale';
  }
}

// Refreshes never pile up: the next starts 2 s after the last ended, or at once on a new filter.
let timer: ReturnType<typeof setTimeout> | undefined;
async function loop(): Promise<void> {
  const mine = ++generation;
  clearTimeout(timer);
  await refresh(mine);
  if (mine === generation) timer = setTimeout(() => void loop(), 2000);
}

listenToMode();
$('camera-filter').addEventListener('change', () => void loop());
void loop();
