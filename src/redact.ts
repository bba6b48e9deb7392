/**
 * The one place secrets are hidden before anything is printed, published or served.
 */
const MASK = '***';

/** Hides the password of any URL-like `scheme://user:password@host` inside `text`. */
export function redactUrl(text: string): string {
  return text.replace(
    /([a-z][a-z0-9+.-]*:\/\/)([^/@\s:]*):([^@\s]*)@/gi,
    (_m, scheme: string, user: string) => `${scheme}${user}:${MASK}@`,
  );
}

/**
 * Scrubs `text` of URL passwords and of every known secret value (passwords substituted from
 * the environment may also appear on their own, e.g. in ffmpeg's error output).
 */
export function scrub(text: string, secrets: readonly string[] = []): string {
  let out = redactUrl(text);
  for (const s of secrets) {
    if (s.length >= 3) out = out.split(s).join(MASK);
    const enc = encodeURIComponent(s);
    if (enc !== s && enc.length >= 3) out = out.split(enc).join(MASK);
  }
  return out;
}
