/**
 * The saturation efficiency, fair to live cameras (issue 22). The first figure (kept beside this
 * one for a release) sets the daemon, decoding N streams, against a bare session that decodes
 * none, and feeds both designs from lavfi sources, which wait for a reader that falls behind: a
 * pipe's backpressure pauses ffmpeg, and `-re` only caps its rate, so the slower the naive
 * design, the fewer frames it is offered. A live camera does not wait.
 *
 * Here both designs read N live RTSP cameras (GStreamer's server sends at the stream's rate
 * whether or not a reader keeps up), and the bare session runs beside N ffmpeg processes decoding
 * the same streams with the arguments Argus gives its cameras' (bench/common.ts startDecoders):
 * both sides pay for decoding.
 */
import type { ProviderName } from '../src/config/index.js';
import { startRtspServer } from '../test/helpers/rtsp.js';
import { startDecoders, stopChild } from './common.js';
import { benchDetector, type DetectorBenchRow } from './detector.js';
import { benchPipeline, type PipelineOptions, type PipelineRow } from './pipeline.js';

export interface Efficiency {
  cameras: number;
  analysed_fps: number;
  mean_batch: number;
  bare_batch: number;
  bare_fps: number;
  ratio: number;
}

/** `top`'s analysed frames/s ÷ the bare session's frames/s at the batch size nearest its mean batch. */
export function efficiencyOf(top: PipelineRow | undefined, bare: DetectorBenchRow[]): Efficiency | null {
  if (!top || top.mean_batch === null || !bare.length) return null;
  const batch = top.mean_batch;
  const near = [...bare].sort((a, b) => Math.abs(a.batch - batch) - Math.abs(b.batch - batch))[0]!;
  return {
    cameras: top.cameras,
    analysed_fps: top.analysed_fps,
    mean_batch: batch,
    bare_batch: near.batch,
    bare_fps: near.bareFps,
    ratio: top.analysed_fps / near.bareFps,
  };
}

export interface LiveSaturation {
  /** Argus and the naive design on the live cameras, labelled `live RTSP`. */
  rows: PipelineRow[];
  /** The bare session at each batch size, beside as many decoders as cameras. */
  bare: DetectorBenchRow[];
  /** The same, alone, in turns with the above (the machine is shared: the two side by side). */
  bareAlone: DetectorBenchRow[];
  efficiency: Efficiency | null;
}

export interface LiveSaturationOptions {
  /** The pipeline section's settings (model, fps, seconds, cache off…); sources are replaced. */
  pipeline: Omit<PipelineOptions, 'sources' | 'mode'>;
  cameras: number;
  modelName: string;
  /** The model's input size: the decoders scale to it, as the daemon's ffmpeg does. */
  size: number;
  batches: number[];
  repeats: number;
  provider: ProviderName;
}

export async function benchLiveSaturation(
  opts: LiveSaturationOptions,
  log: (msg: string) => void = () => undefined,
): Promise<LiveSaturation> {
  const cleanups: (() => Promise<void>)[] = [];
  try {
    const { fps } = opts.pipeline;
    const server = await startRtspServer({ after: (fn) => cleanups.push(fn) }, [
      { name: 'ball', source: { kind: 'ball', width: 640, height: 480, fps } },
    ]);
    const sources = Array.from({ length: opts.cameras }, () => server.url('ball'));
    const rows: PipelineRow[] = [];
    for (const mode of ['argus', 'naive'] as const) {
      log(`pipeline: ${mode}, ${opts.cameras} live RTSP cameras`);
      rows.push(
        await benchPipeline({
          ...opts.pipeline,
          sources,
          rtspTransport: server.transport,
          mode,
          label: 'live RTSP',
        }),
      );
    }
    log(`pipeline: bare session alone and beside ${opts.cameras} decoders of the same cameras, in turns`);
    const bareRuns: DetectorBenchRow[] = [];
    const aloneRuns: DetectorBenchRow[] = [];
    const bench = async (name: string): Promise<DetectorBenchRow[]> =>
      (
        await benchDetector(opts.pipeline.model, opts.batches, {
          frames: 96,
          repeats: 1,
          provider: opts.provider,
          argus: false,
          name,
        })
      ).rows;
    for (let r = 0; r < opts.repeats; r++) {
      aloneRuns.push(...(await bench(opts.modelName)));
      const decoders = await startDecoders(sources, { fps, size: opts.size, transport: server.transport });
      const stop = (): Promise<void> => Promise.all(decoders.map((d) => stopChild(d))).then(() => undefined);
      cleanups.push(stop);
      // The decoders connect, probe and reach their stream's rate before the session is timed.
      await new Promise((res) => setTimeout(res, 10_000));
      bareRuns.push(...(await bench(`${opts.modelName}, beside ${opts.cameras} decoders`)));
      await stop();
    }
    const bare = medianByBatch(bareRuns);
    return { rows, bare, bareAlone: medianByBatch(aloneRuns), efficiency: efficiencyOf(rows[0], bare) };
  } finally {
    for (const fn of cleanups.reverse()) await fn().catch(() => undefined);
  }
}

/** Per batch size, the row of median frames/s over the repeats. */
function medianByBatch(rows: DetectorBenchRow[]): DetectorBenchRow[] {
  const batches = [...new Set(rows.map((r) => r.batch))];
  return batches.map((b) => {
    const s = rows.filter((r) => r.batch === b).sort((x, y) => x.bareFps - y.bareFps);
    return s[s.length >> 1]!;
  });
}
