// Column names from a header row whose cells may be blank (the row labels of a cross-tab) or
// repeated (a header of several rows flattened to one): a blank cell gets `column_<position>`, a
// repeated name a suffix `_2`, `_3`, … (each unique among all names, at most 63 bytes). Every made
// name carries a note for the load's log and the column's data dictionary entry.
import { columnName } from './prepare.ts';

export interface HeaderNames {
  /** One name per cell, all unique and non-empty. */
  names: string[];
  /** Cells whose header is blank (their column is dropped when it has no values either). */
  blank: boolean[];
  /** Why a name was made up, by cell. */
  notes: (string | undefined)[];
}

function fit(base: string, suffix: string): string {
  let b = base;
  while (Buffer.byteLength(b + suffix) > 63) b = b.slice(0, -1);
  return b + suffix;
}

export function headerNames(cells: string[]): HeaderNames {
  const given = cells.map(columnName);
  const taken = new Set(given.filter(Boolean));
  const firstAt = new Map<string, number>();
  const names: string[] = [];
  const notes: (string | undefined)[] = [];
  const unique = (base: string, from: number) => {
    for (let k = from; ; k++) {
      const name = k === 1 ? fit(base, '') : fit(base, `_${k}`);
      if (!taken.has(name)) {
        taken.add(name);
        return name;
      }
    }
  };
  given.forEach((n, i) => {
    if (!n) {
      const name = unique(`column_${i + 1}`, 1);
      names.push(name);
      notes.push(
        `The header cell of column ${i + 1} of the file is blank: "${name}" is a made-up name; a label can be given in the data dictionary.`,
      );
    } else if (firstAt.has(n)) {
      const name = unique(n, 2);
      names.push(name);
      notes.push(
        `The file has the header "${n}" in columns ${firstAt.get(n)! + 1} and ${i + 1}: this one is named "${name}"; a label can be given in the data dictionary.`,
      );
    } else {
      firstAt.set(n, i);
      names.push(n);
      notes.push(undefined);
    }
  });
  return { names, blank: given.map((n) => !n), notes };
}
