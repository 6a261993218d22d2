// npm run bench -- search: package_search on PostgreSQL at 100,000 datasets (SVC_BENCH_DATASETS).
//
//   1. The real app runs as a child process on a throw-away PostgreSQL database.
//   2. create   SVC_BENCH_CREATE (default 2,000) datasets through HTTP package_create (4 at a time),
//               made from the real catalog ../shared/data/catalogs/depositar-datasets.jsonl.gz: new
//               names, an English sentence added to the notes, shuffled tags, organizations, formats.
//               -> datasets/s through package_create (each indexed in its own transaction).
//   3. clone    the catalog grows to SVC_BENCH_DATASETS by SQL copies of those datasets (new ids and
//               names, other organizations, tags, formats, dates; 5 % private, 1 % drafts).
//   4. rebuild  `svc search-index rebuild` (the real command, while the server runs) -> datasets/s.
//   5. queries  a fixed mix, each run SVC_BENCH_RUNS times (default 30, after 3 warm-ups) one after
//               the other over HTTP (keep-alive, anonymous): p50/p95. Next to it the same SQL
//               statements svc ran for that call (recorded once), replayed directly with pg on one
//               connection, one after the other: p50/p95. HTTP times are cold (the index generation
//               moves before each call: nothing from the result cache) and cached (the same call again).
//
// Goals: p50 <= 20 ms for every query at 100k, and HTTP p50 <= 2x the direct SQL p50.
// Environment: SVC_BENCH_DATASETS, SVC_BENCH_CREATE, SVC_BENCH_RUNS, SVC_BENCH_DATABASE_URL
// (default postgresql://postgres@127.0.0.1:5432/postgres), SVC_BENCH_CATALOG, SVC_BENCH_KEEP=1
// (keep the database and print its URL), SVC_BENCH_REUSE=<database> (a database kept by an
// earlier run: steps 2 and 3 are skipped, the server migrates it, step 4 runs only with
// SVC_BENCH_REBUILD=1 or when datasets lack an index row; the database is kept),
// SVC_BENCH_QUERIES=<regexp> (only the queries of the mix whose label matches), SVC_BENCH_SHOW=1 (print
// each statement with its direct p50), SVC_BENCH_DUMP=<file> (write each query's statements and their
// parameters to that JSON file, to replay them by hand), SVC_BENCH_APART_MS=<ms> (also time SVC_BENCH_APART_RUNS, default
// 6, cold calls of each query with that pause before each: apart_p50, apart_max).
//
// `npm run bench -- search custom`: the same with a custom metadata schema (bench/data.ts,
// benchSchema: a multiple-choice theme, a date, a number, repeating contact subfields) written
// to the storage directory; the datasets carry values of those fields (created without the
// schema, the server then restarted with it), and the mix adds the custom-field queries.
// Results: bench/results/search-postgres-<n>-custom.json.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import zlib from 'node:zlib';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import pino from 'pino';
import { loadConfig } from '../src/config/load.ts';
import { closeServices, createServices } from '../src/services.ts';
import { callAction } from '../src/actions/registry.ts';
import { benchCustomFields, benchSchema, resultsDir } from './data.ts';
import { ADMIN_URL, keepOrDropCatalog, log, startServer, stopChild, urlWith } from './common.ts';

const benchDir = path.dirname(new URL(import.meta.url).pathname);
const CATALOG = process.env.SVC_BENCH_CATALOG ?? '/work/shared/data/catalogs/depositar-datasets.jsonl.gz';
const REUSE = process.env.SVC_BENCH_REUSE;
let TOTAL = Number(process.env.SVC_BENCH_DATASETS ?? 100_000);
const CREATE = Math.min(TOTAL, Number(process.env.SVC_BENCH_CREATE ?? 2_000));
const RUNS = Number(process.env.SVC_BENCH_RUNS ?? 30);
const APART_MS = Number(process.env.SVC_BENCH_APART_MS ?? 0);
const APART_RUNS = Number(process.env.SVC_BENCH_APART_RUNS ?? 6);

// --- a deterministic pseudo-random source (the same catalog every run) ---------------------------
let seed = 42;
const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
const pick = <T>(a: readonly T[]) => a[Math.floor(rnd() * a.length)];

const WORDS = (
  'river water quality monitoring survey census population budget traffic air pollution station rainfall temperature ' +
  'school hospital health transport road bridge forest soil land use energy electricity housing income tax election map boundary ' +
  'coast fishery agriculture crop livestock tourism museum library archive culture heritage species ecology habitat wetland flood ' +
  'drought earthquake typhoon wind solar waste recycling noise lighting parking bus rail airport port shipping trade export import ' +
  'labour employment wage price inflation index statistics report annual monthly daily hourly record register inventory catalogue'
).split(' ');
const FORMATS = ['CSV', 'JSON', 'XLSX', 'PDF', 'XML', 'GeoJSON', 'SHP', 'ZIP', 'KML', 'TXT', 'HTML', 'API', 'DOCX', 'PNG', 'ODS'];
const LICENSES = ['cc-by', 'cc-by-sa', 'cc-zero', 'odc-by', 'odc-odbl', 'notspecified', 'other-open', 'uk-ogl'];

function sentence(): string {
  const words = Array.from({ length: 6 + Math.floor(rnd() * 8) }, () => pick(WORDS));
  if (rnd() < 0.8) words.splice(Math.floor(rnd() * words.length), 0, 'data'); // the broad term
  if (rnd() < 0.05) words.push('water', 'quality', 'monitoring'); // the phrase
  if (rnd() < 0.01) words.push('glacier'); // the rare term
  return words.join(' ') + '.';
}

interface Source {
  name: string;
  title: string;
  notes: string | null;
  tags: { name: string }[];
  resources: any[];
  organization: any;
  data_type?: unknown;
}

export function readCatalog(): Source[] {
  return zlib
    .gunzipSync(fs.readFileSync(CATALOG))
    .toString('utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

// --- HTTP --------------------------------------------------------------------------------------
export const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });

export function request(
  port: number,
  method: 'GET' | 'POST',
  pathAndQuery: string,
  token?: string,
  body?: string,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method,
        path: pathAndQuery,
        agent,
        headers: {
          ...(token ? { authorization: token } : {}),
          ...(body ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.on('error', reject);
    if (body) req.write(body);
    req.end();
  });
}

async function api(port: number, token: string, action: string, data: unknown): Promise<any> {
  const r = await request(port, 'POST', `/api/3/action/${action}`, token, JSON.stringify(data));
  const json = JSON.parse(r.text);
  if (!json.success) throw new Error(`${action}: ${JSON.stringify(json.error)}`);
  return json.result;
}

// --- the catalog ---------------------------------------------------------------------------------
export async function createThroughApi(port: number, token: string, sources: Source[], custom = false): Promise<number> {
  const orgs = [...new Map(sources.filter((s) => s.organization).map((s) => [s.organization.name, s.organization])).values()];
  for (const o of orgs)
    await api(port, token, 'organization_create', { name: `org-${o.name}`.slice(0, 100).toLowerCase(), title: o.title || o.name });
  for (let g = 0; g < 40; g++)
    await api(port, token, 'group_create', { name: `group-${g}`, title: `${pick(WORDS)} ${pick(WORDS)} group ${g}` });
  const orgNames = orgs.map((o) => `org-${o.name}`.slice(0, 100).toLowerCase());
  const tagPool = [...new Set(sources.flatMap((s) => s.tags.map((t) => t.name)).filter((t) => /^[\w .-]{2,100}$/u.test(t)))].concat(WORDS);
  const dicts = Array.from({ length: CREATE }, (_, i) => {
    const s = sources[i % sources.length];
    return {
      name: `ds-${i}-${s.name}`
        .slice(0, 100)
        .toLowerCase()
        .replace(/[^a-z0-9_-]/g, '-'),
      title: `${s.title} ${pick(WORDS)} ${pick(WORDS)}`,
      notes: `${s.notes ?? ''}\n${sentence()}`,
      owner_org: pick(orgNames),
      license_id: pick(LICENSES),
      tags: [...new Set(Array.from({ length: 1 + Math.floor(rnd() * 5) }, () => pick(tagPool)))].map((name) => ({ name })),
      groups: rnd() < 0.3 ? [{ name: `group-${Math.floor(rnd() * 40)}` }] : [],
      // (the custom schema has a field of that name: no extra then)
      extras: custom ? [] : [{ key: 'theme', value: pick(WORDS) }],
      resources: s.resources
        .slice(0, 1 + Math.floor(rnd() * 4))
        .map((r) => ({ url: `http://example.org/${r.id}`, name: r.name || pick(WORDS), format: pick(FORMATS), description: pick(WORDS) })),
      ...(custom ? benchCustomFields(i, rnd) : {}),
    };
  });
  const started = Date.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < dicts.length) await api(port, token, 'package_create', dicts[next++]);
    }),
  );
  return CREATE / ((Date.now() - started) / 1000);
}

/** Grows the catalog to TOTAL datasets by SQL copies of the created ones (varied). */
export async function cloneInSql(client: pg.Client, n: number, custom = false): Promise<void> {
  if (n <= 0) return;
  await client.query(`CREATE TEMP TABLE tpl AS SELECT row_number() OVER (ORDER BY id) - 1 AS k, * FROM packages`);
  await client.query(`CREATE TEMP TABLE orgs AS SELECT row_number() OVER (ORDER BY id) - 1 AS k, id FROM groups WHERE is_organization`);
  await client.query(`CREATE TEMP TABLE grps AS SELECT row_number() OVER (ORDER BY id) - 1 AS k, id FROM groups WHERE NOT is_organization`);
  await client.query(`CREATE TEMP TABLE tagpool AS SELECT row_number() OVER (ORDER BY id) - 1 AS k, id FROM tags`);
  await client.query(`CREATE TEMP TABLE fmts AS SELECT row_number() OVER () - 1 AS k, f FROM unnest($1::text[]) f`, [FORMATS]);
  await client.query(`CREATE TEMP TABLE words AS SELECT row_number() OVER () - 1 AS k, w FROM unnest($1::text[]) w`, [WORDS]);
  for (const t of ['tpl', 'orgs', 'grps', 'tagpool', 'fmts', 'words']) await client.query(`CREATE INDEX ON ${t} (k)`);
  await client.query('ANALYZE tpl; ANALYZE orgs; ANALYZE grps; ANALYZE tagpool; ANALYZE fmts; ANALYZE words');
  const counts = (
    await client.query(`SELECT (SELECT count(*) FROM tpl) t, (SELECT count(*) FROM orgs) o, (SELECT count(*) FROM grps) g,
    (SELECT count(*) FROM tagpool) tg, (SELECT count(*) FROM fmts) f, (SELECT count(*) FROM words) w`)
  ).rows[0];
  const [T, O, G, TG, F, W] = [counts.t, counts.o, counts.g, counts.tg, counts.f, counts.w].map(Number);
  const BATCH = 20_000;
  // custom schema: each copy its own date and number (the themes and contacts are the template's)
  const customFields = custom
    ? `t.custom_fields || jsonb_build_object('temporal_start', to_char(date '2000-01-01' + ((m.g * 7919) % 9000)::int, 'YYYY-MM-DD'),
        'population', 100 + (m.g * 104729) % 1000000)`
    : 't.custom_fields';
  for (let from = 1; from <= n; from += BATCH) {
    const to = Math.min(n, from + BATCH - 1);
    await client.query('BEGIN');
    await client.query(`CREATE TEMP TABLE m ON COMMIT DROP AS
      SELECT g, (SELECT id FROM tpl WHERE k = g % ${T}) AS tpl_id, md5('pkg' || g)::uuid::text AS id FROM generate_series(${from}::bigint, ${to}::bigint) g`);
    await client.query(`INSERT INTO packages (id, name, title, notes, license_id, author, maintainer, state, type, owner_org, private,
        creator_user_id, metadata_created, metadata_modified, custom_fields)
      SELECT m.id, left(t.name, 80) || '-c' || m.g, t.title || ' ' || (SELECT w FROM words WHERE k = (m.g * 7) % ${W}),
        t.notes || ' ' || (SELECT w FROM words WHERE k = (m.g * 13) % ${W}) || ' ' || (SELECT w FROM words WHERE k = (m.g * 17) % ${W}),
        t.license_id, t.author, t.maintainer, CASE WHEN m.g % 100 = 0 THEN 'draft' ELSE 'active' END, t.type,
        (SELECT id FROM orgs WHERE k = (m.g * 7919) % ${O}), m.g % 20 = 0, t.creator_user_id,
        now() - ((m.g * 104729) % (5 * 365 * 86400)) * interval '1 second',
        now() - ((m.g * 7919) % (5 * 365 * 86400)) * interval '1 second', ${customFields}
      FROM m JOIN tpl t ON t.id = m.tpl_id`);
    await client.query(`INSERT INTO package_tags (package_id, tag_id)
      SELECT DISTINCT m.id, tp.id FROM m CROSS JOIN LATERAL generate_series(0, 1 + m.g % 4) j
      JOIN tagpool tp ON tp.k = (m.g * 31 + j * 1009) % ${TG}`);
    await client.query(`INSERT INTO resources (id, package_id, url, format, description, name, position, created, metadata_modified)
      SELECT md5(m.g || r.id)::uuid::text, m.id, r.url, (SELECT f FROM fmts WHERE k = (m.g + r.position * 3) % ${F}), r.description, r.name,
        r.position, r.created, r.metadata_modified
      FROM m JOIN resources r ON r.package_id = m.tpl_id`);
    await client.query(
      `INSERT INTO package_extras (package_id, key, value) SELECT m.id, e.key, e.value FROM m JOIN package_extras e ON e.package_id = m.tpl_id`,
    );
    await client.query(`INSERT INTO members (id, group_id, table_name, table_id, capacity, state)
      SELECT md5('mem' || m.g)::uuid::text, (SELECT id FROM grps WHERE k = m.g % ${G}), 'package', m.id, 'public', 'active' FROM m WHERE m.g % 3 = 0`);
    await client.query('COMMIT');
    log(`  cloned ${to.toLocaleString()} / ${n.toLocaleString()}`);
  }
  await client.query('VACUUM ANALYZE');
}

// --- the query mix -------------------------------------------------------------------------------
interface Q {
  label: string;
  params: Record<string, unknown>;
}

/** The queries of the custom schema's fields (email: the most frequent contact). */
function customMix(org: string, email: string): Q[] {
  return [
    { label: 'custom fq: theme:environment', params: { q: '*:*', fq: 'theme:environment' } },
    { label: 'choice facet: theme, *:*', params: { q: '*:*', 'facet.field': JSON.stringify(['theme']) } },
    {
      label: 'choice facet with fq organization',
      params: { q: '*:*', fq: `organization:${org}`, 'facet.field': JSON.stringify(['theme', 'res_format']) },
    },
    {
      label: 'date range: temporal_start:[2020-01-01T00:00:00Z TO NOW]',
      params: { q: '*:*', fq: 'temporal_start:[2020-01-01T00:00:00Z TO NOW]' },
    },
    { label: 'number range: population:[1000 TO 5000]', params: { q: '*:*', fq: 'population:[1000 TO 5000]' } },
    { label: 'subfield list: contact_email', params: { q: '*:*', fq: `contact_email:"${email}"` } },
    { label: 'q=data AND theme:health, theme facet', params: { q: 'data AND theme:health', 'facet.field': JSON.stringify(['theme']) } },
    { label: 'sort by a date field: temporal_start desc', params: { q: '*:*', sort: 'temporal_start desc' } },
    { label: 'sort by a number field: population asc', params: { q: '*:*', sort: 'population asc' } },
  ];
}

function queryMix(org: string, tag: string): Q[] {
  return [
    { label: 'broad term: q=data', params: { q: 'data' } },
    { label: 'free text: q=rainfall station', params: { q: 'rainfall station' } },
    { label: 'rare term: q=glacier', params: { q: 'glacier' } },
    { label: 'phrase: q="water quality monitoring"', params: { q: '"water quality monitoring"' } },
    { label: `fq organization + tags + res_format`, params: { q: '*:*', fq: `organization:${org} AND tags:"${tag}" AND res_format:CSV` } },
    { label: 'range: metadata_modified:[NOW-1YEAR TO NOW]', params: { q: 'metadata_modified:[NOW-1YEAR TO NOW]' } },
    {
      label: '4 facets: organization, tags, res_format, license_id',
      params: { q: '*:*', 'facet.field': JSON.stringify(['organization', 'tags', 'res_format', 'license_id']) },
    },
    {
      label: 'q=data with the 4 facets',
      params: { q: 'data', 'facet.field': JSON.stringify(['organization', 'tags', 'res_format', 'license_id']) },
    },
    { label: 'sort metadata_modified desc', params: { q: '*:*', sort: 'metadata_modified desc' } },
    { label: 'sort name asc', params: { q: '*:*', sort: 'name asc' } },
    { label: 'deep paging: start=5000', params: { q: '*:*', start: 5000 } },
    { label: 'deep paging: q=data start=5000', params: { q: 'data', start: 5000 } },
    { label: 'wildcard + range: tags:wat* AND num_resources:[2 TO *]', params: { q: 'tags:wat* AND num_resources:[2 TO *]' } },
    { label: 'one part of the text: q=title:water', params: { q: 'title:water' } },
  ];
}

export const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

/** The statements svc runs for one package_search call (recorded in-process on the same database). */
async function recordStatements(
  dbUrl: string,
  params: Record<string, unknown>,
  services: any,
): Promise<{ text: string; values: unknown[] }[]> {
  const seen: { text: string; values: unknown[] }[] = [];
  const db = services.db;
  const original = db.query.bind(db);
  const originalTransaction = db.transaction.bind(db);
  const record = (text: any, values?: unknown[]) => seen.push({ text: typeof text === 'string' ? text : text.text, values: values ?? [] });
  db.query = (text: any, values?: unknown[]) => {
    record(text, values);
    return original(text, values);
  };
  // statements in transactions too (package_search runs each in one bounded by svc.search.timeout)
  db.transaction = (fn: (tx: any) => Promise<unknown>, opts?: unknown) =>
    originalTransaction((tx: any) => {
      const query = (text: any, values?: unknown[]) => {
        // not the job worker's polls (same services, same moment)
        if (!/^\s*UPDATE jobs\b/.test(typeof text === 'string' ? text : text.text)) record(text, values);
        return tx.query(text, values);
      };
      return fn(new Proxy(tx, { get: (target, prop) => (prop === 'query' ? query : Reflect.get(target, prop)) }));
    }, opts);
  // and those bounded by svc.search.timeout on a pool of their own (PostgresDatabase.withStatementTimeout)
  const originalBounded = db.withStatementTimeout;
  if (originalBounded)
    db.withStatementTimeout = (ms: number) => {
      const view = originalBounded.call(db, ms);
      return {
        ...view,
        query: (text: any, values?: unknown[]) => {
          record(text, values);
          return view.query(text, values);
        },
      };
    };
  try {
    await callAction(services, 'package_search', params, { identity: { user: null, sysadmin: false, via: 'anonymous' } as any });
  } finally {
    db.query = original;
    db.transaction = originalTransaction;
    db.withStatementTimeout = originalBounded;
  }
  void dbUrl;
  return seen;
}

/** `svc search-index rebuild`, the real command, while the server runs: datasets/s into results. */
export async function rebuild(client: pg.Client, dbUrl: string, storage: string, results: Record<string, unknown>): Promise<void> {
  log('svc search-index rebuild');
  const started = Date.now();
  const r = spawnSync(process.execPath, [path.join(benchDir, '..', 'bin', 'svc.js'), 'search-index', 'rebuild'], {
    env: { ...process.env, SVC__DATABASE_URL: dbUrl, SVC__STORAGE_PATH: storage, SVC__PLUGINS: '', SVC__LOG_LEVEL: 'warn' },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (r.status !== 0) throw new Error(`rebuild failed: ${r.stdout}`);
  const rebuildSecs = (Date.now() - started) / 1000;
  const indexed = Number((await client.query('SELECT count(*) AS n FROM package_search_index')).rows[0].n);
  results.rebuild_per_s = Math.round(indexed / rebuildSecs);
  results.rebuild_seconds = rebuildSecs;
  log(
    `rebuild: ${indexed} datasets in ${rebuildSecs.toFixed(1)} s (${Math.round(indexed / rebuildSecs)} datasets/s; ${r.stdout.trim().split('\n').pop()})`,
  );
}

/** The bench's catalog database: the kept one of SVC_BENCH_REUSE, or a new one named after the bench. */
export async function benchDatabase(bench: string): Promise<{ dbName: string; dbUrl: string }> {
  const dbName = REUSE ?? `svc_bench_${bench}_${randomBytes(3).toString('hex')}`;
  if (!REUSE) {
    const admin = new pg.Client({ connectionString: ADMIN_URL });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${dbName}`);
    await admin.end();
  }
  return { dbName, dbUrl: urlWith(ADMIN_URL, dbName) };
}

/** Datasets that have no search index row yet. */
export async function unindexedCount(client: pg.Client): Promise<number> {
  const r = await client.query(
    'SELECT count(*) AS n FROM packages p WHERE NOT EXISTS (SELECT 1 FROM package_search_index s WHERE s.package_id = p.id)',
  );
  return Number(r.rows[0].n);
}

export async function run(args: string[] = []): Promise<void> {
  const custom = args.includes('custom');
  const { dbName, dbUrl } = await benchDatabase('search');
  const storage = fs.mkdtempSync(path.join('/tmp', 'svc-bench-search-'));
  const plain = { 'svc.database_url': dbUrl, 'svc.storage_path': storage, 'svc.plugins': [], 'svc.log_level': 'warn' };
  const schemaFile = path.join(storage, 'bench-schema.json');
  if (custom) fs.writeFileSync(schemaFile, JSON.stringify(benchSchema(), null, 2));
  const config = custom ? { ...plain, 'svc.scheming.dataset_schemas': [schemaFile] } : plain;
  // the custom catalog is created without the schema (its values as custom fields), then served with it
  let server = await startServer(REUSE ? config : plain);
  const client = new pg.Client({ connectionString: dbUrl });
  await client.connect();
  const results: Record<string, unknown> = { datasets: TOTAL, created: CREATE, runs: RUNS, ...(custom ? { schema: benchSchema() } : {}) };
  try {
    if (REUSE) {
      TOTAL = Number((await client.query('SELECT count(*) AS n FROM packages')).rows[0].n);
      Object.assign(results, { datasets: TOTAL, created: null, reused_database: true });
      log(`reusing ${dbName}: ${TOTAL.toLocaleString()} datasets`);
    } else {
      const sources = readCatalog();
      log(`${sources.length} source datasets; creating ${CREATE} through package_create`);
      const createRate = await createThroughApi(server.port, server.token, sources, custom);
      results.package_create_per_s = Math.round(createRate);
      log(`package_create: ${createRate.toFixed(0)} datasets/s`);
      log(`cloning to ${TOTAL.toLocaleString()} datasets in SQL`);
      await cloneInSql(client, TOTAL - CREATE, custom);
      if (custom) {
        await stopChild(server.child);
        server = await startServer(config);
      }
    }
    const unindexed = await unindexedCount(client);
    if (!REUSE || process.env.SVC_BENCH_REBUILD === '1' || unindexed > 0) await rebuild(client, dbUrl, storage, results);

    await client.query('VACUUM ANALYZE package_search_index');
    // the merged count deltas (migration 023) leave dead rows that autovacuum removes where it runs
    // (their tables' own thresholds); where it is off, as on the bench machine, every counted facet
    // read visited them (the 4 facets of *:* 163 ms against 5.6 before 023, 100,000 datasets)
    await client.query(
      'VACUUM ANALYZE package_search_value_deltas, package_search_field_deltas, package_search_value_counts, package_search_field_counts',
    );
    if (custom) await client.query('VACUUM ANALYZE package_search_field_values');

    // the most frequent organization and tag pair among public datasets with a CSV resource
    const { o: org, v: tag } = (
      await client.query(`SELECT organization AS o, v FROM package_search_index, unnest(tags) v
      WHERE res_format @> '{CSV}' AND state = 'active' AND NOT private GROUP BY 1, 2 ORDER BY count(*) DESC LIMIT 1`)
    ).rows[0];
    // the most frequent contact email (custom schema)
    const email = custom
      ? (
          await client.query(`SELECT v FROM package_search_index, jsonb_array_elements_text(extras -> 'contact_email') v
          WHERE state = 'active' AND NOT private GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1`)
        ).rows[0]?.v
      : null;
    const services = await createServices(loadConfig({ env: {}, overrides: config, cwd: storage }), {
      logger: pino({ level: 'warn' }),
      migrate: false,
    });
    const rows: Record<string, unknown>[] = [];
    const dumped: { query: string; statements: { text: string; values: unknown[] }[] }[] = [];
    try {
      const only = process.env.SVC_BENCH_QUERIES ? new RegExp(process.env.SVC_BENCH_QUERIES) : null;
      const mix = custom ? [...queryMix(org, tag), ...customMix(org, email)] : queryMix(org, tag);
      for (const q of mix.filter((x) => !only || only.test(x.label))) {
        const qs = new URLSearchParams(Object.entries(q.params).map(([k, v]) => [k, String(v)]));
        const url = `/api/3/action/package_search?${qs}`;
        // the first call of a query (a frequent word's first faceted query starts counting its facets)
        const first0 = performance.now();
        const once = await request(server.port, 'GET', url);
        const firstMs = performance.now() - first0;
        const body = JSON.parse(once.text);
        if (!body.success) throw new Error(`${q.label}: ${once.text.slice(0, 300)}`);
        // cold: the index generation moves before each call, so nothing comes from the result cache
        const timeHttp = async (cold: boolean, runs = RUNS, pauseMs = 0, warmups = 3) => {
          const times: number[] = [];
          for (let i = 0; i < warmups + runs; i++) {
            if (pauseMs) await new Promise((resolve) => setTimeout(resolve, pauseMs));
            if (cold) await client.query("SELECT nextval('package_search_generation')");
            const t0 = performance.now();
            const res = await request(server.port, 'GET', url);
            if (res.status !== 200) throw new Error(`${q.label}: HTTP ${res.status}`);
            if (i >= warmups) times.push(performance.now() - t0);
          }
          return times;
        };
        const httpTimes = await timeHttp(true);
        const warmTimes = await timeHttp(false);
        // calls far apart: each after a pause, as a portal with little traffic sees them
        const apartTimes = APART_MS ? await timeHttp(true, APART_RUNS, APART_MS, 0) : [];
        await client.query("SELECT nextval('package_search_generation')");
        const statements = await recordStatements(dbUrl, q.params, services);
        const sqlTimes: number[] = [];
        const eachTimes = statements.map(() => [] as number[]);
        for (let i = 0; i < RUNS + 3; i++) {
          const t0 = performance.now();
          for (const [k, s] of statements.entries()) {
            const t1 = performance.now();
            await client.query(s.text, s.values as any[]);
            if (i >= 3) eachTimes[k].push(performance.now() - t1);
          }
          if (i >= 3) sqlTimes.push(performance.now() - t0);
        }
        if (process.env.SVC_BENCH_DUMP) dumped.push({ query: q.label, statements });
        if (process.env.SVC_BENCH_SHOW)
          statements.forEach((s, k) => log(`  ${pct(eachTimes[k], 50).toFixed(1)} ms  ${s.text.replace(/\s+/g, ' ').slice(0, 400)}`));
        const row = {
          query: q.label,
          count: body.result.count,
          first_ms: +firstMs.toFixed(1),
          http_p50: +pct(httpTimes, 50).toFixed(1),
          http_p95: +pct(httpTimes, 95).toFixed(1),
          cached_p50: +pct(warmTimes, 50).toFixed(1),
          cached_p95: +pct(warmTimes, 95).toFixed(1),
          sql_p50: +pct(sqlTimes, 50).toFixed(1),
          sql_p95: +pct(sqlTimes, 95).toFixed(1),
          statements: statements.length,
          ...(APART_MS ? { apart_p50: +pct(apartTimes, 50).toFixed(1), apart_max: +Math.max(...apartTimes).toFixed(1) } : {}),
        };
        rows.push(row);
        log(
          `${q.label.padEnd(58)} count ${String(row.count).padStart(7)}  first ${row.first_ms} | http p50 ${row.http_p50} p95 ${row.http_p95} | cached p50 ${row.cached_p50} p95 ${row.cached_p95} ms | sql p50 ${row.sql_p50} p95 ${row.sql_p95} ms (${row.statements} statements)`,
        );
      }
    } finally {
      await closeServices(services);
    }
    if (process.env.SVC_BENCH_DUMP) fs.writeFileSync(process.env.SVC_BENCH_DUMP, JSON.stringify(dumped, null, 2) + '\n');
    results.queries = rows;
    console.table(rows);
    console.log(
      `package_create: ${results.package_create_per_s ?? 'not run (reused catalog)'} datasets/s; search-index rebuild: ${results.rebuild_per_s ?? 'not run'} datasets/s (${TOTAL} datasets)`,
    );
    fs.mkdirSync(resultsDir, { recursive: true });
    fs.writeFileSync(
      path.join(resultsDir, `search-postgres-${TOTAL}${custom ? '-custom' : ''}.json`),
      JSON.stringify(results, null, 2) + '\n',
    );
  } finally {
    await client.end();
    await stopChild(server.child);
    agent.destroy();
    await keepOrDropCatalog(dbName, dbUrl, storage, Boolean(REUSE));
  }
}
