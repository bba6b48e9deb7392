import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import type { ControlView } from '../../src/control/index.js';
import type { CameraView } from '../../src/http/view.js';
import { repoRoot, tempDir, updateDocImage } from '../helpers/env.js';
import { Subscriber } from '../helpers/mqtt.js';
import { freePort } from '../helpers/rtsp.js';
import { launchChromium, chromiumSkip as chromiumSkipFor } from '../helpers/browser.js';
import { httpBase, startDaemon, writeDaemonConfig } from '../helpers/daemon.js';
import { yardCamera } from '../helpers/yard.js';

/**
 * A synthetic camera for the fixture model: a white 64×64 square ('bright') in the upper left,
 * shown 3 s out of every 6 (an event each time), and a red square ('red') always in the lower
 * right, which the camera does not track.
 */
const BLINKER =
  'lavfi:color=c=0x303030:s=640x480:r=5[bg];color=c=white:s=64x64:r=5[box];color=c=red:s=64x64:r=5[red];' +
  "[bg][box]overlay=x=192:y=112:enable='lt(mod(t,6),3)'[a];[a][red]overlay=x=448:y=320";

/** Where the page's screenshots are kept: CI's artefacts (.ci/run prints where). */
const ARTIFACTS = process.env.ARGUS_ARTIFACTS_DIR ?? join(repoRoot, 'artifacts');

const chromiumSkip = chromiumSkipFor('live page test');

/** Pixels of the first box colour (#ff3838) in an RGB(A) image's region, as fractions of its size. */
async function redPixels(png: Buffer, region = { x0: 0, y0: 0, x1: 1, y1: 1 }): Promise<number> {
  const { data, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
  let n = 0;
  for (let y = Math.floor(region.y0 * info.height); y < region.y1 * info.height; y++)
    for (let x = Math.floor(region.x0 * info.width); x < region.x1 * info.width; x++) {
      const i = (y * info.width + x) * info.channels;
      if (data[i]! > 150 && data[i]! - data[i + 1]! > 60 && data[i]! - data[i + 2]! > 60) n++;
    }
  return n;
}

/** Polls `cond` every 300 ms until it holds; throws naming `what` after `timeoutMs`. */
async function until(what: string, cond: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

describe('the page (headless Chromium)', { skip: chromiumSkip }, () => {
  it('shows each camera with its state, why it is down, boxes and counts through its filters, and the events as they happen', async (t) => {
    const dir = await tempDir(t);
    const config = await writeDaemonConfig(dir, {
      mqtt: { embedded: { port: await freePort() } },
      cameras: {
        blinker: { url: BLINKER, objects: { track: ['bright'] } },
        empty: { url: 'lavfi:color=c=0x404040:s=320x240:r=2', fps: 2 },
        down: { url: `rtsp://127.0.0.1:${await freePort()}/nothing-listens` },
      },
    });
    const daemon = startDaemon(t, config);
    const base = await httpBase(daemon.output);
    const browser = await launchChromium(t);
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    // Blob URLs the page holds (frames and thumbnails): each must be freed when replaced.
    await page.addInitScript(
      'window.liveBlobs = new Set(); const make = URL.createObjectURL, free = URL.revokeObjectURL;' +
        'URL.createObjectURL = (b) => { const u = make(b); liveBlobs.add(u); return u; };' +
        'URL.revokeObjectURL = (u) => { liveBlobs.delete(u); free(u); };',
    );
    await page.goto(base + '/');
    // Set once: still there at the end, the page was never reloaded.
    await page.evaluate('window.loadedOnce = true');

    const card = (camera: string) => page.locator(`figure[data-camera="${camera}"]`);
    await page.waitForFunction(
      "document.querySelectorAll('figure').length === 3 && ['blinker', 'empty'].every((c) => document.querySelector('figure[data-camera=' + c + '] img').naturalWidth > 0)",
      undefined,
      { timeout: 30_000 },
    );

    // Boxes: the bright square is boxed, in the upper left where it is; the red square the
    // camera does not track is not (it is red itself, so only its part of the image is spared).
    let boxed = 0;
    await until(
      'a box on the blinker camera',
      async () => {
        const shot = await card('blinker').locator('.frame').screenshot();
        boxed = await redPixels(shot, { x0: 0, y0: 0, x1: 0.6, y1: 0.55 });
        return boxed >= 20;
      },
      20_000,
    );
    assert.equal(
      await redPixels(await card('empty').locator('.frame').screenshot()),
      0,
      'no box on the empty camera',
    );

    assert.equal(await card('blinker').locator('.noframe').isVisible(), false, 'no placeholder over a frame');
    // Without fleet: the page has no fleet section (issue 48; page-fleet.test.ts has one).
    assert.equal(await page.locator('#fleet').isVisible(), false, 'no fleet section');

    // Labels are drawn for the width the frame is shown at: it is asked for at that width, and
    // drawn at it when the frame is that wide (the fixture model's frame inside the padding is
    // 320 wide: wider, the browser scales it and the labels were drawn smaller to match).
    const sizes = await page.evaluate<[number, number]>(
      "[document.querySelector('figure[data-camera=blinker] img')].map((i) => [i.naturalWidth, i.clientWidth])[0]",
    );
    assert.ok(
      Math.abs(sizes[0] - Math.min(320, sizes[1])) <= 2,
      `drawn ${sizes[0]} px wide, shown ${sizes[1]} px wide`,
    );

    // The filters: the model sees the red square (asked directly), the page and API never show it.
    const frame = await (await fetch(`${base}/api/cameras/blinker/latest.jpg`)).arrayBuffer();
    const direct = (await (
      await fetch(`${base}/api/detect`, { method: 'POST', body: Buffer.from(frame) })
    ).json()) as { detections: { label: string }[] };
    assert.ok(
      direct.detections.some((d) => d.label === 'red'),
      'the model itself finds the red square',
    );
    const views = (await (await fetch(`${base}/api/cameras`)).json()) as CameraView[];
    const blinker = views.find((v) => v.camera === 'blinker')!;
    assert.ok(
      blinker.detections.every((d) => d.label === 'bright'),
      JSON.stringify(blinker.detections),
    );
    assert.deepEqual(Object.keys(blinker.counts.labels), ['bright'], 'counts of tracked labels only');
    const blinkerText = (await card('blinker').textContent()) ?? '';
    assert.match(blinkerText, /blinker streaming/);
    assert.match(blinkerText, /bright \d/, 'the count of what the camera tracks');
    assert.doesNotMatch(blinkerText, /red/, 'nothing of the untracked label');

    // A camera that is not streaming says why.
    await until(
      'the down camera to say why',
      async () => ((await card('down').locator('.why').textContent()) ?? '') !== '',
      20_000,
    );
    const down = ((await (await fetch(`${base}/api/cameras`)).json()) as CameraView[]).find(
      (v) => v.camera === 'down',
    )!;
    assert.notEqual(down.state, 'streaming');
    assert.equal(
      await card('down').locator('.why').textContent(),
      `${down.last_error!.cause}: ${down.last_error!.message}`,
    );
    assert.match(
      (await card('down').locator('figcaption').textContent()) ?? '',
      /down (backoff|offline|connecting)/,
    );

    // Events appear without a reload, newest first, with thumbnails.
    await page.waitForFunction(
      "document.querySelectorAll('#events li').length >= 2 && [...document.querySelectorAll('#events li img')].every((i) => i.naturalWidth > 0)",
      undefined,
      { timeout: 30_000 },
    );
    assert.equal(await page.evaluate('window.loadedOnce'), true, 'the page was not reloaded');
    const shown = await page.evaluate<string[]>(
      "[...document.querySelectorAll('#events li')].map((r) => r.dataset.event)",
    );
    const listed = ((await (await fetch(`${base}/api/events?limit=50`)).json()) as { id: string }[]).map(
      (e) => e.id,
    );
    const both = listed.filter((id) => shown.includes(id));
    assert.deepEqual(
      shown.filter((id) => both.includes(id)),
      both,
      'the page lists the events in the API order',
    );
    const starts = shown.map((id) => Number(id.split('-')[0]));
    assert.ok(starts[0]! > starts[1]!, `newest first: ${shown.join(', ')}`);
    assert.match((await page.locator('#events li').first().textContent()) ?? '', /bright on blinker/);

    // The count follows the square in and out of view, without a reload.
    await until(
      'the blinker camera to count the square in view',
      async () => /bright 1/.test((await card('blinker').locator('.counts').textContent()) ?? ''),
      10_000,
    );
    await mkdir(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, 'live-page.png'), fullPage: true });

    // A click shows the event's snapshot: the frame with the object's box.
    await page.locator('#events li').first().click();
    const dialog = page.locator('dialog#snapshot');
    await page.waitForFunction(
      "document.querySelector('dialog#snapshot').open && document.querySelector('dialog#snapshot img').naturalWidth > 0",
      undefined,
      { timeout: 10_000 },
    );
    assert.match(
      (await dialog.locator('#snapshot-text').textContent()) ?? '',
      /bright on blinker .* best score [01]\.\d\d/,
    );
    const snapshot = await dialog.locator('img').screenshot();
    const boxedSnapshot = await redPixels(snapshot, { x0: 0, y0: 0, x1: 0.6, y1: 0.55 });
    assert.ok(boxedSnapshot >= 20, `the snapshot has the object boxed (${boxedSnapshot} red pixels)`);
    await page.screenshot({ path: join(ARTIFACTS, 'live-page-snapshot.png') });
    await page.keyboard.press('Escape');
    await page.waitForFunction("!document.querySelector('dialog#snapshot').open", undefined, {
      timeout: 5000,
    });

    // The camera filter: another camera's events only (the empty camera has none).
    await page.selectOption('#camera-filter', 'empty');
    await page.waitForFunction(
      "document.querySelectorAll('#events li').length === 0 && !document.getElementById('no-events').hidden",
      undefined,
      { timeout: 10_000 },
    );
    await page.selectOption('#camera-filter', 'blinker');
    await page.waitForFunction("document.querySelectorAll('#events li').length >= 2", undefined, {
      timeout: 10_000,
    });
    // Let a few refreshes pass: blobs held are one per frame shown and per thumbnail listed.
    await new Promise((r) => setTimeout(r, 5000));
    const held = await page.evaluate<[number, number]>(
      "[liveBlobs.size, document.querySelectorAll('figure img[src^=blob], #events img[src^=blob]').length]",
    );
    // One more may be a frame being decoded before it is shown.
    assert.ok(held[0] - held[1] <= 1, `blob URLs held ${held[0]}, shown ${held[1]}`);
  });
  it('lets a person flip a camera switch, reset a line and choose the mode, and shows the result', async (t) => {
    const dir = await tempDir(t);
    const port = await freePort();
    const config = await writeDaemonConfig(dir, {
      mqtt: { embedded: { port } },
      modes: { away: { cameras: { blinker: { snapshots: false } } } },
      cameras: {
        blinker: {
          url: BLINKER,
          objects: { track: ['bright'] },
          lines: {
            // It lists its label, so it has counts (at 0) to reset before anything crosses.
            road: {
              objects: ['bright'],
              points: [
                [0, 240],
                [640, 240],
              ],
            },
          },
        },
      },
    });
    const daemon = startDaemon(t, config);
    const base = await httpBase(daemon.output);
    const sub = new Subscriber(`mqtt://127.0.0.1:${port}`, 'argus/#');
    t.after(() => sub.end());
    const browser = await launchChromium(t);
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(base + '/');
    const settings = page.locator('figure[data-camera="blinker"] .controls');
    const detect = settings.locator('input[data-key="detect"]');
    await detect.waitFor({ timeout: 30_000 });
    assert.deepEqual(
      await page.evaluate<string[]>(
        "[...document.querySelectorAll('figure[data-camera=blinker] .controls input')].map((i) => i.dataset.key)",
      ),
      ['enabled', 'detect', 'snapshots', 'fps', 'priority', 'lines.road.enabled'],
    );
    assert.equal(await detect.isChecked(), true);
    const control = async () => (await (await fetch(`${base}/api/control`)).json()) as ControlView;
    const state = (topic: string) => sub.on(`argus/${topic}`).at(-1)?.payload;

    // A click on the switch: the daemon has detection off, says so on MQTT, and the page agrees.
    await detect.uncheck();
    await sub.waitFor('detect OFF', () => state('cameras/blinker/detect/state') === 'OFF', 10_000);
    assert.equal((await control()).cameras.blinker!.detect, false);
    // Its objects end: nothing in view, on MQTT and on the card (the frame stays the last one).
    await sub.waitFor('the count at 0', () => state('cameras/blinker/bright') === '0', 10_000);
    await until(
      'the card to count 0',
      async () =>
        /bright 0/.test((await page.locator('figure[data-camera="blinker"] .counts').textContent()) ?? ''),
      10_000,
    );
    await page.waitForFunction(
      "!document.querySelector('figure[data-camera=blinker] input[data-key=detect]').checked && !document.querySelector('figure[data-camera=blinker] input[data-key=detect]').disabled",
      undefined,
      { timeout: 10_000 },
    );
    assert.equal(await page.locator('#control-msg').textContent(), '');

    // A number typed in: the priority.
    await settings.locator('input[data-key="priority"]').fill('8');
    await settings.locator('input[data-key="priority"]').press('Enter');
    await sub.waitFor('priority 8', () => state('cameras/blinker/priority/state') === '8', 10_000);

    // The line's reset button: its counts are published again, at 0.
    const from = sub.messages.length;
    await settings.getByRole('button', { name: 'reset' }).click();
    await sub.waitFor(
      'the reset counts',
      () =>
        sub.messages
          .slice(from)
          .some((m) => m.topic.startsWith('argus/cameras/blinker/lines/road/') && m.payload === '0'),
      10_000,
    );

    // The mode in the header: away turns snapshots off, and the switch shows it.
    assert.deepEqual(await page.locator('#mode option').allTextContents(), ['none', 'away']);
    await page.selectOption('#mode', 'away');
    await sub.waitFor('mode away', () => state('mode/state') === 'away', 10_000);
    assert.equal(state('cameras/blinker/snapshots/state'), 'OFF');
    await page.waitForFunction(
      "!document.querySelector('figure[data-camera=blinker] input[data-key=snapshots]').checked",
      undefined,
      { timeout: 10_000 },
    );
    assert.equal((await control()).mode, 'away');
    await mkdir(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, 'live-page-controls.png'), fullPage: true });
    assert.match(daemon.output(), /"client":"http 127\.0\.0\.1"[^\n]*control:/);
  });

  it('draws the zones, masks and lines where their source pixels are, the line counts, and chips that count the boxes shown', async (t) => {
    const dir = await tempDir(t);
    // Two clean cells for the fixture model: one above the line, one standing in the zone.
    const scene =
      'lavfi:color=c=0x303030:s=640x480:r=5[bg];color=c=white:s=64x64:r=5[box];[bg][box]overlay=x=192:y=112[a];' +
      'color=c=white:s=64x64:r=5[box2];[a][box2]overlay=x=448:y=304';
    const rect = (x0: number, y0: number, x1: number, y1: number): [number, number][] => [
      [x0, y0],
      [x1, y0],
      [x1, y1],
      [x0, y1],
    ];
    const geometry = {
      door: rect(384, 240, 576, 400),
      mask: rect(0, 0, 100, 90),
      labelMask: rect(0, 380, 120, 480),
      cacheMask: rect(540, 0, 640, 100),
      road: [
        [0, 250],
        [640, 250],
      ] as [number, number][],
    };
    const config = await writeDaemonConfig(dir, {
      mqtt: { embedded: { port: await freePort() } },
      cameras: {
        scene: {
          url: scene,
          objects: {
            track: ['bright'],
            mask: [geometry.mask],
            filters: { bright: { mask: [geometry.labelMask] } },
          },
          cache_mask: [geometry.cacheMask],
          zones: { door: { points: geometry.door } },
          lines: { road: { points: geometry.road, objects: ['bright'] } },
        },
      },
    });
    // Counts kept from an earlier run (the state directory): the card shows them from the start.
    await mkdir(join(dir, 'state'), { recursive: true });
    await writeFile(
      join(dir, 'state', 'line-counts.json'),
      JSON.stringify({ version: 1, counts: { scene: { road: { bright: { in: 3, out: 1 } } } } }),
    );
    const daemon = startDaemon(t, config);
    const base = await httpBase(daemon.output);
    const browser = await launchChromium(t);
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(base + '/');
    const card = page.locator('figure[data-camera="scene"]');
    // Both squares boxed, and counted on the card.
    await until(
      'the card to count both squares',
      async () => (await card.locator('.counts li').first().textContent())?.startsWith('bright 2') ?? false,
      30_000,
    );
    await page.waitForFunction(
      "document.querySelector('figure[data-camera=scene] .overlay [data-kind=zone]')",
      undefined,
      { timeout: 10_000 },
    );

    // Each shape where its points are: source pixels (640×480) scaled to the image as shown.
    type Rect = { x: number; y: number; w: number; h: number; iw: number; ih: number };
    const where = (selector: string) =>
      page.evaluate<Rect>(
        "(() => { const fig = document.querySelector('figure[data-camera=scene]');" +
          "const img = fig.querySelector('img').getBoundingClientRect();" +
          `const r = fig.querySelector(${JSON.stringify(selector)}).getBoundingClientRect();` +
          'return { x: r.x - img.x, y: r.y - img.y, w: r.width, h: r.height, iw: img.width, ih: img.height }; })()',
      );
    const expectAt = async (selector: string, points: [number, number][]) => {
      const r = await where(selector);
      const xs = points.map((p) => (p[0] * r.iw) / 640);
      const ys = points.map((p) => (p[1] * r.ih) / 480);
      const want = {
        x: Math.min(...xs),
        y: Math.min(...ys),
        w: Math.max(...xs) - Math.min(...xs),
        h: Math.max(...ys) - Math.min(...ys),
      };
      for (const k of ['x', 'y', 'w', 'h'] as const)
        assert.ok(Math.abs(r[k] - want[k]) <= 2, `${selector} ${k}: ${r[k]} where ${want[k]} was expected`);
    };
    await expectAt('[data-kind=zone][data-name=door] polygon', geometry.door);
    await expectAt('[data-kind=mask][data-name="mask 1"] polygon', geometry.mask);
    await expectAt(
      '[data-kind=mask][data-name="bright mask 1"][data-label=bright] polygon',
      geometry.labelMask,
    );
    await expectAt('[data-kind=cache_mask][data-name="cache mask 1"] polygon', geometry.cacheMask);
    await expectAt('[data-kind=line][data-name=road] > line', geometry.road);
    const names = await page.evaluate<string[]>(
      "[...document.querySelectorAll('figure[data-camera=scene] .overlay g[data-name] > text')].map((t) => t.textContent)",
    );
    for (const name of ['door', 'mask 1', 'bright mask 1', 'cache mask 1', 'road'])
      assert.ok(names.includes(name), `${name} is written on the overlay: ${names.join(', ')}`);

    // The line's counts per direction: on its arrows and under the card, as the API says.
    const views = (await (await fetch(`${base}/api/cameras`)).json()) as CameraView[];
    const view = views.find((v) => v.camera === 'scene')!;
    assert.deepEqual(view.line_counts, { road: { bright: { in: 3, out: 1 } } });
    assert.deepEqual(view.geometry.lines.road, {
      points: geometry.road,
      directions: ['in', 'out'],
      enabled: true,
    });
    assert.deepEqual(
      await page.evaluate<[string | undefined, string | undefined][]>(
        "[...document.querySelectorAll('figure[data-camera=scene] [data-kind=line] [data-direction]')].map((d) => [d.dataset.direction, d.dataset.count])",
      ),
      [
        ['in', '3'],
        ['out', '1'],
      ],
    );
    assert.equal(await card.locator('.lines li[data-line=road]').textContent(), 'road: in 3 · out 1');

    // The chips count the boxes drawn on the very image shown: its pixels have two boxes, one
    // around each square (with its label's band above, running to the right), nothing elsewhere.
    const shown = Buffer.from(
      await page.evaluate<string>(
        "fetch(document.querySelector('figure[data-camera=scene] img').src).then((r) => r.arrayBuffer())" +
          '.then((b) => [...new Uint8Array(b)].map((c) => String.fromCharCode(c)).join(""))',
      ),
      'latin1',
    );
    const first = await redPixels(shown, { x0: 0.27, y0: 0.12, x1: 0.6, y1: 0.39 });
    const second = await redPixels(shown, { x0: 0.67, y0: 0.52, x1: 1, y1: 0.79 });
    const all = await redPixels(shown);
    assert.ok(first >= 20 && second >= 20, `a box around each square (${first}, ${second} red pixels)`);
    assert.ok(all - first - second <= 5, `no other box (${all - first - second} red pixels elsewhere)`);
    const chips = await page.evaluate<[string | null, string | undefined][]>(
      "[...document.querySelectorAll('figure[data-camera=scene] .counts li')].map((li) => [li.firstChild.textContent, li.dataset.boxes])",
    );
    assert.deepEqual(chips.slice(0, 2), [
      ['bright 2', '2'],
      ['door: bright 1', '1'],
    ]);

    await mkdir(ARTIFACTS, { recursive: true });
    const png = join(ARTIFACTS, 'live-page-geometry.png');
    await card.screenshot({ path: png });
    t.diagnostic(await updateDocImage(png, 'live-page-geometry.png'));
  });

  it("shows each event's speed and loitering, and the live card the speeds and loitering of the objects in view (issue 45)", async (t) => {
    const dir = await tempDir(t);
    // docs/mqtt.md's `yard`: a walker through the calibrated `road` at 7.2 km/h, one standing in `door`.
    const config = await writeDaemonConfig(dir, {
      mqtt: { embedded: { port: await freePort() } },
      events: { speed_unit: 'km/h', end_after_s: 2 },
      cameras: {
        yard: yardCamera({ loiter_s: 2 }),
      },
    });
    const daemon = startDaemon(t, config);
    const base = await httpBase(daemon.output);
    const browser = await launchChromium(t);
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(base + '/');
    const card = page.locator('figure[data-camera="yard"]');
    const texts = (selector: string) =>
      page.evaluate<string[]>(
        `[...document.querySelectorAll(${JSON.stringify(selector)})].filter((e) => !e.hidden).map((e) => e.textContent)`,
      );

    // The live card: the red square loitering in `door`, the white one's speed in `road`.
    let seen: string[] = [];
    const speedNow = /^bright (\d+(?:\.\d)?) km\/h in road$/;
    await until(
      'the card to show a speed and a loiterer',
      async () => {
        seen = [...new Set([...seen, ...(await texts('figure[data-camera=yard] .objects li'))])];
        // A speed measured over the first frames of a track (or a busy machine's uneven frames)
        // may read low at first: wait for the walk's own.
        const near = seen.some((s) => {
          const v = Number(speedNow.exec(s)?.[1] ?? NaN);
          return v > 5 && v < 10;
        });
        return near && seen.includes('red loitering in door');
      },
      60_000,
    ).catch((e: Error) => {
      throw new Error(`${e.message}; shown: ${seen.join(' | ')}`);
    });
    const speeds = seen.flatMap((s) => speedNow.exec(s)?.[1] ?? []).map(Number);
    assert.ok(
      speeds.some((v) => v > 5 && v < 10),
      `a speed near 7.2 km/h on the card: ${speeds.join(', ')}`,
    );
    await mkdir(ARTIFACTS, { recursive: true });
    await card.screenshot({ path: join(ARTIFACTS, 'live-card-speed.png') });
    // As the API says: the card lists the objects of GET /api/cameras.
    const views = (await (await fetch(`${base}/api/cameras`)).json()) as CameraView[];
    const objects = views.find((v) => v.camera === 'yard')!.objects;
    const red = objects.find((o) => o.label === 'red')!;
    assert.deepEqual([red.current_zones, red.loitering_zones, red.speed], [['door'], ['door'], null]);

    // The events: the white square's with its speed (max, and now while measured), the red
    // square's with its loitering; in the list and in the snapshot dialog.
    let details: string[] = [];
    await until(
      'the events to show a speed and a loiterer',
      async () => {
        details = await texts('#events li .details');
        return (
          details.some((d) => /^max \d+(\.\d)? km\/h in road/.test(d)) &&
          details.includes('loitering in door')
        );
      },
      30_000,
    ).catch((e: Error) => {
      throw new Error(`${e.message}; shown: ${details.join(' | ')}`);
    });
    const listed = (await (await fetch(`${base}/api/events?limit=50`)).json()) as {
      id: string;
      label: string;
      speed: { max: number; unit: string; zone: string } | null;
    }[];
    const bright = listed.find((e) => e.label === 'bright' && e.speed)!;
    const row = page.locator(`#events li[data-event="${bright.id}"]`);
    assert.match(
      (await row.locator('.details').textContent()) ?? '',
      new RegExp(`^max ${bright.speed!.max} km/h in road`),
      'the payload max and unit, as they are',
    );
    await row.click();
    await page.waitForFunction("document.querySelector('dialog#snapshot').open", undefined, {
      timeout: 10_000,
    });
    assert.match(
      (await page.locator('#snapshot-text').textContent()) ?? '',
      new RegExp(`bright on yard .* · max ${bright.speed!.max} km/h in road`),
    );
    await page.screenshot({ path: join(ARTIFACTS, 'live-page-speed.png'), fullPage: true });
  });
});
