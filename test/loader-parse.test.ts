// The loader's reading of table files (no database): encodings, delimiters, preambles, quoting,
// line ends, ragged and empty rows, blank and duplicate headers, spreadsheets, type guessing.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import iconv from 'iconv-lite';
import ExcelJS from 'exceljs';
import { prepareTable, type PreparedTable } from '../src/loader/prepare.ts';
import { detectEncoding } from '../src/loader/decode.ts';
import { ColumnGuess, isoDate } from '../src/loader/types.ts';

const fixtures = path.resolve('test/fixtures/loader');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-loader-parse-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));
let n = 0;

async function prep(
  file: string,
  overrides: Record<string, string> = {},
): Promise<PreparedTable & { data: (string | null)[][]; types: Record<string, string> }> {
  const p = path.isAbsolute(file) ? file : path.join(fixtures, file);
  const spoolPath = path.join(tmp, `spool-${n++}`);
  const t = await prepareTable(p, { overrides: new Map(Object.entries(overrides)), spoolPath });
  const lines = fs.readFileSync(spoolPath, 'utf8').split('\n').filter(Boolean);
  const data = lines.map((l) => {
    const cells = l.split('\t');
    return t.columns.map((c) => (cells[c.cell] === '\\N' ? null : cells[c.cell]));
  });
  return { ...t, data, types: Object.fromEntries(t.columns.map((c) => [c.id, c.type])) };
}

function write(name: string, content: Buffer | string): string {
  const p = path.join(tmp, name);
  fs.writeFileSync(p, content);
  return p;
}

const failsWith = async (file: string, re: RegExp) =>
  assert.rejects(
    () => prep(file),
    (e: Error) => {
      assert.match(e.message, re);
      return true;
    },
  );

describe('encodings', () => {
  test('UTF-8 with BOM, UTF-16 LE with BOM and BE without', async () => {
    const bom = await prep('no_entries.csv');
    assert.equal(bom.columns[0].id, 'OBJECTID');
    assert.match(bom.log[0], /utf-8 \(with BOM\)/);
    const le = await prep('nhs-mental-health-utf16le.csv');
    const be = await prep('nhs-mental-health-utf16be.csv');
    assert.equal(le.columns[0].id, 'Organisation_code');
    assert.deepEqual(
      be.columns.map((c) => c.id),
      le.columns.map((c) => c.id),
    );
    assert.deepEqual(be.data, le.data);
    assert.equal(le.data.length, 39);
  });

  test('cp1252, latin-1, cp850, Big5, Shift-JIS', async () => {
    const mx = await prep('mexico-budget-cp1252.csv');
    assert.ok(mx.columns.some((c) => c.id === 'Descripción'));
    assert.match(mx.log[0], /windows-1252/);
    const au = await prep('au-unclaimed-money-latin1.csv');
    assert.equal(au.types.Amount, 'numeric');
    const co = await prep('uk-cabinet-office-spend-cp850.csv');
    assert.match(co.log[0], /cp850/);
    assert.ok(
      co.columns.some((c) => c.id === 'AMOUNT (£)'),
      co.columns.map((c) => c.id).join('|'),
    );
    const tw = await prep('taiwan-attractions-big5.csv');
    assert.match(tw.log[0], /big5/);
    assert.ok(tw.columns.some((c) => c.id === '景點中文名稱'));
    const sjis = write(
      'sjis.csv',
      iconv.encode('名前,都市,人口\n' + Array.from({ length: 30 }, (_, i) => `山田${i},東京都,${1000 + i}\n`).join(''), 'shift_jis'),
    );
    const jp = await prep(sjis);
    assert.deepEqual(
      jp.columns.map((c) => c.id),
      ['名前', '都市', '人口'],
    );
    assert.equal(jp.types['人口'], 'int4');
    assert.equal(jp.data[0][1], '東京都');
  });

  test('a file that is not text fails with a message', async () => {
    const bin = write('binary.csv', Buffer.from(Array.from({ length: 4000 }, (_, i) => (i * 7919) % 256)));
    await failsWith(bin, /could not be decoded as text|not valid/);
  });

  test('detection: UTF-8 without BOM, UTF-16 by zero bytes', () => {
    assert.equal(detectEncoding(Buffer.from('a,b\nä,ö\n')).encoding, 'utf-8');
    assert.equal(detectEncoding(Buffer.from('a,b\nc,d\n', 'utf16le')).encoding, 'utf-16le');
  });
});

describe('delimited text', () => {
  test('semicolons, tabs and pipes are sniffed', async () => {
    const de = await prep('german_sample.csv');
    assert.equal(de.columns[0].id, 'Stadtname');
    assert.equal(de.types['Schüler_Total_2010/2011'], 'int4');
    for (const [d, name] of [
      ['\t', 'tab'],
      ['|', 'pipe'],
    ]) {
      const t = await prep(write(`${name}.csv`, `a${d}b${d}c\n1${d}x, y${d}2.5\n2${d}z${d}3\n`));
      assert.deepEqual(
        t.columns.map((c) => c.id),
        ['a', 'b', 'c'],
      );
      assert.deepEqual(t.data[0], ['1', 'x, y', '2.5']);
    }
  });

  test('title lines before the header; CR-only line ends', async () => {
    const nasa = await prep('nasa-gistemp-glb-cr-eol-preamble.csv');
    assert.equal(nasa.columns[0].id, 'Year');
    assert.equal(nasa.types.Year, 'int4');
    assert.match(nasa.log.join('\n'), /3 line\(s\) before the header skipped/);
    const agency = await prep('agency-directory-cr-eol.csv');
    assert.equal(agency.columns[0].id, 'ResourceAgencyNum');
    assert.equal(agency.data.length, 29);
    const co2 = await prep('uk-co2-manufacturing-excel-paste.csv');
    assert.equal(co2.columns[0].id, 'Year');
    assert.equal(co2.types['2000'], 'int4');
    assert.equal(co2.data[0][1], '2,666');
  });

  test('quoted newlines and commas, mixed quotes', async () => {
    const q = await prep('sample_with_quoted_commas.csv');
    assert.equal(q.data[0][1], 'Department of Employment, Small Business and Training');
    const qld = await prep('qld-ict-projects-mixed-quotes.csv');
    assert.equal(qld.data.length, 2);
    assert.ok(
      qld.data[0].some((v) => v?.includes('\\n')),
      'a newline inside a quoted value is kept (escaped for COPY)',
    );
  });

  test('ragged rows, empty lines, trailing blank columns', async () => {
    const extra = await prep('extra_fields.csv');
    assert.deepEqual(extra.data, [
      ['value1', 'value2', 'value3'],
      ['value4', 'value5', 'value6'],
    ]);
    const empty = await prep('sample_with_empty_lines.csv');
    assert.equal(empty.data.length, 6);
    assert.deepEqual(empty.data[4], [null, null, 'Berkeley']);
    const blanks = await prep('sample_with_extra_blank_cells.csv');
    assert.equal(blanks.columns.length, 17);
    assert.match(blanks.log.join('\n'), /15 empty column\(s\) without a header dropped/);
    const short = await prep(write('short.csv', 'a,b,c\n1,2\n3\n'));
    assert.deepEqual(short.data, [
      ['1', '2', null],
      ['3', null, null],
    ]);
  });

  test('a value beyond the header: an error that names it; blank and duplicate headers get made-up names', async () => {
    await failsWith(path.join(fixtures, 'umlaut_and_extra_comma.csv'), /row 4 has 3 values but the header has 2 columns/);
    const dutch = await prep('dutch-provinces-budget-2011-multiheader.csv');
    assert.ok(dutch.columns.some((c) => c.id === 'provincie_2'));
    assert.match(dutch.log.join('\n'), /header "provincie" in columns 3 and 4: this one is named "provincie_2"/);
    assert.deepEqual(Object.keys((await prep(write('dup.csv', 'a,b,a\n1,2,3\n'))).types), ['a', 'b', 'a_2']);
    const physicians = await prep('german-physicians-padded-head-semicolon.csv');
    assert.equal(physicians.columns[0].id, 'column_1');
    assert.match(physicians.columns[0].note ?? '', /header cell of column 1 of the file is blank/);
    assert.equal(physicians.data[1][0], '      Gefäßchirurgie');
    assert.deepEqual((await prep(write('blank.csv', 'a,,c\n1,2,3\n'))).data, [['1', '2', '3']]);
    await failsWith(write('nothing.csv', '\n\n'), /no rows/);
  });

  test('a header without rows makes text columns', async () => {
    const t = await prep('no_entries.csv');
    assert.equal(t.rows, 0);
    assert.ok(t.columns.every((c) => c.type === 'text'));
  });
});

describe('types', () => {
  test('int, numeric, big ints, leading zeros stay text, bool stays text', async () => {
    const t = await prep(write('types.csv', 'i,n,big,zip,flag,mixed\n1,1.5,3000000000,0123,true,1\n-2,2,4,0456,false,x\n'));
    assert.deepEqual(t.types, { i: 'int4', n: 'numeric', big: 'int8', zip: 'text', flag: 'text', mixed: 'text' });
    assert.match(t.log.join('\n'), /column "mixed": guessed int until row 3 \("x"\): loaded as text/);
  });

  test('dates: ISO, day-first when the whole column agrees, month names, timestamps', async () => {
    const t = await prep(
      write(
        'dates.csv',
        'iso,dmy,mdy,named,ts,mixed\n2020-01-31,23/03/2023,03/23/2023,24 October 2011,2012-02-28 13:00:00,2011-01-02\n2020-02-01,01/04/2023,04/01/2023,1 Nov 2011,2012-02-29T01:02:03,01-03-2011\n',
      ),
    );
    assert.deepEqual(t.types, { iso: 'date', dmy: 'date', mdy: 'date', named: 'date', ts: 'timestamp', mixed: 'text' });
    assert.deepEqual(t.columns.find((c) => c.id === 'dmy')!.conversion, { kind: 'date', order: 'dmy', withTime: false });
    assert.equal(isoDate('01/04/2023', 'dmy', false), '2023-04-01');
    assert.equal(isoDate('1 Nov 2011', 'ymd', true), '2011-11-01 00:00:00');
    const f = await prep('date_formats.csv');
    assert.equal(f.types.date, 'text');
  });

  test('thousands separators and decimal commas when the whole column agrees', async () => {
    const en = await prep(write('en.csv', 'a,b\n"1,234.5","1,000"\n12.25,"2,000"\n'));
    assert.deepEqual(en.types, { a: 'numeric', b: 'int4' });
    const eu = await prep(write('eu.csv', 'a;b\n1.234,5;12\n7,25;13\n'));
    assert.deepEqual(eu.types, { a: 'numeric', b: 'int4' });
    assert.deepEqual(eu.columns[0].conversion, { kind: 'number', format: 'eu' });
    const g = new ColumnGuess();
    ['1,234.5', '1.234,5'].forEach((v, i) => g.add(v, i + 2));
    assert.equal(g.type(), 'text');
  });

  test('a type override wins; a value that does not fit fails with its row', async () => {
    const t = await prep(write('ov.csv', 'a,b\n1,x\n2,y\n'), { a: 'text', b: 'text' });
    assert.equal(t.types.a, 'text');
    await assert.rejects(
      () => prep(write('ov2.csv', 'a,b\n1,x\n2,y\nabc,z\n'), { a: 'numeric' }),
      /row 4: "abc" in column "a" is not a valid numeric \(the type override/,
    );
  });
});

describe('spreadsheets', () => {
  test('first worksheet in workbook order; xlsm', async () => {
    // The first sheet ("Realtime", stored after "Tabelle1" in the file) has a note beside its table.
    await assert.rejects(() => prep('swiss-go-realtime-operators.xlsx'), /row 38 has 6 values but the header has 5 columns/);
    await assert.rejects(() => prep('nhs-dols-2010-11-definitions.xlsm'), /row \d+ has \d+ values|merged|blank column/);
  });

  test('formulas as values, dates as dates; merged header cells refused', async () => {
    const wb = new ExcelJS.Workbook();
    const ws = wb.addWorksheet('Data');
    ws.addRow(['name', 'when', 'n', 'double']);
    ws.addRow(['a', new Date(Date.UTC(2020, 0, 31)), 2, { formula: 'C2*2', result: 4 }]);
    ws.addRow(['b', new Date(Date.UTC(2021, 5, 1, 12, 30)), 3, { formula: 'C3*2', result: 6 }]);
    wb.addWorksheet('Other').addRow(['ignored']);
    const file = path.join(tmp, 'f.xlsx');
    await wb.xlsx.writeFile(file);
    const t = await prep(file);
    assert.deepEqual(t.types, { name: 'text', when: 'timestamp', n: 'int4', double: 'int4' });
    assert.deepEqual(t.data, [
      ['a', '2020-01-31', '2', '4'],
      ['b', '2021-06-01 12:30:00', '3', '6'],
    ]);
    const wb2 = new ExcelJS.Workbook();
    const ws2 = wb2.addWorksheet('Merged');
    ws2.addRow(['group', '', 'x']);
    ws2.addRow([1, 2, 3]);
    ws2.mergeCells('A1:B1');
    const merged = path.join(tmp, 'm.xlsx');
    await wb2.xlsx.writeFile(merged);
    await assert.rejects(() => prep(merged), /merged header cells are not supported: A1:B1/);
  });

  test('.xls and .ods workbooks: first sheet, formulas as values, dates as dates, merged headers refused', async () => {
    // book.* and merged-header.* were written with SheetJS (.ods with formulas and cached values).
    for (const ext of ['xls', 'ods']) {
      const t = await prep(`book.${ext}`);
      assert.equal(t.source.kind, ext);
      assert.deepEqual(t.types, {
        id: 'int4',
        name: 'text',
        amount: 'numeric',
        total: 'numeric',
        day: 'date',
        at: 'timestamp',
        flag: 'text',
      });
      assert.deepEqual(t.data, [
        ['1', 'Ann', '2.5', '3.5', '2023-03-23', '2023-03-23 10:30:00', 'true'],
        ['2', 'Zoë', '10', '12', '2024-02-29', '2024-02-29 23:59:59', 'false'],
        ['3', 'Bob "B"', '-7.25', '-4.25', '1999-12-31', '2000-01-01 00:00:01', null],
      ]);
      assert.ok(t.log.some((l) => /first worksheet "data" \(other sheets are not loaded\)/.test(l)));
      assert.ok(t.log.some((l) => /2 line\(s\) before the header skipped/.test(l)));
      await assert.rejects(() => prep(`merged-header.${ext}`), /merged header cells are not supported: B1:C1/);
    }
    const broken = write('broken.xls', Buffer.concat([Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]), Buffer.alloc(600)]));
    await assert.rejects(() => prep(broken), /Excel 97-2003 \(\.xls\) workbook could not be read/);
  });
});
