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
 *
 * It allocates nothing per chunk: a piece is a view of the chunk, or of the splitter's own
 * packet buffer when a packet was split across chunks, valid until the next `push` (copy what
 * you keep). So a caller may read into one buffer again and again, and the stream's bytes never
 * become garbage for the collector (at a camera's rate, they made Node collect every few seconds).
 */
export class TsSplitter {
  /**
   * The start of a packet split across chunks (`carried` bytes of it), in one of two buffers
   * taken in turn: the packet completed from one is a piece while the next chunk's tail goes
   * into the other.
   */
  private carries: [Buffer, Buffer] = [Buffer.alloc(TS_PACKET), Buffer.alloc(TS_PACKET)];
  private carried = 0;
  private pmtPid = -1;
  private videoPid = -1;
  private readonly pat = Buffer.alloc(TS_PACKET);
  private readonly pmt = Buffer.alloc(TS_PACKET);
  private tables = 0;
  /** The video's codec as its PMT says (`h264`, `hevc`, …; `type 0x…` for others). */
  codec: string | undefined;
  /** Bytes skipped to find sync. */
  skipped = 0;
  /** The last video PES's timestamps, as read (90 kHz), and the wraps of the 33-bit clock seen. */
  private lastRaw: number | undefined;
  private wraps = 0;
  /** The piece being gathered: whether it starts a key frame, and its timestamps. */
  private keyframe = false;
  private pts: number | undefined;
  private dts: number[] = [];

  /** The packets a piece needs in front of it (PAT then PMT), once both have been seen. */
  header(): Buffer | undefined {
    return this.tables === 3 ? Buffer.concat([this.pat, this.pmt]) : undefined;
  }

  /** The pieces in `chunk` (with the end of a packet the last chunk began), views valid until the next push. */
  push(chunk: Buffer): TsPiece[] {
    const pieces: TsPiece[] = [];
    let from = 0;
    while (this.carried > 0) {
      const [carry, spare] = this.carries;
      const take = Math.min(TS_PACKET - this.carried, chunk.length - from);
      chunk.copy(carry, this.carried, from, from + take);
      this.carried += take;
      from += take;
      if (this.carried < TS_PACKET) return pieces;
      const used = this.scan(carry, 0, pieces);
      if (used === TS_PACKET) {
        this.carried = 0;
        this.carries = [spare, carry];
      } else {
        // Out of sync (never from ffmpeg): the sync byte found in it starts the packet to complete.
        this.carried = carry.copy(carry, 0, used);
      }
    }
    const end = this.scan(chunk, from, pieces);
    this.carried = chunk.copy(this.carries[0], 0, end);
    return pieces;
  }

  /** Reads the whole packets of `buf` from `from` into pieces; where the packets end. */
  private scan(buf: Buffer, from: number, pieces: TsPiece[]): number {
    let start = from;
    let at = from;
    const cut = (end: number): void => {
      if (end > start) {
        pieces.push({
          bytes: buf.subarray(start, end),
          keyframe: this.keyframe,
          pts: this.pts,
          dts: this.dts,
        });
        this.keyframe = false;
        this.pts = undefined;
        this.dts = [];
      }
      start = end;
    };
    while (at + TS_PACKET <= buf.length) {
      if (buf[at] !== SYNC) {
        cut(at);
        const next = buf.indexOf(SYNC, at + 1);
        const to = next < 0 ? buf.length : next;
        this.skipped += to - at;
        at = start = to;
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
        this.keyframe = true;
        this.pts = read.pts;
      }
      if (read.dts !== undefined) this.dts.push(read.dts);
      at += TS_PACKET;
    }
    cut(at);
    return at;
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
      p.copy(this.pat);
      this.tables |= 1;
      this.readPat(payload(p, control, fieldLength));
      return { keyframe: false };
    }
    if (pid === this.pmtPid) {
      p.copy(this.pmt);
      this.tables |= 2;
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
