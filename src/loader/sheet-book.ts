// Excel 97-2003 (.xls) and OpenDocument (.ods) workbooks, read with SheetJS (the @e965/xlsx
// republication of SheetJS CE 0.20.3, whose fixed releases are not on npm under "xlsx"): the
// first sheet, formulas as their cached values, dates as dates (read as UTC, like the xlsx path).
// SheetJS reads a whole workbook into memory, so these files have a size limit (.xls holds at most
// 65,536 rows anyway); large tables should come as xlsx (streamed) or CSV.
import fs from 'node:fs';
import { SourceError, type SourceKind, type TableSource, cellText } from './source.ts';

/** Largest .xls / .ods file read (bytes): the whole workbook is held in memory. */
export const MAX_BOOK_BYTES = 32 * 1024 * 1024;

const colName = (c: number): string =>
  c < 26 ? String.fromCharCode(65 + c) : colName(Math.floor(c / 26) - 1) + String.fromCharCode(65 + (c % 26));

export async function bookSource(file: string, kind: Extract<SourceKind, 'xls' | 'ods'>): Promise<TableSource> {
  const label = kind === 'xls' ? 'Excel 97-2003 (.xls) workbook' : 'OpenDocument (.ods) spreadsheet';
  const size = fs.statSync(file).size;
  if (size > MAX_BOOK_BYTES)
    throw new SourceError(
      `the ${label} is ${Math.round(size / 1048576)} MB; at most ${MAX_BOOK_BYTES / 1048576} MB are read (save the sheet as .xlsx or .csv)`,
    );
  const XLSX = await import('@e965/xlsx');
  let rows: unknown[][];
  let name: string | undefined;
  let sheets: number;
  let merges: { top: number; left: number; bottom: number; right: number; ref: string }[];
  try {
    const wb = XLSX.read(await fs.promises.readFile(file), {
      type: 'buffer',
      cellDates: true,
      dense: true,
      cellFormula: false,
      cellHTML: false,
    });
    sheets = wb.SheetNames.length;
    name = wb.SheetNames[0];
    const ws = name === undefined ? undefined : wb.Sheets[name];
    if (!ws) throw new Error('the workbook has no sheet');
    merges = (ws['!merges'] ?? []).map((m) => ({
      top: m.s.r + 1,
      left: m.s.c + 1,
      bottom: m.e.r + 1,
      right: m.e.c + 1,
      ref: `${colName(m.s.c)}${m.s.r + 1}:${colName(m.e.c)}${m.e.r + 1}`,
    }));
    rows = XLSX.utils.sheet_to_json<unknown[]>(ws, { header: 1, raw: true, defval: '', blankrows: true, UTC: true });
    // Rows from the first row of the sheet (row numbers stay those of the file).
    const top = ws['!ref'] ? XLSX.utils.decode_range(ws['!ref']).s.r : 0;
    if (top > 0) rows = [...Array.from({ length: top }, () => []), ...rows];
  } catch (e) {
    throw new SourceError(`the ${label} could not be read: ${(e as Error).message}`);
  }
  return {
    kind,
    notes: [`first worksheet "${name}"${sheets > 1 ? ' (other sheets are not loaded)' : ''}`],
    async *records(onBytes) {
      onBytes?.(size);
      for (let i = 0; i < rows.length; i += 1000) yield rows.slice(i, i + 1000).map((row) => row.map(cellText));
    },
    async merges() {
      return merges;
    },
  };
}
