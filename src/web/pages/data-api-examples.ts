// The ready-to-copy examples of a data store resource's "Data API" page: calls of
// datastore_search (first rows, a full-text search, a filter on a real column) and
// datastore_search_sql, each as an address to open, and one of them as curl, Python (ckanapi and
// requests) and JavaScript (fetch) code. Values come from the table's own first row.

type Dict = Record<string, any>;

export interface ExampleCall {
  /** Message key of what the call does. */
  key: string;
  action: string;
  params: Dict;
  /** The call as a GET address (complex values as JSON, as the Action API reads them). */
  url: string;
}

export interface Snippet {
  /** Message key of the language's name. */
  key: string;
  code: string;
}

/** Words of a sample value this long at most go into the examples. */
const SAMPLE_CHARS = 40;

export function actionUrl(base: string, action: string, params: Dict): string {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) qs.append(k, typeof v === 'object' ? JSON.stringify(v) : String(v));
  return `${base}/api/3/action/${action}?${qs}`;
}

/** The column the examples use: the first text column, else the first one; and its value in the first row. */
export function sampleColumn(fields: Dict[], record: Dict | undefined): { column: string; value: string } | null {
  const columns = fields.filter((f) => f.id !== '_id' && f.id !== '_full_text');
  const column = columns.find((f) => f.type === 'text' && typeof record?.[f.id] === 'string' && record[f.id].trim()) ?? columns[0];
  if (!column) return null;
  const raw = record?.[column.id];
  const value = raw === null || raw === undefined ? '' : typeof raw === 'object' ? JSON.stringify(raw) : String(raw);
  return { column: column.id, value: value.length > SAMPLE_CHARS ? value.slice(0, SAMPLE_CHARS) : value };
}

const sqlIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;
const sqlString = (value: string) => `'${value.replace(/'/g, "''")}'`;
/** A word to search for: the sample's first word of three letters or digits or more, else its first word. */
function searchWord(value: string): string {
  const words = value.match(/[\p{L}\p{N}]+/gu) ?? [];
  return words.find((w) => w.length >= 3) ?? words[0] ?? '';
}

export function exampleCalls(
  base: string,
  resourceId: string,
  column: { column: string; value: string } | null,
  sql: boolean,
): ExampleCall[] {
  // An empty table (or an empty first cell) has no value to search or filter for.
  const sample = column?.value ? column : null;
  const call = (key: string, action: string, params: Dict): ExampleCall => ({ key, action, params, url: actionUrl(base, action, params) });
  const calls = [call('dataapi.example.first_rows', 'datastore_search', { resource_id: resourceId, limit: 5 })];
  if (sample) {
    const word = searchWord(sample.value);
    if (word) calls.push(call('dataapi.example.search', 'datastore_search', { resource_id: resourceId, q: word }));
    calls.push(call('dataapi.example.filter', 'datastore_search', { resource_id: resourceId, filters: { [sample.column]: sample.value } }));
  }
  if (sql)
    calls.push(
      call('dataapi.example.sql', 'datastore_search_sql', {
        sql: sample
          ? `SELECT * FROM ${sqlIdent(resourceId)} WHERE ${sqlIdent(sample.column)} = ${sqlString(sample.value)} LIMIT 5`
          : `SELECT * FROM ${sqlIdent(resourceId)} LIMIT 5`,
      }),
    );
  return calls;
}

const shellQuote = (value: string) => `'${value.replace(/'/g, "'\\''")}'`;
/** A Python or JavaScript string literal (JSON's escapes are both languages'). */
const literal = (value: unknown) => JSON.stringify(value);

function pythonValue(value: unknown): string {
  if (typeof value === 'number') return String(value);
  if (value && typeof value === 'object')
    return `{${Object.entries(value)
      .map(([k, v]) => `${literal(k)}: ${pythonValue(v)}`)
      .join(', ')}}`;
  return literal(String(value));
}

/** One call in each language; with a token when the dataset is private. */
export function codeSnippets(base: string, example: ExampleCall, needsToken: boolean): Snippet[] {
  const args = Object.entries(example.params);
  const endpoint = `${base}/api/3/action/${example.action}`;
  const curl = needsToken ? `curl -H "Authorization: $API_TOKEN" ${shellQuote(example.url)}` : `curl ${shellQuote(example.url)}`;
  const ckanapi = [
    'from ckanapi import RemoteCKAN',
    '',
    needsToken ? `site = RemoteCKAN(${literal(base)}, apikey=API_TOKEN)` : `site = RemoteCKAN(${literal(base)})`,
    `result = site.action.${example.action}(${args.map(([k, v]) => `${k}=${pythonValue(v)}`).join(', ')})`,
    "for record in result['records']:",
    '    print(record)',
  ].join('\n');
  const requests = [
    'import requests',
    '',
    'response = requests.post(',
    `    ${literal(endpoint)},`,
    `    json={${args.map(([k, v]) => `${literal(k)}: ${pythonValue(v)}`).join(', ')}},`,
    ...(needsToken ? ["    headers={'Authorization': API_TOKEN},"] : []),
    ')',
    "print(response.json()['result']['records'])",
  ].join('\n');
  const fetchCode = [
    `const response = await fetch(${literal(endpoint)}, {`,
    "  method: 'POST',",
    `  headers: { 'Content-Type': 'application/json'${needsToken ? ', Authorization: API_TOKEN' : ''} },`,
    `  body: JSON.stringify(${JSON.stringify(example.params)}),`,
    '});',
    'const { result } = await response.json();',
    'console.log(result.records);',
  ].join('\n');
  return [
    { key: 'dataapi.lang.curl', code: curl },
    { key: 'dataapi.lang.ckanapi', code: ckanapi },
    { key: 'dataapi.lang.requests', code: requests },
    { key: 'dataapi.lang.javascript', code: fetchCode },
  ];
}
