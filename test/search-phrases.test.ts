// Quoted phrases in package_search are found by the phrase keys of migration 013 (a run of two or
// three lexemes is one indexed key; longer runs add the positional test): every answer is checked
// against the plain positional match of the dataset's tsvector, through HTTP.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type TestApp } from './helpers/app.ts';

let t: TestApp;

before(async () => {
  t = await startApp({ plugins: [] });
  await t.ok('organization_create', { name: 'lab', title: 'Lab' }, { token: t.sysadminToken });
  const mk = (name: string, title: string, notes: string, more: Record<string, unknown> = {}) =>
    t.ok('package_create', { name, title, notes, owner_org: 'lab', ...more }, { token: t.sysadminToken });
  await mk('monitoring', 'Water quality monitoring', 'River water quality monitoring stations');
  await mk('reversed', 'Monitoring water', 'quality of water in lakes');
  await mk('across-fields', 'Lake water', 'quality reports; data data everywhere');
  await mk('address-book', 'E-mail address book', "O'Brien's river guide");
  await mk('two-places', 'Lakes', 'water quality here, and quality monitoring there');
  await mk('four-words', 'Rivers', 'river water quality; and water quality monitoring');
  await mk('secret', 'Water quality secrets', 'water quality monitoring of the plant', { private: true });
  await mk('unrelated', 'Budget', 'Monitoring of the budget, water and air quality');
});

after(() => t?.close());

/** Names of the public active datasets whose tsvector matches the phrase by its positions. */
async function reference(phrase: string): Promise<string[]> {
  const r = await t.services.db.query<{ name: string }>(
    `SELECT name FROM package_search_index WHERE doc @@ phraseto_tsquery('english', $1) AND state = 'active' AND NOT private ORDER BY name`,
    [phrase],
  );
  return r.rows.map((x) => x.name);
}

async function found(q: string): Promise<{ names: string[]; count: number }> {
  const r = await t.ok('package_search', { q, rows: 100 });
  return { names: r.results.map((d: any) => d.name).sort(), count: r.count };
}

const PHRASES = [
  'water quality', // two lexemes: one key
  'water quality monitoring', // three: one key
  'river water quality monitoring', // four: keys of the runs of three, and the positions
  'quality of water', // a stop word between: positions only
  'monitoring water',
  'data data',
  'e-mail address',
  "O'Brien's river",
  'water monitoring',
  'quality monitoring there',
];

test('a quoted phrase finds exactly the datasets whose text has it in that order', async () => {
  for (const phrase of PHRASES) {
    const expected = await reference(phrase);
    const got = await found(`"${phrase}"`);
    assert.deepEqual(got.names, expected, phrase);
    assert.equal(got.count, expected.length, phrase);
  }
  // the reference is not trivially empty, and private datasets stay out
  assert.deepEqual(await reference('water quality monitoring'), ['four-words', 'monitoring']);
  assert.deepEqual((await found('"water quality"')).names, ['four-words', 'monitoring', 'two-places']);
  // both runs of three are in four-words, but not as one run of four
  assert.deepEqual((await found('"river water quality monitoring"')).names, ['monitoring']);
  assert.deepEqual((await found('"e-mail address"')).names, ['address-book']);
  assert.deepEqual((await found('"water monitoring"')).names, []);
});

test('phrases with a field, negated, combined with words and filters', async () => {
  assert.deepEqual((await found('text:"water quality monitoring"')).names, ['four-words', 'monitoring']);
  assert.deepEqual((await found('-"water quality" AND water')).names, ['across-fields', 'reversed', 'unrelated']);
  assert.deepEqual((await found('"water quality" OR "data data"')).names, ['across-fields', 'four-words', 'monitoring', 'two-places']);
  assert.deepEqual((await found('"quality monitoring" AND river')).names, ['four-words', 'monitoring']);
  // a phrase on a weighted field tests the field's own words
  assert.deepEqual((await found('title:"water quality"')).names, ['monitoring']);
  const r = await t.ok('package_search', { q: '"water quality"', fq: 'name:monitoring' });
  assert.equal(r.count, 1);
});

test('the sysadmin with include_private finds the private phrase too', async () => {
  const r = await t.ok('package_search', { q: '"water quality monitoring"', include_private: true }, { token: t.sysadminToken });
  assert.deepEqual(r.results.map((d: any) => d.name).sort(), ['four-words', 'monitoring', 'secret']);
});

/** Names of the public active datasets whose words of one weight (a title, c notes) match the tsquery. */
async function weightedReference(weight: string, tsquery: string, value: string): Promise<string[]> {
  const r = await t.services.db.query<{ name: string }>(
    `SELECT name FROM package_search_index WHERE ts_filter(doc, $1::"char"[]) @@ ${tsquery} AND state = 'active' AND NOT private ORDER BY name`,
    [[weight], value],
  );
  return r.rows.map((x) => x.name);
}

test('title: and notes: find exactly the datasets with the words in that part of the text (words, prefixes, phrases)', async () => {
  const cases: [string, string, string, string][] = [
    // query, weight, reference tsquery, its value
    ['title:water', 'a', "plainto_tsquery('english', $2)", 'water'],
    ['title:quality', 'a', "plainto_tsquery('english', $2)", 'quality'],
    ['notes:water', 'c', "plainto_tsquery('english', $2)", 'water'],
    ['notes:budget', 'c', "plainto_tsquery('english', $2)", 'budget'],
    ['title:e-mail', 'a', "plainto_tsquery('english', $2)", 'e-mail'],
    ["notes:O'Brien's", 'c', "plainto_tsquery('english', $2)", "O'Brien's"],
    ['title:wat*', 'a', "to_tsquery('simple', $2)", 'wat:*'],
    ['notes:monitor*', 'c', "to_tsquery('simple', $2)", 'monitor:*'],
    ['title:"water quality"', 'a', "phraseto_tsquery('english', $2)", 'water quality'],
    ['notes:"water quality monitoring"', 'c', "phraseto_tsquery('english', $2)", 'water quality monitoring'],
    ['notes:"quality of water"', 'c', "phraseto_tsquery('english', $2)", 'quality of water'],
  ];
  const sets: string[][] = [];
  for (const [q, weight, tsquery, value] of cases) {
    const expected = await weightedReference(weight, tsquery, value);
    sets.push(expected);
    const got = await found(q);
    assert.deepEqual(got.names, expected, q);
    assert.equal(got.count, expected.length, q);
  }
  // joined by OR and AND (tested together, one tsquery of their keys): the union and the intersection
  for (let i = 0; i + 2 < cases.length; i++) {
    const group = [i, i + 1, i + 2];
    const qs = group.map((k) => cases[k][0]);
    assert.deepEqual((await found(qs.join(' OR '))).names, [...new Set(group.flatMap((k) => sets[k]))].sort(), qs.join(' OR '));
    const both = sets[i].filter((n) => group.every((k) => sets[k].includes(n)));
    assert.deepEqual((await found(qs.join(' AND '))).names, both, qs.join(' AND '));
  }
  // the references are not trivially empty or everything, and private datasets stay out
  assert.deepEqual((await found('title:water')).names, ['across-fields', 'monitoring', 'reversed']);
  assert.deepEqual((await found('notes:water')).names, ['four-words', 'monitoring', 'reversed', 'two-places', 'unrelated']);
  assert.deepEqual((await found('title:e-mail')).names, ['address-book']);
  assert.deepEqual((await found('-title:water AND water')).names, ['four-words', 'two-places', 'unrelated']);
});

test('several phrases joined by OR or AND find what each phrase finds, combined', async () => {
  const sets = await Promise.all(PHRASES.map((phrase) => reference(phrase)));
  for (let i = 0; i + 2 < PHRASES.length; i++) {
    const group = [i, i + 1, i + 2];
    const union = [...new Set(group.flatMap((k) => sets[k]))].sort();
    const both = sets[i].filter((n) => group.every((k) => sets[k].includes(n)));
    const quoted = group.map((k) => `"${PHRASES[k]}"`);
    assert.deepEqual((await found(quoted.join(' OR '))).names, union, quoted.join(' OR '));
    assert.deepEqual((await found(quoted.join(' AND '))).names, both, quoted.join(' AND '));
    assert.deepEqual(
      (await found(`${quoted[0]} OR (budget AND ${quoted[1]})`)).names,
      [...new Set([...sets[i], ...sets[i + 1].filter((n) => n === 'unrelated')])].sort(),
    );
  }
});
