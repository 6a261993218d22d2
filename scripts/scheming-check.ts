// Do the schema files shipped with ckanext-scheming, ckanext-dcat and ckanext-fluent work in svc
// unchanged? For each file: start svc (in-process) with it configured, ask its scheming_*_schema_show,
// create a dataset (group, organization) with a plausible value for every field (made from the
// schema: choices, dates, subfields, languages), read it back (package_show equal to what was
// stored, every value sent returned as sent), and find it with package_search. Prints a table.
//
//   node --import tsx scripts/scheming-check.ts [--postgres URL] [--keep] [--only TEXT] [git dir or checkout ...]
//   (--only: the files whose name contains TEXT; --keep: keep the extracted files)
//
// The repositories are found as fetched mirrors (/work/.mirror/ckan+<name>/repo, git dirs without
// a work tree) or given as arguments (git dirs or checkouts); their files are read with `git show`
// into a temporary folder. Nothing is written to the repositories. Exit code 1 when a file fails.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import pg from 'pg';
import pino from 'pino';
import { loadConfig } from '../src/config/load.ts';
import { createServices, closeServices } from '../src/services.ts';
import { buildApp } from '../src/http/app.ts';
import { insertUser } from '../src/model/users.ts';
import { hashPassword } from '../src/auth/passwords.ts';
import { issueToken } from '../src/actions/api-token.ts';
import { componentName, fieldSchema, type JsonSchema } from '../src/scheming/json-schema.ts';
import { Validator } from '@seriousme/openapi-schema-validator';
import type { DatasetSchema, GroupSchema, SchemingField } from '../src/scheming/types.ts';

type Dict = Record<string, any>;

// --- where the files are ----------------------------------------------------------------------

const REPOS = {
  scheming: 'ckanext-scheming',
  dcat: 'ckanext-dcat',
  fluent: 'ckanext-fluent',
} as const;
type RepoKey = keyof typeof REPOS;

const PRESETS = {
  scheming: 'ckanext.scheming:presets.json',
  dcat: 'ckanext.dcat.schemas:presets.yaml',
  fluent: 'ckanext.fluent:presets.json',
};

interface Case {
  /** The file as named in its repository. */
  file: string;
  repo: RepoKey;
  kind: 'dataset' | 'group' | 'organization';
  presets: string[];
  /** Why a failure is expected (printed beside it). */
  note?: string;
}

const SCHEMING = [PRESETS.scheming];
const DCAT = [PRESETS.scheming, PRESETS.dcat];
const DCAT_FLUENT = [PRESETS.scheming, PRESETS.fluent, PRESETS.dcat];

const CASES: Case[] = [
  { repo: 'scheming', file: 'ckanext/scheming/ckan_dataset.yaml', kind: 'dataset', presets: SCHEMING },
  { repo: 'scheming', file: 'ckanext/scheming/camel_photos.yaml', kind: 'dataset', presets: SCHEMING },
  { repo: 'scheming', file: 'ckanext/scheming/subfields.yaml', kind: 'dataset', presets: SCHEMING },
  { repo: 'scheming', file: 'ckanext/scheming/ckan_formpages.yaml', kind: 'dataset', presets: SCHEMING },
  { repo: 'scheming', file: 'ckanext/scheming/ckan_formpages_draft.yaml', kind: 'dataset', presets: SCHEMING },
  { repo: 'scheming', file: 'ckanext/scheming/group_with_bookface.json', kind: 'group', presets: SCHEMING },
  { repo: 'scheming', file: 'ckanext/scheming/custom_group_with_status.json', kind: 'group', presets: SCHEMING },
  { repo: 'scheming', file: 'ckanext/scheming/org_with_dept_id.json', kind: 'organization', presets: SCHEMING },
  { repo: 'scheming', file: 'ckanext/scheming/custom_org_with_address.json', kind: 'organization', presets: SCHEMING },
  { repo: 'dcat', file: 'ckanext/dcat/schemas/dcat_ap_recommended.yaml', kind: 'dataset', presets: DCAT },
  { repo: 'dcat', file: 'ckanext/dcat/schemas/dcat_ap_full.yaml', kind: 'dataset', presets: DCAT },
  { repo: 'dcat', file: 'ckanext/dcat/schemas/dcat_us_recommended.yaml', kind: 'dataset', presets: DCAT },
  { repo: 'dcat', file: 'ckanext/dcat/schemas/dcat_us_full.yaml', kind: 'dataset', presets: DCAT },
  { repo: 'dcat', file: 'ckanext/dcat/schemas/dcat_ap_multilingual.yaml', kind: 'dataset', presets: DCAT_FLUENT },
  {
    repo: 'dcat',
    file: 'ckanext/dcat/schemas/dcat_ap_dataset_series.yaml',
    kind: 'dataset',
    presets: DCAT,
    note: 'it needs the presets of ckanext-dataset-series, another extension (ckanext.dataset_series.schemas:presets.yaml)',
  },
  {
    repo: 'dcat',
    file: 'ckanext/dcat/schemas/dcat_ap_in_series.yaml',
    kind: 'dataset',
    presets: DCAT,
    note: 'it needs the presets of ckanext-dataset-series, another extension (ckanext.dataset_series.schemas:presets.yaml)',
  },
  { repo: 'dcat', file: 'ckanext/dcat/schemas/health_dcat_ap.yaml', kind: 'dataset', presets: DCAT },
  { repo: 'dcat', file: 'ckanext/dcat/schemas/health_dcat_ap_multilingual.yaml', kind: 'dataset', presets: DCAT_FLUENT },
  { repo: 'dcat', file: 'ckanext/dcat/schemas/croissant.yaml', kind: 'dataset', presets: DCAT },
  { repo: 'dcat', file: 'ckanext/dcat/schemas/publisher_organization.yaml', kind: 'organization', presets: DCAT },
  { repo: 'fluent', file: 'ckanext/fluent/fluent_scheming.yaml', kind: 'dataset', presets: [PRESETS.scheming, PRESETS.fluent] },
];

function parseArgs(argv: string[]) {
  const out = { postgres: '', keep: false, only: '', dirs: [] as string[] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--postgres') out.postgres = argv[++i] ?? '';
    else if (a.startsWith('--postgres=')) out.postgres = a.slice('--postgres='.length);
    else if (a === '--keep') out.keep = true;
    else if (a === '--only') out.only = argv[++i] ?? '';
    else if (a === '--help' || a === '-h') {
      console.log('usage: node --import tsx scripts/scheming-check.ts [--postgres URL] [--keep] [--only TEXT] [repository dir ...]');
      process.exit(0);
    } else out.dirs.push(a);
  }
  return out;
}

/** The git dir of each repository: the arguments (matched by name), else the fetched mirrors. */
function findRepos(dirs: string[]): Partial<Record<RepoKey, string>> {
  const found: Partial<Record<RepoKey, string>> = {};
  for (const [key, name] of Object.entries(REPOS) as [RepoKey, string][]) {
    const given = dirs.find((d) => path.resolve(d).includes(name));
    const candidates = given ? [given] : [`/work/.mirror/ckan+${name}/repo`, `/work/.mirror/ckan+${name}`];
    for (const dir of candidates) {
      try {
        execFileSync('git', ['-C', dir, 'rev-parse', 'HEAD'], { stdio: 'pipe' });
        found[key] = dir;
        break;
      } catch {
        // not a repository
      }
    }
  }
  return found;
}

/** Writes a repository's file into the temporary folder (git show HEAD:<path>). */
function extract(gitDir: string, file: string, into: string): string | undefined {
  try {
    const text = execFileSync('git', ['-C', gitDir, 'show', `HEAD:${file}`], { stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 16 << 20 });
    const target = path.join(into, path.basename(gitDir.replace(/\/repo$/, '')), file);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, text);
    return target;
  } catch {
    return undefined;
  }
}

// --- values made from a schema ------------------------------------------------------------------

const SAMPLE = {
  date: '2024-05-17',
  dateTime: '2024-05-17T10:30:00',
  text: 'A plausible value',
  email: 'someone@example.org',
  uri: 'https://example.org/resource/1',
};

/** A plausible value for a JSON Schema (json-schema.ts reads the field; this fills it in). */
function valueFor(schema: JsonSchema, hint: string): unknown {
  if (Array.isArray(schema.enum) && schema.enum.length) return schema.enum[0];
  if (Array.isArray(schema.examples) && schema.examples.length) return schema.examples[0];
  if (schema.const !== undefined) return schema.const;
  switch (schema.type) {
    case 'integer':
      return 3;
    case 'number':
      return 2.5;
    case 'boolean':
      return true;
    case 'array': {
      const items = (schema.items ?? { type: 'string' }) as JsonSchema;
      if (items.type === 'string' && !items.enum && !items.format) return [`${hint}-one`, `${hint}-two`];
      return [valueFor(items, hint)];
    }
    case 'object': {
      const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
      if (Object.keys(properties).length) {
        return Object.fromEntries(Object.entries(properties).map(([k, s]) => [k, valueFor(s, `${hint}-${k}`)]));
      }
      const additional = schema.additionalProperties;
      // fluent fields without declared languages: one in English
      if (additional && typeof additional === 'object') return { en: valueFor(additional as JsonSchema, `${hint}-en`) };
      return { key: 'value', number: 1 };
    }
    case 'string':
      break;
    default:
      // free JSON (json_object): an object
      return { key: 'value', number: 1 };
  }
  if (schema.format === 'date') return SAMPLE.date;
  if (schema.format === 'date-time') return SAMPLE.dateTime;
  if (schema.format === 'email') return SAMPLE.email;
  if (schema.format === 'uri') return SAMPLE.uri;
  if (/(^|[-_])e?mail($|[-_])/.test(hint)) return SAMPLE.email;
  if (/(^|[-_])(url|uri|homepage|website)($|[-_])/.test(hint)) return SAMPLE.uri;
  if (typeof schema.pattern === 'string')
    return hint
      .toLowerCase()
      .replace(/[^a-z0-9_-]/g, '-')
      .slice(0, 90);
  if (/year|date/i.test(String(schema.description ?? ''))) return SAMPLE.date;
  return `${SAMPLE.text} (${hint})`;
}

interface Made {
  data: Dict;
  /** Fields whose value must come back as sent. */
  compared: string[];
}

/** Field names core svc fills in its own way (their value is not compared with what was sent). */
const SPECIAL = new Set(['name', 'owner_org', 'tag_string', 'license_id', 'id', 'type', 'groups', 'private', 'state']);

/** The schema-level form_languages of a scheming_*_schema_show answer. */
function languagesOf(shown: Dict): string[] | undefined {
  return Array.isArray(shown.form_languages) ? shown.form_languages.map(String) : undefined;
}

function fieldValues(fields: SchemingField[], languages: string[] | undefined, special: Dict, prefix: string): Made {
  const data: Dict = {};
  const compared: string[] = [];
  for (const field of fields) {
    const name = field.field_name;
    if (typeof name !== 'string') continue;
    if (name in special) {
      if (special[name] !== undefined) data[name] = special[name];
      continue;
    }
    data[name] = Array.isArray(field.repeating_subfields)
      ? [fieldValues(field.repeating_subfields, languages, {}, `${prefix}-${name}`).data]
      : valueFor(fieldSchema(field, 'input', languages), `${prefix}-${name}`);
    if (!SPECIAL.has(name)) compared.push(name);
  }
  // ckanext-fluent's fluent_core_translated_output shows X_translated's text of the site's language
  // as X: send X with that text already, so that what comes back is what was sent.
  for (const field of fields) {
    const name = field.field_name;
    const translated = data[name];
    if (!name?.endsWith('_translated') || !String(field.output_validators ?? '').includes('fluent_core_translated_output')) continue;
    const core = name.slice(0, -'_translated'.length);
    if (core in data && !(core in special) && translated && typeof translated === 'object') {
      data[core] = translated.en ?? Object.values(translated)[0];
    }
  }
  return { data, compared };
}

// --- one run ------------------------------------------------------------------------------------

interface Svc {
  call(action: string, data: Dict): Promise<{ status: number; body: Dict }>;
  /** GET of a path, as JSON. */
  get(url: string): Promise<Dict>;
  close(): Promise<void>;
}

async function startSvc(overrides: Dict, postgresUrl: string): Promise<Svc> {
  const storage = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-scheming-check-'));
  const cleanups: (() => Promise<void>)[] = [async () => fs.rmSync(storage, { recursive: true, force: true })];
  const all: Dict = { 'svc.storage_path': storage, 'svc.site_url': 'http://check.local', 'svc.plugins': [], ...overrides };
  if (postgresUrl) {
    const name = `svc_scheming_check_${randomBytes(4).toString('hex')}`;
    const admin = new pg.Client({ connectionString: postgresUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    const url = new URL(postgresUrl);
    url.pathname = `/${name}`;
    all['svc.database_url'] = url.toString();
    cleanups.push(async () => {
      const c = new pg.Client({ connectionString: postgresUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    });
  }
  const closeAll = async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
  };
  let services: Awaited<ReturnType<typeof createServices>>;
  try {
    const config = loadConfig({ env: {}, overrides: all, cwd: storage });
    services = await createServices(config, { logger: pino({ level: 'silent' }), worker: false });
  } catch (e) {
    await closeAll();
    throw e;
  }
  const app = await buildApp(services);
  await app.ready();
  const row = await insertUser(services.db, {
    name: 'scheming_check_admin',
    email: 'check@example.org',
    sysadmin: true,
    password_hash: await hashPassword('scheming check password'),
  });
  const { token } = await issueToken({ db: services.db, config: services.config } as any, row, 'scheming-check');
  return {
    async call(action, data) {
      const res = await app.inject({
        method: 'POST',
        url: `/api/3/action/${action}`,
        headers: { authorization: token, 'content-type': 'application/json' },
        payload: JSON.stringify(data),
      });
      return { status: res.statusCode, body: res.json() };
    },
    async get(url) {
      return (await app.inject({ method: 'GET', url })).json();
    },
    async close() {
      await app.close();
      await closeServices(services);
      await closeAll();
    },
  };
}

class Failure extends Error {}

async function ok(svc: Svc, action: string, data: Dict): Promise<any> {
  const r = await svc.call(action, data);
  if (!r.body.success) throw new Failure(`${action}: ${r.status} ${JSON.stringify(r.body.error).slice(0, 600)}`);
  return r.body.result;
}

/** The fields whose shown value differs from the one sent. */
function differences(sent: Dict, shown: Dict, names: string[]): string[] {
  return names
    .filter((n) => !isDeepStrictEqual(sent[n], shown[n]))
    .map((n) => `${n}: sent ${JSON.stringify(sent[n])?.slice(0, 120)}, shown ${JSON.stringify(shown[n])?.slice(0, 120)}`);
}

async function organizationFor(svc: Svc, orgSchema: GroupSchema | undefined): Promise<string> {
  const base = { name: 'check-publisher', title: 'Check publisher' };
  const made = orgSchema ? fieldValues(orgSchema.fields, languagesOf(orgSchema.raw), { ...base, image_url: undefined }, 'org') : undefined;
  const org = await ok(svc, 'organization_create', { ...base, ...(made?.data ?? {}), ...(orgSchema ? { type: orgSchema.type } : {}) });
  return org.id as string;
}

async function checkDataset(svc: Svc, schema: DatasetSchema, orgSchema: GroupSchema | undefined): Promise<string> {
  const type = schema.dataset_type;
  await ok(svc, 'scheming_dataset_schema_list', {});
  const shown = await ok(svc, 'scheming_dataset_schema_show', { type });
  if (shown.dataset_type !== type) throw new Failure(`scheming_dataset_schema_show: dataset_type ${shown.dataset_type}`);
  const orgId = await organizationFor(svc, orgSchema);
  const languages = languagesOf(shown);
  const name = `check-${type}`.toLowerCase().replace(/[^a-z0-9_-]/g, '-');
  const special = { name, owner_org: orgId, tag_string: 'alpha,beta', license_id: 'cc-by', id: undefined, type: undefined };
  const made = fieldValues(schema.dataset_fields, languages, special, 'ds');
  const resource = fieldValues(schema.resource_fields, languages, { url: 'https://example.org/data.csv', format: 'CSV' }, 'res');
  const data: Dict = { name, owner_org: orgId, ...made.data, type, resources: [resource.data] };
  if (!('title' in data)) data.title = `Check ${type}`;
  const created = await ok(svc, 'package_create', data);
  const read = await ok(svc, 'package_show', { id: created.id });
  const problems: string[] = [];
  if (!isDeepStrictEqual(created, read)) problems.push("package_show differs from package_create's result");
  problems.push(...differences(data, read, made.compared));
  problems.push(...differences(resource.data, read.resources?.[0] ?? {}, resource.compared).map((d) => `resource ${d}`));
  if (read.type !== type) problems.push(`type: ${read.type}`);
  const found = await ok(svc, 'package_search', { q: `name:${name}`, fq: `dataset_type:${type}`, include_private: true });
  if (found.count !== 1) problems.push(`package_search q=name:${name} fq=dataset_type:${type} found ${found.count}`);
  else if (!isDeepStrictEqual(found.results[0], read)) problems.push('package_search result differs from package_show');
  if (problems.length) throw new Failure(problems.join('; '));
  return `${made.compared.length} custom fields, ${resource.compared.length} resource fields`;
}

async function checkGroup(svc: Svc, kind: 'group' | 'organization', schema: GroupSchema): Promise<string> {
  const list = kind === 'group' ? 'scheming_group_schema_list' : 'scheming_organization_schema_list';
  const show = kind === 'group' ? 'scheming_group_schema_show' : 'scheming_organization_schema_show';
  await ok(svc, list, {});
  const shown = await ok(svc, show, { type: schema.type });
  const name = `check-${kind}`;
  const made = fieldValues(schema.fields, languagesOf(shown), { name, image_url: undefined }, kind);
  const data = { name, title: `Check ${kind}`, ...made.data, type: schema.type };
  const created = await ok(svc, `${kind}_create`, data);
  const read = await ok(svc, `${kind}_show`, { id: created.id });
  const problems = differences(data, read, made.compared);
  if (read.type !== schema.type) problems.push(`type: ${read.type}`);
  if (problems.length) throw new Failure(problems.join('; '));
  return `${made.compared.length} custom fields`;
}

/** The OpenAPI document is valid and has the components of each type. */
async function checkOpenApi(svc: Svc, kind: Case['kind']): Promise<string> {
  const doc = await svc.get('/api/3/openapi.json');
  const result = await new Validator().validate(doc as any);
  if (!result.valid) throw new Failure(`openapi.json is not valid: ${JSON.stringify(result.errors).slice(0, 400)}`);
  const list = {
    dataset: 'scheming_dataset_schema_list',
    group: 'scheming_group_schema_list',
    organization: 'scheming_organization_schema_list',
  };
  const prefix = { dataset: 'Dataset', group: 'Group', organization: 'Organization' }[kind];
  const types = (await ok(svc, list[kind], {})) as string[];
  let count = 0;
  for (const type of types) {
    for (const dir of ['create', 'update', 'show']) {
      const name = componentName(prefix, type, dir);
      if (!doc.components?.schemas?.[name]) throw new Failure(`openapi.json has no component ${name}`);
      count++;
    }
  }
  return `OpenAPI valid, ${count} components`;
}

interface Row {
  file: string;
  presets: string;
  result: 'ok' | 'failed';
  detail: string;
  seconds: number;
}

async function runCase(c: Case, paths: Partial<Record<RepoKey, string>>, into: string, postgres: string): Promise<Row> {
  const started = Date.now();
  const row = (result: Row['result'], detail: string): Row => ({
    file: `${REPOS[c.repo]}/${c.file.split('/').pop()}`,
    presets: c.presets.map((p) => p.split(':')[0].replace('ckanext.', '')).join(' '),
    result,
    detail: result === 'failed' && c.note ? `${detail} [${c.note}]` : detail,
    seconds: (Date.now() - started) / 1000,
  });
  const gitDir = paths[c.repo];
  if (!gitDir) return row('failed', `${REPOS[c.repo]} not found (fetch it, or give its folder)`);
  const file = extract(gitDir, c.file, into);
  if (!file) return row('failed', `no ${c.file} in ${gitDir}`);
  const option = {
    dataset: 'svc.scheming.dataset_schemas',
    group: 'svc.scheming.group_schemas',
    organization: 'svc.scheming.organization_schemas',
  };
  let svc: Svc;
  try {
    svc = await startSvc({ [option[c.kind]]: [file], 'svc.scheming.presets': c.presets }, postgres);
  } catch (e) {
    return row('failed', `start: ${(e as Error).message.split('\n')[0]}`);
  }
  try {
    let detail: string;
    if (c.kind === 'dataset') {
      const types = (await ok(svc, 'scheming_dataset_schema_list', {})) as string[];
      const parts: string[] = [];
      for (const type of types) {
        const schema = (await ok(svc, 'scheming_dataset_schema_show', { type, expanded: true })) as DatasetSchema;
        parts.push(await checkDataset(svc, { ...schema, dataset_type: type }, undefined));
      }
      detail = parts.join(', ');
    } else {
      const list = c.kind === 'group' ? 'scheming_group_schema_list' : 'scheming_organization_schema_list';
      const show = c.kind === 'group' ? 'scheming_group_schema_show' : 'scheming_organization_schema_show';
      const types = (await ok(svc, list, {})) as string[];
      const parts: string[] = [];
      for (const type of types) {
        const schema = await ok(svc, show, { type, expanded: true });
        parts.push(await checkGroup(svc, c.kind, { ...schema, type, fields: schema.fields ?? [] }));
      }
      detail = parts.join(', ');
    }
    detail += `; ${await checkOpenApi(svc, c.kind)}`;
    return row('ok', detail);
  } catch (e) {
    return row('failed', e instanceof Failure ? e.message : `${(e as Error).stack?.split('\n').slice(0, 3).join(' ')}`);
  } finally {
    await svc.close();
  }
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const repos = findRepos(args.dirs);
  const into = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-scheming-files-'));
  const rows: Row[] = [];
  console.log(
    `database: ${args.postgres ? 'PostgreSQL' : 'embedded (PGlite)'}; files from ${Object.values(repos).join(', ') || 'nowhere'}`,
  );
  for (const c of CASES.filter((x) => x.file.includes(args.only))) {
    const r = await runCase(c, repos, into, args.postgres);
    rows.push(r);
    console.log(
      `${r.result === 'ok' ? 'ok    ' : 'FAILED'} ${r.file} (${r.seconds.toFixed(1)} s)${r.result === 'ok' ? '' : `: ${r.detail}`}`,
    );
  }
  if (!args.keep) fs.rmSync(into, { recursive: true, force: true });
  else console.log(`files kept in ${into}`);
  console.log('');
  console.log('| file | presets | result | detail |');
  console.log('|---|---|---|---|');
  for (const r of rows) console.log(`| ${r.file} | ${r.presets} | ${r.result} | ${r.detail.replace(/\|/g, '\\|')} |`);
  const failed = rows.filter((r) => r.result === 'failed').length;
  console.log(`\n${rows.length - failed} of ${rows.length} files ok`);
  process.exitCode = failed ? 1 : 0;
}

await main();
