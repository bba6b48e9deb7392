/**
 * The one place secrets are hidden before anything is printed, published or served.
 */
const MASK = '***';

/**
 * Secrets shorter than this are not hidden in free text: masking every `5` or `ab` would ruin
 * every log line and still not protect a password anyone can guess. URL passwords of any length
 * are masked by `redactUrl`.
 */
export const MIN_SECRET_LENGTH = 3;

/**
 * Hides the password of any URL-like `scheme://user:password@host` inside `text`. The userinfo
 * ends at the last `@` before the host (as URL parsers read it), so a password containing `@` or
 * `:` is hidden whole. A URL ends at white space or a quote; the authority at `/`, `?` or `#`.
 */
export function redactUrl(text: string): string {
  return text.replace(
    /(?<![a-z0-9+.-])([a-z][a-z0-9+.-]*:\/\/)([^\s/?#"<>:]*):[^\s/?#"<>]*@/gi,
    (_m, scheme: string, user: string) => `${scheme}${user}:${MASK}@`,
  );
}

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');

/**
 * One character of a secret as it may be written: escaped in a JSON string (log lines are
 * JSON), percent-encoded (upper or lower case hex: URL parsers and encoders differ in which
 * characters they encode), `+` for a space (forms), or as is.
 */
function charPattern(c: string): string {
  const alts: string[] = [];
  const json = JSON.stringify(c).slice(1, -1);
  if (json !== c) alts.push(escapeRegExp(json));
  const hex = [...Buffer.from(c, 'utf8')].map((b) => b.toString(16).toUpperCase().padStart(2, '0'));
  alts.push(hex.map((h) => `%${h.replace(/[A-F]/g, (d) => `[${d}${d.toLowerCase()}]`)}`).join(''));
  if (c === ' ') alts.push('\\+');
  alts.push(escapeRegExp(c));
  return `(?:${alts.join('|')})`;
}

/**
 * A pattern matching every secret in any of the ways it may be written (see `charPattern`),
 * also a secret that was itself given percent-encoded, decoded; longest first, so a secret that
 * contains another is hidden whole. Undefined when there is nothing to hide.
 */
function secretsPattern(secrets: readonly string[]): RegExp | undefined {
  const values = new Set<string>();
  for (const s of secrets) {
    if (s.length < MIN_SECRET_LENGTH) continue;
    values.add(s);
    try {
      const decoded = decodeURIComponent(s);
      if (decoded.length >= MIN_SECRET_LENGTH) values.add(decoded);
    } catch {
      // Not percent-encoded: nothing more to hide.
    }
  }
  if (values.size === 0) return undefined;
  const alternatives = [...values]
    .sort((a, b) => b.length - a.length)
    .map((s) => [...s].map(charPattern).join(''));
  return new RegExp(alternatives.join('|'), 'g');
}

/** The last pattern built, by its secrets: a daemon scrubs every line with the same list. */
let last: { key: string; pattern: RegExp | undefined } | undefined;

/**
 * Scrubs `text` of every known secret value, however it is encoded (values substituted from the
 * environment may appear anywhere, e.g. in ffmpeg's error output), then of URL passwords.
 */
export function scrub(text: string, secrets: readonly string[] = []): string {
  const key = JSON.stringify(secrets);
  if (last?.key !== key) last = { key, pattern: secretsPattern(secrets) };
  const pattern = last.pattern;
  return redactUrl(pattern ? text.replace(pattern, MASK) : text);
}
