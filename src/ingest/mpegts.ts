/**
 * Just enough of MPEG-TS (ISO/IEC 13818-1) to cut a camera's stream, as ffmpeg copies it
 * (`-c:v copy -f mpegts`), into pieces that each start at a key frame: 188-byte packets, the
 * PAT and the PMT (which PID carries the video, and its codec), and the adaptation field's
 * random-access indicator, which ffmpeg's muxer sets on the first packet of every key frame.
 * Pure: bytes in, pieces out.
 */

export const TS_PACKET = 188;
const SYNC = 0x47;
const EMPTY = Buffer.alloc(0);

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
  /** The key frame's presentation time (ms on the stream's clock, unwrapped), when it has one. */
  pts?: number;
  /** The decode times (ms on the stream's clock) of the video frames that start in it. */
  dts: number[];
}

/** The 33-bit 90 kHz clock of PES timestamps. */
const WRAP = 2 ** 33;

/**
 * Splits a transport stream, fed in chunks of any size, into pieces at each key frame, and
 * keeps the latest PAT and PMT packets, which a piece cut out of the stream needs in front of it
 * to be read on its own. Bytes out of sync (never from ffmpeg) are skipped to the next sync byte.
 */
export class TsSplitter {
  private rest: Buffer = EMPTY;
  private pmtPid = -1;
  private videoPid = -1;
  private pat: Buffer | undefined;
  private pmt: Buffer | undefined;
  /** The video's codec as its PMT says (`h264`, `hevc`, …; `type 0x…` for others). */
  codec: string | undefined;
  /** Bytes skipped to find sync. */
  skipped = 0;
  /** The last video PES's timestamps, as read (90 kHz), and the wraps of the 33-bit clock seen. */
  private lastRaw: number | undefined;
  private wraps = 0;
  /** Timestamps of the piece being gathered. */
  private pts: number | undefined;
  private dts: number[] = [];

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
      if (end > start) {
        pieces.push({ bytes: buf.subarray(start, end), keyframe, pts: this.pts, dts: this.dts });
        this.pts = undefined;
        this.dts = [];
      }
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
      // Only a packet that starts a unit (a table, a frame) says anything: the rest are skipped.
      if ((buf[at + 1]! & 0x40) === 0) {
        at += TS_PACKET;
        continue;
      }
      const read = this.read(buf.subarray(at, at + TS_PACKET));
      if (read.keyframe) {
        cut(at);
        start = at;
        keyframe = true;
        this.pts = read.pts;
      }
      if (read.dts !== undefined) this.dts.push(read.dts);
      at += TS_PACKET;
    }
    cut(at);
    this.rest = at < buf.length ? Buffer.from(buf.subarray(at)) : EMPTY;
    return pieces;
  }

  /**
   * Reads a packet that starts a unit (the caller skips the others): its tables; whether it
   * starts a key frame of the video, and the frame's times.
   */
  private read(p: Buffer): { keyframe: boolean; pts?: number; dts?: number } {
    const pid = ((p[1]! & 0x1f) << 8) | p[2]!;
    const control = (p[3]! >> 4) & 0x3;
    const hasField = (control & 0x2) !== 0;
    const fieldLength = hasField ? p[4]! : -1;
    if (pid === 0) {
      this.pat = Buffer.from(p);
      this.readPat(payload(p, control, fieldLength));
      return { keyframe: false };
    }
    if (pid === this.pmtPid) {
      this.pmt = Buffer.from(p);
      this.readPmt(payload(p, control, fieldLength));
      return { keyframe: false };
    }
    if (pid !== this.videoPid) return { keyframe: false };
    const times = pesTimes(payload(p, control, fieldLength));
    const pts = times && this.unwrap(times.pts);
    const dts = times && this.unwrap(times.dts);
    return { keyframe: fieldLength > 0 && (p[5]! & 0x40) !== 0, pts, dts };
  }

  /** A 90 kHz timestamp in ms, counting the 33-bit clock's wraps (every 26.5 h). */
  private unwrap(raw: number): number {
    if (this.lastRaw !== undefined && raw < this.lastRaw - WRAP / 2) this.wraps++;
    else if (this.lastRaw !== undefined && raw > this.lastRaw + WRAP / 2)
      return (raw + (this.wraps - 1) * WRAP) / 90;
    this.lastRaw = raw;
    return (raw + this.wraps * WRAP) / 90;
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

/** A PES header's PTS and DTS (the PTS when it has no DTS), 90 kHz; undefined without a PTS. */
function pesTimes(data: Buffer | undefined): { pts: number; dts: number } | undefined {
  if (!data || data.length < 14 || data[0] !== 0 || data[1] !== 0 || data[2] !== 1) return undefined;
  const flags = data[7]! >> 6;
  if ((flags & 0x2) === 0) return undefined;
  const pts = timestamp(data, 9);
  return { pts, dts: flags === 0x3 && data.length >= 19 ? timestamp(data, 14) : pts };
}

/** A 33-bit PES timestamp in its five bytes (marker bits between its parts). */
function timestamp(d: Buffer, at: number): number {
  return (
    ((d[at]! >> 1) & 0x07) * 2 ** 30 +
    (d[at + 1]! << 22) +
    ((d[at + 2]! >> 1) << 15) +
    (d[at + 3]! << 7) +
    (d[at + 4]! >> 1)
  );
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
