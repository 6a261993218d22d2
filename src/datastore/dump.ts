// Dumps: every row a search selects, streamed in chunks in constant memory. PostgreSQL reads
// through a cursor (or COPY for CSV/TSV) in one read-only transaction; PGlite, whose one connection
// must not be held while the client reads, pages in short transactions.
import pg from 'pg';
import { quoteIdent as qi, quoteLiteral } from '../db/sql.ts';
import { NotFoundError, ValidationError } from '../errors.ts';
import type { DumpChunk, SearchInput } from './backend.ts';
import { queryError } from './db-errors.ts';
import { pull, Stopped } from './pull.ts';
import { buildSelect, formatRows, type Plan } from './select.ts';
import type { Sessions } from './sessions.ts';
import type { Kind } from './types.ts';

const DUMP_CHUNK = 10000;

/** The rows a search selects (no limit unless given), in chunks. */
export async function* dumpRows(sessions: Sessions, input: SearchInput & { limit: number | null }): AsyncGenerator<DumpChunk> {
  const text = input.records_format === 'csv' || input.records_format === 'tsv';
  // Plan once (and check the table) in a short read transaction.
  const { t, plan } = await sessions.readSession(async (q) => {
    const t = await sessions.describe(q, input.resource_id);
    if (!t) throw new NotFoundError(`Resource "${input.resource_id}" was not found.`);
    return { t, plan: await buildSelect(q, t, { ...input, limit: 0 }, await sessions.textSearch(q, t), text, true) };
  });
  const shape = (rows: Record<string, unknown>[]): unknown[][] =>
    text ? rows.map((r) => plan.fields.map((_, i) => r[`f${i}`] ?? null)) : (formatRows(rows, plan, 'lists') as unknown[][]);
  let yielded = false;
  let remaining = input.limit ?? Infinity;
  let offset = input.offset ?? 0;
  const keyset = plan.defaultOrder && t.columns.some((c) => c.id === '_id');
  if (sessions.read.kind === 'postgres' && text) {
    yield* copyDump(sessions, plan, input);
    return;
  }
  if (sessions.read.kind === 'postgres') {
    // A server-side cursor in one read-only transaction: constant memory, one snapshot.
    const lim = input.limit === null ? '' : ` LIMIT ${Math.max(0, Math.floor(input.limit))}`;
    yield* pull<DumpChunk>((emit) =>
      sessions.readTx(async (q) => {
        try {
          await q.query(`DECLARE ds_dump NO SCROLL CURSOR FOR ${plan.sql}${lim} OFFSET ${Math.max(0, Math.floor(offset))}`, plan.params);
          for (;;) {
            const r = await q.query<Record<string, unknown>>(`FETCH ${DUMP_CHUNK} FROM ds_dump`);
            if (!r.rows.length) break;
            yielded = true;
            await emit({ fields: plan.fields, rows: shape(r.rows) });
            if (r.rows.length < DUMP_CHUNK) break;
          }
        } catch (e) {
          throw queryError(e);
        }
      }),
    );
  } else {
    // PGlite: pages in short transactions (the one connection is not held while the client reads).
    let last: number | null = null;
    while (remaining > 0) {
      const n = Math.min(DUMP_CHUNK, remaining);
      const page = (): { sql: string; p: unknown[] } => {
        const p = [...plan.params];
        if (keyset && last !== null) {
          p.push(last);
          return { sql: `${plan.sqlKeyset(`$${p.length}`)} LIMIT ${n}`, p };
        }
        return { sql: `${plan.sql} LIMIT ${n} OFFSET ${offset}`, p };
      };
      if (text) {
        // CSV/TSV pages written inside the database (one value per page, not one object per row).
        const got = await sessions.readTx(async (q) => {
          const { sql, p } = page();
          return (
            await q
              .query<{ n: number; k: string | null; text: string | null }>(
                `SELECT count(*)::int AS n, ${keyset ? 'max("__k")' : 'NULL'}::text AS k, string_agg(${csvLineExpr(plan, input.records_format)}, '') AS text
             FROM (${sql}) AS d`,
                p,
              )
              .catch((e) => {
                throw queryError(e);
              })
          ).rows[0];
        });
        if (!got.n) break;
        if (keyset) last = Number(got.k);
        offset += got.n;
        remaining -= got.n;
        yielded = true;
        yield { fields: plan.fields, rows: [], text: Buffer.from(got.text ?? '') };
        if (got.n < n) break;
        continue;
      }
      const rows = await sessions.readTx(async (q) => {
        const { sql, p } = page();
        return (
          await q.query<Record<string, unknown>>(sql, p).catch((e) => {
            throw queryError(e);
          })
        ).rows;
      });
      if (!rows.length) break;
      if (keyset) last = Number(rows[rows.length - 1].__k);
      offset += rows.length;
      remaining -= rows.length;
      yielded = true;
      yield { fields: plan.fields, rows: shape(rows) };
      if (rows.length < n) break;
    }
  }
  if (!yielded) yield { fields: plan.fields, rows: [] };
}

/**
 * CSV/TSV dumps on PostgreSQL: COPY (query) TO STDOUT streams rows as fast as the server writes
 * them, with backpressure. Its quoting is what csvCell writes (empty string quoted, NULL empty).
 * A dump abandoned half-way (client gone) leaves COPY running: that connection is not reused.
 */
function copyDump(sessions: Sessions, plan: Plan, input: SearchInput & { limit: number | null }): AsyncGenerator<DumpChunk> {
  const lim = input.limit === null ? '' : ` LIMIT ${Math.max(0, Math.floor(input.limit))}`;
  const query = copyQuery(plan, `${inlineParams(plan.sql, plan.params)}${lim} OFFSET ${Math.max(0, Math.floor(input.offset ?? 0))}`);
  // COPY takes no bound parameters: the values go in as literals, which needs standard strings.
  // Nothing is handed out before the server's first piece: a query it refuses fails before the answer starts.
  return pull<DumpChunk>((emit) =>
    sessions.readTx(
      async (q) => {
        let any = false;
        try {
          for await (const chunk of q.copyOut(`(${query})`, copyCsvOptions(input.records_format))) {
            any = true;
            await emit({ fields: plan.fields, rows: [], text: chunk });
          }
        } catch (e) {
          throw e instanceof Stopped ? e : queryError(e);
        }
        if (!any) await emit({ fields: plan.fields, rows: [] });
      },
      0,
      { standard_conforming_strings: 'on' },
    ),
  );
}

/** The plan's fields (not its sort key) from a select that has its values inlined. */
function copyQuery(plan: Plan, inlinedSql: string): string {
  return `SELECT ${plan.fields.map((_, i) => qi(`f${i}`)).join(', ')} FROM (${inlinedSql}) AS d`;
}

/**
 * One row of the plan as a CSV/TSV line, built by the database the way csvCell writes it (quoted
 * when empty, `\.` or holding the delimiter, a quote or a line break; NULL empty).
 */
function csvLineExpr(plan: Plan, format: SearchInput['records_format']): string {
  const d = csvDelimiter(format);
  const cell = (
    v: string,
  ) => `CASE WHEN ${v} IS NULL THEN '' WHEN ${v} = '' OR ${v} = E'\\\\.' OR strpos(${v}, ${d}) > 0 OR strpos(${v}, '"') > 0
    OR strpos(${v}, E'\\n') > 0 OR strpos(${v}, E'\\r') > 0 THEN '"' || replace(${v}, '"', '""') || '"' ELSE ${v} END`;
  const expr = (i: number) => (NEVER_QUOTED.has(plan.kinds[i]) ? `coalesce(${qi(`f${i}`)}::text, '')` : cell(`${qi(`f${i}`)}::text`));
  return `concat_ws(${d}, ${plan.fields.map((_, i) => expr(i)).join(', ')}) || E'\\n'`;
}

/** Numbers, booleans and timestamps never need quoting in CSV: no test per value for them. */
const NEVER_QUOTED = new Set<Kind>(['number', 'bool', 'timestamp']);

/** The delimiter of a CSV or TSV dump as an SQL literal. */
function csvDelimiter(format: SearchInput['records_format']): string {
  return format === 'tsv' ? "E'\\t'" : "','";
}

function copyCsvOptions(format: SearchInput['records_format']): string {
  return `WITH (FORMAT csv, DELIMITER ${csvDelimiter(format)})`;
}

/** The driver's conversion of a bound value to its text form. */
const { prepareValue } = (pg as unknown as { utils: { prepareValue: (v: unknown) => string | Buffer | null } }).utils;

/**
 * The statement with its $n parameters written as literals, for COPY (which takes no parameters).
 * Each value becomes the text the driver would have sent, as an untyped literal, so it is read
 * exactly as the bound parameter was. Only SQL built here comes in: it holds "identifiers" and
 * 'literals' (doubled quotes inside), and $n outside them are parameters.
 */
function inlineParams(sql: string, params: unknown[]): string {
  let out = '';
  let i = 0;
  while (i < sql.length) {
    const ch = sql[i];
    if (ch === '"' || ch === "'") {
      let j = i + 1;
      for (;;) {
        j = sql.indexOf(ch, j);
        if (j < 0) throw new Error('unterminated quote in generated SQL');
        if (sql[j + 1] === ch) j += 2;
        else break;
      }
      out += sql.slice(i, j + 1);
      i = j + 1;
      continue;
    }
    const m = ch === '$' ? /^\$(\d+)/.exec(sql.slice(i, i + 12)) : null;
    if (m) {
      const v = prepareValue(params[Number(m[1]) - 1]);
      const text = v === null || v === undefined ? null : typeof v === 'string' ? v : v.toString('utf8');
      // What the server says of a NUL in a bound value (a literal cannot hold one either).
      if (text?.includes('\u0000')) throw new ValidationError({ query: ['invalid byte sequence for encoding "UTF8": 0x00'] });
      out += text === null ? 'NULL' : quoteLiteral(text);
      i += m[0].length;
      continue;
    }
    out += ch;
    i++;
  }
  return out;
}
