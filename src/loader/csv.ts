// A streaming CSV tokenizer for the loader's hot path (csv-parse is kept for sniffing): RFC 4180
// quotes ("" inside quotes), any of \r\n, \n or \r as line end, newlines inside quotes, a quote
// inside an unquoted value kept as text, rows of any width, empty lines skipped. Text is fed in
// pieces; whole records come out in batches.
export class CsvTokenizer {
  private field = '';
  private row: string[] = [];
  private inQuotes = false;
  /** A quote just closed a quoted part (a following quote is an escaped quote). */
  private quoteClosed = false;
  /** The last piece ended with \r (a \n starting the next piece belongs to it). */
  private pendingCr = false;
  private fieldStarted = false;

  constructor(private readonly delimiter: string) {}

  /** Tokenizes a piece; returns the records it completed. */
  push(text: string): string[][] {
    const out: string[][] = [];
    const d = this.delimiter;
    let i = 0;
    const n = text.length;
    if (this.pendingCr) {
      this.pendingCr = false;
      if (text[0] === '\n') i = 1;
    }
    while (i < n) {
      if (this.inQuotes) {
        const q = text.indexOf('"', i);
        if (q < 0) {
          this.field += text.slice(i);
          return out;
        }
        this.field += text.slice(i, q);
        i = q + 1;
        this.inQuotes = false;
        this.quoteClosed = true;
        continue;
      }
      const c = text[i];
      if (this.quoteClosed && c === '"') {
        // "" inside a quoted value: one quote, still quoted.
        this.field += '"';
        this.inQuotes = true;
        this.quoteClosed = false;
        i++;
        continue;
      }
      this.quoteClosed = false;
      if (c === '"' && !this.fieldStarted) {
        this.inQuotes = true;
        this.fieldStarted = true;
        i++;
        continue;
      }
      if (c === d) {
        this.row.push(this.field);
        this.field = '';
        this.fieldStarted = false;
        i++;
        continue;
      }
      if (c === '\n' || c === '\r') {
        this.endRow(out);
        if (c === '\r') {
          if (i + 1 < n) {
            if (text[i + 1] === '\n') i++;
          } else this.pendingCr = true;
        }
        i++;
        continue;
      }
      // Plain text up to the next special character.
      let j = i + 1;
      while (j < n) {
        const x = text[j];
        if (x === d || x === '\n' || x === '\r' || x === '"') break;
        j++;
      }
      // A quote inside an unquoted value is kept as text.
      if (j < n && text[j] === '"') j++;
      this.field += text.slice(i, j);
      this.fieldStarted = true;
      i = j;
    }
    return out;
  }

  /** The last record when the text does not end with a line end. */
  end(): string[][] {
    const out: string[][] = [];
    if (this.inQuotes) throw new Error('Quote Not Closed: the file ends inside a quoted value');
    if (this.fieldStarted || this.row.length || this.field) this.endRow(out);
    return out;
  }

  private endRow(out: string[][]): void {
    this.row.push(this.field);
    const row = this.row;
    this.row = [];
    this.field = '';
    this.fieldStarted = false;
    // Empty lines are skipped (a line with only delimiters is a row of empty values).
    if (row.length === 1 && row[0] === '') return;
    out.push(row);
  }
}
