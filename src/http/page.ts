import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

/**
 * The page at `/`: every camera's latest annotated frame with its state (and, when it is not
 * streaming, why), fps and the objects in view, its zones, lines and masks drawn over the frame
 * (an SVG overlay: the JPEG stays as the API serves it), its lines' counts, and its runtime settings to flip (switches,
 * fps, priority, a line's reset; the mode in the header), its recording's last hour on a timeline
 * with its events (a click plays a stretch or an event); beside them, with `fleet:`, the fleet's
 * boxes (labels, capacity, load, alive, the cameras each runs), and the event history, newest
 * first, with thumbnails, updated every two seconds; an event's snapshot opens on a click. It
 * reads only the routes of docs/http.md, so it shows what MQTT says: the cameras' filters have
 * applied. Text from the config or the model is set as text, never as HTML.
 *
 * This is its HTML and CSS; its script is src/page/ (browser modules, built by
 * src/page/tsconfig.json into dist/page/), served at /page/<module>.js (`PageScripts`).
 */
export const LIVE_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Argus</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
  [hidden] { display: none !important; }
  body { font: 14px system-ui, sans-serif; margin: 0; background: #111; color: #eee; }
  header { display: flex; align-items: baseline; gap: 1rem; padding: .6rem 1rem; background: #1b1b1b; }
  header h1 { font-size: 1.2rem; margin: 0; }
  #updated { color: #999; font-size: .85rem; }
  #updated.stale { color: #e77; }
  .layout { display: grid; grid-template-columns: minmax(0, 1fr) 340px; gap: 1rem; padding: 1rem; }
  @media (max-width: 800px) { .layout { grid-template-columns: 1fr; } }
  #cameras { display: grid; grid-template-columns: repeat(auto-fill, minmax(320px, 1fr)); gap: 1rem; align-content: start; }
  figure { margin: 0; background: #222; padding: .5rem; border-radius: 6px; }
  figure img { display: block; width: 100%; background: #333; }
  figure .noframe { display: grid; place-items: center; aspect-ratio: 4 / 3; background: #333; color: #999; }
  figcaption { margin-top: .4rem; }
  .state { font-weight: bold; }
  .health { margin-left: .4em; padding: 0 .4em; border-radius: .6em; font-size: .85em; }
  .health.fault { background: #c62828; color: #fff; }
  .health.learning { background: #ddd; color: #333; }
  .streaming { color: #7c7; } .backoff, .offline { color: #e77; } .connecting, .disabled { color: #ec5; }
  .why { color: #f99; margin: .3rem 0 0; overflow-wrap: anywhere; }
  .counts { display: flex; flex-wrap: wrap; gap: .3rem; margin: .4rem 0 0; padding: 0; list-style: none; }
  .counts li { background: #333; border-radius: 3px; padding: 0 .4rem; }
  .counts li.seen { background: #2d5a2d; }
  aside h2 { font-size: 1rem; margin: 0 0 .5rem; display: flex; justify-content: space-between; gap: .5rem; }
  #events { list-style: none; margin: 0; padding: 0; display: grid; gap: .4rem; }
  #events li { display: grid; grid-template-columns: 64px 1fr; gap: .5rem; background: #222; border-radius: 6px; padding: .3rem; cursor: pointer; }
  #events li:hover, #events li:focus { background: #2c2c2c; outline: 1px solid #555; }
  #events img { width: 64px; height: 64px; object-fit: cover; background: #333; border-radius: 3px; }
  #events .what { font-weight: bold; }
  #events .when { color: #aaa; font-size: .85rem; }
  #events .open { color: #7c7; }
  #events .details { color: #ddb; font-size: .85rem; }
  .objects { margin: .3rem 0 0; padding: 0; list-style: none; font-size: .9rem; }
  .objects li.loitering { color: #ec5; }
  #snapshot video { display: block; max-width: min(90vw, 960px); max-height: 60vh; margin-top: .4rem; background: #000; }
  .empty { color: #999; }
  dialog { background: #1b1b1b; color: #eee; border: 1px solid #444; border-radius: 6px; max-width: 95vw; padding: .8rem; }
  dialog::backdrop { background: rgba(0, 0, 0, .7); }
  dialog img { display: block; width: min(90vw, 960px); max-height: 75vh; object-fit: contain; }
  dialog p { margin: .5rem 0 0; }
  select, button, input { background: #333; color: #eee; border: 1px solid #555; border-radius: 3px; }
  .controls { display: flex; flex-wrap: wrap; gap: .2rem .8rem; margin: .4rem 0 0; font-size: .9rem; }
  .controls input[type=number] { width: 3.5rem; }
  #control-msg { color: #e77; font-size: .85rem; }
  .frame { position: relative; }
  .overlay { position: absolute; left: 0; top: 0; width: 100%; height: 100%; pointer-events: none; overflow: visible; font: 12px system-ui, sans-serif; }
  .overlay text { fill: #fff; stroke: #000; stroke-width: 3px; paint-order: stroke; }
  .overlay [data-kind=zone] polygon { stroke: #3cf; stroke-width: 2; fill: rgba(51, 204, 255, .18); }
  .overlay [data-kind=zone].off polygon { stroke-dasharray: 5 4; fill: none; }
  .overlay [data-kind=mask] polygon { stroke: #bbb; stroke-width: 1.5; }
  .overlay [data-kind=cache_mask] polygon { stroke: #e4f; stroke-width: 2; stroke-dasharray: 2 3; fill: rgba(238, 68, 255, .1); }
  .overlay [data-kind=line] line { stroke: #fd0; stroke-width: 3; }
  .overlay [data-kind=line].off line { stroke-dasharray: 6 4; }
  .overlay [data-kind=line] polygon { fill: #fd0; }
  .counts li .tracked { color: #bbb; }
  .lines { display: flex; flex-wrap: wrap; gap: .3rem; margin: .3rem 0 0; padding: 0; list-style: none; }
  .lines li { background: #3a3420; border-radius: 3px; padding: 0 .4rem; }
  .timeline { margin: .4rem 0 0; font-size: .8rem; color: #999; }
  .timeline .marks, .timeline .bar { position: relative; }
  .timeline .marks { height: 10px; }
  .timeline .bar { height: 14px; background: #2a2a2a; border-radius: 2px; }
  .timeline button { position: absolute; top: 0; bottom: 0; min-width: 3px; padding: 0; border: 0; border-radius: 1px; cursor: pointer; }
  .timeline button:hover, .timeline button:focus { outline: 1px solid #fff; z-index: 1; }
  .timeline .mark { background: #fd0; } .timeline .mark.open { background: #7c7; }
  .timeline .why-event { background: #d84; } .timeline .why-recent { background: #579; } .timeline .why-snapshot { background: #a6c; }
  .timeline .why-always { background: #3a7; } .timeline .why-retired, .timeline .why-none { background: #666; }
  .timeline .axis { display: flex; justify-content: space-between; }
  .timeline .note { margin: 0; }
  #fleet { margin-bottom: 1rem; overflow-x: auto; }
  #fleet table { width: 100%; border-collapse: collapse; font-size: .85rem; }
  #fleet th, #fleet td { text-align: left; padding: .15rem .2rem; border-bottom: 1px solid #333; vertical-align: top; }
  #fleet td.load { white-space: nowrap; } #fleet td.cameras { overflow-wrap: anywhere; } #fleet th { font-size: .8rem; color: #aaa; }
  #fleet td.alive { color: #7c7; } #fleet tr.gone td { color: #e77; }
  #fleet p { margin: .3rem 0 0; font-size: .85rem; } #fleet-state.when { color: #999; }
</style>
</head>
<body>
<header><h1>Argus</h1><label>mode <select id="mode"></select></label><span id="updated"></span><span id="control-msg"></span></header>
<div class="layout">
  <main id="cameras"></main>
  <aside>
    <section id="fleet" hidden>
      <h2>Fleet</h2>
      <table><thead><tr><th>box</th><th>labels</th><th title="capacity">cap.</th><th>load</th><th>alive</th><th>cameras</th></tr></thead>
      <tbody id="fleet-members"></tbody></table>
      <p id="fleet-unplaced" class="why" hidden></p>
      <p id="fleet-state" class="when"></p>
    </section>
    <h2>Events <select id="camera-filter" aria-label="camera"><option value="">all cameras</option></select></h2>
    <ul id="events"></ul>
    <p id="no-events" class="empty">No events yet.</p>
  </aside>
</div>
<dialog id="snapshot">
  <img alt="">
  <video id="clip" controls playsinline preload="metadata" hidden></video>
  <p id="snapshot-text"></p>
  <p id="clip-text" class="when"></p>
  <form method="dialog"><button>Close</button></form>
</dialog>
<script type="module" src="/page/main.js"></script>
</body>
</html>
`;

/** Where the page's modules are built: dist/page/, beside dist/src/ (this file is dist/src/http/page.js). */
const SCRIPTS_DIR = new URL('../../page/', import.meta.url);

/**
 * The page's browser modules, read once at start-up from dist/page/: served by their file name
 * only (a URL is looked up in this set, never made into a path). None when the page was not
 * built (`npm run build` builds it; `tsc -p tsconfig.json` alone does not).
 */
export class PageScripts {
  private constructor(
    private readonly modules: ReadonlyMap<string, Buffer>,
    /** Why there are none, when there are none. */
    readonly missing: string | undefined,
  ) {}

  static async load(dir: URL = SCRIPTS_DIR): Promise<PageScripts> {
    let names: string[];
    try {
      names = (await readdir(dir)).filter((n) => /^[a-z0-9-]+\.js$/.test(n));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      names = [];
    }
    const modules = new Map<string, Buffer>();
    for (const name of names) modules.set(name, await readFile(new URL(name, dir)));
    const missing = modules.has('main.js')
      ? undefined
      : `the live page's script is not built: ${fileURLToPath(new URL('main.js', dir))} is missing (npm run build builds it)`;
    return new PageScripts(modules, missing);
  }

  /** A module's source by its file name (`main.js`); undefined for any other name. */
  get(name: string): Buffer | undefined {
    return this.modules.get(name);
  }
}
