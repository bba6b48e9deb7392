import { munkres } from 'munkres';

export interface Assignment {
  /** `[row, col]` pairs, rows ascending. */
  pairs: [row: number, col: number][];
  unmatchedRows: number[];
  unmatchedCols: number[];
}

/** Cost of a pair that must never be chosen: far above any pair or any dummy. */
const FORBIDDEN = 1e12;

/**
 * The linear assignment of rows (tracks) to columns (detections) with the least total cost,
 * where a pair costing `limit` or more is never made: both stay unmatched instead. As `lap`'s
 * `cost_limit` does for ByteTrack, the matrix is extended to (rows + cols) squared with a dummy
 * partner for every row and every column, each costing `limit / 2`: leaving a row and a column
 * unmatched costs `limit`, so a real pair is chosen only when it costs less. Munkres (the
 * `munkres` package) solves the extended matrix. Non-finite costs count as forbidden.
 */
export function assign(cost: readonly (readonly number[])[], cols: number, limit: number): Assignment {
  const rows = cost.length;
  if (rows === 0 || cols === 0) {
    return {
      pairs: [],
      unmatchedRows: [...Array(rows).keys()],
      unmatchedCols: [...Array(cols).keys()],
    };
  }
  const n = rows + cols;
  const half = limit / 2;
  const m: number[][] = [];
  for (let r = 0; r < n; r++) {
    const row = new Array<number>(n);
    for (let c = 0; c < n; c++) {
      if (r < rows && c < cols) {
        const v = cost[r]![c]!;
        row[c] = Number.isFinite(v) && v < limit ? v : FORBIDDEN;
      } else if (r < rows) row[c] = c - cols === r ? half : FORBIDDEN;
      else if (c < cols) row[c] = r - rows === c ? half : FORBIDDEN;
      else row[c] = 0;
    }
    m.push(row);
  }
  const pairs: [number, number][] = [];
  const matchedCols = new Set<number>();
  for (const [r, c] of munkres(m)) {
    if (r < rows && c < cols && m[r]![c]! < FORBIDDEN) {
      pairs.push([r, c]);
      matchedCols.add(c);
    }
  }
  pairs.sort((a, b) => a[0] - b[0]);
  const matchedRows = new Set(pairs.map(([r]) => r));
  return {
    pairs,
    unmatchedRows: [...Array(rows).keys()].filter((r) => !matchedRows.has(r)),
    unmatchedCols: [...Array(cols).keys()].filter((c) => !matchedCols.has(c)),
  };
}
