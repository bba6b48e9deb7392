import { spawn, type ChildProcess } from 'node:child_process';
import { Writable } from 'node:stream';
import ffmpeg from 'fluent-ffmpeg';
import type { FfmpegArgs, FfmpegOptionNames } from './ffmpeg-args.js';
import { parseFilters, parseHwaccels, type FfmpegCapabilities } from './hwaccel.js';

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

/** What `ffmpeg -hide_banner -h <topic>` prints ('' when it cannot run). */
function help(ffmpegPath: string, topic: string): Promise<string> {
  return new Promise((resolve) => {
    const child = spawn(ffmpegPath, ['-hide_banner', '-h', topic], { stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', () => resolve(''));
    child.on('close', () => resolve(out));
  });
}

/** What `ffmpeg -hide_banner <args>` prints on stdout ('' when it cannot run). */
function ask(ffmpegPath: string, args: string[]): Promise<string> {
  return new Promise((resolve) => {
    const child = spawn(ffmpegPath, ['-hide_banner', ...args], { stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', () => resolve(''));
    child.on('close', () => resolve(out));
  });
}

/** The hardware acceleration methods and filters the binary reports (none when it cannot be asked). */
export async function probeCapabilities(ffmpegPath: string): Promise<FfmpegCapabilities> {
  const [hwaccels, filters] = await Promise.all([
    ask(ffmpegPath, ['-hwaccels']),
    ask(ffmpegPath, ['-filters']),
  ]);
  return { hwaccels: parseHwaccels(hwaccels), filters: parseFilters(filters) };
}

/** Asks the binary itself which names it has (the newer ones when it cannot be asked). */
export async function probeOptionNames(ffmpegPath: string): Promise<FfmpegOptionNames> {
  const [rtsp, long] = await Promise.all([help(ffmpegPath, 'demuxer=rtsp'), help(ffmpegPath, 'long')]);
  return {
    rtspTimeout: /^\s*-stimeout\s/m.test(rtsp) ? 'stimeout' : 'timeout',
    fpsMode: /^-vsync\s/m.test(long) && !/^-fps_mode\s/m.test(long) ? 'vsync' : 'fps_mode',
  };
}

/**
 * Spawns ffmpeg through fluent-ffmpeg; the argument list comes whole from `buildFfmpegArgs`.
 *
 * fluent-ffmpeg's public API gives stdout (an output stream), stderr ('stderr' lines), signals
 * (`kill`) and the end ('end', or 'error' for a failure to start, a non-zero exit or a
 * signal). It has no accessor for the process, which three things still need: its pid; its
 * stdin, where ffmpeg reads 'q' (fluent-ffmpeg writes stdin only from an input stream, and our
 * input is a URL); and how it ended: fluent-ffmpeg reports the code or signal only inside an
 * error's message, and emits 'start' right after spawn() even when the spawn failed, where the
 * process has no pid (and then mishandles the failure, below). So the ChildProcess is read
 * once, from the `ffmpegProc` field that fluent-ffmpeg sets just before emitting 'start'.
 */
export function fluentSpawner(ffmpegPath: string): SpawnFfmpeg {
  return (args, handlers) => {
    let proc: ChildProcess | undefined;
    let pendingSignal: NodeJS.Signals | undefined;
    const sink = new Writable({
      // fluent-ffmpeg takes the output stream's 'close' for a failure, reported (exit code
      // lost) unless ffmpeg exits within 20 ms. The stream closes when ffmpeg's stdout ends,
      // about 1 ms before its exit here: a race a loaded machine could lose. No 'close', no race.
      emitClose: false,
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
    const end = (error?: Error): void =>
      error
        ? handlers.exit(null, null, error)
        : handlers.exit(proc?.exitCode ?? null, (proc?.signalCode as NodeJS.Signals | null) ?? null);
    cmd.on('start', () => {
      const child = (cmd as unknown as { ffmpegProc: ChildProcess }).ffmpegProc;
      if (child.pid === undefined) {
        // spawn() failed (no such binary, not executable, no process slot left), and Node says
        // why in an 'error' event on the next tick. fluent-ffmpeg's listener for it throws (its
        // end callback reads stderr buffers it was not given), an uncaught exception that
        // would end the daemon: ours reports it instead.
        child.removeAllListeners('error');
        child.once('error', (err) => end(err));
        return;
      }
      proc = child;
      // 'q' written as ffmpeg exits fails with EPIPE; its exit is reported all the same.
      proc.stdin?.on('error', () => undefined);
      if (pendingSignal) cmd.kill(pendingSignal);
    });
    cmd.on('stderr', (line: string) => handlers.stderr(`${line}\n`));
    // fluent-ffmpeg emits one of these, once, after the process has exited (Node has set its
    // code and signal by then). A non-zero exit or a signal is an 'error' too; one before any
    // process ran is a failure before spawning (e.g. the binary's format list could not be read).
    cmd.on('end', () => end());
    cmd.on('error', (err: Error) => end(proc ? undefined : err));
    cmd.run();
    return {
      get pid() {
        return proc?.pid;
      },
      quit() {
        if (proc?.stdin?.writable) proc.stdin.write('q');
      },
      kill(sig) {
        if (proc) cmd.kill(sig);
        else pendingSignal = sig;
      },
    };
  };
}
