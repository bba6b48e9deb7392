import type { FleetView } from './api.js';
import { $, el } from './dom.js';
import { fleetRows } from './format.js';

/**
 * The fleet's table (with `fleet:` only: `/api/fleet`): each box with its labels, capacity, load,
 * whether it is alive, and the cameras it runs; the cameras no box can run below it. Rebuilt at
 * each refresh (a few rows); hidden without `fleet:`.
 */
export function showFleet(view: FleetView | undefined): void {
  const section = $('fleet');
  section.hidden = !view;
  if (!view) return;
  $('fleet-state').textContent =
    'seen from ' + view.box + (view.connected ? '' : ' · etcd unreachable: as last read');
  $('fleet-state').className = view.connected ? 'when' : 'why';
  const body = $('fleet-members');
  body.replaceChildren(
    ...fleetRows(view).map((r) => {
      const tr = el('tr', r.alive ? '' : 'gone');
      tr.dataset.box = r.box;
      tr.append(
        el('td', 'box', r.box + (r.here ? ' (this box)' : '')),
        el('td', 'labels', r.labels),
        el('td', 'capacity', r.capacity === null ? '' : String(r.capacity)),
        el('td', 'load', r.load),
        el('td', 'alive', r.alive ? 'alive' : 'gone'),
        el('td', 'cameras', r.cameras.join(', ')),
      );
      return tr;
    }),
  );
  const unplaced = $('fleet-unplaced');
  unplaced.hidden = view.unplaced.length === 0;
  unplaced.textContent = 'no box can run: ' + view.unplaced.join(', ');
}
