import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { FleetView } from '../../src/fleet/index.js';
import { chromiumSkip as chromiumSkipFor, launchChromium } from '../helpers/browser.js';
import { httpBase, startDaemon, writeDaemonConfig } from '../helpers/daemon.js';
import { repoRoot, tempDir, updateDocImage } from '../helpers/env.js';
import { needsEtcd, startEtcdCluster } from '../helpers/etcd.js';
import { startBroker } from '../helpers/mqtt.js';

/**
 * Issue 48, item 4: the page's fleet view. Two real daemons on a real etcd; box a's page (headless
 * Chromium) shows both boxes with their labels, capacity, load and the cameras each runs, as
 * box a's /api/fleet says; box b SIGKILLed, the page shows its cameras on a. (Without `fleet:`
 * the section stays hidden: page.test.ts.)
 */

const chromiumSkip = chromiumSkipFor('fleet page test');
/** Where the page's screenshots are kept: CI's artefacts (.ci/run prints where). */
const ARTIFACTS = process.env.ARGUS_ARTIFACTS_DIR ?? join(repoRoot, 'artifacts');
/** Cheap cameras: still grey pictures, one frame a second, no detection. */
const camera = { url: 'lavfi:color=c=0x404040:s=160x120:r=1', fps: 1, detect: false };
const CAMERAS = ['c1', 'c2', 'c3', 'c4'];

interface Row {
  box: string;
  labels: string;
  capacity: string;
  load: string;
  alive: string;
  cameras: string;
}

describe('the page’s fleet view (headless Chromium, real etcd)', { timeout: 240_000 }, () => {
  it(
    'shows the members, their labels, capacity, load, alive, and which box runs which camera',
    { skip: needsEtcd || chromiumSkip },
    async (t) => {
      const etcd = await startEtcdCluster(t, 1);
      const broker = await startBroker(t);
      const configOf = async (box: string, capacity: number, labels: string[]): Promise<string> =>
        writeDaemonConfig(await tempDir(t), {
          mqtt: { url: broker.url, base_topic: 'site', client_id: `argus-${box}` },
          fleet: { endpoints: etcd.endpoints, name: box, capacity, labels, ttl_s: 3 },
          cameras: Object.fromEntries(CAMERAS.map((c) => [c, camera])),
        });
      const a = startDaemon(t, await configOf('a', 4, ['gpu']));
      const b = startDaemon(t, await configOf('b', 6, []));
      // Generous: two daemons start side by side on a machine that may be busy.
      const base = await httpBase(a.output, 120_000);
      const api = async (): Promise<FleetView> =>
        (await (await fetch(`${base}/api/fleet`)).json()) as FleetView;

      const browser = await launchChromium(t);
      const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      await page.goto(base + '/');
      // The fleet table's rows as the browser has them (an expression: the tests have no DOM types).
      const rows = (): Promise<Row[]> =>
        page.evaluate<Row[]>(
          `[...document.querySelectorAll('#fleet-members tr')].map((tr) => {
            const cell = (c) => tr.querySelector('td.' + c)?.textContent ?? '';
            return { box: tr.dataset.box ?? '', labels: cell('labels'), capacity: cell('capacity'),
              load: cell('load'), alive: cell('alive'), cameras: cell('cameras') };
          })`,
        );
      /** What the page should show for a view of /api/fleet. */
      const expected = (v: FleetView): Row[] =>
        [...v.members]
          .sort((x, y) => x.name.localeCompare(y.name))
          .map((m) => ({
            box: m.name,
            labels: m.labels.join(', '),
            capacity: String(m.capacity),
            load: `${m.cameras.length}/${m.capacity} · ${Math.round((100 * m.cameras.length) / m.capacity)} %`,
            alive: 'alive',
            cameras: [...m.cameras].sort().join(', '),
          }));
      /** Waits until the page shows what /api/fleet says and `cond` holds of it. */
      const showsFleet = async (what: string, cond: (v: FleetView) => boolean): Promise<FleetView> => {
        const end = Date.now() + 90_000;
        for (;;) {
          const v = await api();
          const shown = await rows();
          if (cond(v) && JSON.stringify(shown) === JSON.stringify(expected(v))) return v;
          if (Date.now() > end)
            assert.fail(`the page never showed ${what}: ${JSON.stringify({ api: v, page: shown })}`);
          await new Promise((r) => setTimeout(r, 500));
        }
      };

      // Both boxes, every camera placed (4 on capacities 4 and 6), as the page shows them.
      const both = await showsFleet(
        'both boxes with every camera',
        (v) =>
          v.members.length === 2 && v.members.reduce((n, m) => n + m.cameras.length, 0) === CAMERAS.length,
      );
      t.diagnostic(`box a's page: ${JSON.stringify(await rows())}`);
      // The fleet section as docs/http.md shows it (and CI's artefacts).
      await mkdir(ARTIFACTS, { recursive: true });
      const png = join(ARTIFACTS, 'live-page-fleet.png');
      await page.locator('#fleet').screenshot({ path: png });
      t.diagnostic(await updateDocImage(png, 'live-page-fleet.png'));
      assert.equal(await page.locator('#fleet').isVisible(), true);
      assert.match((await page.textContent('#fleet-state')) ?? '', /seen from a/);
      assert.match((await page.textContent('#fleet-members tr[data-box="a"] td.box')) ?? '', /\(this box\)/);
      const rowA = (await rows()).find((r) => r.box === 'a')!;
      assert.equal(rowA.labels, 'gpu');
      assert.equal(rowA.capacity, '4');
      // Each camera on the row of the box etcd names its owner.
      for (const c of CAMERAS) {
        const owner = both.owners[c]?.box;
        assert.ok(owner, `${c} has an owner`);
        assert.ok(
          (await rows())
            .find((r) => r.box === owner)!
            .cameras.split(', ')
            .includes(c),
          `${c} on ${owner}'s row`,
        );
      }

      // Box b killed: once its lease is gone, the page shows box a alone, running every camera.
      b.child.kill('SIGKILL');
      await b.exited;
      await showsFleet(
        'box a alone with every camera',
        (v) => v.members.length === 1 && v.members[0]!.cameras.length === CAMERAS.length,
      );
      t.diagnostic(`after b's kill: ${JSON.stringify(await rows())}`);
      assert.equal(await page.locator('#fleet-members tr[data-box="b"]').count(), 0);
    },
  );
});
