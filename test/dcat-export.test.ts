// The whole catalog by `svc dcat export` (keyset paging: every public dataset once, newest first,
// whatever the page size, also when more than a page of datasets share one millisecond), and the
// writers: every format of a dataset and of a catalog page is the same graph (canonical N-Quads),
// and the JSON-LD written from the quads is the graph jsonld's fromRDF makes of them.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import jsonld from 'jsonld';
import { Parser, Writer, type Quad } from 'n3';
import { startApp, type TestApp } from './helpers/app.ts';
import { runCliIn } from './helpers/cli.ts';
import { organizationWithTeam, type TestUser } from './helpers/fixtures.ts';
import { NS, parseRdf } from './helpers/rdf.ts';
import { jsonLdNodes } from '../src/dcat/serialize.ts';
import { CatalogKeyset } from '../src/plugins/dcat/keyset.ts';

let t: TestApp;
let editor: TestUser;
const publicIds: string[] = [];

before(async () => {
  t = await startApp();
  editor = (await organizationWithTeam(t, { name: 'export-org', title: 'Export Agency' }, { ex_editor: 'editor' })).users.ex_editor;
  for (let i = 0; i < 5; i++) {
    const d = await t.ok(
      'package_create',
      {
        name: `export-${i}`,
        title: `Export ${i}`,
        notes: `Line one\nline "two" of dataset ${i}`,
        owner_org: 'export-org',
        license_id: 'cc-by',
        tags: [{ name: 'water' }, { name: `tag-${i}` }],
        maintainer: 'Max',
        maintainer_email: 'max@example.org',
        extras: [
          { key: 'temporal_start', value: '2020-01-01' },
          { key: 'access_rights', value: 'Public, with a "note"' },
          { key: 'alternate_identifier', value: `["alt-${i}"]` },
        ],
        resources: [
          { name: 'CSV', url: `https://example.org/${i}.csv`, format: 'CSV', size: 10 + i, hash: 'md5:0123456789abcdef0123456789abcdef' },
          { name: 'Odd', url: `https://example.org/${i}.dat`, format: 'Odd DAT' },
        ],
      },
      { token: editor.token },
    );
    publicIds.push(d.id);
  }
  await t.ok('package_create', { name: 'export-hidden', owner_org: 'export-org', private: true }, { token: editor.token });
});
after(async () => {
  await t?.close();
});

/** The canonical N-Quads of a document (blank node labels made canonical). */
async function canonical(text: string, ext: string): Promise<string> {
  // a catalog page's hydra links name its own format
  const store = await parseRdf(text.replaceAll(`/catalog.${ext}?`, '/catalog.nt?'), ext);
  const nquads = new Writer({ format: 'N-Quads' }).quadsToString(store.getQuads(null, null, null, null));
  return (await jsonld.canonize(nquads as any, { algorithm: 'URDNA2015', inputFormat: 'application/n-quads' } as any)) as unknown as string;
}

const get = async (url: string) => {
  const r = await t.app.inject({ method: 'GET', url });
  assert.equal(r.statusCode, 200, `${url}: ${r.body.slice(0, 300)}`);
  return r.body;
};

describe('writers', () => {
  test('a dataset and a catalog page are the same graph in every format', async () => {
    for (const url of ['/dataset/export-1', '/catalog']) {
      const reference = await canonical(await get(`${url}.nt?profiles=euro_dcat_ap_3,schemaorg`), 'nt');
      assert.match(reference, /_:c14n/, 'the graph has blank nodes');
      for (const ext of ['ttl', 'jsonld', 'xml', 'n3']) {
        assert.equal(await canonical(await get(`${url}.${ext}?profiles=euro_dcat_ap_3,schemaorg`), ext), reference, `${url}.${ext}`);
      }
    }
  });

  test("the JSON-LD node objects are the graph jsonld's fromRDF makes of the same quads", async () => {
    const quads: Quad[] = new Parser({ format: 'N-Triples' }).parse(await get('/catalog.nt'));
    const toNQuads = async (doc: object) =>
      (await jsonld.canonize(
        doc as jsonld.JsonLdDocument,
        { algorithm: 'URDNA2015', format: 'application/n-quads' } as any,
      )) as unknown as string;
    const ours = await toNQuads(jsonLdNodes(quads));
    assert.equal(ours, await toNQuads((await jsonld.fromRDF(quads as any)) as object));
    assert.ok(ours.includes(`<${NS.dcat}Dataset>`));
  });
});

describe('svc dcat export', () => {
  test('every public dataset once, newest first, in every page size and format', async () => {
    for (const pageSize of ['1', '2', '1000']) {
      for (const format of ['nt', 'ttl', 'jsonld']) {
        const run = await runCliIn(t, ['dcat', 'export', '--format', format, '--page-size', pageSize]);
        assert.equal(run.code, 0, run.err);
        assert.match(run.err, /5 datasets in/);
        const nt = new Writer({ format: 'N-Triples' }).quadsToString((await parseRdf(run.out, format)).getQuads(null, null, null, null));
        const listed = new Parser({ format: 'N-Triples' })
          .parse(nt)
          .filter((q) => q.predicate.value === `${NS.dcat}dataset`)
          .map((q) => q.object.value.split('/').pop());
        assert.deepEqual(listed.sort(), [...publicIds].sort(), `page size ${pageSize}, ${format}`);
      }
    }
    // N-Triples keeps the order written: newest first
    const run = await runCliIn(t, ['dcat', 'export', '--format', 'nt', '--page-size', '2']);
    const order = new Parser({ format: 'N-Triples' })
      .parse(run.out)
      .filter((q) => q.predicate.value === `${NS.dcat}dataset`)
      .map((q) => q.object.value.split('/').pop());
    assert.deepEqual(order, [...publicIds].reverse());
  });

  test('bad options are errors naming them', async () => {
    const format = await runCliIn(t, ['dcat', 'export', '--format', 'csv']);
    assert.notEqual(format.code, 0);
    assert.match(format.err, /unknown format "csv"/);
    const size = await runCliIn(t, ['dcat', 'export', '--page-size', '0']);
    assert.notEqual(size.code, 0);
    assert.match(size.err, /--page-size/);
  });
});

describe('keyset paging', () => {
  // A catalog in search order (metadata_modified desc, id desc), four datasets in one millisecond.
  const catalog = [
    { id: 'g', metadata_modified: '2024-05-01T10:00:00.900000' },
    { id: 'f', metadata_modified: '2024-05-01T10:00:00.500400' },
    { id: 'e', metadata_modified: '2024-05-01T10:00:00.500300' },
    { id: 'd', metadata_modified: '2024-05-01T10:00:00.500200' },
    { id: 'c', metadata_modified: '2024-05-01T10:00:00.500100' },
    { id: 'b', metadata_modified: '2024-05-01T10:00:00.100000' },
    { id: 'a', metadata_modified: '2024-04-30T10:00:00' },
  ];
  /** package_search over the list: the keyset's range (to the millisecond, as the index's), start, rows. */
  const search = (params: { start?: number; fq_list?: string[] }, rows: number) => {
    const range = params.fq_list?.map((fq) => /^metadata_modified:\[\* TO (.+)\}$/.exec(fq)?.[1]).find(Boolean);
    const matching = catalog.filter((d) => !range || Date.parse(`${d.metadata_modified}Z`) < Date.parse(range));
    return matching.slice(params.start ?? 0, (params.start ?? 0) + rows);
  };

  for (const rows of [1, 2, 3, 4, 5, 10]) {
    test(`${rows} a search: every dataset once, in order`, () => {
      const keyset = new CatalogKeyset();
      const written: string[] = [];
      for (let searches = 0; searches < 50; searches++) {
        const results = search(keyset.after({ fq_list: ['-dataset_type:harvest'] }), rows);
        written.push(...keyset.next(results).map((d) => d.id));
        if (results.length < rows) break;
      }
      assert.deepEqual(written, ['g', 'f', 'e', 'd', 'c', 'b', 'a']);
    });
  }

  test('the first search has no range; later ones keep the caller filters', () => {
    const keyset = new CatalogKeyset();
    assert.deepEqual(keyset.after({ fq_list: ['x:1'] }), { fq_list: ['x:1'], start: 0 });
    keyset.next(catalog.slice(0, 2));
    assert.deepEqual(keyset.after({ fq_list: ['x:1'] }), {
      fq_list: ['x:1', 'metadata_modified:[* TO 2024-05-01T10:00:00.501Z}'],
      start: 0,
    });
  });
});
