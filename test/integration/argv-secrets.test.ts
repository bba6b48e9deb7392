import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import type { CameraStatusPayload, StatsPayload } from '../../src/publish/topics.js';
import { tempDir } from '../helpers/env.js';
import { startBroker, Subscriber } from '../helpers/mqtt.js';
import { hasGstreamer, startRtspServer } from '../helpers/rtsp.js';
import { startDaemon, writeDaemonConfig } from '../helpers/daemon.js';

/** Every process descended from `root`, by the parent ids in /proc/<pid>/stat. */
function descendants(root: number): number[] {
  const parent = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      // pid (comm) state ppid …: comm may hold spaces and parentheses; it ends at the last ')'.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parent.set(Number(name), ppid);
    } catch {
      // Gone between the listing and the read.
    }
  }
  const out: number[] = [];
  const walk = (pid: number): void => {
    for (const [child, ppid] of parent)
      if (ppid === pid) {
        out.push(child);
        walk(child);
      }
  };
  walk(root);
  return out;
}

/** A process's command line, its arguments joined by spaces; undefined once it has gone. */
function cmdline(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  } catch {
    return undefined;
  }
}

/** The right password and the wrong one: each starts and ends with the marker, so any part of one shows. */
const RIGHT = 'Qx9-dig:est@pw-Qx9';
const WRONG = 'Qx9-not-it-Qx9';

describe('no secret in any process’s command line (issue 45, item 1)', () => {
  it(
    'argus run streams from a camera that requires Digest authentication (RTP over TCP and UDP); no descendant’s argv holds the password; a wrong one is reported as auth',
    {
      skip: hasGstreamer()
        ? false
        : 'needs the GStreamer RTSP server (Digest authentication); .ci/run installs it',
    },
    async (t) => {
      const dir = await tempDir(t);
      const broker = await startBroker(t);
      const rtsp = await startRtspServer(
        t,
        [{ name: 'ball', source: { kind: 'ball', width: 320, height: 240, fps: 10 } }],
        // Unshared: each camera's ffmpeg reaches the server through its own relay port, so each has a
        // media of its own anyway; in a CI run the udp camera's media failed once and the server
        // answered 503 to every DESCRIBE of it for 90 s. A pipeline per client starts afresh.
        { auth: `viewer:${RIGHT}`, authMethod: 'digest', shared: false },
      );
      const userinfo = (pw: string) => `viewer:${encodeURIComponent(pw)}`;
      const config = await writeDaemonConfig(dir, {
        mqtt: { url: broker.url },
        cameras: {
          locked: { url: rtsp.url('ball', userinfo(RIGHT)), rtsp_transport: 'tcp', fps: 5 },
          wrong: { url: rtsp.url('ball', userinfo(WRONG)), rtsp_transport: 'tcp', fps: 5 },
          // RTP over UDP comes from the camera to ffmpeg's ports directly; only RTSP goes through the relay.
          udp: { url: rtsp.url('ball', userinfo(RIGHT)), rtsp_transport: 'udp', fps: 5 },
        },
        ffmpeg: { auth_failures_before_offline: 2 },
      });
      const sub = new Subscriber(broker.url);
      t.after(() => sub.end());
      const daemon = startDaemon(t, config);
      const daemonPid = daemon.child.pid!;

      // Every command line of the daemon and its descendants, read again and again while it runs.
      const seen = new Map<number, string>();
      const sample = (): void => {
        for (const pid of [daemonPid, ...descendants(daemonPid)]) {
          const line = cmdline(pid);
          if (line !== undefined) seen.set(pid, line);
        }
      };
      // Often: the wrong camera's ffmpeg lives only for the two refused DESCRIBEs (tens of ms).
      const sampler = setInterval(sample, 10);
      t.after(() => clearInterval(sampler));

      const ffmpegLines = (): string[] =>
        [...seen.values()].filter((l) => /ffmpeg/.test(l) && / -i rtsp:\/\//.test(l));
      const relayPorts = (): Set<string> =>
        new Set(ffmpegLines().map((l) => / -i rtsp:\/\/[^/\s]*:(\d+)\//.exec(l)?.[1] ?? l));

      // A wait that times out says what the cameras and the relay logged.
      const said = (err: unknown): Error =>
        new Error(
          `${(err as Error).message}\n${daemon
            .output()
            .split('\n')
            .filter((l) => /camera failed|camera relay|streaming/.test(l))
            .slice(-20)
            .join('\n')}`,
        );
      try {
        for (const camera of ['locked', 'udp'])
          await sub.waitFor(
            `frames of the ${camera} camera analysed`,
            () =>
              sub.json<StatsPayload>('argus/stats').some((s) => (s.cameras[camera]?.fps_analysed ?? 0) > 0),
            90_000,
          );
        await sub.waitFor(
          'the wrong password reported as auth',
          () =>
            sub
              .json<CameraStatusPayload>('argus/cameras/wrong/status')
              .some((s) => s.last_error?.cause === 'auth'),
          90_000,
        );
        // Each camera's ffmpeg (each has its own relay port) caught at least once: a short-lived
        // one may slip between two samples, and is caught at its next attempt.
        await sub.waitFor("each camera's ffmpeg seen by the sampler", () => relayPorts().size >= 3, 90_000);
      } catch (err) {
        throw said(err);
      }
      sample();
      clearInterval(sampler);

      const ffmpegs = ffmpegLines();
      assert.ok(ffmpegs.length >= 3, `each camera's ffmpeg seen: ${ffmpegs.length}`);
      const port = new URL(rtsp.url('ball')).port;
      for (const l of ffmpegs) {
        const url = / -i (\S+)/.exec(l)![1]!;
        assert.match(url, /^rtsp:\/\/127\.0\.0\.1:\d+\/ball$/, 'ffmpeg opens the relay');
        assert.notEqual(new URL(url).port, port, 'not the camera itself');
      }
      for (const [pid, line] of seen) {
        assert.doesNotMatch(line, /Qx9/, `process ${pid}'s command line holds a password: ${line}`);
        assert.doesNotMatch(line, /viewer/, `process ${pid}'s command line holds the user name`);
      }

      const wrong = sub
        .json<CameraStatusPayload>('argus/cameras/wrong/status')
        .find((s) => s.last_error?.cause === 'auth')!;
      assert.match(wrong.last_error!.message, /refused the credentials/);
      const out = daemon.output();
      assert.ok(
        out.split('\n').some((l) => l.includes('"camera":"wrong"') && l.includes('camera failed (auth)')),
        'a log line names the camera and the cause',
      );
      const everything = out + sub.messages.map((m) => m.topic + m.payload).join('\n');
      assert.doesNotMatch(everything, /Qx9/, 'neither password in logs or MQTT');
      const locked = sub.json<CameraStatusPayload>('argus/cameras/locked/status').at(-1)!;
      assert.equal(locked.state, 'streaming');
    },
  );
});
