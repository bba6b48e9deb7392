/** Renders bench/results/latest.json as the markdown tables README's performance section quotes. */
import type { BenchResults } from './results.js';
import type { EventsRow } from './events-summary.js';
import type { FleetBench } from './fleet-failover.js';
import type { HealthSummary } from './health.js';
import type { IdleResult } from './idle.js';
import {
  medianOf,
  type OverloadCameraRow,
  type OverloadPriorityRow,
  type OverloadResult,
  type OverloadRun,
} from './overload.js';
import type { PipelineRow } from './pipeline.js';
import type { TrackingRun } from './tracking.js';
import { median } from './common.js';

const f = (n: number | null | undefined, d = 1): string =>
  n === null || n === undefined ? '–' : n.toFixed(d);

const designOf = (p: PipelineRow): string => {
  const design = p.mode === 'naive' ? 'naive' : 'Argus';
  return p.label ? `${design} (${p.label})` : design;
};

function pipelineTable(rows: PipelineRow[], first: 'design' | 'variant'): string[] {
  return [
    `| ${first} | cameras | offered fps | analysed fps | answered fps | dropped fps | mean batch | p50 / p99 latency (ms) | CPU daemon / ffmpeg (%) | answered per CPU-s | peak RSS (MB) |`,
    '|---|---|---|---|---|---|---|---|---|---|---|',
    ...rows.map(
      (p) =>
        `| ${first === 'design' ? designOf(p) : p.label} | ${p.cameras} | ${p.offered_fps} | ${f(p.analysed_fps)} | ${f(p.answered_fps)} | ${f(p.dropped_fps)} | ${f(p.mean_batch, 2)} | ${f(p.latency_p50_ms, 0)} / ${f(p.latency_p99_ms, 0)} | ${f(p.cpu_daemon_pct, 0)} / ${f(p.cpu_ffmpeg_pct, 0)} | ${f(p.answered_per_cpu_s)} | ${f(p.peak_rss_mb, 0)} |`,
    ),
  ];
}

function fleetSection(b: FleetBench): string[] {
  const mean = (xs: number[]): number => xs.reduce((s, x) => s + x, 0) / (xs.length || 1);
  const ratios = b.moves.map((m) => m.ratio);
  return [
    `**Fleet** (issue 48): ${b.boxes} Argus daemons over a three-member etcd cluster on loopback, ${b.cameras} cameras, lease TTL ${b.ttl_s} s, each box SIGKILLed in turn and started again (${b.kills} kills); failover is the SIGKILL to a camera's first detections from another box, as a subscriber receives them.`,
    '',
    '| measure | value |',
    '|---|---|',
    `| failover per camera, p50 / p95 / max (goal p95 ≤ 12 s) | **${f(b.p50_s)} / ${f(b.p95_s)} / ${f(b.max_s)} s** (${b.failover_s.length} cameras) |`,
    `| cameras moved per membership change ÷ (cameras ÷ boxes), mean / max | ${f(mean(ratios), 2)} / ${f(Math.max(...ratios), 2)} (${b.moves.map((m) => `${m.change}: ${m.moved}`).join(', ')}) |`,
    `| max ÷ mean load by capacity, steady states, worst | ${f(Math.max(...b.load_ratios), 2)} (${b.load_ratios.length} states) |`,
    `| camera-seconds analysed by two boxes, etcd stopped 30 s | ${b.outage_double_camera_s} |`,
    `| camera-seconds analysed by two boxes, one box cut from etcd 30 s | ${b.partition_double_camera_s} |`,
  ];
}

function eventsSection(model: string, e: EventsRow): string[] {
  const p = e.people;
  const [lo, hi] = e.new_per_person_range;
  return [
    `**Object events**: \`vtest.mp4\` (a plaza, people walking) played once in real time as a \`file:\` camera, ${f(e.seconds)} s at ${e.fps} frames/s analysed, ${model}, default \`events:\` settings, cache on (${e.cached_messages} of ${e.detections_messages} frames answered from it). ${p.count} people counted by eye from contact sheets (${p.low}–${p.high}; one who leaves and comes back counts again; bench/events.ts says how).`,
    '',
    '| measure | value |',
    '|---|---|',
    `| \`new\` events, person | ${e.person_new} |`,
    `| \`new\` per person counted (goal ≤ 1.2) | **${f(e.new_per_person, 2)}** (${f(lo, 2)}–${f(hi, 2)}) |`,
    `| median track life, ended person events (s) | ${f(e.median_track_life_s, 2)} (${e.person_ended} ended) |`,
    `| \`update\` events, all labels / person | ${e.updates} / ${e.person_updates} |`,
    `| person count topic, max / mean over frames | ${e.count_topic_max} / ${f(e.count_topic_mean, 2)} |`,
    `| persons per detections message (score ≥ 0.5), max / mean | ${e.frame_persons_max} / ${f(e.frame_persons_mean, 2)} |`,
    `| out-of-order publishes: detections (frame number went back) / events (id out of sequence) | ${e.frames_out_of_order} / ${e.events_out_of_order} |`,
  ];
}

function trackingSection(t: NonNullable<BenchResults['tracking']>): string[] {
  const md = [
    `**Tracking** (issue 42): synthetic scenes with known truth (test/helpers/synthetic-scene.ts) and \`vtest.mp4\`, each played in real time to \`argus run\` as a \`file:\` camera, ${t.model}, ${
      t.events && Object.keys(t.events).length
        ? `\`events:\` ${Object.entries(t.events)
            .map(([k, v]) => `${k}: ${v}`)
            .join(', ')}, otherwise default`
        : 'default `events:` settings'
    }, cache on${t.busy ? `, with ${t.busy} spinning processes keeping every core busy` : ''}; scored from the camera's detections (ids), \`argus/events\` and \`argus/crossings\` (bench/tracking-score.ts). Goals: 1.00 ids per object, 0 switches, 0 early ends; vtest ≤ 1.1 \`new\` per person, one event per parked vehicle, ≤ 5 % of ids crossing the line more than once; speeds within 10 %.`,
    '',
    '| daemon | scene | fps | frames (cached) | objects | ids per object | switches | IDF1 | early ends | `new` (per object) | ids never matched | crossings: truth / published / wrong |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const run of t.runs)
    for (const r of run.scenes) {
      const s = r.score;
      md.push(
        `| ${run.root} | ${r.name} | ${r.fps} | ${r.frames} (${r.cached}) | ${s.objects} | ${f(s.ids_per_object, 2)} | ${s.switches} | ${f(s.idf1, 2)} | ${s.early_ends} | ${s.new_events} (${f(s.new_per_object, 2)}) | ${s.unmatched_ids} | ${s.crossings.truth} / ${s.crossings.published} / ${s.crossings.wrong} |`,
      );
    }
  const speeds = t.runs.flatMap((run) =>
    run.scenes.flatMap((r) => (r.speed ? [[run, r.speed] as const] : [])),
  );
  if (speeds.length)
    md.push(
      '',
      '| daemon | truth | `current` readings | `current` min–max | worst `current` error | `max` | `max` error |',
      '|---|---|---|---|---|---|---|',
      ...speeds.map(
        ([run, s]) =>
          `| ${run.root} | ${s.truth} ${s.unit} | ${s.readings} | ${f(s.current_min, 2)}–${f(s.current_max, 2)} | ${s.current_error === null ? '–' : `${f(s.current_error * 100, 0)} %`} | ${f(s.max, 2)} | ${s.max_error === null ? '–' : `${f(s.max_error * 100, 0)} %`} |`,
      ),
    );
  const streets = t.runs.filter((run): run is TrackingRun & { street: NonNullable<TrackingRun['street']> } =>
    Boolean(run.street),
  );
  if (streets.length)
    md.push(
      '',
      '| daemon | vtest.mp4 | frames (cached) | `new` person | `new` per person (goal ≤ 1.1) | ids per person | `new` per parked vehicle (van, car) | ids crossing x = 240 | crossing more than once | more often than their person (goal ≤ 5 %; across the loop cut) |',
      '|---|---|---|---|---|---|---|---|---|---|',
      ...streets.map(
        ({ root, street: v }) =>
          `| ${root} | ${v.loops} × 79.5 s at ${v.fps} fps | ${v.frames} (${v.cached}) | ${v.person_new} | ${f(v.new_per_person, 2)} | ${f(v.ids_per_person, 2)} | ${v.parked_new.join(', ')} | ${v.line_ids} | ${v.line_multi} (${f(v.line_multi_share * 100, 0)} %) | ${v.line_truth.false_multi} (${f(v.line_truth.false_share * 100, 0)} %; ${v.line_truth.false_across_cut}) |`,
      ),
      ...streets.flatMap(({ root, street: v }) =>
        v.line_multi_detail.length
          ? [
              '',
              `Ids crossing more than once (${root}): ${v.line_multi_detail.map((d) => `${d.label} ${d.id}: ${d.crossings.join(', ')}`).join('; ')}.`,
            ]
          : [],
      ),
    );
  return md;
}

/** Camera health on the scored set: per fault, then each case. */
function healthSection(h: HealthSummary): string[] {
  return [
    `**Camera health** (bench/health.ts, the scored set; goal: every tamper said, median ≤ 10 s, no false alarm): ${f(h.falseAlarmsPerHour, 1)} false alarms per camera-hour over ${f(h.cleanHours * 60, 1)} untampered minutes.`,
    '',
    '| fault | said with this cause | median time to say it (s) |',
    '|---|---|---|',
    ...Object.entries(h.faults).map(
      ([fault, x]) =>
        `| ${fault} | ${x.flagged} of ${x.cases} | ${x.medianS === null ? '–' : f(x.medianS, 0)} |`,
    ),
    '',
    '| case | clip | tamper | said (s after it) | any fault (s after it) | false alarms |',
    '|---|---|---|---|---|---|',
    ...h.rows.map(
      (x) =>
        `| ${x.name} | ${x.clip} | ${x.expect} | ${x.detectS ?? (x.expect === 'none' ? '–' : 'missed')} | ${x.anyS ?? '–'} | ${x.falseAlarms.join(' ') || 0} |`,
    ),
  ];
}

function idleSection(r: IdleResult): string[] {
  const pct = (x: number | null): string => (x === null ? '–' : `${f(x, 1)} %`);
  return [
    `**Idle cameras**: ${r.cameras} cameras on one still stream (bus.jpg, 810×1080, H.264 at ${r.fps} frames/s over RTSP), ${r.model}, cache on, beside ${r.cameras} plain \`ffmpeg -i … -f null -\` decoders of the same stream in the same windows; CPU of a core (user + system, the daemon with its ffmpeg children), medians of ${r.windows} windows of ${r.windowSeconds} s. The model's share is the detector's inference time.`,
    '',
    '| design | CPU (%) | daemon / ffmpeg / of which model (%) | ÷ decoders (goal ≤ 1.5) | ÷ decoders, model aside | analysed | detections messages per camera per minute | disk writes per camera (kB/s) |',
    '|---|---|---|---|---|---|---|---|',
    ...r.rows.map(
      (x) =>
        `| ${x.label} | ${f(x.cpu_pct, 0)} | ${x.cpu_daemon_pct === null ? '–' : `${f(x.cpu_daemon_pct, 0)} / ${f(x.cpu_ffmpeg_pct, 0)} / ${f(x.cpu_model_pct, 1)}`} | ${f(x.ratio, 2)} | ${f(x.ratio_without_model, 2)} | ${x.analysed_share === null ? '–' : pct(x.analysed_share * 100)} | ${f(x.detections_per_camera_min, 1)} | ${x.disk_kb_s_per_camera === null || x.disk_kb_s_per_camera === undefined ? '–' : f(x.disk_kb_s_per_camera, 1)} |`,
    ),
    ...(r.stream_kb_s === null || r.stream_kb_s === undefined
      ? []
      : [
          '',
          `The stream itself: ${f(r.stream_kb_s, 1)} kB/s per RTSP connection (the kernel's TCP counters); with clips, each camera writes its stream to the ring.`,
        ]),
    ...(r.health
      ? [
          '',
          `Camera health's cost: ${f(r.health.pct_per_camera, 2)} % of a core per camera (goal ≤ 1 %): the daemons' CPU, health on − off, ÷ ${r.cameras} cameras, median of the windows (${r.health.windows.map((x) => f(x, 2)).join(', ')}).`,
        ]
      : []),
  ];
}

const mark = (ok: boolean): string => (ok ? ' ✓' : ' ✗');

/** One model's runs of the overload fleet: per camera, then per priority. */
function overloadVariant(r: OverloadResult, model: string, runs: OverloadRun[]): string[] {
  const objects = Object.values(r.truth.still).reduce((a, b) => a + b, 0);
  const people = r.truth.walkers;
  const m = (camera: string, pick: (c: OverloadCameraRow) => number): number => medianOf(runs, camera, pick);
  // Counts of events per run, e.g. "0 / 2 / 1"; the goal holds when it holds in every run.
  const each = (camera: string, pick: (c: OverloadCameraRow) => number): number[] =>
    runs.map((run) => pick(run.cameras.find((c) => c.camera === camera)!));
  const list = (xs: number[], ok: (x: number) => boolean): string => `${xs.join(' / ')}${mark(xs.every(ok))}`;
  // `new` per real object: a still camera's objects, a walkers camera's person visits.
  const perObject = (c: OverloadCameraRow): string => {
    const news = each(c.camera, (x) => x.new_events);
    const per = (truth: number): string => news.map((n) => f(n / truth, 2)).join(' / ');
    if (c.kind === 'still')
      return `${news.join(' / ')} of ${objects} | ${per(objects)}${mark(news.every((n) => n === objects))}`;
    if (c.kind !== 'walkers') return '– | –';
    const ok =
      m(c.camera, (x) => x.analysed_fps) < 1
        ? ' (below 1 analysed fps: no goal)'
        : mark(news.every((n) => n / people.count <= 1.2));
    return `${news.join(' / ')} of ${people.count} | ${per(people.count)}${ok}`;
  };
  const first = runs[0]!;
  const over = median(runs.map((x) => x.offered_fps / x.analysed_fps));
  return [
    `*${model}*: offered ÷ analysed **${f(over, 1)}×** (the premise, ≥ 4×${mark(over >= 4)}): ${f(median(runs.map((x) => x.offered_fps)))} frames/s offered, ${f(median(runs.map((x) => x.analysed_fps)))} analysed; ${runs.length} run${runs.length > 1 ? 's' : ''}, rates over ${f(median(runs.map((x) => x.seconds)), 0)} s (medians; event counts per run).`,
    '',
    '| camera | priority | offered fps | cached fps | analysed fps | dropped fps (stale) | demand fps | share fps | analysed ÷ share | longest unanswered (s) | `new` (truth) | `new` per object | `end` in view | count fell to 0 |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...first.cameras.map((c) => {
      const at = (pick: (x: OverloadCameraRow) => number, d = 2): string => f(m(c.camera, pick), d);
      const share = m(c.camera, (x) => x.share_ratio);
      const zero = (pick: (x: OverloadCameraRow) => number): string =>
        c.kind === 'still' ? list(each(c.camera, pick), (x) => x === 0) : '–';
      const rates = [
        at((x) => x.offered_fps),
        at((x) => x.cached_fps),
        at((x) => x.analysed_fps),
        `${at((x) => x.dropped_fps)} (${at((x) => x.stale_fps)})`,
        at((x) => x.demand_fps),
        at((x) => x.share_fps),
        // Owed nothing, asked nothing (a still camera the cache answered throughout): no ratio.
        m(c.camera, (x) => x.share_fps) === 0 ? '–' : `${f(share, 2)}${mark(Math.abs(share - 1) <= 0.1)}`,
        at((x) => x.longest_unanswered_s, 1),
      ];
      const events = [perObject(c), zero((x) => x.end_events), zero((x) => x.count_drops_to_zero)];
      return `| ${c.camera} (${c.kind}) | ${c.priority} | ${[...rates, ...events].join(' | ')} |`;
    }),
    '',
    '| priority | cameras | analysed fps | share fps | analysed ÷ share (goal 0.9–1.1) |',
    '|---|---|---|---|---|',
    ...first.priorities.map((p) => {
      const pick = (fn: (x: OverloadPriorityRow) => number): number =>
        median(runs.map((run) => fn(run.priorities.find((q) => q.priority === p.priority)!)));
      const ratio = pick((x) => x.ratio);
      const owed = pick((x) => x.share_fps) > 0;
      return `| ${p.priority} | ${p.cameras} | ${f(
        pick((x) => x.analysed_fps),
        2,
      )} | ${f(
        pick((x) => x.share_fps),
        2,
      )} | ${owed ? `${f(ratio, 2)}${mark(Math.abs(ratio - 1) <= 0.1)}` : '–'} |`;
    }),
  ];
}

function overloadSection(r: OverloadResult): string[] {
  const people = r.truth.walkers;
  const ref = r.reference.cameras[0]!;
  const held = Object.entries(r.truth.still)
    .map(([label, n]) => `${n} ${label}`)
    .join(' + ');
  return [
    `**Overload**: ${r.variants[0]?.runs[0]?.cameras.length ?? '?'} real RTSP cameras at ${r.fps} frames/s from GStreamer's server — still scenes (bus.jpg), walkers (vtest.mp4, played once per run), moving synthetic scenes (GStreamer's ball) — through \`argus run\`, cache on, default settings, on each model in turn; rates from the stats topic after a ${r.warmupSeconds}-s warm-up.`,
    '',
    `Share = weighted max-min fair share (water-filling) of all cameras' analysed frames/s, each camera weighted by its priority and capped at its demand (offered − cached: the frames the cache did not answer), so a still camera the cache answers is owed only what it asks. Truth: a still camera holds ${held} (its count topics alone on the detector, the reference: ${ref.new_events} \`new\`, ${ref.end_events} \`end\`, ${ref.count_drops_to_zero} drops to 0); a walkers camera sees the clip's ${people.count} person visits (${people.low}–${people.high}, counted by eye: bench/events.ts). Goals: analysed ÷ share 0.9–1.1 per camera and per priority; a still camera: \`new\` once per object, 0 \`end\` events and 0 drops of a count to 0 while its objects stand there; walkers: \`new\` per person ≤ 1.2 at ≥ 1 analysed frame/s.`,
    ...r.variants.flatMap((v) => ['', ...overloadVariant(r, v.model, v.runs)]),
  ];
}

export function renderMarkdown(r: BenchResults): string {
  const m = r.machine;
  const md: string[] = [
    `Machine: ${m.cpus} × ${m.cpu}, Node ${m.node}, provider ${m.provider}${m.softwareVulkan ? ` (${m.softwareVulkan}: software Vulkan: path, not speed)` : ''}. ${r.full ? 'Full' : 'Short'} mode; detector figures are medians of ${r.repeats} interleaved runs.`,
    '',
  ];
  if (r.models.length) {
    md.push(
      '**Model preparation** (`argus model prepare`): bare onnxruntime-node, batch 1, original int8 against prepared.',
      '',
      '| model | frames/s | × original |',
      '|---|---|---|',
    );
    for (const g of r.models) {
      const base = g.rows[0]?.bareFps ?? 0;
      for (const row of g.rows) md.push(`| ${row.model} | ${f(row.bareFps)} | ${f(row.bareFps / base, 2)} |`);
    }
    md.push('');
  }
  if (r.limit) {
    md.push(
      `**The limit**: bare onnxruntime-node on the main thread against Argus' worker-thread detector, ${r.limit.model}; preprocessing one frame ${f(r.limit.preprocessMsPerFrame, 2)} ms in the worker, and ${f(r.limit.loopMsPerFrame, 3)} ms of the event loop (copying it into the batch).`,
      '',
      '| batch | bare frames/s | Argus detector frames/s (batches in flight) | ratio | one batch at a time, frames/s (ratio) | event-loop max delay, bare / Argus (ms) |',
      '|---|---|---|---|---|---|',
      ...r.limit.rows.map(
        (x) =>
          `| ${x.batch} | ${f(x.bareFps)} | ${f(x.argusFps)} (${x.inFlight ?? 1}) | ${f(x.efficiency, 2)} | ${x.argusSerialFps ? `${f(x.argusSerialFps)} (${f(x.argusSerialFps / x.bareFps, 2)})` : '—'} | ${f(x.bareLoopDelayMaxMs)} / ${f(x.argusLoopDelayMaxMs)} |`,
      ),
      '',
    );
  }
  if (r.remote) {
    const x = r.remote;
    const bytes = (n: number | null): string => (n === null ? '–' : `${f(n / 1024, 1)} KiB`);
    md.push(
      `**Remote inference**: ${x.model} run by Argus' detector in the bench process (local), and by an \`argus run\` with \`http.inference\` over loopback through a RemoteDetector (KServe v2, binary tensors) sending RGB24 (what Argus sends Argus) or FP32 NCHW (what a Triton client sends); ${x.picture}, batches of ${x.rows[0]?.batch ?? '?'}, as many in flight as the side takes. Remote RGB24 ÷ local frames/s: **${f(x.ratio, 2)}** with as many requests in flight as the local sessions, **${f(x.ratioPlusOne, 2)}** with one more.`,
      '',
      '| side | in flight | frames/s | batch latency p50 / p99 (ms) | sent per frame | received per frame |',
      '|---|---|---|---|---|---|',
      ...x.rows.map(
        (row) =>
          `| ${row.mode} | ${row.in_flight} | ${f(row.fps)} | ${f(row.latency_p50_ms, 0)} / ${f(row.latency_p99_ms, 0)} | ${bytes(row.sent_per_frame)} | ${bytes(row.received_per_frame)} |`,
      ),
      '',
    );
  }
  if (r.pipeline) {
    md.push(
      `**Pipeline**: synthetic 640×480 cameras at 10 frames/s each, ${r.pipeline.model}, cache off, measured by an MQTT subscriber (latency = capture to delivery). The naive design runs one \`session.run\` per frame as it arrives, on the main thread.`,
      '',
      ...pipelineTable(r.pipeline.rows, 'design'),
      '',
    );
    const e = r.pipeline.efficiency;
    if (e) {
      md.push(
        `**Efficiency, first figure** (lavfi cameras; the bare session decodes nothing; kept for one release beside the fair one) at ${e.cameras} cameras: ${f(e.analysed_fps)} analysed frames/s (mean batch ${f(e.mean_batch, 2)}) ÷ bare ${f(e.bare_fps)} frames/s at batch ${e.bare_batch} = **${f(e.ratio, 2)}**.`,
        '',
      );
    }
    const live = r.pipeline.live;
    if (live) {
      const alone = (batch: number): number | undefined =>
        live.bareAlone.find((x) => x.batch === batch)?.bareFps;
      md.push(
        `**Live cameras**: the same fleet as ${live.rows[0]?.cameras ?? '?'} live RTSP cameras (GStreamer's ball, 640×480 at ${live.rows[0] ? live.rows[0].offered_fps / live.rows[0].cameras : '?'} frames/s: a live source does not wait for its reader), Argus and the naive design; the bare session beside as many ffmpeg processes decoding the same streams with Argus' own arguments (to /dev/null), and alone, in turns (medians of the turns).`,
        '',
        ...pipelineTable(live.rows, 'design'),
        '',
        '| batch | bare frames/s beside the decoders | bare alone, in turns with it | ratio |',
        '|---|---|---|---|',
        ...live.bare.map(
          (x) =>
            `| ${x.batch} | ${f(x.bareFps)} | ${f(alone(x.batch))} | ${f(alone(x.batch) ? x.bareFps / alone(x.batch)! : null, 2)} |`,
        ),
        '',
      );
      const fair = live.efficiency;
      if (fair)
        md.push(
          `**Efficiency, fair to live cameras** at ${fair.cameras} cameras: ${f(fair.analysed_fps)} analysed frames/s (mean batch ${f(fair.mean_batch, 2)}) ÷ bare ${f(fair.bare_fps)} frames/s at batch ${fair.bare_batch} beside ${fair.cameras} decoders = **${f(fair.ratio, 2)}** (first figure above: ${f(e?.ratio, 2)}).`,
          '',
        );
    }
  }
  if (r.levers) {
    md.push(
      `**Levers** at ${r.levers.rows[0]?.cameras ?? '?'} cameras (saturated), one change at a time, ${r.levers.model} unless said.`,
      '',
      ...pipelineTable(r.levers.rows, 'variant'),
      '',
    );
  }
  if (r.cacheLive) {
    md.push(
      `**Cache, live**: a mostly static fleet — 7 still scenes with sensor noise and one real pedestrian clip, 5 frames/s each, ${r.cacheLive.model}. Answered frames per CPU-second (daemon + ffmpeg), Argus with the cache ÷ naive: **${f(r.cacheLive.perCpuRatio, 2)}×**.`,
      '',
      ...pipelineTable(r.cacheLive.rows, 'variant'),
      '',
    );
  }
  if (r.cacheReplay.length) {
    md.push(
      'Cache replayed over real clips at 5 frames/s (defaults: 2 cells, threshold 10, max age 10 s), with its rule for moving objects (`cache.analyse_moving`) off and on: share of frames the model still analyses; share answered from the cache that missed a change (counts of confident objects, score ≥ 0.5, differ from the 5-frame median of what the model says); share answered while an object moved, with that object frozen where it was; share whose counts differ from the model on that very frame (its flicker included); how often those counts change from frame to frame anyway.',
      '',
      '| clip | moving rule | frames | analysed with the cache | changes missed | moving objects frozen | counts differ | truth changes |',
      '|---|---|---|---|---|---|---|---|',
      ...r.cacheReplay.map(
        (c) =>
          `| ${c.clip} | ${c.moving_rule ? 'on' : 'off'} | ${c.frames} | ${f(c.analysed_share * 100, 0)} % | ${f(c.missed_share * 100, 1)} % | ${f(c.frozen_share * 100, 1)} % | ${f(c.count_mismatch_share * 100, 1)} % | ${f(c.truth_change_share * 100, 0)} % |`,
      ),
      '',
    );
  }
  if (r.hashes.length) {
    md.push(
      "Frame hashes: cost per frame, and share of frames called unchanged (block: ≤ 2 cells changed by > 10, of the whole frame or of ffmpeg's 32×32 thumbnail of it; pHash and blockhash: Hamming ≤ 4 of 64).",
      '',
      '| size | clip | frames | block hash | block hash of the thumbnail | pHash | imghash blockhash |',
      '|---|---|---|---|---|---|---|',
      ...r.hashes.flatMap((h) => [
        `| ${h.size} | cost per frame (ms) | | ${f(h.ms_per_frame.block, 2)} | ${f(h.ms_per_frame.thumbnail, 3)} | ${f(h.ms_per_frame.phash, 2)} | ${f(h.ms_per_frame.imghash_blockhash, 2)} |`,
        ...h.clips.map(
          (c) =>
            `| ${h.size} | ${c.clip} | ${c.frames} | ${f(c.block_unchanged, 2)} | ${f(c.thumbnail_unchanged, 2)} | ${f(c.phash_unchanged, 2)} | ${f(c.blockhash_unchanged, 2)} |`,
        ),
      ]),
      '',
    );
  }
  if (r.health) md.push(...healthSection(r.health), '');
  if (r.idle) md.push(...idleSection(r.idle), '');
  if (r.events) md.push(...eventsSection(r.events.model, r.events.row), '');
  if (r.tracking) md.push(...trackingSection(r.tracking), '');
  if (r.overload) md.push(...overloadSection(r.overload), '');
  if (r.fleet) md.push(...fleetSection(r.fleet), '');
  if (r.soak) {
    const s = r.soak;
    md.push(
      `**Soak**: 8 cameras for ${Math.round(s.rss_series.at(-1)?.[0] ?? 0)} s: ${f(s.analysed_fps)} analysed frames/s, p50/p99 ${f(s.latency_p50_ms, 0)}/${f(s.latency_p99_ms, 0)} ms, peak RSS ${f(s.peak_rss_mb, 0)} MB. RSS (MB) every 30 s: ${s.rss_series.map(([, mb]) => f(mb, 0)).join(', ')}.`,
      '',
    );
  }
  return md.join('\n');
}
