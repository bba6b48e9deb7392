/**
 * docs/mqtt.md's `yard` camera, which the discovery and page tests run: a white square stepping
 * left and right at 128 px/s (2 m/s, 7.2 km/h) through the calibrated zone `road`, a red square
 * standing in `door`.
 */
export const YARD_URL =
  "lavfi:color=c=0x303030:s=640x480:r=2[bg];color=c=white:s=64x64:r=2[box];color=c=red:s=64x64:r=2[red];[bg][box]overlay=x='64*(1+abs(mod(floor(t*2)\\,10)-5))':y=112[a];[a][red]overlay=x=448:y=304";

/** The yard camera's config: `door` loitering after `loiter_s` where given, and `lines` where given. */
export function yardCamera(extra: { loiter_s?: number; lines?: Record<string, unknown> } = {}) {
  return {
    url: YARD_URL,
    fps: 2,
    objects: { track: ['bright', 'red'] },
    zones: {
      road: {
        points: [
          [0, 100],
          [256, 100],
          [256, 300],
          [0, 300],
        ],
        objects: ['bright'],
        distances: [4, 3, 4, 3],
      },
      door: {
        points: [
          [400, 280],
          [560, 280],
          [560, 400],
          [400, 400],
        ],
        objects: ['red'],
        ...(extra.loiter_s !== undefined ? { loiter_s: extra.loiter_s } : {}),
      },
    },
    ...(extra.lines ? { lines: extra.lines } : {}),
  };
}
