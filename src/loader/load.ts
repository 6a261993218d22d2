// Pass two: the spooled rows go by COPY into a new table that replaces the resource's table in the
// same transaction (readers see the old table or the new one, never half of it). A failed load
// rolls back and leaves the old table as it was. Field info (labels, descriptions, type overrides)
// and aliases of the old table are kept.
import fs from 'node:fs';
import type { DatastoreField } from '../datastore/backend.ts';
import type { BulkSession } from '../datastore/bulk.ts';
import type { Connection } from '../db/database.ts';
import { COUNTS_TABLE } from '../datastore/postgres.ts';
import { quoteIdent as qi, quoteLiteral } from '../db/sql.ts';
import { LoadError, type PreparedColumn, type PreparedTable } from './prepare.ts';
import { isoDate, plainNumber } from './types.ts';

/** What the loader needs of the data store (PostgresBackend has it). */
export interface BulkLoadBackend {
  bulkWrite<T>(fn: (s: BulkSession) => Promise<T>): Promise<T>;
  resource_exists(id: string): Promise<boolean>;
  resource_fields(id: string): Promise<DatastoreField[]>;
  resource_info(id: string): Promise<{ meta: { aliases: string[] } }>;
  /**
   * In the load's transaction, after the swap: the table's full-text column, and once the load
   * commits its indexes (the `_id` key, full-text); until then searches compute vectors on the fly.
   */
  indexLoadedTable(s: BulkSession, table: string): Promise<void>;
}

export interface LoadOptions {
  onProgress?: (p: { rows: number; bytes: number }) => void;
  signal?: AbortSignal;
  /** COPY streams at once where the file allows (PostgreSQL, plain CSV); 1 when not given. */
  streams?: number;
}

/** Spool lines as COPY pieces (whole lines), converted where a column needs it. */
async function* copyPieces(t: PreparedTable, opts: LoadOptions): AsyncGenerator<Buffer> {
  const direct = t.columns.length === t.width && t.columns.every((c, i) => c.conversion.kind === 'none' && c.cell === i);
  const stream = fs.createReadStream(t.spoolPath, { highWaterMark: 1 << 20 });
  let carry: Buffer | null = null;
  let rows = 0;
  let bytes = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    if (opts.signal?.aborted) throw opts.signal.reason;
    const buf: Buffer = carry ? Buffer.concat([carry, chunk]) : chunk;
    const end = buf.lastIndexOf(10);
    if (end < 0) {
      carry = buf;
      continue;
    }
    carry = end + 1 < buf.length ? buf.subarray(end + 1) : null;
    const whole = buf.subarray(0, end + 1);
    bytes += whole.length;
    if (direct) {
      for (let i = 0; i < whole.length; i++) if (whole[i] === 10) rows++;
      yield whole;
    } else {
      const lines = whole.toString('utf8').split('\n');
      lines.pop();
      const out: string[] = new Array(lines.length);
      for (let i = 0; i < lines.length; i++) {
        rows++;
        out[i] = convertLine(lines[i], t.columns, rows);
      }
      yield Buffer.from(out.join('\n') + '\n');
    }
    opts.onProgress?.({ rows, bytes });
  }
  if (carry?.length) throw new Error('the spooled rows end without a line end');
}

function convertLine(line: string, columns: PreparedColumn[], row: number): string {
  const cells = line.split('\t');
  let out = '';
  for (let i = 0; i < columns.length; i++) {
    const c = columns[i];
    const v = cells[c.cell];
    if (i) out += '\t';
    if (v === '\\N' || c.conversion.kind === 'none') {
      out += v;
      continue;
    }
    const converted =
      c.conversion.kind === 'number' ? plainNumber(v, c.conversion.format) : isoDate(v, c.conversion.order, c.conversion.withTime);
    if (!converted) throw new LoadError(`data row ${row}: "${v.slice(0, 60)}" in column "${c.id}" is not a valid ${c.type}`);
    out += converted;
  }
  return out;
}

type DbError = Error & { code?: string; where?: string };

/**
 * A COPY error as a message with the row: `COPY t, line 57, column x: "abc"` -> data row 57 (plus
 * rowsBefore: the rows of earlier COPY statements of the load).
 */
export function copyFailure(e: DbError, rowsBefore = 0): LoadError {
  const at = /line (\d+)/.exec(e.where ?? '')?.[1];
  const line = at ? Number(at) + rowsBefore : null;
  const column = /column ([^:]+):/.exec(e.where ?? '')?.[1];
  return new LoadError(`${line ? `data row ${line}` : 'the data'}${column ? `, column ${column}` : ''}: ${e.message}`);
}

/** A database error (it has a SQLSTATE code), not one of the loader's own. */
export const isDbError = (e: unknown): e is DbError => e instanceof Error && !(e instanceof LoadError) && !!(e as DbError).code;

/** Row numbers the load's session takes from the sequence at a time (one sequence update per block, not per row). */
const ID_CACHE = 100000;

const serialSequence = async (s: Connection, table: string) =>
  qi((await s.query<{ name: string }>(`SELECT (parse_ident(pg_get_serial_sequence($1, '_id')))[2] AS name`, [qi(table)])).rows[0].name);

/** The new table of a load: the row number, then the columns in their types. */
async function createLoadTable(s: Connection, table: string, columns: PreparedColumn[]): Promise<void> {
  const cols = ['"_id" serial NOT NULL', ...columns.map((c) => `${qi(c.id)} ${c.type}`)];
  try {
    await s.exec(`CREATE TABLE ${qi(table)} (${cols.join(', ')})`);
  } catch (e) {
    throw new LoadError(`the table could not be created: ${(e as Error).message}`);
  }
  await s.exec(`ALTER SEQUENCE ${await serialSequence(s, table)} CACHE ${ID_CACHE}`);
}

/** After the rows: the sequence continues from the last row, one number at a time again. */
async function settleSequence(s: BulkSession, table: string, rows: number): Promise<void> {
  const seq = await serialSequence(s, table);
  await s.query('SELECT setval($1::regclass, $2, $3)', [seq, Math.max(rows, 1), rows > 0]);
  await s.exec(`ALTER SEQUENCE ${seq} CACHE 1`);
}

/** A privilege on the staged table, held back until the swap (grantee null: PUBLIC). */
interface Grant {
  grantee: string | null;
  privilege: string;
}

/**
 * The new table of a load until it takes the resource's place: made in the load's transaction, or
 * (PostgreSQL, more than one COPY stream) made and committed beforehand on another connection, so
 * that several connections can copy into it at once. A staged table is readable by its owner only
 * (its default grants are held back) until the swap gives them back in the load's transaction.
 */
export class LoadTable {
  /** The grants held back while the table is staged; null when it is made in the load's transaction. */
  private held: Grant[] | null = null;

  /** Whether the table is staged: several connections copy rows at once (each record then brings its `_id`). */
  readonly stage: boolean;

  constructor(
    private readonly s: BulkSession,
    readonly name: string,
    /** COPY streams wanted at once (from svc.loader.copy_streams). */
    streams: number,
  ) {
    this.stage = streams > 1 && !!s.elsewhere;
  }

  /** Makes the table with these columns, dropping a table of the same name (an earlier try's) first. */
  async create(columns: PreparedColumn[]): Promise<void> {
    if (!this.stage) {
      await this.s.exec(`DROP TABLE IF EXISTS ${qi(this.name)}`);
      await createLoadTable(this.s, this.name, columns);
      return;
    }
    this.held = await this.s.elsewhere!(async (tx) => {
      await tx.exec(`DROP TABLE IF EXISTS ${qi(this.name)}`);
      await createLoadTable(tx, this.name, columns);
      const grants = await tx.query<Grant>(
        `SELECT CASE WHEN a.grantee = 0 THEN NULL ELSE pg_get_userbyid(a.grantee) END AS grantee, a.privilege_type AS privilege
           FROM pg_class c, aclexplode(c.relacl) a WHERE c.oid = $1::regclass AND a.grantee <> c.relowner`,
        [qi(this.name)],
      );
      for (const g of grants.rows) await tx.exec(grantSql('REVOKE', g, this.name));
      return grants.rows;
    });
  }

  /**
   * One COPY of whole records into the table: on a connection of its own when staged, committed
   * without waiting for the disk (nobody can read the rows before the load's own COMMIT, whose
   * wait for the log covers theirs: the log is written in order).
   */
  copy(target: string, options: string, data: Buffer[]): Promise<number> {
    if (!this.held) return this.s.copyWith(target, options, data);
    return this.s.elsewhere!((tx) => tx.copyIn(target, data, options), { settings: { synchronous_commit: 'off' } });
  }

  /** In the load's transaction, before the swap: the grants held back are given. */
  async release(): Promise<void> {
    for (const g of this.held ?? []) await this.s.exec(grantSql('GRANT', g, this.name));
  }
}

function grantSql(verb: 'GRANT' | 'REVOKE', g: Grant, table: string): string {
  if (!/^[A-Z]+$/.test(g.privilege)) throw new Error(`unexpected privilege ${g.privilege}`);
  const who = g.grantee === null ? 'PUBLIC' : qi(g.grantee);
  return `${verb} ${g.privilege} ON ${qi(table)} ${verb === 'GRANT' ? 'TO' : 'FROM'} ${who}`;
}

/** Fills the new table of a load; returns the rows and the columns made. */
export type TableFill = (s: BulkSession, table: LoadTable) => Promise<{ rows: number; columns: PreparedColumn[] }>;

/** Loads the prepared rows into the resource's table (replacing it); returns the rows loaded. */
export function replaceTable(backend: BulkLoadBackend, resourceId: string, t: PreparedTable, opts: LoadOptions = {}): Promise<number> {
  return swapInTable(backend, resourceId, 1, async (s, table) => {
    await table.create(t.columns);
    const tmp = table.name;
    try {
      const target = `${qi(tmp)} (${t.columns.map((c) => qi(c.id)).join(', ')})`;
      return { rows: await s.copyFrom(`COPY ${target} FROM STDIN`, copyPieces(t, opts)), columns: t.columns };
    } catch (e) {
      throw isDbError(e) ? copyFailure(e) : e;
    }
  });
}

/**
 * Fills a new table and puts it in the place of the resource's table, in one transaction: field
 * info and aliases of the old table are kept, the full-text index is set up after the data.
 */
export async function swapInTable(backend: BulkLoadBackend, resourceId: string, streams: number, fill: TableFill): Promise<number> {
  const exists = await backend.resource_exists(resourceId);
  const oldFields = exists ? await backend.resource_fields(resourceId) : [];
  const aliases = exists ? (await backend.resource_info(resourceId)).meta.aliases : [];
  const infoById = new Map(oldFields.filter((f) => f.info && Object.keys(f.info).length).map((f) => [f.id, f.info!]));
  const tmp = `_load_${resourceId}`.slice(0, 63);
  const lock = (s: BulkSession) => s.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`svc_loader:${resourceId}`]);
  let staged = false;
  try {
    return await backend.bulkWrite(async (s) => {
      if (s.kind === 'postgres') await lock(s);
      const table = new LoadTable(s, tmp, streams);
      staged = table.stage;
      const { rows, columns } = await fill(s, table);
      await settleSequence(s, tmp, rows);
      await table.release();
      return swapIn(s, backend, { resourceId, tmp, rows, columns, aliases, infoById });
    });
  } catch (e) {
    // A staged table outlives the failed transaction: dropped once no other load of the resource runs.
    if (staged)
      await backend
        .bulkWrite(async (s) => {
          await lock(s);
          await s.exec(`DROP TABLE IF EXISTS ${qi(tmp)}`);
        })
        .catch(() => undefined);
    throw e;
  }
}

/** In the load's transaction: the new table takes the place (and the aliases and field info) of the old one. */
async function swapIn(
  s: BulkSession,
  backend: BulkLoadBackend,
  load: {
    resourceId: string;
    tmp: string;
    rows: number;
    columns: PreparedColumn[];
    /** The old table's alias views and field info, kept. */
    aliases: string[];
    infoById: Map<string, Record<string, unknown>>;
  },
): Promise<number> {
  const { resourceId, tmp, rows, columns, aliases, infoById } = load;
  // The swap: the old table and its alias views go, the new table takes the name.
  const old = await s.query<{ relkind: string }>(
    `SELECT c.relkind::text AS relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relname = $1`,
    [resourceId],
  );
  if (old.rows[0] && old.rows[0].relkind !== 'r')
    throw new LoadError(`"${resourceId}" is an alias of another table, not a resource's table`);
  if (old.rows[0]) {
    await s.exec(`LOCK TABLE ${qi(resourceId)} IN ACCESS EXCLUSIVE MODE`);
    for (const a of aliases) await s.exec(`DROP VIEW IF EXISTS ${qi(a)}`);
    await s.exec(`DROP TABLE ${qi(resourceId)}`);
  }
  await s.exec(`ALTER TABLE ${qi(tmp)} RENAME TO ${qi(resourceId)}`);
  for (const a of aliases) await s.exec(`CREATE VIEW ${qi(a)} AS SELECT * FROM ${qi(resourceId)}`);
  // The `_id` key, the full-text column and their indexes come after the data (nothing per row while copying).
  await backend.indexLoadedTable(s, resourceId);
  for (const c of columns) {
    // The user's entry of the column stays; a made-up name says why in a new one.
    const info = infoById.get(c.id) ?? (c.note ? { notes: c.note } : undefined);
    if (info) await s.exec(`COMMENT ON COLUMN ${qi(resourceId)}.${qi(c.id)} IS ${quoteLiteral(JSON.stringify(info))}`);
  }
  await s.query(`INSERT INTO ${qi(COUNTS_TABLE)} (id, n) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET n = EXCLUDED.n`, [
    resourceId,
    rows,
  ]);
  return rows;
}
