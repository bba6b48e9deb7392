import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { RecordingIndex } from '../../src/http/source.js';
import { launchChromium, chromiumSkip as chromiumSkipFor } from '../helpers/browser.js';
import { httpBase, startDaemon, writeDaemonConfig } from '../helpers/daemon.js';
import { repoRoot, tempDir } from '../helpers/env.js';
import { freePort, startRtspServer } from '../helpers/rtsp.js';
import { squareClip } from '../helpers/square-clip.js';

// Issue 47 item 3: what a camera's recording keeps, and its events, on one timeline of the page.

/** Where the page's screenshots are kept: CI's artefacts (.ci/run prints where). */
const ARTIFACTS = process.env.ARGUS_ARTIFACTS_DIR ?? join(repoRoot, 'artifacts');
const chromiumSkip = chromiumSkipFor("the page's recording timeline");

/** Polls `cond` every 300 ms until it holds; throws naming `what` after `timeoutMs`. */
async function until(what: string, cond: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

/** Where an element lies on its timeline's bar, as a fraction of the bar's width. */
const FRACTION = (selector: string): string =>
  `(() => { const e = document.querySelector(${JSON.stringify(selector)}); const bar = e.closest('.timeline').querySelector('.bar').getBoundingClientRect(); const r = e.getBoundingClientRect(); return (r.left - bar.left) / bar.width; })()`;

/** The page's player is open on a video whose URL holds `src`, with enough of it to play (readyState ≥ 2) and a length. */
const plays = (src: string): string =>
  `(() => { const v = document.querySelector('dialog#snapshot video'); return document.querySelector('dialog#snapshot').open && !v.hidden && v.src.includes(${JSON.stringify(src)}) && v.readyState >= 2 && v.duration > 0; })()`;

describe(
  "the page's recording timeline (headless Chromium, real RTSP, real ffmpeg)",
  { skip: chromiumSkip },
  () => {
    it("draws a camera's recorded stretches and its events where the API says, and a click on either plays it", async (t) => {
      const dir = await tempDir(t);
      // A 12 s clip (10 fps, a key frame each second) with the square in view from 2 s to 6 s:
      // the RTSP server loops it, so an event comes every 12 s.
      await squareClip(join(dir, 'square.mp4'), { bframes: 0, from: 2, to: 6, seconds: 12 });
      const server = await startRtspServer(t, [
        { name: 'door', source: { kind: 'clip', path: join(dir, 'square.mp4') } },
      ]);
      const config = await writeDaemonConfig(dir, {
        mqtt: { embedded: { port: await freePort() } },
        events: { end_after_s: 1, clips: { enabled: true, pre_capture_s: 2, post_capture_s: 2 } },
        cameras: { door: { url: server.url('door'), rtsp_transport: server.transport, fps: 5 } },
      });
      const daemon = startDaemon(t, config);
      const base = await httpBase(daemon.output);

      // An event whose clip is ready (its footage complete).
      let id = '';
      await until(
        'an event of door with its clip ready',
        async () => {
          const events = (await (await fetch(`${base}/api/events?camera=door`)).json()) as {
            id: string;
            clip?: { state: string } | null;
          }[];
          id = events.find((e) => e.clip?.state === 'ready')?.id ?? '';
          return id !== '';
        },
        120_000,
      );

      const browser = await launchChromium(t, ['--autoplay-policy=no-user-gesture-required']);
      const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      await page.goto(base + '/');
      const mark = `figure[data-camera="door"] .timeline .marks button[data-event="${id}"]`;
      await page.locator(mark).waitFor({ timeout: 30_000 });
      const timeline = page.locator('figure[data-camera="door"] .timeline');
      assert.equal(await timeline.isVisible(), true, 'the timeline is shown');

      // The page's window, and the API's answer for it: the stretches and the event where it says.
      const from = Number(await timeline.getAttribute('data-from'));
      const to = Number(await timeline.getAttribute('data-to'));
      assert.ok(to - from >= 300_000 && to - from <= 3600_000, `5 minutes to an hour: ${from}–${to}`);
      const index = (await (
        await fetch(`${base}/api/cameras/door/recording?start=${from}&end=${to}`)
      ).json()) as RecordingIndex;
      t.diagnostic(`the API: ${JSON.stringify(index)}`);
      assert.equal(index.recording, true);
      assert.ok(index.ranges.length >= 1, 'at least one stretch kept');
      const ev = index.events.find((e) => e.id === id);
      assert.ok(ev, `the API lists event ${id}`);
      assert.equal(ev.clip, `/api/events/${encodeURIComponent(id)}/clip.mp4`);
      const evStart = Date.parse(ev.start);
      // Its footage is kept: a stretch that covers its start names it, for an event.
      const covering = index.ranges.find(
        (r) => Date.parse(r.start) <= evStart && Date.parse(r.end) >= evStart,
      );
      assert.ok(covering, `a stretch covers the event's start ${ev.start}`);
      assert.ok(covering.why.includes('event') && covering.events.includes(id), JSON.stringify(covering));

      // On the page: the mark at the event's start, the stretch drawn from where the API says,
      // on the window the page drew them for (read at once: the page redraws every 2 s).
      const range = `figure[data-camera="door"] .timeline .bar button[data-start="${covering.start}"]`;
      await page.locator(range).waitFor({ timeout: 10_000 });
      const [drawnFrom, drawnTo, markAt, rangeAt] = await page.evaluate<[number, number, number, number]>(
        `[Number(document.querySelector('figure[data-camera="door"] .timeline').dataset.from), Number(document.querySelector('figure[data-camera="door"] .timeline').dataset.to), ${FRACTION(mark)}, ${FRACTION(range)}]`,
      );
      const at = (ms: number): number => (ms - drawnFrom) / (drawnTo - drawnFrom);
      assert.ok(
        Math.abs(markAt - at(evStart)) < 0.005,
        `the mark at ${markAt}, the API's start at ${at(evStart)}`,
      );
      assert.ok(
        Math.abs(rangeAt - at(Date.parse(covering.start))) < 0.005,
        `the stretch at ${rangeAt}, the API's at ${at(Date.parse(covering.start))}`,
      );
      assert.match((await page.locator(range).getAttribute('class')) ?? '', /why-event/);
      await mkdir(ARTIFACTS, { recursive: true });
      // The card with its timeline, for CI's artefacts.
      await page
        .locator('figure[data-camera="door"]')
        .screenshot({ path: join(ARTIFACTS, 'live-page-timeline.png') });

      // A click on the event's mark plays its clip in the page's player.
      await page.locator(mark).click();
      await page.waitForFunction(plays(`/api/events/${encodeURIComponent(id)}/clip.mp4`), undefined, {
        timeout: 30_000,
      });
      await page.keyboard.press('Escape');
      await page.waitForFunction("!document.querySelector('dialog#snapshot').open", undefined, {
        timeout: 5000,
      });

      // A click on the stretch plays that stretch of the recording.
      await page.locator(range).click();
      await page.waitForFunction(plays('/api/cameras/door/recording.mp4?start='), undefined, {
        timeout: 30_000,
      });
      const played = await page.evaluate<[string, number]>(
        "(() => { const v = document.querySelector('dialog#snapshot video'); return [v.src, v.duration]; })()",
      );
      t.diagnostic(`played ${played[0]} (${played[1]} s)`);
      const url = new URL(played[0]);
      assert.equal(
        url.searchParams.get('start'),
        new Date(Math.max(Date.parse(covering.start), from)).toISOString(),
      );
      assert.ok(played[1] > 0);
      const error = await page.evaluate<string | null>(
        "(() => { const e = document.querySelector('dialog#snapshot video').error; return e && e.code + ' ' + e.message; })()",
      );
      assert.equal(error, null, 'no media error');
    });
  },
);
