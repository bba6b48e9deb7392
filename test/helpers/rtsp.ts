import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { connect, createServer } from 'node:net';
import { join } from 'node:path';
import { defaultFfmpegPath } from '../../src/ingest/ffmpeg-process.js';
import { repoRoot } from './env.js';

/**
 * Real RTSP servers for integration tests. GStreamer's RTSP server (Debian packages, installed
 * by .ci/run) is preferred: it is what many cameras run, and serves RTP over TCP and UDP.
 * Without it, the npm `rtsp-streaming-server` is used, fed by ffmpeg publishers; it serves RTP
 * over UDP only. ARGUS_TEST_RTSP=npm forces the npm server.
 */

export type Source =
  | {
      kind: 'ball';
      width: number;
      height: number;
      fps: number;
      /** B-frames between reference frames (High profile); none when absent. */
      bframes?: number;
      /**
       * A camera with a wrong clock: an ffmpeg setpts expression (time base 1/90000) that the
       * publisher applies before encoding, so the RTP timestamps disagree with real time.
       * The npm server only: GStreamer stamps RTP by its own clock.
       */
      setpts?: string;
    }
  /** A JPEG shown as a still camera. */
  | { kind: 'image'; path: string; fps: number }
  /**
   * An H.264 MP4 passed through without re-encoding, looped; `once`: played once. (GStreamer
   * plays it from the start when the first client connects; the npm server's publisher from
   * when the server starts.)
   */
  | { kind: 'clip'; path: string; once?: boolean };

export interface Mount {
  name: string;
  source: Source;
}

export interface RtspServer {
  kind: 'gstreamer' | 'npm';
  /** The transport clients should use with this server. */
  transport: 'tcp' | 'udp';
  url(mount: string, credentials?: string): string;
  /** Kills the server process(es): every client sees its camera drop. */
  kill(): Promise<void>;
  /** Starts it again on the same port. */
  start(): Promise<void>;
  readonly supportsAuth: boolean;
}

let gstAvailable: boolean | undefined;
export function hasGstreamer(): boolean {
  if (process.env.ARGUS_TEST_RTSP === 'npm') return false;
  gstAvailable ??=
    spawnSync(
      '/usr/bin/python3',
      [
        '-c',
        "import gi; gi.require_version('GstRtspServer', '1.0'); from gi.repository import GstRtspServer",
      ],
      {
        stdio: 'ignore',
      },
    ).status === 0;
  return gstAvailable;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => resolve(typeof addr === 'object' && addr ? addr.port : 0));
    });
  });
}

function gstLaunch(source: Source): string {
  const h264 = 'x264enc tune=zerolatency speed-preset=ultrafast';
  switch (source.kind) {
    case 'ball': {
      if (source.setpts) throw new Error('a wrong clock needs the npm server (startRtspServer kind: npm)');
      // zerolatency allows no B-frames; dct8x8 and the caps make it High profile.
      const encoder = source.bframes
        ? `x264enc speed-preset=ultrafast bframes=${source.bframes} b-adapt=false dct8x8=true key-int-max=${source.fps * 2} ! video/x-h264,profile=(string)high`
        : `${h264} key-int-max=${source.fps * 2}`;
      return `( videotestsrc is-live=true pattern=ball ! video/x-raw,width=${source.width},height=${source.height},framerate=${source.fps}/1 ! ${encoder} ! rtph264pay name=pay0 pt=96 )`;
    }
    case 'image':
      return `( multifilesrc location=${source.path} loop=true caps=image/jpeg,framerate=${source.fps}/1 ! jpegdec ! videoconvert ! video/x-raw,format=I420 ! ${h264} key-int-max=${source.fps * 2} ! rtph264pay name=pay0 pt=96 )`;
    case 'clip':
      return `( filesrc location=${source.path} ! qtdemux ! h264parse ! rtph264pay name=pay0 pt=96 )`;
  }
}

function waitForLine(child: ChildProcess, pattern: RegExp, timeoutMs: number, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`${what} did not start: ${out}`)), timeoutMs);
    const onData = (d: Buffer): void => {
      out += d.toString();
      if (pattern.test(out)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited with ${code}: ${out}`));
    });
  });
}

function killAndWait(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

/** Whether an RTSP server answers OPTIONS on 127.0.0.1:`port` within 5 s (any status: it is there). */
function answersRtsp(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const done = (ok: boolean): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), 5000);
    let answer = '';
    socket.on('connect', () => socket.write(`OPTIONS rtsp://127.0.0.1:${port}/ RTSP/1.0\r\nCSeq: 1\r\n\r\n`));
    socket.on('data', (d: Buffer) => {
      answer += d.toString('latin1');
      if (answer.startsWith('RTSP/1.0 ')) done(true);
    });
    socket.on('error', () => done(false));
    socket.on('close', () => done(answer.startsWith('RTSP/1.0 ')));
  });
}

class GstServer implements RtspServer {
  kind = 'gstreamer' as const;
  transport = 'tcp' as const;
  supportsAuth = true;
  private child: ChildProcess | undefined;

  /** Whether a URL was handed out: from then on the port is the one they name. */
  private named = false;

  constructor(
    private port: number,
    private readonly mounts: Mount[],
    private readonly auth?: string,
    private readonly authMethod: 'basic' | 'digest' = 'basic',
    private readonly shared = true,
  ) {}

  url(mount: string, credentials?: string): string {
    this.named = true;
    return `rtsp://${credentials ? `${credentials}@` : ''}127.0.0.1:${this.port}/${mount}`;
  }

  /**
   * Starts the server and checks that it answers RTSP on 127.0.0.1 before the test uses it: on a
   * busy machine it once said READY and then refused every connection (the port, found free a
   * moment before, taken meanwhile). Such a start is tried again, on a new port while no URL
   * names the old one.
   */
  async start(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const args = [join(repoRoot, 'test/helpers/gst-rtsp-server.py'), '--port', String(this.port)];
      if (this.auth) args.push('--auth', this.auth, '--auth-method', this.authMethod);
      if (!this.shared) args.push('--unshared');
      for (const m of this.mounts) args.push('--mount', `${m.name}=${gstLaunch(m.source)}`);
      this.child = spawn('/usr/bin/python3', args, { stdio: ['ignore', 'pipe', 'pipe'] });
      await waitForLine(this.child, /READY/, 15_000, 'GStreamer RTSP server');
      if ((await answersRtsp(this.port)) || attempt === 3) return;
      await killAndWait(this.child);
      if (!this.named) this.port = await freePort();
    }
  }

  kill(): Promise<void> {
    return killAndWait(this.child);
  }
}

class NpmServer implements RtspServer {
  kind = 'npm' as const;
  transport = 'udp' as const;
  supportsAuth = false;
  private server: ChildProcess | undefined;
  private publishers: ChildProcess[] = [];

  constructor(
    private readonly publishPort: number,
    private readonly clientPort: number,
    private readonly rtpPortStart: number,
    private readonly mounts: Mount[],
  ) {}

  url(mount: string, credentials?: string): string {
    return `rtsp://${credentials ? `${credentials}@` : ''}127.0.0.1:${this.clientPort}/${mount}`;
  }

  private publisherArgs(m: Mount): string[] {
    const x264 = ['-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-pix_fmt', 'yuv420p'];
    const out = [
      '-an',
      '-f',
      'rtsp',
      '-rtsp_transport',
      'udp',
      `rtsp://127.0.0.1:${this.publishPort}/${m.name}`,
    ];
    const s = m.source;
    switch (s.kind) {
      case 'ball': {
        const encoder = s.bframes
          ? [
              '-c:v',
              'libx264',
              '-preset',
              'ultrafast',
              '-profile:v',
              'high',
              '-bf',
              String(s.bframes),
              '-pix_fmt',
              'yuv420p',
            ]
          : x264;
        // No frame dropped or repeated to fit a rate (passthrough), and the encoder in the filter's
        // time base (-1), so that the rewritten stamps reach the RTP packets as they are.
        const clock = s.setpts
          ? ['-vf', `settb=1/90000,setpts=${s.setpts}`, '-vsync', 'passthrough', '-enc_time_base', '-1']
          : [];
        return [
          '-re',
          '-f',
          'lavfi',
          '-i',
          `testsrc=size=${s.width}x${s.height}:rate=${s.fps}`,
          ...clock,
          ...encoder,
          '-g',
          String(s.fps * 2),
          ...out,
        ];
      }
      case 'image':
        return [
          '-re',
          '-loop',
          '1',
          '-framerate',
          String(s.fps),
          '-i',
          s.path,
          ...x264,
          '-g',
          String(s.fps * 2),
          ...out,
        ];
      case 'clip':
        return ['-re', ...(s.once ? [] : ['-stream_loop', '-1']), '-i', s.path, '-c:v', 'copy', ...out];
    }
  }

  async start(): Promise<void> {
    const script = join(repoRoot, 'dist/test/helpers/npm-rtsp-server.js');
    this.server = spawn(
      process.execPath,
      [script, String(this.publishPort), String(this.clientPort), String(this.rtpPortStart)],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    await waitForLine(this.server, /READY/, 15_000, 'rtsp-streaming-server');
    const ffmpeg = await defaultFfmpegPath();
    this.publishers = this.mounts.map((m) =>
      spawn(ffmpeg, ['-hide_banner', '-loglevel', 'error', ...this.publisherArgs(m)], {
        stdio: ['ignore', 'ignore', 'ignore'],
      }),
    );
    // Give the publishers time to ANNOUNCE their streams.
    await new Promise((r) => setTimeout(r, 1500));
  }

  async kill(): Promise<void> {
    await Promise.all([...this.publishers.map((p) => killAndWait(p)), killAndWait(this.server)]);
    this.publishers = [];
  }
}

/**
 * Starts a real RTSP server serving `mounts`; it is killed when the test ends. `auth`
 * (`user:password`, GStreamer only) makes it require that login, by `authMethod` (Basic unless said). GStreamer's when
 * installed, unless `kind: 'npm'` asks for the npm server. `deferStart`: its URLs are known
 * but it is not started (the test calls `start()`).
 */
export async function startRtspServer(
  t: { after: (fn: () => Promise<void>) => void },
  mounts: Mount[],
  opts: {
    auth?: string;
    authMethod?: 'basic' | 'digest';
    kind?: 'npm';
    deferStart?: boolean;
    /** GStreamer: one pipeline per client instead of one per mount (see gst-rtsp-server.py). */
    shared?: boolean;
  } = {},
): Promise<RtspServer> {
  let server: RtspServer;
  if (hasGstreamer() && opts.kind !== 'npm') {
    server = new GstServer(await freePort(), mounts, opts.auth, opts.authMethod, opts.shared ?? true);
  } else {
    server = new NpmServer(
      await freePort(),
      await freePort(),
      20000 + Math.floor(Math.random() * 20000),
      mounts,
    );
  }
  t.after(() => server.kill());
  if (!opts.deferStart) await server.start();
  return server;
}

/** How many I, P and B pictures the first `frames` decoded frames of a stream are (ffmpeg's showinfo). */
export async function pictureTypes(
  url: string,
  transport: 'tcp' | 'udp',
  frames = 30,
): Promise<Record<'I' | 'P' | 'B', number>> {
  const ffmpeg = await defaultFfmpegPath();
  const args = ['-hide_banner', '-rtsp_transport', transport, '-i', url, '-an', '-vf', 'showinfo'];
  const stderr = await new Promise<string>((resolve, reject) =>
    execFile(
      ffmpeg,
      [...args, '-frames:v', String(frames), '-f', 'null', '-'],
      { timeout: 20_000, killSignal: 'SIGKILL' },
      (err, _out, errText) => (err ? reject(new Error(`${err.message}\n${errText}`)) : resolve(errText)),
    ),
  );
  const count = (type: string) => stderr.split(`type:${type} `).length - 1;
  return { I: count('I'), P: count('P'), B: count('B') };
}
