// The part of unzipper (a dependency of exceljs) the spreadsheet reader uses.
declare module 'unzipper' {
  import type { Readable } from 'node:stream';
  interface Entry {
    path: string;
    stream(): Readable;
  }
  interface Directory {
    files: Entry[];
  }
  export const Open: { file(path: string): Promise<Directory> };
}
