// The web interface in several languages: complete catalogues (every key of English in fr, de and
// es, the same placeholders), no page string outside the catalogue, the language chosen by address
// prefix (/fr/dataset), remembered choice and Accept-Language, links keeping the prefix, plural
// forms, dates and numbers per locale, multilingual (fluent) fields in the page's language, and an
// Action API that no language changes.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startApp, type TestApp } from './helpers/app.ts';
import { WebClient } from './helpers/web-client.ts';
import { seedCatalog, type SeededCatalog } from './helpers/browser-data.ts';
import { catalogueLocales, catalogueOf, translator } from '../src/web/i18n.ts';

const SHIPPED = ['de', 'en', 'es', 'fr'];
const WEB = path.join(process.cwd(), 'src/web');
const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

function filesUnder(dir: string, ext: RegExp): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const file = path.join(dir, e.name);
    return e.isDirectory() ? filesUnder(file, ext) : ext.test(e.name) ? [file] : [];
  });
}

describe('the catalogues', () => {
  test('French, German and Spanish have every key of English, with the same placeholders, and no other', () => {
    assert.deepEqual(catalogueLocales(), SHIPPED);
    const en = catalogueOf('en');
    for (const locale of SHIPPED.filter((l) => l !== 'en')) {
      const own = catalogueOf(locale);
      assert.deepEqual(
        Object.keys(en).filter((k) => !(k in own)),
        [],
        `keys missing in ${locale}`,
      );
      assert.deepEqual(
        Object.keys(own).filter((k) => !(k in en)),
        [],
        `keys of ${locale} that English does not have`,
      );
      for (const [key, text] of Object.entries(own)) assert.deepEqual(placeholders(text), placeholders(en[key]!), `${locale} ${key}`);
      assert.equal(own['meta.lang'], locale);
    }
  });

  test('every message key a template or page names is in every catalogue (not only through the English fallback)', () => {
    const missing: string[] = [];
    const catalogues = SHIPPED.map((l) => [l, catalogueOf(l)] as const);
    for (const file of filesUnder(WEB, /\.(njk|ts)$/)) {
      for (const m of fs.readFileSync(file, 'utf8').matchAll(/\bt\('([\w.-]+)'\s*[,)]/g))
        for (const [locale, own] of catalogues) if (!(m[1]! in own)) missing.push(`${path.relative(WEB, file)}: ${m[1]} (${locale})`);
    }
    assert.deepEqual(missing, []);
  });

  test('templates hold no text of their own: every word a visitor reads comes from the catalogue', () => {
    const found: string[] = [];
    for (const file of filesUnder(path.join(WEB, 'templates'), /\.njk$/)) {
      const source = fs
        .readFileSync(file, 'utf8')
        .replace(/\{#[\s\S]*?#\}/g, '')
        .replace(/<(script|style)\b[\s\S]*?<\/\1>/g, '')
        .replace(/\{\{[\s\S]*?\}\}|\{%[\s\S]*?%\}/g, ' ');
      const where = path.relative(WEB, file);
      for (const m of source.matchAll(/>([^<>]+)</g)) {
        const text = m[1]!.trim();
        // Words outside markup (an attribute list split by a template tag is not text).
        if (/\b[A-Za-z]{3,}\b/.test(text) && !/^\/api\//.test(text) && !/="/.test(text)) found.push(`${where}: ${text}`);
      }
      for (const m of source.matchAll(/\s(aria-label|placeholder|title|alt)="([^"]*)"/g))
        if (/[A-Za-z]{3,}/.test(m[2]!)) found.push(`${where}: ${m[1]}="${m[2]}"`);
    }
    assert.deepEqual(found, []);
  });

  test('plural forms follow each language: French counts 0 and 1 as singular, English only 1', () => {
    const count = (locale: string, n: number) => translator(locale)('catalog.search.count', { count: n, n });
    assert.equal(count('en', 0), '0 datasets found');
    assert.equal(count('en', 1), '1 dataset found');
    assert.equal(count('fr', 0), '0 jeu de données trouvé');
    assert.equal(count('fr', 1), '1 jeu de données trouvé');
    assert.equal(count('fr', 2), '2 jeux de données trouvés');
    // CLDR's "many" of French (a million) takes the plural text too, with the locale's digit grouping.
    assert.equal(count('fr', 1_000_000), '1\u202f000\u202f000 jeux de données trouvés');
    assert.equal(count('de', 1234), '1.234 Datensätze gefunden');
    assert.equal(count('es', 1), '1 conjunto de datos encontrado');
    assert.equal(count('en', 1234), '1,234 datasets found');
  });
});

/** The text a visitor reads: text nodes and the labels of controls, each trimmed, entities decoded. */
function readableTexts(html: string): string[] {
  const decode = (s: string) =>
    s
      .replace(/&quot;/g, '"')
      .replace(/&#39;/g, "'")
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&amp;/g, '&')
      .replace(/\s+/g, ' ')
      .trim();
  const body = html.replace(/<(script|style)\b[\s\S]*?<\/\1>/g, '');
  const texts = [...body.matchAll(/>([^<>]+)</g)].map((m) => decode(m[1]!));
  const labels = [...body.matchAll(/\s(?:aria-label|placeholder|title|alt)="([^"]*)"/g)].map((m) => decode(m[1]!));
  return [...texts, ...labels].filter(Boolean);
}

/** English catalogue messages whose French differs, as patterns of a whole text (placeholders match anything). */
function englishOnlyPatterns(): { key: string; pattern: RegExp }[] {
  const en = catalogueOf('en');
  const fr = catalogueOf('fr');
  const literal = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return Object.entries(en)
    .filter(([key, text]) => fr[key] !== text && /[A-Za-z]{3,}/.test(text.replace(/\{\w+\}/g, '')))
    .map(([key, text]) => ({
      key,
      pattern: new RegExp(
        `^${text
          .split(/\{\w+\}/)
          .map(literal)
          .join('.+?')}$`,
      ),
    }));
}

/** Data, not interface: the title a default view was given when it was made (in the site's language). */
const DATA_TEXTS = new Set(['Table']);

function untranslated(html: string): string[] {
  const patterns = englishOnlyPatterns();
  const hits = new Set<string>();
  for (const text of readableTexts(html))
    for (const { key, pattern } of patterns) if (pattern.test(text) && !DATA_TEXTS.has(text)) hits.add(`${key}: ${text}`);
  return [...hits];
}

describe('pages in several languages', () => {
  let t: TestApp;
  let data: SeededCatalog;
  let admin: WebClient;

  before(async () => {
    t = await startApp({
      config: {
        'svc.auth.create_user_via_web': true,
        'svc.jobs.poll_interval': 50,
        'svc.scheming.dataset_schemas': [path.join(import.meta.dirname, 'fixtures', 'i18n-fluent-report.yaml')],
        'svc.scheming.presets': ['ckanext.scheming:presets.json', 'ckanext.fluent:presets.json'],
        'svc.scheming.dataset_fallback': true,
      },
    });
    data = await seedCatalog(t);
    await t.user('sam_admin', { sysadmin: true });
    admin = new WebClient(t.app);
    await admin.login('sam_admin');
  });
  after(async () => {
    await t?.close();
  });

  test('every page kind in French shows no English sentence of the catalogue (and the check finds them in English)', async () => {
    const { dataset, resource, org, group, reader } = data;
    const anonymousPages = [
      '/',
      '/about',
      '/dataset',
      '/dataset?q=rainfall&tags=weather',
      '/dataset?q=nothing-matches-this',
      `/dataset/${dataset.name}`,
      `/dataset/groups/${dataset.name}`,
      `/dataset/activity/${dataset.name}`,
      `/dataset/${dataset.name}/resource/${resource.id}`,
      '/organization',
      `/organization/${org.name}`,
      `/organization/about/${org.name}`,
      `/organization/activity/${org.name}`,
      '/group',
      `/group/${group.name}`,
      `/group/about/${group.name}`,
      '/user/login',
      '/user/register',
      '/user/reset',
      `/user/${reader.name}`,
      '/no-such-page',
    ];
    const adminPages = [
      '/dashboard',
      '/dashboard/datasets',
      '/dashboard/followed',
      `/dataset/followers/${dataset.name}`,
      '/dataset/new',
      `/dataset/edit/${dataset.name}`,
      `/dataset/delete/${dataset.name}`,
      `/dataset/${dataset.name}/resource/new`,
      `/dataset/${dataset.name}/resource/${resource.id}/edit`,
      '/organization/new',
      `/organization/edit/${org.name}`,
      `/organization/members/${org.name}`,
      `/organization/member_new/${org.name}`,
      `/group/edit/${group.name}`,
      '/ckan-admin',
      '/ckan-admin/trash',
      '/ckan-admin/users',
      '/user/edit/sam_admin',
      '/user/sam_admin/api-tokens',
      '/report/new',
    ];
    const visitor = new WebClient(t.app);
    const failures: string[] = [];
    for (const [client, pages] of [
      [visitor, anonymousPages],
      [admin, adminPages],
    ] as const) {
      for (const page of pages) {
        const res = await client.get(`/fr${page}`);
        assert.ok(res.statusCode === 200 || (page === '/no-such-page' && res.statusCode === 404), `/fr${page}: ${res.statusCode}`);
        assert.match(res.body, /<html lang="fr">/, `/fr${page}`);
        for (const hit of untranslated(res.body)) failures.push(`/fr${page}: ${hit}`);
      }
    }
    assert.deepEqual(failures, []);
    // The same check on the English pages finds the English sentences: it can fail.
    const english = await visitor.get(`/en/dataset/${dataset.name}`);
    assert.equal(english.statusCode, 303);
    assert.ok(untranslated((await visitor.get(`/dataset/${dataset.name}`)).body).length > 10);
  });

  test('a locale prefix chooses the language; links, forms and redirects keep it; the API and assets do not take it', async () => {
    const web = new WebClient(t.app);
    const res = await web.get('/fr/dataset');
    assert.equal(res.statusCode, 200);
    assert.match(res.body, /<html lang="fr">/);
    assert.match(res.body, />Jeux de données</);
    assert.match(res.body, /href="\/fr\/dataset\/rainfall-stations-2024"/);
    assert.match(res.body, /href="\/fr\/organization"/);
    assert.match(res.body, /<form[^>]+action="\/fr\/dataset"/);
    assert.match(res.body, /href="\/api\/3\/docs"/, 'API links stay as they are');
    assert.doesNotMatch(res.body, /(href|src)="\/fr\/static\//, 'assets are not prefixed');
    assert.doesNotMatch(res.body, /href="\/(?!fr\/|fr"|en|de|es|api\/|static\/|custom\.css)[^"]*"/, 'no local link without the prefix');
    assert.equal(web.cookies.get('svc_locale'), 'fr', 'the choice is remembered');

    const german = await web.get(`/de/organization/${data.org.name}`);
    assert.match(german.body, /<html lang="de">/);
    assert.match(german.body, /Über diese Organisation|Datensätze/);

    // A page that needs a login sends a visitor to the login page in their language.
    const login = await new WebClient(t.app).get('/es/dashboard');
    assert.equal(login.statusCode, 303);
    assert.equal(login.headers.location, '/es/user/login?came_from=%2Fdashboard');
    // Signing in from the French login page lands on a French page.
    const fr = new WebClient(t.app);
    const signedIn = await fr.post('/fr/user/login', { login: data.reader.name, password: 'correct horse battery' });
    assert.equal(signedIn.statusCode, 303);
    assert.match(String(signedIn.headers.location), /^\/fr\//);

    // The API answers the same under every language and has no prefixed address.
    const api = await t.app.inject({ url: '/api/3/action/status_show', headers: { 'accept-language': 'fr' } });
    assert.equal(api.statusCode, 200);
    assert.equal(JSON.parse(api.body).success, true);
    assert.equal((await t.app.inject({ url: '/fr/api/3/action/status_show' })).statusCode, 404);
    // A language that is not offered is no prefix.
    assert.equal((await web.get('/it/dataset')).statusCode, 404);
  });

  test('without a prefix: the remembered choice, then Accept-Language, then the default; /en/ remembers English', async () => {
    const spanish = await new WebClient(t.app).get('/dataset', { 'accept-language': 'es-ES,es;q=0.9,en;q=0.5' });
    assert.match(spanish.body, /<html lang="es">/);
    assert.match(spanish.body, /Conjuntos de datos/);
    assert.match(spanish.body, /href="\/dataset\/rainfall-stations-2024"/, 'no prefix when the address had none');
    assert.match(String(spanish.headers.vary), /Accept-Language/);
    const unknown = await new WebClient(t.app).get('/dataset', { 'accept-language': 'ja, it;q=0.8' });
    assert.match(unknown.body, /<html lang="en">/);

    const web = new WebClient(t.app);
    await web.get('/de/');
    assert.match((await web.get('/dataset', { 'accept-language': 'fr' })).body, /<html lang="de">/, 'the cookie wins over the header');
    const back = await web.get('/en/dataset?q=rain', { 'accept-language': 'fr' });
    assert.equal(back.statusCode, 303);
    assert.equal(back.headers.location, '/dataset?q=rain');
    assert.equal(web.cookies.get('svc_locale'), 'en');
    assert.match((await web.get('/dataset', { 'accept-language': 'fr' })).body, /<html lang="en">/);
    // The redirect stays on this site.
    assert.equal((await web.get('/en//evil.example/x')).headers.location, '/');
  });

  test('the switcher links the same page in every offered language; hreflang alternates name them', async () => {
    const res = await new WebClient(t.app).get(`/fr/dataset/${data.dataset.name}?x=1`);
    const nav = /<nav class="language-nav" aria-label="Langue">([\s\S]*?)<\/nav>/.exec(res.body);
    assert.ok(nav, 'a language switcher labelled in the page language');
    assert.match(nav[1]!, /<a href="\/en\/dataset\/rainfall-stations-2024\?x=1" hreflang="en" lang="en">English<\/a>/);
    assert.match(nav[1]!, /<a href="\/fr\/dataset\/rainfall-stations-2024\?x=1" hreflang="fr" lang="fr" aria-current="true">Français<\/a>/);
    assert.match(nav[1]!, /hreflang="de" lang="de">Deutsch</);
    assert.match(nav[1]!, /hreflang="es" lang="es">Español</);
    assert.match(res.body, /<link rel="alternate" hreflang="en" href="http:\/\/test\.local\/dataset\/rainfall-stations-2024">/);
    assert.match(res.body, /<link rel="alternate" hreflang="de" href="http:\/\/test\.local\/de\/dataset\/rainfall-stations-2024">/);
    assert.match(res.body, /<link rel="alternate" hreflang="x-default" href="http:\/\/test\.local\/dataset\/rainfall-stations-2024">/);
  });

  test('dates and numbers are written as the language writes them', async () => {
    const month = (locale: string) => new Intl.DateTimeFormat(locale, { month: 'long', timeZone: 'UTC' }).format(new Date());
    const page = `/dataset/${data.dataset.name}`;
    // The dataset was made today: its dates carry this month's name.
    for (const locale of ['fr', 'de', 'es'])
      assert.ok((await new WebClient(t.app).get(`/${locale}${page}`)).body.includes(month(locale)), locale);
    const resource = (await new WebClient(t.app).get(`/de/dataset/${data.dataset.name}/resource/${data.resource.id}`)).body;
    assert.match(resource, /Zeilen 1–\d+ von \d+ Zeilen/);
  });

  test('multilingual (fluent) fields are shown in the page language, with a fallback', async () => {
    const org = await t.ok('organization_list', {});
    await t.ok(
      'package_create',
      {
        type: 'report',
        name: 'air-report',
        title: 'Air report',
        owner_org: org[0],
        title_translated: { en: 'Air quality report', fr: "Rapport sur la qualité de l'air", de: 'Bericht zur Luftqualität' },
        notes_translated: { en: 'Measured **hourly**.', fr: 'Mesuré **chaque heure**.' },
      },
      { token: t.sysadminToken },
    );
    const fr = (await new WebClient(t.app).get('/fr/report/air-report')).body;
    assert.match(fr, /Rapport sur la qualité de l&#39;air/);
    assert.match(fr, /Titre traduit/, 'the field label in French too');
    assert.match(fr, /Mesuré <strong>chaque heure<\/strong>/);
    assert.doesNotMatch(fr, /Air quality report/);
    const de = (await new WebClient(t.app).get('/de/report/air-report')).body;
    assert.match(de, /Bericht zur Luftqualität/);
    assert.match(de, /Measured <strong>hourly<\/strong>/, 'no German text: the English one');
    const es = (await new WebClient(t.app).get('/es/report/air-report')).body;
    assert.match(es, /Air quality report/);
  });
});

test('a fluent value in a language, else its language without region, else the fallbacks, else any', async () => {
  const { localizedValue } = await import('../src/web/i18n.ts');
  const value = { en: 'Rain', fr: 'Pluie', de: '' };
  assert.equal(localizedValue(value, 'fr'), 'Pluie');
  assert.equal(localizedValue(value, 'fr_CA'), 'Pluie');
  assert.equal(localizedValue(value, 'de'), 'Rain', 'an empty text falls back');
  assert.equal(localizedValue({ es: 'Lluvia' }, 'de'), 'Lluvia');
  assert.equal(localizedValue('plain text', 'fr'), 'plain text');
  assert.deepEqual(localizedValue({ fr: ['pluie'], en: ['rain'] }, 'fr'), ['pluie']);
});
