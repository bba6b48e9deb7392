/**
 * Just enough of MPEG-TS (ISO/IEC 13818-1) to cut a camera's stream, as ffmpeg copies it
 * (`-c:v copy -f mpegts`), into pieces that each start at a key frame: 188-byte packets, the
 * PAT and the PMT (which PID carries the video, and its codec), and the adaptation field's
 * random-access indicator, which ffmpeg's muxer sets on the first packet of every key frame.
 * Pure: bytes in, pieces out.
 */

export const TS_PACKET = 188;
const SYNC = 0x47;

/** PMT stream types of the video codecs a camera may send. */
const STREAM_TYPES: Record<number, string> = {
  0x01: 'mpeg1video',
  0x02: 'mpeg2video',
  0x10: 'mpeg4',
  0x1b: 'h264',
  0x24: 'hevc',
};

/** A run of whole packets; `keyframe`: its first packet starts a key frame of the video. */
export interface TsPiece {
  bytes: Buffer;
  keyframe: boolean;
}

/**
 * Splits a transport stream, fed in chunks of any size, into pieces at each key frame, and
 * keeps the latest PAT and PMT packets, which a piece cut out of the stream needs in front of it
 * to be read on its own. Bytes out of sync (never from ffmpeg) are skipped to the next sync byte.
 */
export class TsSplitter {
  private rest: Buffer = Buffer.alloc(0);
  private pmtPid = -1;
  private videoPid = -1;
  private pat: Buffer | undefined;
  private pmt: Buffer | undefined;
  /** The video's codec as its PMT says (`h264`, `hevc`, …; `type 0x…` for others). */
  codec: string | undefined;
  /** Bytes skipped to find sync. */
  skipped = 0;

  /** The packets a piece needs in front of it (PAT then PMT), once both have been seen. */
  header(): Buffer | undefined {
    return this.pat && this.pmt ? Buffer.concat([this.pat, this.pmt]) : undefined;
  }

  push(chunk: Buffer): TsPiece[] {
    const buf = this.rest.length ? Buffer.concat([this.rest, chunk]) : chunk;
    const pieces: TsPiece[] = [];
    let start = 0;
    let keyframe = false;
    let at = 0;
    const cut = (end: number): void => {
      if (end > start) pieces.push({ bytes: buf.subarray(start, end), keyframe });
    };
    while (at + TS_PACKET <= buf.length) {
      if (buf[at] !== SYNC) {
        cut(at);
        const next = buf.indexOf(SYNC, at + 1);
        const to = next < 0 ? buf.length : next;
        this.skipped += to - at;
        at = start = to;
        keyframe = false;
        continue;
      }
      const packet = buf.subarray(at, at + TS_PACKET);
      if (this.read(packet)) {
        cut(at);
        start = at;
        keyframe = true;
      }
      at += TS_PACKET;
    }
    cut(at);
    this.rest = Buffer.from(buf.subarray(at));
    return pieces;
  }

  /** Reads one packet's tables; whether it starts a key frame of the video. */
  private read(p: Buffer): boolean {
    const pid = ((p[1]! & 0x1f) << 8) | p[2]!;
    const unitStart = (p[1]! & 0x40) !== 0;
    const control = (p[3]! >> 4) & 0x3;
    const hasField = (control & 0x2) !== 0;
    const fieldLength = hasField ? p[4]! : -1;
    if (pid === 0 && unitStart) {
      this.pat = Buffer.from(p);
      this.readPat(payload(p, control, fieldLength));
      return false;
    }
    if (pid === this.pmtPid && unitStart) {
      this.pmt = Buffer.from(p);
      this.readPmt(payload(p, control, fieldLength));
      return false;
    }
    return pid === this.videoPid && unitStart && fieldLength > 0 && (p[5]! & 0x40) !== 0;
  }

  private readPat(data: Buffer | undefined): void {
    const s = section(data, 0x00);
    if (!s) return;
    // Programs from byte 8 to the CRC: number (16 bits), PID (13 bits); program 0 is the NIT.
    for (let i = 8; i + 4 <= s.length - 4; i += 4) {
      const program = s.readUInt16BE(i);
      if (program !== 0) {
        this.pmtPid = s.readUInt16BE(i + 2) & 0x1fff;
        return;
      }
    }
  }

  private readPmt(data: Buffer | undefined): void {
    const s = section(data, 0x02);
    if (!s) return;
    const infoLength = s.readUInt16BE(10) & 0x0fff;
    // Argus copies the video alone (`-map 0:v:0`): the first stream is it.
    const i = 12 + infoLength;
    if (i + 5 > s.length - 4) return;
    const type = s[i]!;
    this.videoPid = s.readUInt16BE(i + 1) & 0x1fff;
    this.codec = STREAM_TYPES[type] ?? `type 0x${type.toString(16)}`;
  }
}

/** A packet's payload (after its adaptation field), or undefined when it has none. */
function payload(p: Buffer, control: number, fieldLength: number): Buffer | undefined {
  if ((control & 0x1) === 0) return undefined;
  const from = 4 + (fieldLength >= 0 ? fieldLength + 1 : 0);
  return from < TS_PACKET ? p.subarray(from) : undefined;
}

/** A PSI section of the given table id in a unit-start payload (pointer field skipped), within the packet. */
function section(data: Buffer | undefined, tableId: number): Buffer | undefined {
  if (!data || data.length < 1) return undefined;
  const from = 1 + data[0]!;
  if (from + 3 > data.length || data[from] !== tableId) return undefined;
  const length = data.readUInt16BE(from + 1) & 0x0fff;
  const end = Math.min(data.length, from + 3 + length);
  return end - from >= 16 ? data.subarray(from, end) : undefined;
}
