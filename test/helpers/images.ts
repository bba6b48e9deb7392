import sharp from 'sharp';

export interface Square {
  x: number;
  y: number;
  size: number;
  rgb: [number, number, number];
}

/** An RGB image of `w`×`h` grey (114) with solid squares drawn on it, as PNG bytes. */
export async function squaresPng(w: number, h: number, squares: Square[]): Promise<Buffer> {
  const raw = Buffer.alloc(w * h * 3, 114);
  for (const s of squares) {
    for (let y = s.y; y < s.y + s.size; y++) {
      for (let x = s.x; x < s.x + s.size; x++) raw.set(s.rgb, (y * w + x) * 3);
    }
  }
  return sharp(raw, { raw: { width: w, height: h, channels: 3 } })
    .png()
    .toBuffer();
}

/**
 * A 640×480 scene for the fixture model (320 input, 32-pixel cells): letterboxed at scale 0.5
 * with 40 rows of padding on top, so one fixture cell is a 64-pixel source square.
 * A white square fills cell (2, 3) and a red one cell (5, 6).
 */
export const FIXTURE_SCENE = {
  width: 640,
  height: 480,
  squares: [
    { x: 128, y: 112, size: 64, rgb: [255, 255, 255] },
    { x: 320, y: 304, size: 64, rgb: [230, 20, 20] },
  ] as Square[],
  expected: [
    { label: 'bright', box: [128, 112, 192, 176] },
    { label: 'red', box: [320, 304, 384, 368] },
  ],
};

/** Intersection over union of two [x1, y1, x2, y2] boxes. */
export function boxIou(a: readonly number[], b: readonly number[]): number {
  const ix = Math.max(0, Math.min(a[2]!, b[2]!) - Math.max(a[0]!, b[0]!));
  const iy = Math.max(0, Math.min(a[3]!, b[3]!) - Math.max(a[1]!, b[1]!));
  const inter = ix * iy;
  const area = (r: readonly number[]): number => (r[2]! - r[0]!) * (r[3]! - r[1]!);
  return inter / (area(a) + area(b) - inter);
}

/** The reference result of yolov8n_int8.onnx on bus.jpg (../shared/README.md). */
export const BUS_REFERENCE = [
  { label: 'person', box: [673, 377, 810, 879] },
  { label: 'person', box: [221, 408, 343, 857] },
  { label: 'person', box: [51, 398, 242, 904] },
  { label: 'bus', box: [36, 232, 798, 775] },
  { label: 'person', box: [0, 550, 62, 870] },
];
