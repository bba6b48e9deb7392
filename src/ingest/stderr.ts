/** Why a camera's ffmpeg stopped. */
export type FailureCause = 'auth' | 'unreachable' | 'not_found' | 'decode' | 'stall' | 'crashed' | 'exited';

const RULES: [FailureCause, RegExp][] = [
  ['auth', /401 Unauthorized|403 Forbidden|authorization failed|authentication failed/i],
  [
    'not_found',
    /404 Not Found|454 Session Not Found|Stream not found|No such file or directory|method DESCRIBE failed: 4\d\d/i,
  ],
  [
    'unreachable',
    /Connection refused|No route to host|Network is unreachable|Host is unreachable|Connection timed out|Operation timed out|timed out|Name or service not known|Temporary failure in name resolution|cannot resolve host|Connection reset by peer|End of file|Broken pipe/i,
  ],
  [
    'decode',
    /Invalid data found when processing input|error while decoding|decode_slice_header error|non-existing PPS|no frame!|Could not find codec parameters|Invalid NAL unit|corrupt/i,
  ],
];

/** ffmpeg's line when it has opened the input and read what the stream holds. */
const OPENED = /^Input #\d/;

/**
 * The cause of an ffmpeg exit, from its last stderr lines and how it ended. `streamed` says
 * whether any frame came out of this run.
 */
export function classifyExit(
  lines: readonly string[],
  code: number | null,
  signal: string | null,
  streamed = true,
): FailureCause {
  if (signal === 'SIGSEGV' || signal === 'SIGABRT' || signal === 'SIGBUS' || code === 139 || code === 134)
    return 'crashed';
  // The last matching line is the most specific: ffmpeg ends with the error that stopped it.
  // Decoders complain now and then on any live stream (a lost packet): such a line explains
  // the exit only if it is among the very last.
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]!;
    for (const [cause, re] of RULES) {
      if (cause === 'decode' && i < lines.length - 5) continue;
      if (!re.test(line)) continue;
      // "Invalid data" before the input ever opened: a server took the connection and never
      // answered (frozen, or not speaking the protocol) — there was nothing to decode.
      if (cause === 'decode' && !streamed && !lines.some((l) => OPENED.test(l))) return 'unreachable';
      return cause;
    }
  }
  // A live stream that ends without an error means the camera closed the connection.
  return code === 0 ? 'unreachable' : 'exited';
}

/** The line that best explains an exit: the last one mentioning an error, else the last line. */
export function lastErrorLine(lines: readonly string[]): string | undefined {
  for (let i = lines.length - 1; i >= 0; i--) {
    if (/error|failed|refused|unauthorized|not found|invalid|timed out|unreachable/i.test(lines[i]!))
      return lines[i];
  }
  return lines.at(-1);
}

/**
 * Source and letterbox geometry from ffmpeg's verbose filter log, by the model picture's scale
 * and pad filters (named `@model` in ffmpeg-args.ts; the thumbnail's have ffmpeg's own names):
 *   [scale@model @ 0x..] w:810 h:1080 fmt:yuv420p sar:1/1 -> w:240 h:320 fmt:rgb24 ...
 *   [pad@model @ 0x..] w:240 h:320 -> w:320 h:320 x:40 y:0 color:0x727272FF
 * ffmpeg logs both each time it (re)configures the filters, i.e. also when the stream's
 * resolution changes.
 */
export function parseScaleLine(line: string): { srcW: number; srcH: number } | undefined {
  const m = /\[scale@model @ [^\]]+\] w:(\d+) h:(\d+) .*-> w:\d+ h:\d+/.exec(line);
  return m ? { srcW: Number(m[1]), srcH: Number(m[2]) } : undefined;
}

export function parsePadLine(
  line: string,
): { innerW: number; innerH: number; padLeft: number; padTop: number } | undefined {
  const m = /\[pad@model @ [^\]]+\] w:(\d+) h:(\d+) -> w:\d+ h:\d+ x:(\d+) y:(\d+)/.exec(line);
  return m
    ? { innerW: Number(m[1]), innerH: Number(m[2]), padLeft: Number(m[3]), padTop: Number(m[4]) }
    : undefined;
}
