import { spawn, type ChildProcess } from 'node:child_process';
import { Writable } from 'node:stream';
import ffmpeg from 'fluent-ffmpeg';
import type { FfmpegArgs } from './ffmpeg-args.js';

/** What a camera supervisor needs from a running ffmpeg. Tests substitute a fake. */
export interface FfmpegHandle {
  readonly pid: number | undefined;
  /** Asks ffmpeg to finish cleanly ('q' on its stdin). */
  quit(): void;
  kill(signal: NodeJS.Signals): void;
}

export interface FfmpegHandlers {
  stdout(chunk: Buffer): void;
  stderr(text: string): void;
  /** Called once, when the process has ended (or could not start: code null, error set). */
  exit(code: number | null, signal: NodeJS.Signals | null, error?: Error): void;
}

export type SpawnFfmpeg = (args: FfmpegArgs, handlers: FfmpegHandlers) => FfmpegHandle;

/** The ffmpeg binary: a configured path, else the static build from @ffmpeg-installer/ffmpeg. */
export async function defaultFfmpegPath(): Promise<string> {
  const mod = (await import('@ffmpeg-installer/ffmpeg')) as { default?: { path: string }; path?: string };
  const p = mod.default?.path ?? mod.path;
  if (!p) throw new Error('@ffmpeg-installer/ffmpeg did not provide a binary for this platform');
  return p;
}

/**
 * Which option sets the RTSP socket timeout: ffmpeg 4.x has `-stimeout`, 5.0+ renamed it to
 * `-timeout` (which 4.x uses for something else). Asked of the binary itself.
 */
export function probeRtspTimeoutOption(ffmpegPath: string): Promise<'stimeout' | 'timeout'> {
  return new Promise((resolve) => {
    const child = spawn(ffmpegPath, ['-hide_banner', '-h', 'demuxer=rtsp'], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', () => resolve('timeout'));
    child.on('close', () => resolve(/^\s*-stimeout\s/m.test(out) ? 'stimeout' : 'timeout'));
  });
}

/** Spawns ffmpeg through fluent-ffmpeg; the argument list comes whole from `buildFfmpegArgs`. */
export function fluentSpawner(ffmpegPath: string): SpawnFfmpeg {
  return (args, handlers) => {
    let proc: ChildProcess | undefined;
    let ended = false;
    let pendingSignal: NodeJS.Signals | undefined;
    const end = (error?: Error): void => {
      if (ended) return;
      ended = true;
      // Set by Node before 'exit' is emitted, whichever listener runs first.
      handlers.exit(proc?.exitCode ?? null, (proc?.signalCode as NodeJS.Signals | null) ?? null, error);
    };
    const sink = new Writable({
      write(chunk: Buffer, _enc, cb) {
        handlers.stdout(chunk);
        cb();
      },
    });
    const cmd = ffmpeg({ stdoutLines: 1 })
      .setFfmpegPath(ffmpegPath)
      .input(args.url)
      .inputOptions(...args.input)
      .outputOptions(...args.output)
      .output(sink);
    cmd.on('start', () => {
      proc = (cmd as unknown as { ffmpegProc?: ChildProcess }).ffmpegProc;
      if (!proc) return;
      proc.stdin?.on('error', () => undefined);
      proc.stderr?.on('data', (d: string | Buffer) => handlers.stderr(d.toString()));
      if (pendingSignal) proc.kill(pendingSignal);
    });
    cmd.on('end', () => end());
    cmd.on('error', (err: Error) => {
      // fluent-ffmpeg reports a non-zero exit as an error too; only a failure to start is one.
      end(proc ? undefined : err);
    });
    cmd.run();
    return {
      get pid() {
        return proc?.pid;
      },
      quit() {
        if (proc?.stdin?.writable) proc.stdin.write('q');
      },
      kill(sig) {
        if (proc) proc.kill(sig);
        else pendingSignal = sig;
      },
    };
  };
}
