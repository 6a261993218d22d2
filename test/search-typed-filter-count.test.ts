// The number of datasets matching one filter on a date or number of a custom field, read from the
// index of the values without the matching rows (migration 026), through HTTP: a dataset with
// several values in the range counts once, also when its least value is outside it or two of its
// values are equal; private datasets only for those who may see them; the same numbers as a scan
// of the matches (the filter with another one).
import { test, after, before, describe } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { startApp, type TestApp } from './helpers/app.ts';

let t: TestApp;
// always true, but a second filter: the count comes from a scan of the matches
const SCAN = 'num_resources:[0 TO *]';

before(async () => {
  t = await startApp({
    plugins: [],
    config: {
      'svc.scheming.dataset_schemas': [path.join(import.meta.dirname, 'fixtures', 'search-typed-lists.yaml')],
      'svc.scheming.presets': ['ckanext.scheming:presets.json'],
    },
  });
  const alice = await t.user('alice');
  await t.ok('organization_create', { name: 'acme' }, { token: alice.token });
  const create = (d: Record<string, unknown>) => t.ok('package_create', { owner_org: 'acme', ...d }, { token: alice.token });
  // least value outside [2020 TO NOW] and [10 TO *], two values inside
  await create({
    name: 'three-periods',
    issued: '2021-01-01',
    period: [
      { start: '2019-01-01', size: '5' },
      { start: '2021-06-01', size: '50' },
      { start: '2022-01-01', size: '60' },
    ],
  });
  // two equal values (one of them flagged least)
  await create({
    name: 'equal-periods',
    issued: '2019-01-01',
    period: [
      { start: '2021-01-01', size: '12' },
      { start: '2021-01-01', size: '12' },
    ],
  });
  await create({ name: 'one-period', issued: '2023-01-01', period: [{ start: '2023-03-01', size: '7' }] });
  await create({ name: 'old-period', period: [{ start: '2018-01-01', size: '1' }] });
  await create({ name: 'no-period', issued: '2022-02-02' });
  await create({
    name: 'private-period',
    private: true,
    issued: '2024-01-01',
    period: [
      { start: '2021-05-05', size: '99' },
      { start: '2024-01-01', size: '3' },
    ],
  });
});

after(async () => {
  await t?.close();
});

describe('one filter on a typed custom field, counted from the index of its values', () => {
  const count = async (fq: string, who: { token?: string } = {}, data: Record<string, unknown> = {}) =>
    (await t.ok('package_search', { q: '*:*', fq, rows: 0, ...data }, who)).count as number;
  const both = async (fq: string, who: { token?: string } = {}, data: Record<string, unknown> = {}) => {
    const alone = await count(fq, who, data);
    const scanned = (await t.ok('package_search', { q: '*:*', fq: `${fq} AND ${SCAN}`, rows: 0, ...data }, who)).count as number;
    assert.equal(alone, scanned, `${fq}: counted ${alone}, scanned ${scanned}`);
    return alone;
  };
  const sysadmin = () => ({ token: t.sysadminToken });

  test('dates of lists: a dataset once', async () => {
    assert.equal(await both('period_start:[2020-01-01T00:00:00Z TO NOW]'), 3);
    assert.equal(await both('period_start:[2021-01-01 TO 2021-01-01]'), 1);
    assert.equal(await both('period_start:2021-01-01'), 1);
    assert.equal(await both('period_start:{2021-01-01T00:00:00Z TO *]'), 2);
    assert.equal(await both('period_start:[* TO 2019-01-01T00:00:00Z]'), 2);
    assert.equal(await both('period_start:[* TO *]'), 4);
  });

  test('numbers of lists: a dataset once', async () => {
    assert.equal(await both('period_size:[10 TO *]'), 2);
    assert.equal(await both('period_size:[0 TO 10]'), 3);
    assert.equal(await both('period_size:12'), 1);
    assert.equal(await both('period_size:[* TO *]'), 4);
  });

  test('a date of one value', async () => {
    assert.equal(await both('issued:[2020-01-01T00:00:00Z TO NOW]'), 3);
  });

  test('private datasets: only for those who may see them', async () => {
    assert.equal(await both('period_start:[2020-01-01T00:00:00Z TO NOW]', sysadmin()), 3);
    assert.equal(await both('period_start:[2020-01-01T00:00:00Z TO NOW]', sysadmin(), { include_private: true }), 4);
    assert.equal(await both('period_size:[10 TO *]', sysadmin(), { include_private: true }), 3);
    assert.equal(await both('period_size:[0 TO 10]', sysadmin(), { include_private: true }), 4);
  });

  test('after an update the least value moves', async () => {
    await t.ok(
      'package_patch',
      {
        id: 'old-period',
        period: [
          { start: '2018-01-01', size: '1' },
          { start: '2020-06-01', size: '1' },
        ],
      },
      { token: t.sysadminToken },
    );
    assert.equal(await both('period_start:[2020-01-01T00:00:00Z TO NOW]'), 4);
    assert.equal(await both('period_start:[* TO 2019-01-01T00:00:00Z]'), 2);
  });
});
