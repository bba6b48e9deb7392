/** PNM images as ffmpeg's `image2pipe` writes them (pgm, ppm, pam encoders), for ingest tests. */

/** A `side`×`side` image of `format` (P5 grey, P6 RGB, P7 PAM RGB), every byte `fill`. */
export function pnm(format: 'P5' | 'P6' | 'P7', side: number, fill = 0): Buffer {
  const depth = format === 'P5' ? 1 : 3;
  const header =
    format === 'P7'
      ? `P7\nWIDTH ${side}\nHEIGHT ${side}\nDEPTH 3\nMAXVAL 255\nTUPLTYPE RGB\nENDHDR\n`
      : `${format}\n${side} ${side}\n255\n`;
  return Buffer.concat([Buffer.from(header, 'latin1'), Buffer.alloc(side * side * depth, fill)]);
}
