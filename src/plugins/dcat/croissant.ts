// croissant: Croissant 1.0 descriptions of datasets (ckanext-dcat's plugin of the same name) at
// /dataset/{id}/croissant.jsonld, and embedded in the pages of datasets that have data store
// tables (there each table is a cr:RecordSet typed from its data dictionary).
import type { Services } from '../../context.ts';
import type { Plugin } from '../plugin.ts';
import { callAction } from '../../actions/registry.ts';
import { type DatastoreTable, croissantDataset } from '../../dcat/croissant.ts';
import { AuthorizationError, NotFoundError } from '../../errors.ts';
import { requestIdentity } from '../../http/request-identity.ts';
import { addJsonLdSource, type VisitorCall } from '../../web/json-ld.ts';
import { datasetAddress } from './page-address.ts';

type Dict = Record<string, any>;

/** The data store tables (with their data dictionary) of a dataset's resources, read as the caller. */
export async function datastoreTables(services: Services, call: VisitorCall, pkg: Dict): Promise<DatastoreTable[]> {
  if (!services.registry.has('datastore_info')) return [];
  const tables: DatastoreTable[] = [];
  for (const r of (pkg.resources ?? []) as Dict[]) {
    if (!r.datastore_active) continue;
    try {
      const info = await call<{ fields: DatastoreTable['fields'] }>('datastore_info', { id: r.id });
      tables.push({ resourceId: r.id, fields: info.fields ?? [] });
    } catch (e) {
      if (!(e instanceof NotFoundError)) throw e; // the table went away since the dataset was read
    }
  }
  return tables;
}

const jsonError = (status: number, message: string) => ({ status, body: JSON.stringify({ error: message }) });

export const croissantPlugin: Plugin = {
  name: 'croissant',
  setup(services) {
    addJsonLdSource(services, async (page, call) => {
      if (page.page !== 'dataset') return undefined;
      const tables = await datastoreTables(services, call, page.pkg);
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
          const doc = croissantDataset(pkg, datasetAddress(services, pkg), await datastoreTables(services, call, pkg));
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
