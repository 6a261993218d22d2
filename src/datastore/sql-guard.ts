// datastore_search_sql safety: decides whether a user's SQL is one read-only SELECT that touches
// only data store tables and allowed functions. PostgreSQL's own parser (libpg-query, WASM) reads
// the text; nothing here tokenizes SQL. The parse tree is walked with an ALLOW-LIST: every node
// type, every field of every node and every enum value used must be known, or the query is
// refused. Anything the list does not know (INTO, FOR UPDATE, data-modifying CTEs, XML, SQL/JSON
// constructors, TABLESAMPLE, parameters, future syntax) is refused without having to be named.
//
// The guard only says which relation names the query reads (outside CTE scopes); the caller
// resolves them to data store resources and checks access (plugins/datastore/search-sql.ts).
import fs from 'node:fs';
import { parse, scan } from 'libpg-query';
import { AuthorizationError, ValidationError } from '../errors.ts';

/** How a field of a node is read. 'node': a wrapped node {Type: {...}}; 'nodes': a list of them;
 * 'scalar': a string, number or boolean; 'enum:<set>': a string from ENUMS[set];
 * a capitalised name: an unwrapped struct of that type; 'list:<Type>': a list of such structs. */
type FieldKind = 'node' | 'nodes' | 'scalar' | `enum:${string}` | string;

const loc = { location: 'scalar' } as const;

/** Every syntax node a read-only SELECT may contain, with every field it may carry. */
const NODES: Record<string, Record<string, FieldKind>> = {
  SelectStmt: {
    distinctClause: 'nodes',
    targetList: 'nodes',
    fromClause: 'nodes',
    whereClause: 'node',
    groupClause: 'nodes',
    groupDistinct: 'scalar',
    havingClause: 'node',
    windowClause: 'nodes',
    valuesLists: 'nodes',
    sortClause: 'nodes',
    limitOffset: 'node',
    limitCount: 'node',
    limitOption: 'enum:limit',
    withClause: 'WithClause',
    op: 'enum:setop',
    all: 'scalar',
    larg: 'SelectStmt',
    rarg: 'SelectStmt',
    // intoClause and lockingClause are deliberately absent (SELECT INTO, FOR UPDATE/SHARE).
  },
  WithClause: { ctes: 'nodes', recursive: 'scalar', ...loc },
  CommonTableExpr: {
    ctename: 'scalar',
    aliascolnames: 'nodes',
    ctematerialized: 'enum:ctemat',
    ctequery: 'node',
    search_clause: 'CTESearchClause',
    cycle_clause: 'CTECycleClause',
    cterecursive: 'scalar',
    ...loc,
  },
  CTESearchClause: { search_col_list: 'nodes', search_breadth_first: 'scalar', search_seq_column: 'scalar', ...loc },
  CTECycleClause: {
    cycle_col_list: 'nodes',
    cycle_mark_column: 'scalar',
    cycle_mark_value: 'node',
    cycle_mark_default: 'node',
    cycle_path_column: 'scalar',
    ...loc,
  },
  ResTarget: { name: 'scalar', indirection: 'nodes', val: 'node', ...loc },
  ColumnRef: { fields: 'nodes', ...loc },
  A_Star: {},
  A_Const: { ival: 'Integer', fval: 'Float', boolval: 'Boolean', sval: 'String', bsval: 'BitString', isnull: 'scalar', ...loc },
  String: { sval: 'scalar' },
  Integer: { ival: 'scalar' },
  Float: { fval: 'scalar' },
  Boolean: { boolval: 'scalar' },
  BitString: { bsval: 'scalar' },
  A_Expr: { kind: 'enum:aexpr', name: 'nodes', lexpr: 'node', rexpr: 'node', rexpr_list_start: 'scalar', rexpr_list_end: 'scalar', ...loc },
  BoolExpr: { boolop: 'enum:boolop', args: 'nodes', ...loc },
  FuncCall: {
    funcname: 'nodes',
    args: 'nodes',
    agg_order: 'nodes',
    agg_filter: 'node',
    over: 'WindowDef',
    agg_within_group: 'scalar',
    agg_star: 'scalar',
    agg_distinct: 'scalar',
    func_variadic: 'scalar',
    funcformat: 'enum:coerce',
    ...loc,
  },
  NamedArgExpr: { arg: 'node', name: 'scalar', argnumber: 'scalar', ...loc },
  TypeCast: { arg: 'node', typeName: 'TypeName', ...loc },
  TypeName: { names: 'nodes', typmods: 'nodes', typemod: 'scalar', arrayBounds: 'nodes', ...loc },
  CollateClause: { arg: 'node', collname: 'nodes', ...loc },
  RangeVar: { schemaname: 'scalar', relname: 'scalar', inh: 'scalar', relpersistence: 'scalar', alias: 'Alias', ...loc },
  Alias: { aliasname: 'scalar', colnames: 'nodes' },
  RangeSubselect: { lateral: 'scalar', subquery: 'node', alias: 'Alias' },
  RangeFunction: {
    lateral: 'scalar',
    ordinality: 'scalar',
    is_rowsfrom: 'scalar',
    functions: 'nodes',
    alias: 'Alias',
    coldeflist: 'nodes',
  },
  ColumnDef: { colname: 'scalar', typeName: 'TypeName', is_local: 'scalar', ...loc },
  JoinExpr: {
    jointype: 'enum:join',
    isNatural: 'scalar',
    larg: 'node',
    rarg: 'node',
    usingClause: 'nodes',
    join_using_alias: 'Alias',
    quals: 'node',
    alias: 'Alias',
  },
  SortBy: { node: 'node', sortby_dir: 'enum:sortdir', sortby_nulls: 'enum:sortnulls', useOp: 'nodes', ...loc },
  WindowDef: {
    name: 'scalar',
    refname: 'scalar',
    partitionClause: 'nodes',
    orderClause: 'nodes',
    frameOptions: 'scalar',
    startOffset: 'node',
    endOffset: 'node',
    ...loc,
  },
  SubLink: { subLinkType: 'enum:sublink', testexpr: 'node', operName: 'nodes', subselect: 'node', ...loc },
  CaseExpr: { arg: 'node', args: 'nodes', defresult: 'node', ...loc },
  CaseWhen: { expr: 'node', result: 'node', ...loc },
  CoalesceExpr: { args: 'nodes', ...loc },
  MinMaxExpr: { op: 'enum:minmax', args: 'nodes', ...loc },
  NullTest: { arg: 'node', nulltesttype: 'enum:nulltest', argisrow: 'scalar', ...loc },
  BooleanTest: { arg: 'node', booltesttype: 'enum:booltest', ...loc },
  A_ArrayExpr: { elements: 'nodes', list_start: 'scalar', list_end: 'scalar', ...loc },
  A_Indirection: { arg: 'node', indirection: 'nodes' },
  A_Indices: { is_slice: 'scalar', lidx: 'node', uidx: 'node' },
  RowExpr: { args: 'nodes', row_format: 'enum:coerce', colnames: 'nodes', ...loc },
  List: { items: 'nodes' },
  SQLValueFunction: { op: 'enum:svf', typmod: 'scalar', ...loc },
  GroupingSet: { kind: 'enum:groupingset', content: 'nodes', ...loc },
  GroupingFunc: { args: 'nodes', ...loc },
};

const ENUMS: Record<string, ReadonlySet<string>> = {
  limit: new Set(['LIMIT_OPTION_DEFAULT', 'LIMIT_OPTION_COUNT', 'LIMIT_OPTION_WITH_TIES']),
  setop: new Set(['SETOP_NONE', 'SETOP_UNION', 'SETOP_INTERSECT', 'SETOP_EXCEPT']),
  ctemat: new Set(['CTEMaterializeDefault', 'CTEMaterializeAlways', 'CTEMaterializeNever']),
  aexpr: new Set([
    'AEXPR_OP',
    'AEXPR_OP_ANY',
    'AEXPR_OP_ALL',
    'AEXPR_DISTINCT',
    'AEXPR_NOT_DISTINCT',
    'AEXPR_NULLIF',
    'AEXPR_IN',
    'AEXPR_LIKE',
    'AEXPR_ILIKE',
    'AEXPR_SIMILAR',
    'AEXPR_BETWEEN',
    'AEXPR_NOT_BETWEEN',
    'AEXPR_BETWEEN_SYM',
    'AEXPR_NOT_BETWEEN_SYM',
  ]),
  boolop: new Set(['AND_EXPR', 'OR_EXPR', 'NOT_EXPR']),
  coerce: new Set(['COERCE_EXPLICIT_CALL', 'COERCE_EXPLICIT_CAST', 'COERCE_IMPLICIT_CAST', 'COERCE_SQL_SYNTAX']),
  join: new Set(['JOIN_INNER', 'JOIN_LEFT', 'JOIN_FULL', 'JOIN_RIGHT']),
  sortdir: new Set(['SORTBY_DEFAULT', 'SORTBY_ASC', 'SORTBY_DESC', 'SORTBY_USING']),
  sortnulls: new Set(['SORTBY_NULLS_DEFAULT', 'SORTBY_NULLS_FIRST', 'SORTBY_NULLS_LAST']),
  sublink: new Set(['EXISTS_SUBLINK', 'ALL_SUBLINK', 'ANY_SUBLINK', 'ROWCOMPARE_SUBLINK', 'EXPR_SUBLINK', 'ARRAY_SUBLINK']),
  minmax: new Set(['IS_GREATEST', 'IS_LEAST']),
  nulltest: new Set(['IS_NULL', 'IS_NOT_NULL']),
  booltest: new Set(['IS_TRUE', 'IS_NOT_TRUE', 'IS_FALSE', 'IS_NOT_FALSE', 'IS_UNKNOWN', 'IS_NOT_UNKNOWN']),
  // Date and time only: CURRENT_USER, SESSION_USER, CURRENT_SCHEMA, CURRENT_CATALOG are not data.
  svf: new Set([
    'SVFOP_CURRENT_DATE',
    'SVFOP_CURRENT_TIME',
    'SVFOP_CURRENT_TIME_N',
    'SVFOP_CURRENT_TIMESTAMP',
    'SVFOP_CURRENT_TIMESTAMP_N',
    'SVFOP_LOCALTIME',
    'SVFOP_LOCALTIME_N',
    'SVFOP_LOCALTIMESTAMP',
    'SVFOP_LOCALTIMESTAMP_N',
  ]),
  groupingset: new Set(['GROUPING_SET_EMPTY', 'GROUPING_SET_SIMPLE', 'GROUPING_SET_ROLLUP', 'GROUPING_SET_CUBE', 'GROUPING_SET_SETS']),
};

/**
 * The names of the functions a query may call (unqualified or pg_catalog.): one a line, `#`
 * starts a comment (the format of CKAN's ckan.datastore.sqlsearch.allowed_functions_file).
 * Throws on a line that is no function name.
 */
export function parseAllowedFunctions(text: string, source = 'allowed functions'): Set<string> {
  const names = new Set<string>();
  text.split(/\r?\n/).forEach((line, i) => {
    const name = line.replace(/#.*/, '').trim().toLowerCase();
    if (!name) return;
    if (!/^[a-z_][a-z0-9_$]*$/.test(name)) throw new Error(`${source}, line ${i + 1}: "${name}" is not a function name`);
    names.add(name);
  });
  return names;
}

let builtIn: ReadonlySet<string> | undefined;

/** The read-only functions allowed by default (allowed-functions.txt, beside this file). */
export function defaultAllowedFunctions(): ReadonlySet<string> {
  builtIn ??= parseAllowedFunctions(fs.readFileSync(new URL('./allowed-functions.txt', import.meta.url), 'utf8'));
  return builtIn;
}

/** Types a value may be cast to (`x::type`, `type 'literal'`, column definition lists). */
export const ALLOWED_TYPES: ReadonlySet<string> = new Set([
  'bool',
  'boolean',
  'int2',
  'int4',
  'int8',
  'smallint',
  'integer',
  'int',
  'bigint',
  'float4',
  'float8',
  'real',
  'numeric',
  'decimal',
  'text',
  'varchar',
  'bpchar',
  'char',
  'character',
  'date',
  'time',
  'timetz',
  'timestamp',
  'timestamptz',
  'interval',
  'json',
  'jsonb',
  'jsonpath',
  'uuid',
  'bytea',
  'bit',
  'varbit',
  'inet',
  'cidr',
  'macaddr',
  'money',
  'point',
  'regconfig',
  'tsvector',
  'tsquery',
  'int4range',
  'int8range',
  'numrange',
  'daterange',
  'tsrange',
  'tstzrange',
]);

export interface GuardResult {
  /** The statement text as PostgreSQL delimits it (no trailing `;`, no text after it). */
  statement: string;
  /** Relation names read outside any CTE of the same name, lower-cased as PostgreSQL folds them. */
  tables: string[];
  /** Functions called (lower case, without schema). */
  functions: string[];
  /** WITH RECURSIVE used somewhere. */
  recursive: boolean;
  /** generate_series / repeat / lpad / rpad / array_fill called with an argument that is not a constant. */
  unboundedCalls: string[];
}

const SYSTEM_SCHEMAS = new Set(['pg_catalog', 'pg_toast', 'information_schema']);

/** Largest constant size argument of repeat/lpad/rpad/array_fill (and format width) counted as bounded. */
const MAX_CONSTANT_SIZE = 1_000_000;

/**
 * Functions whose work grows with an argument's value rather than with the data read: bounded
 * when that argument is a small constant (generate_series: constants, so the planner's row
 * estimate is exact). Used by the embedded-mode gate (stopping a query there restarts the database).
 */
function amplifierBounded(name: string, args: any[]): boolean {
  switch (name) {
    case 'generate_series':
      return args.every(isConstant);
    case 'repeat':
    case 'lpad':
    case 'rpad':
    case 'array_fill':
      return args.length >= 2 && isConstant(args[1]) && constantMagnitude(args[1]) <= MAX_CONSTANT_SIZE;
    case 'format': {
      const f = args[0]?.A_Const?.sval?.sval;
      return typeof f === 'string' && !f.includes('*') && !/\d{7,}/.test(f);
    }
    default:
      // Set-returning functions: the planner guesses their row count (100 or 1000 rows), so their
      // input must not be built by other calls (unnest(array_fill(...)), regexp_split_to_table(repeat(...))):
      // columns, constants, casts, array literals and subqueries (which the planner costs) only.
      return !ROW_GENERATORS.has(name) || args.every(plainInput);
  }
}

/** Set-returning functions whose output size the planner does not know. */
const ROW_GENERATORS = new Set([
  'unnest',
  'generate_subscripts',
  'json_array_elements',
  'jsonb_array_elements',
  'json_array_elements_text',
  'jsonb_array_elements_text',
  'json_each',
  'jsonb_each',
  'json_each_text',
  'jsonb_each_text',
  'json_object_keys',
  'jsonb_object_keys',
  'json_to_recordset',
  'jsonb_to_recordset',
  'json_populate_recordset',
  'jsonb_populate_recordset',
  'regexp_matches',
  'regexp_split_to_table',
  'string_to_table',
  'jsonb_path_query',
]);

function plainInput(n: any): boolean {
  if (!isObj(n)) return false;
  if (n.ColumnRef || n.A_Const || n.SubLink) return true;
  if (n.TypeCast) return plainInput(n.TypeCast.arg);
  if (n.A_ArrayExpr) return (n.A_ArrayExpr.elements ?? []).every(plainInput);
  if (n.NamedArgExpr) return plainInput(n.NamedArgExpr.arg);
  return false;
}

/** The largest absolute number in a constant expression (for size limits). */
function constantMagnitude(n: any): number {
  if (!isObj(n)) return Infinity;
  if (n.A_Const) {
    const c = n.A_Const;
    if (c.ival) return Math.abs(Number(c.ival.ival ?? 0));
    if (c.fval) return Math.abs(Number(c.fval.fval));
    if (c.sval) return Math.abs(Number(c.sval.sval)) || 0;
    return 0;
  }
  if (n.TypeCast) return constantMagnitude(n.TypeCast.arg);
  if (n.A_Expr) return constantMagnitude(n.A_Expr.rexpr);
  // array_fill dimensions: the element count is the product.
  if (n.A_ArrayExpr) return (n.A_ArrayExpr.elements ?? []).reduce((m: number, e: any) => m * constantMagnitude(e), 1);
  return Infinity;
}

const queryError = (msg: string) => new ValidationError({ query: [msg] });

/**
 * Parses and checks one statement, calling only allowedFunctions; throws ValidationError (409)
 * or AuthorizationError (403).
 */
export async function guardSql(sql: string, allowedFunctions = defaultAllowedFunctions()): Promise<GuardResult> {
  if (typeof sql !== 'string' || !sql.trim()) throw new ValidationError({ sql: ['Missing value'] });
  if (sql.includes('\u0000')) throw queryError('Query contains a NUL character.');
  let tree: any;
  try {
    tree = await parse(sql);
  } catch (e) {
    throw queryError((e as Error).message);
  }
  const stmts: any[] = tree?.stmts ?? [];
  if (stmts.length !== 1) throw queryError('Query is not a single statement.');
  const raw = stmts[0];
  const stmtNode = raw.stmt ?? {};
  const type = Object.keys(stmtNode)[0];
  if (type !== 'SelectStmt') throw queryError(`Only a SELECT statement is allowed${type ? ` (got ${describe(type)})` : ''}.`);
  // PostgreSQL 16 changed how numbers are read (1_000, 0x1F, 0o17, 0b101 are one literal; before,
  // a number followed by a column alias). The server may be older than this parser: such
  // literals are refused so that both read the same tokens.
  for (const tok of (await scan(sql)).tokens) {
    if ((tok.tokenName === 'ICONST' || tok.tokenName === 'FCONST') && /[_xXoObB]/.test(tok.text)) {
      throw queryError(`Numeric literal ${tok.text} is not accepted: write it without underscores, in decimal.`);
    }
  }
  const start = utf8ToIndex(sql, raw.stmt_location ?? 0);
  const end = raw.stmt_len ? utf8ToIndex(sql, (raw.stmt_location ?? 0) + raw.stmt_len) : sql.length;
  const statement = sql.slice(start, end);

  const w = new Walker(allowedFunctions);
  w.struct('SelectStmt', stmtNode.SelectStmt, []);
  return {
    statement,
    tables: [...w.tables],
    functions: [...w.functions],
    recursive: w.recursive,
    unboundedCalls: [...w.unbounded],
  };
}

// The parser reports byte offsets into the UTF-8 text.
function utf8ToIndex(s: string, byteOffset: number): number {
  const buf = Buffer.from(s, 'utf8');
  return buf.subarray(0, byteOffset).toString('utf8').length;
}

const isObj = (v: unknown): v is Record<string, any> => !!v && typeof v === 'object' && !Array.isArray(v);

class Walker {
  constructor(private readonly allowedFunctions: ReadonlySet<string>) {}
  tables = new Set<string>();
  functions = new Set<string>();
  unbounded = new Set<string>();
  recursive = false;

  /** A wrapped node {Type: {...}}; `{}` is a NULL in a list. */
  node(v: unknown, scopes: Set<string>[]): void {
    if (!isObj(v)) throw refuse('a malformed parse tree');
    const keys = Object.keys(v);
    if (keys.length === 0) return;
    if (keys.length !== 1) throw refuse('a malformed parse tree');
    this.struct(keys[0], v[keys[0]], scopes);
  }

  nodes(v: unknown, scopes: Set<string>[]): void {
    if (!Array.isArray(v)) throw refuse('a malformed parse tree');
    for (const x of v) this.node(x, scopes);
  }

  struct(type: string, body: unknown, scopes: Set<string>[]): void {
    const fields = NODES[type];
    if (!fields) throw refuse(describe(type));
    if (!isObj(body)) throw refuse('a malformed parse tree');
    if (type === 'SelectStmt') {
      this.select(body, scopes);
      return;
    }
    this.check(type, body, scopes);
    this.fields(type, body, scopes);
  }

  private fields(type: string, body: Record<string, any>, scopes: Set<string>[], skip: ReadonlySet<string> = new Set()): void {
    const fields = NODES[type];
    for (const [key, value] of Object.entries(body)) {
      if (skip.has(key)) continue;
      const kind = fields[key];
      if (!kind) throw refuse(describeField(type, key));
      if (value === null || value === undefined) continue;
      if (kind === 'node') this.node(value, scopes);
      else if (kind === 'nodes') this.nodes(value, scopes);
      else if (kind === 'scalar') {
        if (!['string', 'number', 'boolean'].includes(typeof value)) throw refuse('a malformed parse tree');
      } else if (kind.startsWith('enum:')) {
        if (!ENUMS[kind.slice(5)].has(value)) throw refuse(`${type} ${String(value)}`);
      } else this.struct(kind, value, scopes);
    }
  }

  /** SELECT, with its WITH clause scoping: CTE names hide tables of the same name where PostgreSQL says so. */
  private select(body: Record<string, any>, scopes: Set<string>[]): void {
    if (body.intoClause) throw queryError('SELECT ... INTO is not allowed.');
    if (body.lockingClause) throw queryError('Locking clauses (FOR UPDATE, FOR SHARE) are not allowed.');
    let inner = scopes;
    const withClause = body.withClause;
    if (withClause !== undefined) {
      if (!isObj(withClause)) throw refuse('a malformed parse tree');
      for (const key of Object.keys(withClause)) if (!NODES.WithClause[key]) throw refuse(describeField('WithClause', key));
      const ctes: any[] = withClause.ctes ?? [];
      if (!Array.isArray(ctes)) throw refuse('a malformed parse tree');
      const recursive = withClause.recursive === true;
      if (recursive) this.recursive = true;
      const names: string[] = ctes.map((c) => {
        const cte = isObj(c) ? c.CommonTableExpr : undefined;
        if (!isObj(cte) || typeof cte.ctename !== 'string') throw refuse(describe(isObj(c) ? Object.keys(c)[0] : 'a malformed parse tree'));
        return cte.ctename;
      });
      ctes.forEach((c, i) => {
        const cte = c.CommonTableExpr;
        // The query of a CTE must itself be a plain SELECT (no INSERT/UPDATE/DELETE/MERGE ... RETURNING).
        const q = cte.ctequery;
        if (!isObj(q) || Object.keys(q)[0] !== 'SelectStmt') {
          throw queryError('Data-modifying statements in WITH are not allowed.');
        }
        // WITH RECURSIVE: every CTE of the list is visible in every CTE; otherwise only earlier ones.
        const visible = new Set(recursive ? names : names.slice(0, i));
        this.fields('CommonTableExpr', cte, [...scopes, visible]);
      });
      inner = [...scopes, new Set(names)];
    }
    this.fields('SelectStmt', body, inner, new Set(['withClause']));
  }

  /** Node-specific rules beyond "type and fields are known". */
  private check(type: string, body: Record<string, any>, scopes: Set<string>[]): void {
    switch (type) {
      case 'RangeVar': {
        const rel: string = body.relname;
        const schema: string | undefined = body.schemaname;
        if (typeof rel !== 'string') throw refuse('a malformed parse tree');
        if (body.catalogname) throw new AuthorizationError('Not authorized to access system tables');
        if (schema !== undefined) {
          if (SYSTEM_SCHEMAS.has(schema) || schema.startsWith('pg_'))
            throw new AuthorizationError('Not authorized to access system tables');
          if (schema !== 'public') throw new AuthorizationError('Not authorized to read resource.');
        }
        if (rel.startsWith('pg_') || rel === 'information_schema') throw new AuthorizationError('Not authorized to access system tables');
        if (schema === undefined && scopes.some((s) => s.has(rel))) return; // a CTE
        this.tables.add(rel);
        return;
      }
      case 'FuncCall': {
        const name = qualifiedName(body.funcname, 'function');
        if (!this.allowedFunctions.has(name)) throw new AuthorizationError(`Not authorized to call function ${name}`);
        this.functions.add(name);
        if (!amplifierBounded(name, body.args ?? [])) this.unbounded.add(name);
        return;
      }
      case 'TypeName': {
        if (body.setof || body.pct_type) throw refuse('%TYPE or SETOF');
        const name = qualifiedName(body.names, 'type');
        if (!ALLOWED_TYPES.has(name)) throw new AuthorizationError(`Not authorized to use type ${name}`);
        return;
      }
      case 'A_Expr':
      case 'SortBy':
      case 'SubLink': {
        // Operators: built-in ones only (unqualified or OPERATOR(pg_catalog.x)).
        const ops = type === 'A_Expr' ? body.name : type === 'SortBy' ? body.useOp : body.operName;
        if (ops) qualifiedName(ops, 'operator');
        return;
      }
      case 'CollateClause':
        qualifiedName(body.collname, 'collation');
        return;
      case 'RangeFunction':
        if (body.is_rowsfrom) return; // ROWS FROM(...): its functions are FuncCall nodes, checked as such
        return;
      default:
        return;
    }
  }
}

/** A name list [x] or [pg_catalog, x]; anything else (another schema) is refused. */
function qualifiedName(list: unknown, what: string): string {
  if (!Array.isArray(list) || list.length < 1 || list.length > 2) throw refuse('a malformed parse tree');
  const parts = list.map((n) => {
    const s = isObj(n) && isObj(n.String) ? n.String.sval : undefined;
    if (typeof s !== 'string') throw refuse('a malformed parse tree');
    return s;
  });
  if (parts.length === 2 && parts[0] !== 'pg_catalog') {
    if (what === 'function') throw new AuthorizationError(`Not authorized to call function ${parts.join('.')}`);
    throw new AuthorizationError(`Not authorized to use ${what} ${parts.join('.')}`);
  }
  return parts[parts.length - 1];
}

/** A literal, possibly signed or cast: the planner then knows the value (row estimates of generate_series). */
function isConstant(n: any): boolean {
  if (!isObj(n)) return false;
  if (n.A_Const) return true;
  if (n.TypeCast) return isConstant(n.TypeCast.arg);
  if (n.A_Expr && n.A_Expr.kind === 'AEXPR_OP' && !n.A_Expr.lexpr) return isConstant(n.A_Expr.rexpr);
  if (n.A_ArrayExpr) return (n.A_ArrayExpr.elements ?? []).every(isConstant);
  return false;
}

function refuse(what: string): ValidationError {
  return queryError(`Not allowed in datastore_search_sql: ${what}.`);
}

const DESCRIPTIONS: Record<string, string> = {
  InsertStmt: 'INSERT',
  UpdateStmt: 'UPDATE',
  DeleteStmt: 'DELETE',
  MergeStmt: 'MERGE',
  IntoClause: 'SELECT ... INTO',
  LockingClause: 'FOR UPDATE / FOR SHARE',
  XmlExpr: 'XML expressions',
  XmlSerialize: 'XML expressions',
  ParamRef: 'parameters ($1)',
  RangeTableSample: 'TABLESAMPLE',
  RangeTableFunc: 'XMLTABLE',
  JsonTable: 'JSON_TABLE',
};

function describe(type: string): string {
  return DESCRIPTIONS[type] ?? type;
}

function describeField(type: string, field: string): string {
  if (type === 'SelectStmt' && field === 'intoClause') return 'SELECT ... INTO';
  if (type === 'SelectStmt' && field === 'lockingClause') return 'FOR UPDATE / FOR SHARE';
  return `${type}.${field}`;
}
