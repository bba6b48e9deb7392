/**
 * GPU decoding presets for a camera's ffmpeg (`hwaccel: nvidia | vaapi | qsv`): the decoder
 * arguments, and the filters that bring the frames back to system memory for the letterbox and
 * thumbnail outputs. Frames stay on the GPU through the wall-clock restamp and the `fps` filter,
 * and only the frames kept are downloaded (`hwdownload,format=nv12` after `fps`): a 25 fps camera
 * analysed at 5 copies a fifth of its frames back, not all of them. Whether the binary in use has
 * the preset is checked against what it reports (`-hwaccels`, `-filters`) and the device node;
 * a camera whose preset cannot run decodes in software, and one log line says why.
 */
import { existsSync } from 'node:fs';
import type { CameraConfig, HwaccelName } from '../config/index.js';

/** Whether a device node is there. */
export const deviceExists = (path: string): boolean => existsSync(path);

/** What the ffmpeg binary in use can do, as it reports it. */
export interface FfmpegCapabilities {
  /** `ffmpeg -hwaccels`: cuda, vaapi, qsv, vdpau… */
  hwaccels: ReadonlySet<string>;
  /** `ffmpeg -filters`: filter names. */
  filters: ReadonlySet<string>;
}

export interface DecodePreset {
  /** Options before -i. */
  input: string[];
  /** Filters after `fps`, before the letterbox and thumbnail branches. */
  filters: string[];
}

/** ffmpeg's name of each preset's hardware acceleration method. */
const METHOD: Record<Exclude<HwaccelName, 'none'>, string> = { nvidia: 'cuda', vaapi: 'vaapi', qsv: 'qsv' };

/** The VAAPI render node when `hwaccel_device` does not name one. */
export const DEFAULT_RENDER_NODE = '/dev/dri/renderD128';

const DOWNLOAD = ['hwdownload', 'format=nv12'];

/** The decoder arguments and download filters of a preset; `none` adds nothing. */
export function decodePreset(kind: HwaccelName, device?: string): DecodePreset {
  switch (kind) {
    case 'none':
      return { input: [], filters: [] };
    case 'nvidia':
      // NVDEC; -hwaccel_device is the CUDA device index.
      return {
        input: [
          '-hwaccel',
          'cuda',
          ...(device ? ['-hwaccel_device', device] : []),
          '-hwaccel_output_format',
          'cuda',
        ],
        filters: DOWNLOAD,
      };
    case 'vaapi':
      return {
        input: [
          '-hwaccel',
          'vaapi',
          '-hwaccel_device',
          device ?? DEFAULT_RENDER_NODE,
          '-hwaccel_output_format',
          'vaapi',
        ],
        filters: DOWNLOAD,
      };
    case 'qsv':
      return {
        input: [
          '-hwaccel',
          'qsv',
          ...(device ? ['-qsv_device', device] : []),
          '-hwaccel_output_format',
          'qsv',
        ],
        filters: DOWNLOAD,
      };
  }
}

/** The device node a preset opens, to check that it is there (NVIDIA's control node for nvidia). */
export function presetDevice(kind: HwaccelName, device?: string): string | undefined {
  if (kind === 'none') return undefined;
  if (kind === 'nvidia') return '/dev/nvidiactl';
  return device ?? DEFAULT_RENDER_NODE;
}

/**
 * Why a preset cannot run with this ffmpeg on this machine, or undefined when it can. `exists`
 * says whether a device node is there.
 */
export function hwaccelProblem(
  kind: HwaccelName,
  device: string | undefined,
  caps: FfmpegCapabilities,
  exists: (path: string) => boolean,
): string | undefined {
  if (kind === 'none') return undefined;
  const method = METHOD[kind];
  const missing: string[] = [];
  if (!caps.hwaccels.has(method)) missing.push(`hwaccel ${method}`);
  if (!caps.filters.has('hwdownload')) missing.push('filter hwdownload');
  if (missing.length) return `this ffmpeg has no ${missing.join(' and no ')}`;
  const node = presetDevice(kind, device);
  if (node && !exists(node))
    return `${node} is missing: no ${kind === 'nvidia' ? 'NVIDIA driver' : 'GPU render node'}`;
  return undefined;
}

/** `ffmpeg -hide_banner -hwaccels` output: one method per line after the heading. */
export function parseHwaccels(text: string): Set<string> {
  return new Set(
    text
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.endsWith(':')),
  );
}

/** `ffmpeg -hide_banner -filters` output: ` TSC name  V->V  description` lines. */
export function parseFilters(text: string): Set<string> {
  const names = new Set<string>();
  for (const line of text.split('\n')) {
    const m = /^\s*[T.][S.][C.]\s+(\S+)\s+\S+->\S+/.exec(line);
    if (m) names.add(m[1]!);
  }
  return names;
}

/** Cameras whose preset cannot run, with why: one of these is one warning line. */
export interface SoftwareFallback {
  hwaccel: HwaccelName;
  reason: string;
  cameras: string[];
  message: string;
}

/**
 * The cameras as their ffmpeg runs them: a camera whose preset cannot run here decodes in
 * software (`hwaccel: none`). The cameras that fell back are grouped by preset and reason, so a
 * box of cameras without the driver logs one line, not one per camera.
 */
export function decodableCameras(
  cameras: readonly (readonly [string, CameraConfig])[],
  caps: FfmpegCapabilities,
  exists: (path: string) => boolean,
): { cameras: [string, CameraConfig][]; fallbacks: SoftwareFallback[] } {
  const fallbacks = new Map<string, SoftwareFallback>();
  const out = cameras.map(([name, config]): [string, CameraConfig] => {
    const reason = hwaccelProblem(config.hwaccel, config.hwaccel_device, caps, exists);
    if (!reason) return [name, config];
    const key = `${config.hwaccel}\n${reason}`;
    const f = fallbacks.get(key) ?? { hwaccel: config.hwaccel, reason, cameras: [], message: '' };
    f.cameras.push(name);
    fallbacks.set(key, f);
    return [name, { ...config, hwaccel: 'none', hwaccel_device: undefined }];
  });
  for (const f of fallbacks.values())
    f.message = `hwaccel ${f.hwaccel} cannot run (${f.reason}); decoding in software: ${f.cameras.length === 1 ? 'camera' : 'cameras'} ${f.cameras.join(', ')}`;
  return { cameras: out, fallbacks: [...fallbacks.values()] };
}
