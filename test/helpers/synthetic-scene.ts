import { spawn } from 'node:child_process';
import sharp from 'sharp';
import { defaultFfmpegPath } from '../../src/ingest/ffmpeg-process.js';

/**
 * A clip with known truth for end-to-end event tests: objects cut from bus.jpg (the reference
 * image: three people and a bus, boxes in ../shared/README.md) moved across a blurred
 * background at realistic speeds, encoded as H.264 like a camera's stream.
 */

/** Boxes of bus.jpg's objects (yolov8n reference result), x1, y1, x2, y2 in its 810×1080 pixels. */
const CUTS = {
  personA: [221, 408, 343, 857],
  personB: [51, 398, 242, 904],
  bus: [345, 232, 672, 775],
} as const;

export interface Mover {
  cut: keyof typeof CUTS;
  label: string;
  /** Height on screen, px. */
  height: number;
  /** Where the bottom centre is at `from` and at `to` (seconds into the clip). */
  start: [number, number];
  end: [number, number];
  from: number;
  to: number;
  /**
   * Points passed on the way, in time order between `from` and `to`: the bottom centre moves in
   * straight lines from `start` through each `at` (reached at `t`, seconds into the clip) to
   * `end`. Two stops at one place make the mover stand there. Without it, one straight line.
   */
  via?: { t: number; at: [number, number] }[];
}

export interface Scene {
  width: number;
  height: number;
  fps: number;
  seconds: number;
  movers: Mover[];
}

interface Sprite {
  w: number;
  h: number;
  rgb: Buffer;
}

/** Copies `s` into the `w`×`h` RGB `frame` with its top-left at (x, y), clipped to the frame. */
function blit(frame: Buffer, w: number, h: number, s: Sprite, x: number, y: number): void {
  const x0 = Math.max(0, x);
  const x1 = Math.min(w, x + s.w);
  if (x1 <= x0) return;
  for (let row = Math.max(0, y); row < Math.min(h, y + s.h); row++) {
    const src = ((row - y) * s.w + (x0 - x)) * 3;
    s.rgb.copy(frame, (row * w + x0) * 3, src, src + (x1 - x0) * 3);
  }
}

/** The bottom centre of `m` at time `t` (within `from`–`to`): along its `via` points, if any. */
function positionAt(m: Mover, t: number): [number, number] {
  const stops = [{ t: m.from, at: m.start }, ...(m.via ?? []), { t: m.to, at: m.end }];
  let i = 0;
  while (i < stops.length - 2 && t > stops[i + 1]!.t) i++;
  const a = stops[i]!;
  const b = stops[i + 1]!;
  const k = b.t > a.t ? (t - a.t) / (b.t - a.t) : 1;
  return [a.at[0] + (b.at[0] - a.at[0]) * k, a.at[1] + (b.at[1] - a.at[1]) * k];
}

/**
 * Where each mover's box is at time `t` (s), in drawing order (farther first: a smaller
 * `bottom` y is farther away), or nothing when it is not in the clip at that time.
 */
export function boxesAt(scene: Scene, t: number): { mover: Mover; box: [number, number, number, number] }[] {
  return scene.movers
    .filter((m) => t >= m.from && t <= m.to)
    .map((m) => {
      const [cx, bottom] = positionAt(m, t);
      const [x1, y1, x2, y2] = CUTS[m.cut];
      const w = Math.round(((x2 - x1) * m.height) / (y2 - y1));
      const box: [number, number, number, number] = [
        Math.round(cx - w / 2),
        Math.round(bottom - m.height),
        Math.round(cx - w / 2) + w,
        Math.round(bottom),
      ];
      return { mover: m, box };
    })
    .sort((a, b) => a.box[3] - b.box[3]);
}

/** Writes the scene as an H.264 MP4 (a keyframe every 2 s) to `path`. */
export async function writeSceneClip(scene: Scene, busJpg: string, path: string): Promise<void> {
  const { width: W, height: H, fps } = scene;
  const background = await sharp(busJpg)
    .extract({ left: 0, top: 0, width: 810, height: 230 })
    .resize(W, H, { fit: 'fill' })
    .blur(30)
    .removeAlpha()
    .raw()
    .toBuffer();
  const sprites = new Map<string, Sprite>();
  const sprite = async (m: Mover, w: number, h: number): Promise<Sprite> => {
    const key = `${m.cut}:${w}x${h}`;
    let s = sprites.get(key);
    if (!s) {
      const [x1, y1, x2, y2] = CUTS[m.cut];
      const rgb = await sharp(busJpg)
        .extract({ left: x1, top: y1, width: x2 - x1, height: y2 - y1 })
        .resize(w, h, { fit: 'fill' })
        .removeAlpha()
        .raw()
        .toBuffer();
      s = { w, h, rgb };
      sprites.set(key, s);
    }
    return s;
  };
  const ffmpeg = await defaultFfmpegPath();
  const enc = spawn(
    ffmpeg,
    [
      '-y',
      '-loglevel',
      'error',
      '-f',
      'rawvideo',
      '-pix_fmt',
      'rgb24',
      '-s',
      `${W}x${H}`,
      '-r',
      String(fps),
      '-i',
      'pipe:0',
      '-c:v',
      'libx264',
      '-preset',
      'veryfast',
      '-crf',
      '23',
      '-pix_fmt',
      'yuv420p',
      '-g',
      String(fps * 2),
      '-bf',
      '0',
      '-movflags',
      '+faststart',
      path,
    ],
    { stdio: ['pipe', 'ignore', 'pipe'] },
  );
  let stderr = '';
  enc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<void>((resolve, reject) => {
    enc.on('error', reject);
    enc.on('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`ffmpeg exited ${code}: ${stderr}`)),
    );
  });
  for (let i = 0; i < scene.seconds * fps; i++) {
    const frame = Buffer.from(background);
    for (const { mover, box } of boxesAt(scene, i / fps)) {
      const [x1, y1, x2, y2] = box;
      blit(frame, W, H, await sprite(mover, x2 - x1, y2 - y1), x1, y1);
    }
    if (!enc.stdin.write(frame)) await new Promise((r) => enc.stdin.once('drain', r));
  }
  enc.stdin.end();
  await done;
}

/**
 * The scene of the end-to-end events test (1280×720, 36 s): after 12 s of empty background (a
 * camera's stream takes a moment to start: 2–3 s of ffmpeg's probing, plus its retries), a
 * person walks left to right across the view in 6 s; a bus crosses it right to left in 4 s
 * (450 px/s: seen in several frames even when a busy machine analyses two a second; at 857 px/s
 * it was seen once, on one side of the line, with both cores busy); then two people walk across
 * in opposite directions at different depths, passing each other at x ≈ 470 (the nearer hides
 * the farther for a moment), 0.7 s after the first of them and 0.8 s before the second crossed
 * x = 640. Each object crosses x = 640 once.
 */
export const EVENTS_SCENE: Scene = {
  width: 1280,
  height: 720,
  fps: 10,
  seconds: 36,
  movers: [
    { cut: 'personA', label: 'person', height: 260, start: [-40, 640], end: [1320, 640], from: 12, to: 18 },
    { cut: 'bus', label: 'bus', height: 380, start: [1540, 600], end: [-260, 600], from: 18.5, to: 22.5 },
    {
      cut: 'personB',
      label: 'person',
      height: 280,
      start: [1330, 700],
      end: [-50, 700],
      from: 22.5,
      to: 28.5,
    },
    {
      cut: 'personA',
      label: 'person',
      height: 220,
      start: [-40, 560],
      end: [1320, 560],
      from: 24,
      to: 30,
    },
  ],
};

/*
 * The tracking bench's scenes (bench/tracking.ts scores what Argus publishes of them against
 * these movers). All 1280×720 at 10 frames/s; the parked vehicle is the `bus` cut (no car is
 * cut from bus.jpg), labelled `bus`.
 */

/**
 * A bus stands in the middle (x 526–755) for the whole clip. A person walks left to right
 * behind it (76 px/s, wholly hidden from 10.1 s to 11.9 s, crossing x = 640 while hidden);
 * another walks right to left in front of it (99 px/s, at x = 640 at 19 s). The two pass each
 * other at x ≈ 980, 15.5 s, at different depths.
 */
export const WALKERS_BUS_SCENE: Scene = {
  width: 1280,
  height: 720,
  fps: 10,
  seconds: 28,
  movers: [
    { cut: 'bus', label: 'bus', height: 380, start: [640, 620], end: [640, 620], from: 0, to: 28 },
    { cut: 'personB', label: 'person', height: 240, start: [-40, 560], end: [1320, 560], from: 2, to: 20 },
    { cut: 'personB', label: 'person', height: 280, start: [1330, 700], end: [-50, 700], from: 12, to: 26 },
  ],
};

/**
 * A parked vehicle (the bus cut, where WALKERS_BUS_SCENE has it: x 526–755, the bottom at 620)
 * hidden by two pairs of near walkers passing in front of it, one pair each way, from 7.8 s to
 * 18.5 s (covering 90 % of its height, at times its whole width; the pairs pass each other in
 * front of it at 12.5 s); it drives off to the left at 28 s and is out of view by 31.5 s.
 */
export const PARKED_SCENE: Scene = {
  width: 1280,
  height: 720,
  fps: 10,
  seconds: 34,
  movers: [
    {
      cut: 'bus',
      label: 'bus',
      height: 380,
      start: [640, 620],
      via: [{ t: 28, at: [640, 620] }],
      end: [-200, 620],
      from: 0,
      to: 32,
    },
    { cut: 'personB', label: 'person', height: 440, start: [-80, 700], end: [1360, 700], from: 2, to: 18 },
    { cut: 'personA', label: 'person', height: 430, start: [-200, 690], end: [1240, 690], from: 2, to: 18 },
    { cut: 'personA', label: 'person', height: 440, start: [1360, 715], end: [-80, 715], from: 7, to: 23 },
    { cut: 'personB', label: 'person', height: 430, start: [1480, 710], end: [40, 710], from: 7, to: 23 },
  ],
};

/**
 * Two people walk towards each other at nearly the same depth and cross paths at x ≈ 640, 8 s:
 * the nearer (personB, right to left) hides the farther for a moment.
 */
export const CROSSING_SCENE: Scene = {
  width: 1280,
  height: 720,
  fps: 10,
  seconds: 17,
  movers: [
    { cut: 'personA', label: 'person', height: 260, start: [-40, 600], end: [1320, 600], from: 2, to: 14 },
    { cut: 'personB', label: 'person', height: 270, start: [1330, 610], end: [-50, 610], from: 2, to: 14 },
  ],
};

/** Three people walk in, stand still for 26–28 s, and walk out the way they came. */
export const STANDING_SCENE: Scene = {
  width: 1280,
  height: 720,
  fps: 10,
  seconds: 36,
  movers: [
    {
      cut: 'personA',
      label: 'person',
      height: 240,
      start: [-40, 600],
      via: [
        { t: 5, at: [300, 600] },
        { t: 31, at: [300, 600] },
      ],
      end: [-40, 600],
      from: 1,
      to: 35,
    },
    {
      cut: 'personB',
      label: 'person',
      height: 260,
      start: [1330, 640],
      via: [
        { t: 5, at: [700, 640] },
        { t: 31, at: [700, 640] },
      ],
      end: [1330, 640],
      from: 1,
      to: 35,
    },
    {
      cut: 'personA',
      label: 'person',
      height: 200,
      start: [1320, 520],
      via: [
        { t: 3, at: [950, 520] },
        { t: 31, at: [950, 520] },
      ],
      end: [1320, 520],
      from: 0.5,
      to: 34,
    },
  ],
};

/** One person walks left to right in 24 s (57 px/s): at 0.5 analysed frames/s, 113 px a frame. */
export const SLOW_SCENE: Scene = {
  width: 1280,
  height: 720,
  fps: 10,
  seconds: 30,
  movers: [
    { cut: 'personB', label: 'person', height: 260, start: [-50, 640], end: [1330, 640], from: 2, to: 26 },
  ],
};

/**
 * One person walks left to right at a constant 140 px/s along y = 600, across a zone drawn as
 * the rectangle x 140–1140, y 500–700: at 100 px a metre (`distances: [10, 2, 10, 2]`), 1.4 m/s
 * (5.04 km/h), in the zone from 2.43 s to 9.57 s.
 */
export const SPEED_SCENE: Scene = {
  width: 1280,
  height: 720,
  fps: 10,
  seconds: 13,
  movers: [
    { cut: 'personB', label: 'person', height: 260, start: [-60, 600], end: [1340, 600], from: 1, to: 11 },
  ],
};
