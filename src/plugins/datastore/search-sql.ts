// datastore_search_sql: one read-only SELECT over data store tables, checked by sql-guard.ts
// (PostgreSQL's parser + allow-lists), every table resolved to a resource the caller may read,
// run in a read-only transaction as the read-only role with a statement timeout, at most
// rows_max rows returned (records_truncated when cut).
//
// Embedded mode (PGlite): the statement timeout holds too (the database runs in a worker thread,
// src/db/pglite-worker.ts), but stopping a query restarts that thread, and other data store
// requests wait meanwhile. So a query that could run away is refused before it runs: WITH
// RECURSIVE, row/size generators with non-constant (or huge) arguments, and any plan whose
// estimated cost (EXPLAIN) exceeds svc.datastore.sqlsearch.embedded_max_cost.
import fs from 'node:fs';
import type { ActionDefinition } from '../../actions/registry.ts';
import { checkAccess } from '../../actions/registry.ts';
import type { ActionContext, Services } from '../../actions/context.ts';
import type { Connection, Database } from '../../db/database.ts';
import { declareOption, optionDeclaration, type OptionDeclaration } from '../../config/options.ts';
import { ActionError, AuthorizationError, NotFoundError, ValidationError } from '../../errors.ts';
import { guardSql, parseAllowedFunctions } from '../../datastore/sql-guard.ts';
import { ConfigError } from '../../config/load.ts';
import { ANONYMOUS_CALLER, SqlSearchGate } from './sql-search-gate.ts';
import { Type } from '@sinclair/typebox';
import { p } from '../../validation/params.ts';
import { datastoreFieldSchema } from '../../actions/result-schemas.ts';
import { kindOf, outValue, reportedType } from '../../datastore/types.ts';

// svc.datastore.sqlsearch.enabled / .timeout and svc.datastore.search.rows_max are declared by the
// data store plugin; declared here too (same defaults) only if this module is used without it.
const options: OptionDeclaration[] = [
  { name: 'svc.datastore.sqlsearch.enabled', type: 'bool', default: false, description: 'Enable datastore_search_sql' },
  {
    name: 'svc.datastore.sqlsearch.timeout',
    type: 'int',
    default: 60000,
    description: 'Longest time a datastore_search_sql query may run, in milliseconds',
    validate: (v: number) => (v > 0 ? undefined : 'must be a positive number'),
  },
  {
    name: 'svc.datastore.search.rows_max',
    type: 'int',
    default: 32000,
    description: 'Most rows datastore_search and datastore_search_sql return',
    validate: (v: number) => (v > 0 ? undefined : 'must be a positive number'),
  },
  {
    name: 'svc.datastore.sqlsearch.anonymous_timeout',
    type: 'int',
    default: 10000,
    description:
      'Longest time a datastore_search_sql query of an anonymous caller may run, in milliseconds (at most svc.datastore.sqlsearch.timeout)',
    validate: (v: number) => (v > 0 ? undefined : 'must be a positive number'),
  },
  {
    name: 'svc.datastore.sqlsearch.max_running',
    type: 'int',
    default: 2,
    description:
      'Most datastore_search_sql queries running at once (PostgreSQL: on connections of their own, so datastore_search never waits behind them; the embedded database: always 1)',
    validate: (v: number) => (v > 0 ? undefined : 'must be a positive number'),
  },
  {
    name: 'svc.datastore.sqlsearch.max_waiting',
    type: 'int',
    default: 10,
    description: 'Most datastore_search_sql queries waiting for a place; more are refused at once',
    validate: (v: number) => (v >= 0 ? undefined : 'must be 0 or more'),
  },
  {
    name: 'svc.datastore.sqlsearch.max_per_caller',
    type: 'int',
    default: 1,
    description: 'Most datastore_search_sql queries of one caller running or waiting at once (all anonymous callers count as one)',
    validate: (v: number) => (v > 0 ? undefined : 'must be a positive number'),
  },
  {
    name: 'svc.datastore.sqlsearch.allowed_functions_file',
    type: 'string',
    default: '',
    description:
      "A file naming the functions datastore_search_sql may call, one a line (# comments), instead of the built-in list (src/datastore/allowed-functions.txt); as CKAN's ckan.datastore.sqlsearch.allowed_functions_file",
  },
  {
    name: 'svc.datastore.sqlsearch.embedded_yield_after',
    type: 'int',
    default: 2000,
    description:
      'Embedded database only: a datastore_search_sql query that has run this many milliseconds is stopped when other data store requests wait for the database (it runs one query at a time), so that they wait at most this long (and the restart of the database worker)',
    validate: (v: number) => (v > 0 ? undefined : 'must be a positive number'),
  },
  {
    name: 'svc.datastore.sqlsearch.embedded_max_cost',
    type: 'float',
    default: 200000,
    description:
      'Embedded database only: datastore_search_sql refuses a query whose estimated plan cost (EXPLAIN) is higher, since stopping a running query restarts the embedded database',
    validate: (v: number) => (v > 0 ? undefined : 'must be a positive number'),
  },
];
for (const o of options) if (!optionDeclaration(o.name)) declareOption(o);

/** What SQL search needs from the data store backend. */
export interface SqlSearchBackend {
  readonly kind: 'pglite' | 'postgres';
  /** Where reads run: the read-only role's pool (svc.datastore.read_url) or the embedded database. */
  readonly readDb: Database;
  /** Role to SET LOCAL ROLE to before running (embedded: a NOLOGIN read-only role, if the backend made one). */
  readonly readRole?: string;
  /**
   * Resource ids of relation names (resource ids or aliases). A name that is a data store table or
   * alias maps to its resource id; a relation that exists but is not one (the metadata view, internal
   * tables) maps to null; a name that does not exist is absent. Default: a catalog query (below).
   */
  resolveNames?(conn: Connection, names: string[]): Promise<Map<string, string | null>>;
  /** The functions a query may call (default: the built-in list, defaultAllowedFunctions). */
  allowedFunctions?: ReadonlySet<string>;
  /** Limits how many queries run at once (default: no limit). */
  gate?: SqlSearchGate;
}

export interface SqlSearchResult {
  sql: string;
  records: Record<string, unknown>[];
  fields: { id: string; type: string }[];
  records_truncated?: true;
}

/**
 * Default resolution through the system catalog: tables in schema public are resources (named by
 * resource id), views in public are aliases of the one public table they read. Names starting with
 * `_` (the metadata view, internal tables) are not resources.
 */
async function catalogResolve(conn: Connection, names: string[]): Promise<Map<string, string | null>> {
  const r = await conn.query<{ relname: string; relkind: string; alias_of: string | null }>(
    `SELECT c.relname, c.relkind,
       (SELECT min(t.relname) FROM pg_catalog.pg_rewrite rw
          JOIN pg_catalog.pg_depend d ON d.classid = 'pg_catalog.pg_rewrite'::regclass AND d.objid = rw.oid
          JOIN pg_catalog.pg_class t ON t.oid = d.refobjid AND t.oid <> c.oid AND t.relkind IN ('r', 'p')
          JOIN pg_catalog.pg_namespace tn ON tn.oid = t.relnamespace AND tn.nspname = 'public'
         WHERE rw.ev_class = c.oid) AS alias_of
     FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = 'public' AND c.relname = ANY($1::text[])`,
    [names],
  );
  const out = new Map<string, string | null>();
  for (const row of r.rows) {
    if (row.relname.startsWith('_')) out.set(row.relname, null);
    else if (row.relkind === 'r' || row.relkind === 'p') out.set(row.relname, row.relname);
    else if ((row.relkind === 'v' || row.relkind === 'm') && row.alias_of && !row.alias_of.startsWith('_'))
      out.set(row.relname, row.alias_of);
    else out.set(row.relname, null);
  }
  return out;
}

const queryError = (msg: string) => new ValidationError({ query: [msg] });

function isTimeout(e: unknown): boolean {
  return (e as { code?: string })?.code === '57014';
}

function dbMessage(e: unknown): string {
  return (e as Error)?.message ?? String(e);
}

/** Relations a plan reads and its highest node cost (EXPLAIN (VERBOSE, FORMAT JSON)). */
function planFacts(plan: unknown): { relations: { schema?: string; name: string }[]; cost: number } {
  const relations: { schema?: string; name: string }[] = [];
  let cost = 0;
  const walk = (v: unknown) => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') {
      const o = v as Record<string, unknown>;
      if (typeof o['Relation Name'] === 'string')
        relations.push({ schema: o.Schema as string | undefined, name: o['Relation Name'] as string });
      // The largest cost of any node: a LIMIT above a plan scales the plan's cost down by the
      // rows it expects to need, which a filter that never matches makes arbitrarily wrong.
      if (typeof o['Total Cost'] === 'number') cost = Math.max(cost, o['Total Cost'] as number);
      Object.values(o).forEach(walk);
    }
  };
  walk(plan);
  return { relations, cost };
}

const typeNames = new WeakMap<Database, Map<number, string>>();

async function fieldTypes(db: Database, conn: Connection, oids: number[]): Promise<Map<number, string>> {
  let cache = typeNames.get(db);
  if (!cache) typeNames.set(db, (cache = new Map()));
  const missing = [...new Set(oids)].filter((o) => !cache!.has(o));
  if (missing.length) {
    const r = await conn.query<{ oid: number; typname: string }>(
      'SELECT oid::int4 AS oid, typname::text FROM pg_catalog.pg_type WHERE oid = ANY($1::oid[])',
      [missing],
    );
    for (const row of r.rows) cache.set(Number(row.oid), row.typname);
  }
  return cache;
}

export async function runSearchSql(ctx: ActionContext, backend: SqlSearchBackend, sql: string): Promise<SqlSearchResult> {
  const config = ctx.config;
  const rowsMax = config.int('svc.datastore.search.rows_max');
  const embedded = backend.kind === 'pglite';

  const guard = await guardSql(sql, backend.allowedFunctions);
  if (embedded) {
    if (guard.recursive)
      throw queryError(
        'WITH RECURSIVE is not available with the embedded database (stopping a running query restarts the embedded database).',
      );
    if (guard.unboundedCalls.length) {
      throw queryError(
        `With the embedded database, ${guard.unboundedCalls.join(', ')} must be called with plain arguments (constants, sizes up to 1000000; generate_series: constants only; set-returning functions: columns, constants or subqueries): stopping a running query restarts the embedded database.`,
      );
    }
  }
  // What runs is exactly the statement PostgreSQL's parser delimited, inside a row limit; the
  // wrapped text is parsed and checked again, so the text sent is the text checked.
  const wrapped = `SELECT * FROM (\n${guard.statement}\n) AS blah LIMIT ${rowsMax + 1}`;
  const rechecked = await guardSql(wrapped, backend.allowedFunctions);
  const same = (a: string[], b: string[]) => a.length === b.length && a.every((x) => b.includes(x));
  if (!same(rechecked.tables, guard.tables) || !same(rechecked.functions, guard.functions))
    throw queryError('Query is not a single statement.');

  const anonymous = !ctx.identity.user;
  const timeout = Math.min(
    config.int('svc.datastore.sqlsearch.timeout'),
    anonymous ? config.int('svc.datastore.sqlsearch.anonymous_timeout') : Number.POSITIVE_INFINITY,
  );
  // Read-only, rolled back, as the read-only role. The parser that checked the text reads strings
  // with standard_conforming_strings on: so must the server.
  const tx = {
    readOnly: true,
    rollback: true,
    role: backend.readRole,
    statementTimeoutMs: timeout,
    // The embedded database runs one query at a time: other data store requests must not wait for this one long.
    ...(embedded ? { yieldAfterMs: config.int('svc.datastore.sqlsearch.embedded_yield_after') } : {}),
    settings: { standard_conforming_strings: 'on', search_path: 'public' },
  };
  const caller = ctx.identity.user?.id ?? ANONYMOUS_CALLER;
  const run = <T>(fn: () => Promise<T>) => (backend.gate ? backend.gate.run(caller, fn) : fn());
  return run(() =>
    backend.readDb.transaction(async (conn) => {
      try {
        // Every table read must be a data store resource the caller may read.
        const resourceIds = new Set<string>();
        if (guard.tables.length) {
          const resolved = await (backend.resolveNames ?? catalogResolve)(conn, guard.tables);
          for (const name of guard.tables) {
            if (!resolved.has(name)) throw queryError(`relation "${name}" does not exist`);
            const id = resolved.get(name);
            if (!id) throw new AuthorizationError('Not authorized to access system tables');
            resourceIds.add(id);
          }
          for (const id of resourceIds) {
            try {
              await checkAccess(ctx, 'resource_show', { id });
            } catch (e) {
              if (e instanceof AuthorizationError || e instanceof NotFoundError)
                throw new AuthorizationError('Not authorized to read resource.');
              throw e;
            }
          }
        }

        // Second opinion from the planner: it must read no relation beyond those checked.
        const explain = await conn.query(`EXPLAIN (VERBOSE, FORMAT JSON) ${wrapped}`);
        const raw = (explain.rows[0] as Record<string, unknown>)['QUERY PLAN'];
        const plan = typeof raw === 'string' ? JSON.parse(raw) : raw;
        const facts = planFacts(plan);
        for (const rel of facts.relations) {
          if ((rel.schema && rel.schema !== 'public') || !resourceIds.has(rel.name))
            throw new AuthorizationError('Not authorized to access system tables');
        }
        if (embedded) {
          const max = config.get<number>('svc.datastore.sqlsearch.embedded_max_cost');
          if (facts.cost > max) {
            throw queryError(
              `Query is too expensive for the embedded database (estimated cost ${Math.round(facts.cost)}, limit ${max}); use PostgreSQL for heavier queries.`,
            );
          }
        }

        const result = await conn.query<Record<string, unknown>>(wrapped);
        const types = await fieldTypes(
          backend.readDb,
          conn,
          result.fields.map((f) => f.dataTypeID),
        );
        const typnames = result.fields.map((f) => types.get(f.dataTypeID) ?? 'text');
        const kinds = typnames.map(kindOf);
        const fields = result.fields.map((f, i) => ({ id: f.name, type: reportedType(typnames[i]) }));
        let rows = result.rows;
        const truncated = rows.length > rowsMax;
        if (truncated) rows = rows.slice(0, rowsMax);
        const records = rows.map((row) => {
          const out: Record<string, unknown> = {};
          fields.forEach((f, i) => {
            const v = row[f.id];
            out[f.id] = v instanceof Date ? v.toISOString().slice(0, 19) : outValue(v, kinds[i]);
          });
          return out;
        });
        return { sql, records, fields, ...(truncated ? { records_truncated: true as const } : {}) };
      } catch (e) {
        if (e instanceof ActionError) throw e;
        if ((e as { yielded?: boolean })?.yielded)
          throw queryError(
            `Query took too long: stopped after ${config.int('svc.datastore.sqlsearch.embedded_yield_after')} ms because other data store requests were waiting (the embedded database runs one query at a time; PostgreSQL runs longer queries beside them)`,
          );
        if (isTimeout(e)) throw queryError('Query took too long');
        throw queryError(dbMessage(e));
      }
    }, tx),
  );
}

/** The action over the data store's read connection. */
export function searchSqlAction(backend: SqlSearchBackend): ActionDefinition<{ sql: string }, SqlSearchResult> {
  return {
    name: 'datastore_search_sql',
    sideEffectFree: true,
    // Access is checked per table inside the handler (resource_show on every resource read).
    auth: () => undefined,
    description: `Execute SQL queries on the DataStore.

The datastore_search_sql action allows a user to search data in a resource or connect multiple
resources with join expressions. The underlying SQL engine is PostgreSQL. Only one SELECT
statement is accepted; every table it reads must be a data store resource the caller may read;
only read-only functions from an allow-list may be called. At most svc.datastore.search.rows_max
rows are returned (records_truncated is true when the result was cut). Available only when
svc.datastore.sqlsearch.enabled is set.`,
    params: { sql: p.string('a single SQL SELECT statement').required() },
    returns: {
      description: '{sql, records, fields: [{id, type}], records_truncated (only when true)}',
      rtype: 'dictionary',
      schema: Type.Object(
        {
          sql: Type.String(),
          records: Type.Array(Type.Record(Type.String(), Type.Unknown())),
          fields: Type.Array(datastoreFieldSchema),
          records_truncated: Type.Optional(Type.Boolean()),
        },
        { additionalProperties: true },
      ),
    },
    handler: (ctx, params) => runSearchSql(ctx, backend, params.sql),
  };
}

/** Registers datastore_search_sql when svc.datastore.sqlsearch.enabled is set (else the action does not exist). */
export function registerSearchSql(services: Services, backend: SqlSearchBackend): void {
  if (!services.config.bool('svc.datastore.sqlsearch.enabled')) return;
  const config = services.config;
  const file = config.str('svc.datastore.sqlsearch.allowed_functions_file');
  const gate = new SqlSearchGate({
    maxRunning: backend.kind === 'pglite' ? 1 : config.int('svc.datastore.sqlsearch.max_running'),
    maxWaiting: config.int('svc.datastore.sqlsearch.max_waiting'),
    perCaller: config.int('svc.datastore.sqlsearch.max_per_caller'),
  });
  services.registry.define(searchSqlAction({ ...backend, gate, ...(file ? { allowedFunctions: allowedFunctionsFile(file) } : {}) }));
}

/** An operator's allowed-functions file; a file that cannot be read or holds no name stops the start. */
function allowedFunctionsFile(file: string): ReadonlySet<string> {
  const option = 'svc.datastore.sqlsearch.allowed_functions_file';
  let names: Set<string>;
  try {
    names = parseAllowedFunctions(fs.readFileSync(file, 'utf8'), file);
  } catch (e) {
    throw new ConfigError(`${option}: ${(e as Error).message}`);
  }
  if (!names.size) throw new ConfigError(`${option}: ${file} names no function`);
  return names;
}
