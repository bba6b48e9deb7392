/**
 * A request's `Range` (RFC 9110 §14.1–14.2) as the first and last byte of the one range served;
 * undefined for the whole file: no `Range`, one this does not read (another unit, a range-spec
 * that is invalid, such as `5-2` or `0 - 5`: §14.2 lets a server ignore it), several ranges of
 * which one is satisfiable (the whole file is a valid answer to those), or a suffix range of a
 * zero-length file: §14.1.1 counts `bytes=-5` as satisfiable there, but no `Content-Range` can name
 * zero bytes, so the Range is ignored and the empty file sent (200); 'unsatisfiable' (416, its
 * Content-Range naming the size) when no range-spec is: each starts at or past the end, or is `-0`. The unit is read
 * case-insensitively; the list's elements may have spaces around their commas, and empty ones.
 */
export function parseRange(
  header: string | undefined,
  size: number,
): [number, number] | 'unsatisfiable' | undefined {
  if (!header) return undefined;
  const m = /^bytes=(.*)$/i.exec(header.trim());
  if (!m) return undefined;
  const specs = m[1]!
    .split(',')
    .map((x) => x.trim())
    .filter((x) => x !== '');
  if (specs.length === 0) return undefined;
  const ranges: ([number, number] | 'unsatisfiable' | 'whole')[] = [];
  for (const spec of specs) {
    const r = rangeSpec(spec, size);
    if (r === undefined) return undefined; // one invalid spec: the header is ignored
    ranges.push(r);
  }
  if (ranges.every((r) => r === 'unsatisfiable')) return 'unsatisfiable';
  if (ranges.length > 1) return undefined;
  const [only] = ranges;
  return Array.isArray(only) ? only : undefined;
}

/** One range-spec: its bytes, 'unsatisfiable', 'whole' (satisfiable, but no bytes to name), or undefined when invalid. */
function rangeSpec(spec: string, size: number): [number, number] | 'unsatisfiable' | 'whole' | undefined {
  const m = /^(\d*)-(\d*)$/.exec(spec);
  if (!m || (m[1] === '' && m[2] === '')) return undefined;
  if (m[1] === '') {
    const n = Number(m[2]);
    if (n === 0) return 'unsatisfiable';
    if (size === 0) return 'whole';
    return [Math.max(0, size - n), size - 1];
  }
  const start = Number(m[1]);
  if (m[2] !== '' && Number(m[2]) < start) return undefined;
  if (start >= size) return 'unsatisfiable';
  return [start, m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1)];
}
