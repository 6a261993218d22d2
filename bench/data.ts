// Benchmark rows: a real-shaped table derived from the JHU CSSE COVID-19 time series
// (covid19-time-series-combined-2021-03-17.csv.gz, see SOURCE; 115,080 rows x 6
// columns, ODC-PDDL). To reach N rows the file is repeated; repetition k shifts every date by
// k * 421 days (the span of the file plus one), so rows stay distinct and realistic. Five derived
// columns make it 11 columns of mixed types (int, date, text, nullable text/int, float, bool,
// timestamp).
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { parse } from 'csv-parse/sync';

const SOURCE_FILE = 'covid19-time-series-combined-2021-03-17.csv.gz';
/** The source file: SVC_BENCH_SOURCE, else shared/data/tables/ next to the checkout when it exists. */
export const SOURCE = process.env.SVC_BENCH_SOURCE ?? new URL(`../../shared/data/tables/${SOURCE_FILE}`, import.meta.url).pathname;
const SHIFT_DAYS = 421;
const DAY_MS = 86_400_000;

export interface BenchRow {
  row_id: number;
  date: string;
  country: string;
  province: string | null;
  confirmed: number;
  recovered: number | null;
  deaths: number;
  fatality_rate: number | null;
  active: number | null;
  is_province: boolean;
  updated_at: string;
}

/** Data store field declarations (the same types for the raw COPY table). */
export const FIELDS: { id: keyof BenchRow; type: string }[] = [
  { id: 'row_id', type: 'int4' },
  { id: 'date', type: 'date' },
  { id: 'country', type: 'text' },
  { id: 'province', type: 'text' },
  { id: 'confirmed', type: 'int4' },
  { id: 'recovered', type: 'int4' },
  { id: 'deaths', type: 'int4' },
  { id: 'fatality_rate', type: 'float8' },
  { id: 'active', type: 'int4' },
  { id: 'is_province', type: 'bool' },
  { id: 'updated_at', type: 'timestamp' },
];

interface SourceRow {
  day: number;
  country: string;
  province: string | null;
  confirmed: number;
  recovered: number | null;
  deaths: number;
}

function readSource(): SourceRow[] {
  if (!fs.existsSync(SOURCE)) {
    throw new Error(
      `benchmark data ${SOURCE} not found: download the JHU CSSE COVID-19 time series (combined, as of 2021-03-17; ` +
        `https://github.com/datasets/covid-19, time-series-19-covid-combined.csv), gzip it and set SVC_BENCH_SOURCE to its path`,
    );
  }
  const text = zlib.gunzipSync(fs.readFileSync(SOURCE)).toString('utf8');
  const rows: string[][] = parse(text, { from_line: 2 });
  const num = (s: string) => (s === '' ? null : Number(s));
  return rows.map(([date, country, province, confirmed, recovered, deaths]) => ({
    day: Date.parse(date + 'T00:00:00Z') / DAY_MS,
    country,
    province: province === '' ? null : province,
    confirmed: num(confirmed) ?? 0,
    recovered: num(recovered),
    deaths: num(deaths) ?? 0,
  }));
}

const iso = (ms: number) => new Date(ms).toISOString().slice(0, 19);

/** The first n rows of the repeated, date-shifted table. */
export function generateRows(n: number): BenchRow[] {
  const src = readSource();
  const out: BenchRow[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const k = Math.floor(i / src.length);
    const s = src[i % src.length];
    const day = s.day + k * SHIFT_DAYS;
    out[i] = {
      row_id: i + 1,
      date: iso(day * DAY_MS).slice(0, 10),
      country: s.country,
      province: s.province,
      confirmed: s.confirmed,
      recovered: s.recovered,
      deaths: s.deaths,
      fatality_rate: s.confirmed > 0 ? Math.round((s.deaths / s.confirmed) * 1e6) / 1e6 : null,
      active: s.recovered === null ? null : s.confirmed - s.recovered - s.deaths,
      is_province: s.province !== null,
      updated_at: iso(day * DAY_MS + 23 * 3600_000 + (i % 3600) * 1000),
    };
  }
  return out;
}

const csvText = (v: string) => (/[",\n\r]/.test(v) || v === '' ? '"' + v.replace(/"/g, '""') + '"' : v);

/** The rows as COPY ... (FORMAT csv) input (NULL is an unquoted empty field). */
export function toCsv(rows: BenchRow[]): Buffer {
  const parts: string[] = [];
  for (const r of rows) {
    parts.push(
      FIELDS.map((f) => {
        const v = r[f.id];
        if (v === null) return '';
        if (typeof v === 'string') return csvText(v);
        return typeof v === 'boolean' ? (v ? 't' : 'f') : String(v);
      }).join(',') + '\n',
    );
  }
  return Buffer.from(parts.join(''));
}

/** JSON request bodies of `batch` records each: the first for datastore_create, the rest for datastore_upsert. */
export function jsonBatches(
  rows: BenchRow[],
  batch: number,
  first: (records: BenchRow[]) => object,
  rest: (records: BenchRow[]) => object,
): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < rows.length; i += batch) {
    const records = rows.slice(i, i + batch);
    out.push(Buffer.from(JSON.stringify(i === 0 ? first(records) : rest(records))));
  }
  return out;
}

export const resultsDir = path.join(path.dirname(new URL(import.meta.url).pathname), 'results');

// --- the custom metadata schema of `npm run bench -- search custom` ------------------------------

/** Themes of the bench schema's multiple-choice field (a controlled list, as DCAT-AP's data themes). */
export const BENCH_THEMES = [
  'agriculture',
  'economy',
  'education',
  'energy',
  'environment',
  'government',
  'health',
  'international',
  'justice',
  'regions',
  'science',
  'society',
  'technology',
  'transport',
];

/**
 * A dataset schema (ckanext-scheming's JSON form) with a choice field (theme, several values), a
 * date (temporal_start), a number (population) and repeating subfields (contact: name, email).
 */
export function benchSchema(): object {
  return {
    scheming_version: 2,
    dataset_type: 'dataset',
    about: 'svc search bench: custom fields',
    dataset_fields: [
      { field_name: 'title', label: 'Title', preset: 'title', required: true },
      { field_name: 'name', label: 'URL', preset: 'dataset_slug' },
      { field_name: 'notes', label: 'Description', form_snippet: 'markdown.html' },
      { field_name: 'tag_string', label: 'Tags', preset: 'tag_string_autocomplete' },
      { field_name: 'owner_org', label: 'Organization', preset: 'dataset_organization' },
      { field_name: 'license_id', label: 'License', form_snippet: 'license.html' },
      {
        field_name: 'theme',
        label: 'Themes',
        preset: 'multiple_checkbox',
        choices: BENCH_THEMES.map((value) => ({ value, label: value[0].toUpperCase() + value.slice(1) })),
      },
      { field_name: 'temporal_start', label: 'Start of the period covered', preset: 'date' },
      { field_name: 'population', label: 'Population covered', validators: 'ignore_missing int_validator' },
      {
        field_name: 'contact',
        label: 'Contact points',
        repeating_subfields: [
          { field_name: 'name', label: 'Name' },
          { field_name: 'email', label: 'Email', validators: 'ignore_missing email_validator' },
        ],
      },
    ],
    resource_fields: [
      { field_name: 'url', label: 'URL', preset: 'resource_url_upload' },
      { field_name: 'name', label: 'Name' },
      { field_name: 'format', label: 'Format', preset: 'resource_format_autocomplete' },
    ],
  };
}

/** Custom field values of the i-th bench dataset (pick: a seeded choice among the given values). */
export function benchCustomFields(i: number, rnd: () => number): Record<string, unknown> {
  const themes = [
    ...new Set(Array.from({ length: 1 + Math.floor(rnd() * 3) }, () => BENCH_THEMES[Math.floor(rnd() * BENCH_THEMES.length)])),
  ];
  const day = Math.floor(rnd() * 9000); // 2000-01-01 + up to ~24 years
  return {
    theme: themes,
    temporal_start: new Date(Date.UTC(2000, 0, 1) + day * 86_400_000).toISOString().slice(0, 10),
    population: 100 + Math.floor(rnd() * 1_000_000),
    contact: Array.from({ length: 1 + (i % 2) }, (_, k) => ({
      name: `Contact ${(i * 7 + k) % 500}`,
      email: `contact${(i * 7 + k) % 500}@example.org`,
    })),
  };
}
