// croissant: Croissant 1.0 descriptions of datasets (ckanext-dcat's plugin of the same name) at
// /dataset/{id}/croissant.jsonld, and embedded in the pages of datasets that have data store
// tables (there each table is a cr:RecordSet typed from its data dictionary).
import type { Services } from '../../context.ts';
import type { Plugin } from '../plugin.ts';
import { callAction } from '../../actions/registry.ts';
import type { DatastoreField } from '../../datastore/backend.ts';
import { type DatastoreTable, croissantDataset } from '../../dcat/croissant.ts';
import { AuthorizationError, NotFoundError } from '../../errors.ts';
import { requestIdentity } from '../../http/request-identity.ts';
import { addJsonLdSource, type VisitorCall } from '../../web/json-ld.ts';
import { datasetAddress } from './page-address.ts';

type Dict = Record<string, any>;

/**
 * The data store tables (with their data dictionary) of a dataset's resources, read as the caller.
 * `keys`: read with datastore_info, which also says which columns have a unique index (the record
 * sets' keys); else with datastore_search for no rows, a third of the time (what a page needs).
 */
export async function datastoreTables(services: Services, call: VisitorCall, pkg: Dict, keys: boolean): Promise<DatastoreTable[]> {
  if (!services.registry.has(keys ? 'datastore_info' : 'datastore_search')) return [];
  const active = ((pkg.resources ?? []) as Dict[]).filter((r) => r.datastore_active && typeof r.id === 'string');
  const tables = await Promise.all(
    active.map(async (r): Promise<DatastoreTable | undefined> => {
      try {
        const read = keys
          ? await call<{ fields: DatastoreField[] }>('datastore_info', { id: r.id })
          : await call<{ fields: DatastoreField[] }>('datastore_search', { resource_id: r.id, limit: 0, include_total: false });
        return { resourceId: r.id, fields: (read.fields ?? []).filter((f) => f.id !== '_id') };
      } catch (e) {
        if (e instanceof NotFoundError) return undefined; // the table went away since the dataset was read
        throw e;
      }
    }),
  );
  return tables.filter((t): t is DatastoreTable => !!t);
}

const jsonError = (status: number, message: string) => ({ status, body: JSON.stringify({ error: message }) });

export const croissantPlugin: Plugin = {
  name: 'croissant',
  setup(services) {
    addJsonLdSource(services, async (page, call) => {
      if (page.page !== 'dataset') return undefined;
      const tables = await datastoreTables(services, call, page.pkg, false);
      return tables.length ? croissantDataset(page.pkg, datasetAddress(services, page.pkg), tables) : undefined;
    });
  },
  routes: async (app, { services }) => {
    app.get('/dataset/:id/croissant.jsonld', async (request, reply) => {
      const { id } = request.params as { id: string };
      const [path, query = ''] = request.url.split('?');
      let answer: { status: number; body: string };
      try {
        const identity = await requestIdentity(services, request);
        const call: VisitorCall = (action, data = {}) =>
          callAction(services, action, data, { identity, request: { method: 'GET', path, query } }) as Promise<any>;
        try {
          const pkg = await call<Dict>('package_show', { id });
          const doc = croissantDataset(pkg, datasetAddress(services, pkg), await datastoreTables(services, call, pkg, true));
          answer = { status: 200, body: JSON.stringify(doc) };
        } catch (e) {
          // A dataset the caller may not read is answered as missing, as its page is.
          if (e instanceof NotFoundError || e instanceof AuthorizationError) answer = jsonError(404, 'Dataset not found');
          else throw e;
        }
      } catch (e) {
        if (!(e instanceof AuthorizationError)) throw e;
        answer = jsonError(403, e.message); // a bad API token
      }
      return reply.code(answer.status).type('application/ld+json; charset=utf-8').send(answer.body);
    });
  },
};
