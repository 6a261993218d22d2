// GET /datastore/dump/{resource_id}: the rows of a data store table as CSV, TSV, JSON or XML,
// streamed chunk by chunk (constant memory) in CKAN's dump formats (CSV and TSV with a header row, JSON
// {fields, records}, XML <data><row>), and as Parquet (typed columns) or GeoJSON (tables with coordinates).
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../../actions/context.ts';
import { readContext } from '../../actions/read-context.ts';
import type { DatastoreBackend, DumpChunk } from '../../datastore/backend.ts';
import { geoPlan, NoCoordinatesError, writeGeoJson, type GeoPlan } from '../../datastore/dump-geojson.ts';
import { writeParquet } from '../../datastore/dump-parquet.ts';
import { csvCell } from '../../datastore/types.ts';
import { AuthorizationError, NotFoundError, ValidationError } from '../../errors.ts';
import { requestIdentity } from '../../http/request-identity.ts';
import { parseBool } from '../../validation/validators.ts';
import { prepareSearch } from './read-actions.ts';

const FORMATS: Record<string, { type: string; ext: string }> = {
  csv: { type: 'text/csv; charset=utf-8', ext: 'csv' },
  tsv: { type: 'text/tab-separated-values; charset=utf-8', ext: 'tsv' },
  json: { type: 'application/json; charset=utf-8', ext: 'json' },
  xml: { type: 'text/xml; charset=utf-8', ext: 'xml' },
  parquet: { type: 'application/vnd.apache.parquet', ext: 'parquet' },
  geojson: { type: 'application/geo+json; charset=utf-8', ext: 'geojson' },
};

function queryObject(request: FastifyRequest): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const qs = new URLSearchParams(request.url.split('?')[1] ?? '');
  for (const key of new Set(qs.keys())) {
    const all = qs.getAll(key);
    out[key] = all.length > 1 ? all : all[0];
  }
  return out;
}

function badRequest(reply: FastifyReply, errors: Record<string, unknown>) {
  const lines = Object.entries(errors)
    .filter(([k]) => k !== '__type' && k !== 'message')
    .map(([k, v]) => `${k}: ${Array.isArray(v) ? v.join(', ') : typeof v === 'string' ? v : JSON.stringify(v)}`);
  return reply.code(400).type('text/plain; charset=utf-8').send(lines.join('\n'));
}

const notFound = (reply: FastifyReply) => reply.code(404).type('text/html; charset=utf-8').send('DataStore resource not found');

/** The dump route; the plugin registers it on each app (Plugin.routes). */
export const dumpExtension = {
  register(app: FastifyInstance, services: Services) {
    if (!services.plugins.datastore) return;
    app.get('/datastore/dump/:resource_id', async (request, reply) => {
      const id = (request.params as { resource_id: string }).resource_id;
      const query = queryObject(request);
      const format = String(query.format ?? 'csv').toLowerCase();
      if (!FORMATS[format]) return badRequest(reply, { format: [`Value must be one of ${JSON.stringify(Object.keys(FORMATS))}`] });
      const bom = query.bom === undefined ? false : parseBool(query.bom);
      if (bom === undefined) return badRequest(reply, { bom: ['Value must be a boolean (true or false)'] });
      const { format: _f, bom: _b, ...params } = query;
      let iterator: AsyncGenerator<DumpChunk>;
      let first: IteratorResult<DumpChunk>;
      let geo: GeoPlan | undefined;
      try {
        const identity = await requestIdentity(services, request);
        const ctx = readContext(services, identity, {
          method: 'GET',
          path: request.url.split('?')[0],
          query: request.url.split('?')[1] ?? '',
        });
        const { search } = await prepareSearch(ctx, { ...params, resource_id: id }, true);
        const backend = services.plugins.datastore as DatastoreBackend;
        iterator = backend.dump({
          ...search,
          limit: search.limit ?? null,
          // Parquet is written from the TSV text (dump-parquet.ts TsvRows): the database formats the values.
          records_format: format === 'csv' || format === 'tsv' ? format : format === 'parquet' ? 'tsv' : 'lists',
          include_total: false,
        });
        first = await iterator.next();
        if (format === 'geojson') {
          const fields = first.done ? [] : first.value.fields;
          geo = await geoPlan(backend, search.resource_id, fields).catch(async (e) => {
            await iterator.return(undefined);
            throw e;
          });
        }
      } catch (e) {
        if (e instanceof NoCoordinatesError) return reply.code(409).type('text/plain; charset=utf-8').send(`format: ${e.message}`);
        if (e instanceof ValidationError) return badRequest(reply, e.errors);
        if (e instanceof NotFoundError || e instanceof AuthorizationError) return notFound(reply);
        throw e;
      }
      const safeName = id.replace(/[^\w.-]/g, '_');
      reply.header('Content-Disposition', `attachment; filename="${safeName}.${FORMATS[format].ext}"`);
      reply.type(FORMATS[format].type);
      return reply.send(Readable.from(writeDump(format, bom, first, iterator, geo)));
    });
  },
};

async function* writeDump(
  format: string,
  bom: boolean,
  first: IteratorResult<DumpChunk>,
  rest: AsyncGenerator<DumpChunk>,
  geo?: GeoPlan,
): AsyncGenerator<string | Buffer> {
  async function* chunks(): AsyncGenerator<DumpChunk> {
    if (!first.done) yield first.value;
    for (;;) {
      const n = await rest.next();
      if (n.done) return;
      yield n.value;
    }
  }
  if (format === 'parquet') {
    yield* writeParquet(chunks());
    return;
  }
  // An empty result still has a header: the fields come with the first (possibly empty) chunk.
  if (bom) yield '\uFEFF';
  if (format === 'geojson') {
    yield* writeGeoJson(geo!, chunks());
    return;
  }
  if (format === 'csv' || format === 'tsv') {
    const d = format === 'csv' ? ',' : '\t';
    let header = false;
    for await (const c of chunks()) {
      if (!header) {
        yield c.fields.map((f) => csvCell(f.id, d)).join(d) + '\r\n';
        header = true;
      }
      if (c.text) {
        yield c.text;
        continue;
      }
      let out = '';
      for (const row of c.rows) out += row.map((v) => csvCell(v, d)).join(d) + '\n';
      yield out;
    }
    return;
  }
  if (format === 'json') {
    let started = false;
    for await (const c of chunks()) {
      let out = '';
      if (!started) {
        out += `{\n  "fields": ${JSON.stringify(c.fields)},\n  "records": [`;
      }
      for (const row of c.rows) {
        out += (started ? ',\n    ' : '\n    ') + JSON.stringify(row);
        started = true;
      }
      if (!started && c.rows.length === 0) started = false;
      yield out;
    }
    yield '\n]}\n';
    return;
  }
  yield '<data xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">\n';
  for await (const c of chunks()) {
    const idIndex = c.fields.findIndex((f) => f.id === '_id');
    let out = '';
    for (const row of c.rows) {
      out += idIndex >= 0 ? `<row _id="${escapeXml(String(row[idIndex]))}">` : '<row>';
      c.fields.forEach((f, i) => {
        if (i !== idIndex) out += xmlNode(f.id, row[i]);
      });
      out += '</row>\n';
    }
    yield out;
  }
  yield '</data>\n';
}

function escapeXml(s: string): string {
  return s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);
}

/** An element name: XML names cannot hold spaces and some symbols; those become underscores. */
function tagName(name: string): string {
  let t = name.replace(/[^\w.\-:]/g, '_');
  if (!/^[A-Za-z_]/.test(t)) t = '_' + t;
  return t;
}

function xmlText(v: unknown): string {
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  return escapeXml(String(v));
}

function xmlNode(name: string, v: unknown, key?: string | number): string {
  const tag = tagName(name);
  const keyAttr = key === undefined ? '' : ` key="${escapeXml(String(key))}"`;
  if (v === null || v === undefined) return `<${tag} xsi:nil="true"${keyAttr} />`;
  if (typeof v !== 'object') return `<${tag}${keyAttr}>${xmlText(v)}</${tag}>`;
  const entries: [string | number, unknown][] = Array.isArray(v) ? v.map((x, i) => [i, x]) : Object.entries(v as object);
  return `<${tag}${keyAttr}>${entries.map(([k, x]) => xmlNode('value', x, k)).join('')}</${tag}>`;
}
