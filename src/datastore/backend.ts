// The data store backend interface (the storage backend can be replaced):
// the operations the actions, the dump route and datastore_search_sql use. The PostgreSQL
// implementation (postgres.ts) runs on PGlite and pg; another backend can replace it by putting
// an object of this shape in services.plugins.datastore. Keep this interface stable.
import type { JsonArrayText } from '../json/array-text.ts';

/** A column as the API reports it: `{id, type, info?}`; `schema` only in datastore_info. */
export interface DatastoreField {
  id: string;
  /** PostgreSQL short type name (int4, text, numeric, timestamp, _text, ...); `json` for json columns; `int` for `_id`. */
  type: string;
  info?: Record<string, unknown>;
  schema?: { native_type: string; notnull: boolean; index_name: string | null; is_index: boolean; uniquekey: boolean };
}

export interface FieldInput {
  id: string;
  type?: string;
  info?: Record<string, unknown>;
}

export interface CreateInput {
  resource_id: string;
  fields?: FieldInput[];
  records?: Record<string, unknown>[];
  /** undefined: leave as is; [] removes. */
  primary_key?: string[];
  indexes?: string[];
  aliases?: string[];
  triggers?: { function: string }[];
  delete_fields?: boolean;
  calculate_record_count?: boolean;
}

export interface CreateResult {
  /** The fields sent, with guessed types filled in. */
  fields: FieldInput[];
  /** Whether the table was created by this call (false: it existed). */
  created: boolean;
}

/**
 * Records not parsed yet (a large request, src/json/array-text.ts): a JSON array as UTF-8 bytes
 * (checked to be UTF-8, not yet to be JSON). The backend reads it while it writes.
 */
export interface RecordSource {
  readonly bytes: Buffer;
}

/** The records of a write: a list, or a source read while they are written. */
export type RecordInput = Record<string, unknown>[] | RecordSource;

export interface UpsertInput {
  resource_id: string;
  records: RecordInput;
  method: 'upsert' | 'insert' | 'update';
  dry_run?: boolean;
  calculate_record_count?: boolean;
}

export interface DeleteInput {
  resource_id: string;
  /** undefined: drop the table and its aliases; an object (possibly empty): delete matching rows. */
  filters?: Record<string, unknown>;
  calculate_record_count?: boolean;
}

export interface SearchInput {
  /** A table, an alias, or `_table_metadata`. */
  resource_id: string;
  filters?: Record<string, unknown>;
  /** string: full text over the row; object: per-field full text. */
  q?: string | Record<string, string>;
  full_text?: string;
  plain?: boolean;
  language?: string;
  distinct?: boolean;
  limit: number;
  offset?: number;
  fields?: string[];
  /** Clauses `col [asc|desc] [nulls first|last]` (col may be double-quoted). */
  sort?: string[];
  include_total?: boolean;
  total_estimation_threshold?: number | null;
  records_format?: 'objects' | 'lists' | 'csv' | 'tsv';
  /**
   * records_format objects only: the records as the JSON text PostgreSQL makes of the page (no row
   * objects in JavaScript), for an answer that writes them as they are.
   */
  records_as_json?: boolean;
  /** `_table_metadata` only: list just the tables of these resources and their aliases (undefined: all). */
  only_resources?: string[];
}

export interface SearchResult {
  fields: DatastoreField[];
  records: unknown[] | string | JsonArrayText;
  total?: number;
  total_was_estimated?: boolean;
}

export interface ResourceInfo {
  meta: { id: string; count: number; table_type: string; size: number; db_size: number; idx_size: number; aliases: string[] };
  fields: DatastoreField[];
}

/** Result of a read-only query (datastore_search_sql). */
export interface ReadQueryResult {
  fields: { id: string; type: string }[];
  /** Values converted as datastore_search converts them (numbers, ISO timestamps, JSON). */
  records: Record<string, unknown>[];
  /** true when more rows than rowLimit existed (only rowLimit rows are returned). */
  truncated: boolean;
}

export interface ReadQueryOptions {
  params?: unknown[];
  /** At most this many rows are returned (fetched through a cursor, rowLimit + 1 to detect truncation). */
  rowLimit: number;
  /** Statement timeout in ms (PostgreSQL; PGlite has none). */
  timeoutMs?: number;
  /** The statement bounds its own rows (a LIMIT): run without a cursor, so PostgreSQL may plan it in parallel. */
  bounded?: boolean;
  /** Planner settings for this statement only (SET LOCAL name = value in its read transaction). */
  settings?: Record<string, string>;
}

export interface DumpChunk {
  fields: DatastoreField[];
  /** Rows as value lists in field order, converted as for records_format=lists. */
  rows: unknown[][];
  /** Rows already written in the requested text format (csv/tsv), instead of rows. */
  text?: Buffer;
}

export interface FunctionInput {
  name: string;
  definition: string;
  or_replace?: boolean;
  rettype: string;
  arguments?: { argname: string; argtype: string }[];
}

export interface DatastoreBackend {
  readonly kind: 'pglite' | 'postgres';
  /** Creates the metadata view and internal tables (idempotent). */
  init(): Promise<void>;
  close(): Promise<void>;

  create(input: CreateInput): Promise<CreateResult>;
  upsert(input: UpsertInput): Promise<void>;
  /** Returns the number of rows deleted (or -1 when the table was dropped). */
  delete(input: DeleteInput): Promise<number>;
  search(input: SearchInput): Promise<SearchResult>;
  /** Runs one read-only statement as the read-only role (datastore_search_sql). */
  search_sql(sql: string, opts: ReadQueryOptions): Promise<ReadQueryResult>;
  /** Same as search_sql: a read-only query as the reader role with a row limit. */
  readQuery(sql: string, opts: ReadQueryOptions): Promise<ReadQueryResult>;

  /** Changes whenever a write to the table commits (null: no marker, e.g. no such table); for caches of its contents. */
  writeMarker(id: string): Promise<string | null>;

  /** Whether a table or alias of that name exists (`_table_metadata` counts). */
  resource_exists(id: string): Promise<boolean>;
  /** The fields of a table or alias (no `_id`), with their info. */
  resource_fields(id: string): Promise<DatastoreField[]>;
  resource_info(id: string): Promise<ResourceInfo>;
  /** Resolves an alias (or a table name) to the resource id; exists=false when neither. */
  resource_id_from_alias(alias: string): Promise<{ exists: boolean; resource_id: string | null }>;
  /** All data store table names (= resource ids), without aliases. */
  get_all_ids(): Promise<string[]>;
  create_function(input: FunctionInput): Promise<void>;
  drop_function(name: string, ifExists?: boolean): Promise<void>;
  /** Re-applies the table's triggers to every row; returns the row count. */
  run_triggers(id: string): Promise<number>;
  /** Streams the rows a search selects (no limit unless given), in chunks, in constant memory. */
  dump(input: SearchInput & { limit: number | null }): AsyncGenerator<DumpChunk>;
}
