import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type TestApp } from './helpers/app.ts';

let t: TestApp;
let user: { id: string; name: string; token: string };
const sys = () => ({ token: t.sysadminToken });

before(async () => {
  t = await startApp({ plugins: [] });
  user = await t.user('tt_user');
});
after(async () => {
  await t?.close();
});

test('update, update_many and show', async () => {
  assert.deepEqual(await t.ok('term_translation_update', { term: 'economy', term_translation: 'Wirtschaft', lang_code: 'de' }, sys()), {
    term: 'economy',
    term_translation: 'Wirtschaft',
    lang_code: 'de',
  });
  // again: replaced, not doubled
  await t.ok('term_translation_update', { term: 'economy', term_translation: 'Ökonomie', lang_code: 'de' }, sys());
  assert.deepEqual(
    await t.ok(
      'term_translation_update_many',
      {
        data: [
          { term: 'economy', term_translation: 'économie', lang_code: 'fr' },
          { term: 'health', term_translation: 'Gesundheit', lang_code: 'de' },
        ],
      },
      sys(),
    ),
    { success: '2 rows updated' },
  );
  assert.deepEqual(await t.ok('term_translation_show', { terms: ['economy', 'health'] }), [
    { term: 'economy', term_translation: 'Ökonomie', lang_code: 'de' },
    { term: 'economy', term_translation: 'économie', lang_code: 'fr' },
    { term: 'health', term_translation: 'Gesundheit', lang_code: 'de' },
  ]);
  assert.deepEqual(await t.ok('term_translation_show', { terms: 'economy', lang_codes: 'fr' }, { method: 'GET' }), [
    { term: 'economy', term_translation: 'économie', lang_code: 'fr' },
  ]);
  assert.deepEqual(await t.ok('term_translation_show', { terms: ['nothing'] }), []);
});

test('bad input and permissions', async () => {
  let r = await t.call('term_translation_update', { term: 'a', lang_code: 'de' }, sys());
  assert.equal(r.status, 409);
  assert.deepEqual(r.body.error!.term_translation, ['Missing value']);
  r = await t.call('term_translation_update', { term: 'a', term_translation: 'b', lang_code: 'de' }, { token: user.token });
  assert.equal(r.status, 403);
  r = await t.call('term_translation_update', { term: 'a', term_translation: 'b', lang_code: 'de' });
  assert.equal(r.status, 403);
  r = await t.call('term_translation_update_many', { data: [] }, sys());
  assert.equal(r.status, 409);
  assert.deepEqual(r.body.error!.data, ['term_translation_update_many needs to have a list of dicts in field data']);
  // one bad row: nothing is written
  r = await t.call(
    'term_translation_update_many',
    {
      data: [
        { term: 'x', term_translation: 'y', lang_code: 'de' },
        { term: 'z', lang_code: 'de' },
      ],
    },
    sys(),
  );
  assert.equal(r.status, 409);
  assert.deepEqual(await t.ok('term_translation_show', { terms: ['x'] }), []);
  r = await t.call('term_translation_update_many', { data: 'nope' }, sys());
  assert.equal(r.status, 409);
  r = await t.call('term_translation_show', {});
  assert.deepEqual(r.body.error!.terms, ['Missing value']);
});
