// The direct CSV path (plain UTF-8 CSV to COPY as it is) against the general two-pass path: the
// same files uploaded to an app with svc.loader.direct_copy on and one with it off must give the
// same columns, types, values and nulls; files the direct path must not take go to the general
// path (quoting edge cases, BOM, CRLF and CR line ends, blanks, ragged and empty rows, preambles).
import { test, after, before, describe } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { onPostgres, startApp, type TestApp } from './helpers/app.ts';

let direct: TestApp;
let general: TestApp;

async function upload(t: TestApp, name: string, content: Buffer | string): Promise<string> {
  const pkg = (await t.ok('package_create', { name: `direct-${randomUUID().slice(0, 8)}` }, { token: t.sysadminToken })).id;
  const boundary = `----svctest${randomUUID()}`;
  const payload = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="package_id"\r\n\r\n${pkg}\r\n`),
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="upload"; filename="${name}"\r\nContent-Type: text/csv\r\n\r\n`),
    Buffer.isBuffer(content) ? content : Buffer.from(content),
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/3/action/resource_create',
    payload,
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, authorization: t.sysadminToken },
  });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().result.id;
}

async function loaded(t: TestApp, id: string): Promise<{ status: string; log: string[]; fields: unknown; records: unknown }> {
  const end = Date.now() + 120000;
  for (;;) {
    const r = await t.call('xloader_status', { resource_id: id }, { token: t.sysadminToken });
    const st = r.body.result;
    if (st && ['complete', 'error'].includes(st.status)) {
      const log = st.task_info.logs.map((l: { message: string }) => l.message);
      if (st.status === 'error') return { status: 'error', log, fields: null, records: null };
      const s = await t.ok('datastore_search', { resource_id: id, limit: 32000, sort: '_id' }, { token: t.sysadminToken });
      return { status: st.status, log, fields: s.fields, records: s.records };
    }
    if (Date.now() > end) throw new Error(`load of ${id} did not end`);
    await new Promise((res) => setTimeout(res, 50));
  }
}

/** Loads the file in both apps; the results must be the same; says which path the direct app took. */
async function compare(
  name: string,
  content: Buffer | string,
): Promise<{ id: string; direct: boolean; fields: any; records: any; log: string[] }> {
  const [a, b] = await Promise.all([upload(direct, name, content), upload(general, name, content)]);
  const [x, y] = await Promise.all([loaded(direct, a), loaded(general, b)]);
  assert.equal(x.status, 'complete', x.log.join('\n'));
  assert.equal(y.status, 'complete', y.log.join('\n'));
  assert.deepEqual(x.fields, y.fields);
  assert.deepEqual(x.records, y.records);
  assert.ok(!y.log.some((l) => /COPY as it is/.test(l)));
  return { id: a, direct: x.log.some((l) => /went to COPY as it is/.test(l)), fields: x.fields, records: x.records, log: x.log };
}

const types = (fields: any[]) => Object.fromEntries(fields.filter((f) => f.id !== '_id').map((f) => [f.id, f.type]));

before(async () => {
  const config = { 'svc.jobs.poll_interval': 50, 'svc.auth.create_unowned_dataset': true };
  [direct, general] = await Promise.all([
    startApp({ plugins: ['datastore', 'loader'], config }),
    startApp({ plugins: ['datastore', 'loader'], config: { ...config, 'svc.loader.direct_copy': false } }),
  ]);
});
after(async () => {
  await direct?.close();
  await general?.close();
});

const MIXED = [
  'id,amount,day,at,name,note',
  '1,12.5,2023-03-01,2023-03-01T10:00:00,Ann,plain',
  '-2,0.25,2023-03-02,2023-03-02 11:30:59,"Bob, Jr.","say ""hi"""',
  '3,,2023-03-03,,"",',
  '4,7,,2023-03-04T00:00:00,Zoë 東京,"two\nlines"',
  '5,1e3,2024-02-29,2024-02-29T23:59:59,"  padded  ","crlf\r\ninside"',
  '0,-3.75,2023-03-05,2023-03-05T01:02:03,x,\\N and \\. and a tab\there',
];

describe('direct CSV path', () => {
  test('mixed types, nulls and quoting: the same as the general path, straight to COPY', async () => {
    const r = await compare('mixed.csv', `${MIXED.join('\n')}\n`);
    assert.ok(r.direct, r.log.join('\n'));
    assert.deepEqual(types(r.fields), { id: 'int4', amount: 'numeric', day: 'date', at: 'timestamp', name: 'text', note: 'text' });
    assert.equal(r.records[2].amount, null);
    assert.equal(r.records[2].name, null); // "" is null, as in the general path
    assert.equal(r.records[1].note, 'say "hi"');
    assert.equal(r.records[4].note, 'crlf\r\ninside');
    assert.equal(r.records[4].name, '  padded  ');
    // Row numbers continue after the loaded rows.
    await direct.ok(
      'datastore_upsert',
      { resource_id: r.id, method: 'insert', force: true, records: [{ id: 7 }] },
      { token: direct.sysadminToken },
    );
    const added = await direct.ok('datastore_search', { resource_id: r.id, filters: { id: 7 } }, { token: direct.sysadminToken });
    assert.equal(added.records[0]._id, 7);
  });

  test('values at the edges of their types: the same as the general path', async () => {
    const csv = [
      'i,big,num,d,ts,t',
      '0,999999999999999999,0.5,0001-01-01,0001-01-01T00:00:00,"say ""hi"", twice"',
      '999999999,-999999999999999999,-0.000,9999-12-31,9999-12-31 23:59:59,ü€😀',
      '-999999999,1234567890,12345678901234567890.123456789,2000-02-29,1999-12-31T23:59:59,',
      ',,1.50,1969-12-31,1970-01-01T00:00:00,""',
      '7,-1,10000,2038-01-19,2038-01-19T03:14:08,"a\nb"',
      '-1,0,0.0001,1900-03-01,2024-02-29 12:00:00,plain',
      '3,5,9223372036854775808,1900-03-02,2024-02-29 12:00:01,x',
    ].join('\n');
    const r = await compare('edges.csv', `${csv}\n`);
    assert.ok(r.direct, r.log.join('\n'));
    assert.deepEqual(types(r.fields), { i: 'int4', big: 'int8', num: 'numeric', d: 'date', ts: 'timestamp', t: 'text' });
    assert.equal(r.records[0].t, 'say "hi", twice');
    assert.equal(r.records[1].ts, '9999-12-31T23:59:59');
    assert.equal(r.records[3].i, null);
    assert.equal(r.records[3].t, null);
  });

  test('BOM and CRLF, CR-only line ends, no line end at the end, semicolons and tabs', async () => {
    const crlf = await compare('crlf.csv', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(MIXED.join('\r\n'))]));
    assert.ok(crlf.direct, crlf.log.join('\n'));
    assert.equal(crlf.fields[1].id, 'id');
    const cr = await compare('cr.csv', `a,b\r1,x\r2,y\r`);
    assert.ok(cr.direct, cr.log.join('\n'));
    const semi = await compare('semi.csv', 'a;b;c\n1;2.5;x\n2;3;"y;z"\n');
    assert.ok(semi.direct, semi.log.join('\n'));
    assert.deepEqual(types(semi.fields), { a: 'int4', b: 'numeric', c: 'text' });
    const tab = await compare('tab.tsv', 'a\tb\n1\tx y\n2\t"q"\n');
    assert.ok(tab.direct, tab.log.join('\n'));
  });

  test('files the direct path leaves to the general one load the same', async () => {
    const cases: [string, string | Buffer][] = [
      ['blank value', 'a,b\n1,x\n2,   \n'],
      ['ragged rows', 'a,b,c\n1,2,3\n4,5\n6,7,8,\n'],
      ['empty line and empty row', 'a,b\n1,2\n\n,\n3,4\n'],
      ['preamble', 'Spending report\nMarch\na,b,c\n1,2,3\n4,5,6\n7,8,9\n'],
      ['quote inside a value', 'a,b\n1,5" disk\n2,x\n'],
      ['decimal commas', 'a;b\n1;2,5\n2;3,25\n'],
      ['day-first dates', 'a,b\n1,23/03/2023\n2,01/04/2023\n'],
      ['mixed line ends', 'a,b\r\n1,2\n3,4\r\n'],
      ['latin-1', Buffer.from('a,b\n1,caf\xe9\n2,na\xefve\n', 'latin1')],
      ['one column', 'a\n1\n2\n'],
    ];
    for (const [what, content] of cases) {
      const r = await compare(`${what}.csv`, content);
      assert.ok(!r.direct, `${what}: ${r.log.join('\n')}`);
      assert.ok(
        r.log.some((l) => /read in two passes/.test(l)),
        what,
      );
    }
  });

  test('a file of several batches whose types hold: copied at once by several connections on PostgreSQL, rows numbered in file order', async () => {
    const rows: string[] = ['n,day,label'];
    const pad = 'y'.repeat(100);
    const total = 120000; // about 13 MB: four batches on PostgreSQL
    for (let i = 1; i <= total; i++) rows.push(`${i},2024-01-${String((i % 28) + 1).padStart(2, '0')},${i % 5 ? pad : '"a,b"'}`);
    const r = await compare('many.csv', `${rows.join('\n')}\n`);
    assert.ok(r.direct, r.log.join('\n'));
    assert.equal(
      r.log.some((l) => /2 streams at once/.test(l)),
      onPostgres,
      r.log.join('\n'),
    );
    assert.ok(!r.log.some((l) => /copied again/.test(l)));
    assert.deepEqual(types(r.fields), { n: 'int4', day: 'date', label: 'text' });
    assert.ok(r.records.every((rec: any, i: number) => rec._id === i + 1 && rec.n === i + 1));
    // Rows of the last batches too: the row number is the line's, whichever connection copied it.
    for (const n of [total - 1, total]) {
      const found = await direct.ok('datastore_search', { resource_id: r.id, filters: { n } }, { token: direct.sysadminToken });
      assert.equal(found.records[0]._id, n);
    }
    const info = await direct.ok('datastore_search', { resource_id: r.id, limit: 0 }, { token: direct.sysadminToken });
    assert.equal(info.total, total);
    // New rows are numbered after the loaded ones.
    await direct.ok(
      'datastore_upsert',
      { resource_id: r.id, method: 'insert', force: true, records: [{ n: 0 }] },
      { token: direct.sysadminToken },
    );
    const added = await direct.ok('datastore_search', { resource_id: r.id, filters: { n: 0 } }, { token: direct.sysadminToken });
    assert.equal(added.records[0]._id, total + 1);
  });

  test('types that change after the first batch: the table is made again, the result the same', async () => {
    // More than one COPY batch (4 MB on PostgreSQL, 16 MB on PGlite): a late text value and a late wide integer.
    const rows: string[] = ['n,code,big,label'];
    const pad = 'x'.repeat(120);
    const total = 150000;
    for (let i = 1; i <= total; i++)
      rows.push(`${i},${i === total ? 'n/a' : i % 1000},${i === total - 1 ? 12345678901 : i},${i % 7 ? pad : '"q,uoted"'}`);
    const r = await compare('late.csv', `${rows.join('\n')}\n`);
    assert.ok(r.direct, r.log.join('\n'));
    assert.deepEqual(types(r.fields), { n: 'int4', code: 'text', big: 'int8', label: 'text' });
    assert.equal(r.records.length, 32000);
    const last = await direct.ok('datastore_search', { resource_id: r.id, sort: '_id desc', limit: 2 }, { token: direct.sysadminToken });
    assert.equal(last.records[0].code, 'n/a');
    assert.equal(String(last.records[1].big), '12345678901');
    assert.ok(
      r.log.some((l) => /copied again/.test(l)),
      r.log.join('\n'),
    );
  });
});
