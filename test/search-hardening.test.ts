// Hostile and oversized search input (issue #25 items 2, 5, 12): every one answers quickly with
// the envelope's error naming the field (or a result), never a 500, and the server keeps
// answering other requests meanwhile and afterwards.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type ApiResponse, type TestApp } from './helpers/app.ts';

let t: TestApp;

before(async () => {
  t = await startApp({ plugins: [] });
  await t.ok('organization_create', { name: 'lab', title: 'Lab' }, { token: t.sysadminToken });
  const mk = (name: string, title: string, notes: string, tags: string[] = []) =>
    t.ok('package_create', { name, title, notes, owner_org: 'lab', tags: tags.map((n) => ({ name: n })) }, { token: t.sysadminToken });
  await mk('monitoring', 'Water quality monitoring', 'River water quality monitoring stations', ['water']);
  await mk('reversed', 'Monitoring water', 'quality of water in lakes', ['lakes']);
  await mk('budget', 'Budget', 'Spending of the city', ['money']);
});

after(() => t?.close());

/** The call, failing the test when it takes longer than ms (a frozen server never answers). */
async function within<T>(ms: number, call: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([call, late]);
  } finally {
    clearTimeout(timer);
  }
}

function assertSearchError(r: ApiResponse, field: string, label: string): void {
  assert.equal(r.body.success, false, label);
  assert.notEqual(r.status, 500, label);
  assert.ok(['Search Query Error', 'Validation Error'].includes(r.body.error!.__type), `${label}: ${JSON.stringify(r.body.error)}`);
  const text = JSON.stringify(r.body.error);
  assert.ok(
    r.body.error![field] || new RegExp(`\\b${field.replace('.', '\\.')}\\b`).test(r.body.error!.message),
    `${label} names ${field}: ${text}`,
  );
}

const HOSTILE_Q: [string, string][] = [
  ['300 quoted two-word phrases', Array.from({ length: 300 }, (_, i) => `"water${i} quality${i}"`).join(' ')],
  ['"a* " x 500', '"a* "'.repeat(500)],
  ['a* x 500', 'a* '.repeat(500)],
  ['"title:x OR " x 2000', 'title:x OR '.repeat(2000) + 'title:x'],
  ['a phrase of 5,000 words', `"${'water quality '.repeat(2500)}"`],
];

test('hostile queries answer quickly with an error naming q, and the server answers meanwhile and afterwards', {
  timeout: 120_000,
}, async () => {
  for (const [label, q] of HOSTILE_Q) {
    // twice: a first hostile query must not leave the database in a state that hangs the next one
    for (let round = 0; round < 2; round++) {
      const [search, status] = await within(10_000, Promise.all([t.call('package_search', { q }), t.call('status_show', {})]));
      assertSearchError(search, 'q', label);
      assert.equal(status.status, 200, label);
    }
    const fine = await within(10_000, t.ok('package_search', { q: 'water' }));
    assert.equal(fine.count, 2, `a plain search after ${label}`);
  }
});

test('the same bounds hold for fq', { timeout: 60_000 }, async () => {
  const r = await within(10_000, t.call('package_search', { fq: 'a* '.repeat(500) }));
  assertSearchError(r, 'fq', 'fq of 500 wildcards');
});

test('a quoted phrase as the filter query finds the datasets with it', async () => {
  const r = await t.ok('package_search', { fq: '"water quality"' });
  assert.deepEqual(
    r.results.map((d: any) => d.name),
    ['monitoring'],
  );
  const list = await t.ok('package_search', { q: 'water', fq_list: ['"water quality"', 'tags:water'] });
  assert.deepEqual(
    list.results.map((d: any) => d.name),
    ['monitoring'],
  );
});

test('oversized lists are a Validation Error naming the field', { timeout: 120_000 }, async () => {
  const many = (n: number, f: (i: number) => string) => Array.from({ length: n }, (_, i) => f(i));
  const cases: [string, Record<string, unknown>, string][] = [
    ['package_search', { fq_list: many(100_000, (i) => `tags:t${i}`) }, 'fq_list'],
    ['package_search', { 'facet.field': JSON.stringify(many(2_000, (i) => `extras_k${i}`)) }, 'facet.field'],
    ['tag_search', { query: many(100_000, (i) => `t${i}`) }, 'query'],
    ['tag_autocomplete', { query: many(100_000, (i) => `t${i}`) }, 'query'],
  ];
  for (const [action, data, field] of cases) {
    const r = await within(20_000, t.call(action, data));
    assert.equal(r.status, 409, `${action} ${field}: ${r.status} ${JSON.stringify(r.body.error).slice(0, 300)}`);
    assert.equal(r.body.error!.__type, 'Validation Error');
    assert.ok(r.body.error![field], `${action} names ${field}: ${JSON.stringify(r.body.error).slice(0, 300)}`);
  }
  // lists within the bounds still work
  assert.equal((await t.ok('package_search', { fq_list: ['tags:water', 'name:monitoring'] })).count, 1);
  assert.deepEqual(await t.ok('tag_autocomplete', { query: ['wat', 'er'] }), ['water']);
  const facets = await t.ok('package_search', { 'facet.field': JSON.stringify(['tags', 'organization']) });
  assert.equal(facets.search_facets.tags.items.length, 3);
  // each facet field scans the matches once more: at most 20
  const twenty = many(20, (i) => `extras_k${i}`);
  assert.equal((await t.call('package_search', { 'facet.field': JSON.stringify(twenty) })).status, 200);
  const r = await t.call('package_search', { 'facet.field': JSON.stringify([...twenty, 'tags']) });
  assert.equal(r.status, 409);
  assert.ok(r.body.error!['facet.field']);
});

test('a query at every bound still answers; one past a bound is refused naming q', { timeout: 60_000 }, async () => {
  const phrases = Array.from({ length: 10 }, (_, i) => `"water quality${i}"`);
  const wildcards = Array.from({ length: 20 }, (_, i) => `w${i}x*`);
  const words = Array.from({ length: 69 }, (_, i) => `monitoring${i}`);
  const q = [...phrases, ...wildcards, ...words, 'water'].join(' OR ');
  const r = await within(10_000, t.call('package_search', { q }));
  assert.equal(r.body.success, true, JSON.stringify(r.body.error));
  assert.equal(r.body.result.count, 2);
  // 99 clauses, then one more of each kind
  const room = [...phrases, ...wildcards, ...words.slice(1), 'water'].join(' OR ');
  for (const [more, what] of [
    ['word', 'clauses'],
    ['"one more"', 'phrases'],
    ['w*', 'wildcard'],
  ]) {
    assert.equal((await t.call('package_search', { q: `${room} OR word` })).body.success, true);
    const r = await t.call('package_search', { q: `${room} OR ${more} OR x` });
    assertSearchError(r, 'q', more);
    assert.match(r.body.error!.message, new RegExp(what), more);
  }
  // the bound counts q and the filters together
  assertSearchError(await t.call('package_search', { q: words.join(' '), fq: words.join(' ') }), 'fq', 'q and fq');
});

test('phrases and sorts on extras with facets, any sort and pages past the score window answer', async () => {
  const facetField = JSON.stringify(['tags', 'extras_region', 'organization']);
  const shapes: Record<string, unknown>[] = [
    { q: '"water quality"', 'facet.field': facetField },
    { q: '"water quality" OR budget', 'facet.field': facetField, sort: 'name asc' },
    { q: 'water', sort: 'extras_region asc', 'facet.field': facetField },
    { q: '"water quality" monitoring', sort: 'extras_region desc, score desc', 'facet.field': facetField },
    { q: '"water quality" OR water OR budget', rows: 2, start: 1 },
  ];
  t.services.config.set('svc.search.rank_window', 1);
  try {
    for (const data of shapes) {
      const r = await t.call('package_search', data);
      assert.equal(r.status, 200, `${JSON.stringify(data)}: ${JSON.stringify(r.body.error)}`);
    }
  } finally {
    t.services.config.set('svc.search.rank_window', 1000);
  }
  const r = await t.ok('package_search', { q: '"water quality" OR budget', 'facet.field': facetField, sort: 'name asc' });
  assert.deepEqual(
    r.results.map((d: any) => d.name),
    ['budget', 'monitoring'],
  );
  assert.deepEqual(r.facets.tags, { money: 1, water: 1 });
});

test('facet fields named like Object.prototype members are ordinary unknown fields (empty facets, no 500)', async () => {
  for (const field of ['constructor', 'toString', 'hasOwnProperty', '__proto__']) {
    for (const q of ['water', '']) {
      const r = await t.call('package_search', { q, 'facet.field': [field, 'tags'] });
      assert.equal(r.status, 200, `${field} q=${q}: ${JSON.stringify(r.body.error)}`);
      assert.ok(Array.isArray(r.body.result.search_facets.tags.items), field);
      if (field !== '__proto__') assert.deepEqual(r.body.result.facets[field], {}, field);
    }
  }
});
