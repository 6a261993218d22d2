// The shape of a delimited text file from a sample: the delimiter (comma, semicolon, tab, pipe) and
// the header row (the first row as wide as the table after title/preamble lines).
import { parse } from 'csv-parse/sync';

export const DELIMITERS = [',', ';', '\t', '|'] as const;
const SAMPLE_RECORDS = 200;

/** Parse options shared by sniffing and loading (quotes as written, rows of any width). */
export function parseOptions(delimiter: string) {
  return {
    delimiter,
    relax_column_count: true,
    relax_quotes: true,
    skip_empty_lines: true,
    bom: false,
    skip_records_with_empty_values: false,
  } as const;
}

/** Records of a sample (the last, maybe cut, line dropped unless the sample is the whole file). */
export function sampleRecords(text: string, delimiter: string, complete: boolean): string[][] {
  let body = text;
  if (!complete) {
    const cut = Math.max(body.lastIndexOf('\n'), body.lastIndexOf('\r'));
    if (cut > 0) body = body.slice(0, cut);
  }
  try {
    return parse(body, { ...parseOptions(delimiter), to: SAMPLE_RECORDS }) as string[][];
  } catch {
    // A quote left open by the cut: parse line by line instead.
    return body
      .split(/\r\n|\n|\r/)
      .slice(0, SAMPLE_RECORDS)
      .filter((l) => l.length)
      .map((l) => l.split(delimiter));
  }
}

const nonEmpty = (row: string[]) => row.reduce((n, c) => n + (c.trim() ? 1 : 0), 0);

/**
 * The delimiter that splits the sample's rows into the most columns most consistently: for each
 * candidate, the most common width of rows with content, weighted by how many rows have it.
 */
export function sniffDelimiter(text: string, complete: boolean): string {
  let best: { d: string; score: number } = { d: ',', score: 0 };
  for (const d of DELIMITERS) {
    const rows = sampleRecords(text, d, complete).filter((r) => nonEmpty(r) > 0);
    if (!rows.length) continue;
    const widths = new Map<number, number>();
    for (const r of rows) {
      const w = nonEmpty(r);
      widths.set(w, (widths.get(w) ?? 0) + 1);
    }
    let score = 0;
    for (const [w, n] of widths) {
      if (w < 2) continue;
      score = Math.max(score, (n / rows.length) * Math.log2(w + 1) * Math.min(n, 20));
    }
    if (score > best.score) best = { d, score };
  }
  return best.d;
}

/**
 * Index of the header among the sample's records: the first row with at least as many filled cells
 * as most rows after it have (title and note lines above a table fill one or two cells).
 */
export function findHeaderRow(records: string[][]): number {
  const widths = records.map(nonEmpty);
  const filled = widths.filter((w) => w > 0);
  if (!filled.length) return 0;
  // The typical width of the table's rows: the most common among the wider half.
  const sorted = [...filled].sort((a, b) => b - a);
  const wide = sorted.slice(0, Math.max(1, Math.ceil(sorted.length / 2)));
  const counts = new Map<number, number>();
  for (const w of wide) counts.set(w, (counts.get(w) ?? 0) + 1);
  const typical = [...counts.entries()].sort((a, b) => b[1] - a[1] || b[0] - a[0])[0][0];
  const need = Math.max(1, Math.min(typical, Math.ceil(typical * 0.6)));
  const idx = widths.findIndex((w) => w >= need && w >= Math.min(2, typical));
  return idx < 0 ? widths.findIndex((w) => w > 0) : idx;
}
