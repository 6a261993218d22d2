// datastore: tabular data attached to resources (CKAN's DataStore API). Embedded mode keeps it in a
// second PGlite database, in a worker thread (its queries can be timed out), with a read-only role inside; server mode uses svc.datastore.write_url
// (owner) and svc.datastore.read_url (read-only user). The backend is services.plugins.datastore.
import type { Plugin } from '../plugin.ts';
import { declareOption } from '../../config/options.ts';
import { PostgresDatabase } from '../../db/database.ts';
import { PGliteWorkerDatabase } from '../../db/pglite-worker.ts';
import { ConfigError } from '../../config/load.ts';
import { PostgresBackend, readPoolOptions } from '../../datastore/postgres.ts';
import { datastoreActions } from './actions.ts';
import { dumpExtension } from './dump.ts';
import { onPackageChange } from '../../model/packages.ts';
import { datastoreTablesToDrop, setDatastoreActiveFlag } from '../../model/datastore-flags.ts';
import { NotFoundError } from '../../errors.ts';
import './permissions.ts'; // adds `svc datastore set-permissions`
import './fts-cli.ts'; // `svc db upgrade` also migrates data store tables to stored full-text vectors
import { registerSearchSql, type SqlSearchBackend } from './search-sql.ts';
import { noticingWrites, openDatastoreReads } from './replica.ts';
import type { FtsSettings } from '../../datastore/fts.ts';
import type { Services } from '../../actions/context.ts';

const postgresUrl = (v: string) => (v === '' || /^postgres(ql)?:\/\//.test(v) ? undefined : 'must be a postgresql:// URL');
const positive = (v: number) => (v > 0 ? undefined : 'must be a positive number');

declareOption({
  name: 'svc.datastore.write_url',
  type: 'string',
  default: '',
  secret: true,
  validate: postgresUrl,
  description: 'PostgreSQL URL of the data store database for the write user (its owner); empty uses an embedded database',
});
declareOption({
  name: 'svc.datastore.read_url',
  type: 'string',
  default: '',
  secret: true,
  validate: postgresUrl,
  description:
    "PostgreSQL URL of the data store database for the read-only user (see svc datastore set-permissions); it may be a streaming replica of svc.datastore.write_url's server (reads fall back to the primary as this URL's user)",
});
declareOption({
  name: 'svc.datastore.search.rows_default',
  type: 'int',
  default: 100,
  validate: positive,
  description: 'Default number of rows datastore_search returns',
});
declareOption({
  name: 'svc.datastore.search.rows_max',
  type: 'int',
  default: 32000,
  validate: positive,
  description: 'Most rows datastore_search and datastore_search_sql return',
});
declareOption({ name: 'svc.datastore.sqlsearch.enabled', type: 'bool', default: false, description: 'Enable datastore_search_sql' });
declareOption({
  name: 'svc.datastore.sqlsearch.timeout',
  type: 'int',
  default: 60000,
  validate: positive,
  description: 'Longest time a datastore_search_sql query may run, in milliseconds',
});

declareOption({
  name: 'svc.datastore.embedded_max_memory',
  type: 'int',
  default: 512,
  validate: (v: number) => (v >= 0 ? undefined : 'must be 0 or more'),
  description:
    "Embedded data store only: when its database worker's memory (WebAssembly, about 130 MB idle) has grown past this many MB, e.g. after a datastore_search_sql aggregate over a big table, the worker is closed and started again once the query is answered (its memory never shrinks otherwise); 0: never",
});
declareOption({
  name: 'svc.datastore.default_fts_lang',
  type: 'string',
  default: 'english',
  validate: (v: string) => (/^[A-Za-z_][A-Za-z0-9_]*$/.test(v) ? undefined : 'must be a text search configuration name'),
  description: 'Language of full-text search: the default of datastore_search language, and of the stored, indexed text of new tables',
});
declareOption({
  name: 'svc.datastore.default_fts_index_method',
  type: 'string',
  default: 'gin',
  validate: (v: string) => (v === 'gin' || v === 'gist' ? undefined : 'must be gin or gist'),
  description: 'Index method of the full-text indexes (gin: faster searches; gist: smaller, faster to update)',
});
declareOption({
  name: 'svc.datastore.default_fts_index_field_types',
  type: 'list',
  default: ['text', 'tsvector'],
  description:
    'Column types that get a full-text index of their own (for datastore_search q as a per-column dict), space or comma separated',
});
declareOption({
  name: 'svc.datastore.fts_inline_max_rows',
  type: 'int',
  default: 5000,
  validate: (v: number) => (v >= 0 ? undefined : 'must be 0 or more'),
  description:
    'Writes of at most this many rows compute their full-text index entries before they commit; larger ones (loads) leave them to a background task that runs once writes pause',
});

declareOption({
  name: 'svc.datastore.fts_rank_window',
  type: 'int',
  default: 1000,
  validate: (v: number) => (v >= 0 ? undefined : 'must be 0 or more'),
  description:
    'Full-text searches in the default order (by rank, no sort) rank only the first this many matching rows, so a common term answers without ranking every match; 0 ranks every match (as CKAN)',
});

declareOption({
  name: 'svc.datastore.fts_bulk_fill_min_rows',
  type: 'int',
  default: 50000,
  validate: (v: number) => (v >= 0 ? undefined : 'must be 0 or more'),
  description:
    'PostgreSQL: a table with at least this many rows whose full-text entries are still to be computed (and at least half of its rows, e.g. after a load) gets them in bulk: its full-text indexes are dropped, the entries computed and the indexes built again, several times faster than row by row; 0: never',
});
declareOption({
  name: 'svc.datastore.fts_index_build_memory',
  type: 'int',
  default: 256,
  validate: (v: number) => (v >= 1 ? undefined : 'must be 1 or more'),
  description: 'Memory in MB (maintenance_work_mem) of each full-text index build after a bulk fill; two builds may run at once',
});

/** The full-text settings of the data store from the configuration. */
export function ftsSettings(config: Services['config']): FtsSettings {
  return {
    language: config.str('svc.datastore.default_fts_lang'),
    method: config.str('svc.datastore.default_fts_index_method') === 'gist' ? 'gist' : 'gin',
    fieldTypes: config.list('svc.datastore.default_fts_index_field_types'),
    inlineMaxRows: config.int('svc.datastore.fts_inline_max_rows'),
    rankWindow: config.int('svc.datastore.fts_rank_window'),
    bulkFillMinRows: config.int('svc.datastore.fts_bulk_fill_min_rows'),
    indexBuildMemoryMb: config.int('svc.datastore.fts_index_build_memory'),
  };
}

/** The read-only role inside the embedded data store database. */
export const EMBEDDED_READER_ROLE = 'svc_datastore_reader';

export const datastorePlugin: Plugin = {
  name: 'datastore',
  async setup(services) {
    const writeUrl = services.config.str('svc.datastore.write_url');
    const readUrl = services.config.str('svc.datastore.read_url');
    let backend: PostgresBackend;
    const fts = ftsSettings(services.config);
    const onBackgroundError = (e: unknown) => services.logger.error({ err: e }, 'data store background work failed');
    let sqlRead: Omit<SqlSearchBackend, 'kind'>;
    if (writeUrl) {
      // Reads (search, SQL search, dumps) run as a user that can only read.
      if (!readUrl) {
        throw new ConfigError(
          'svc.datastore.read_url must be set when svc.datastore.write_url is: data store reads run as a read-only user (see svc datastore set-permissions)',
        );
      }
      const write = PostgresDatabase.open(writeUrl, { max: 5 });
      // read_url may be a streaming replica: reads go there or, when it lags a caller's write, is
      // down or too far behind, to the primary as the same user (replica.ts).
      // SQL searches run on connections of their own: datastore_search never waits behind them.
      const pools = await openDatastoreReads(
        services,
        { read: readUrl, write: writeUrl },
        { max: 5, ...readPoolOptions },
        services.config.bool('svc.datastore.sqlsearch.enabled') ? services.config.int('svc.datastore.sqlsearch.max_running') : null,
      );
      services.onClose.push(() => pools.close());
      services.datastoreReads = pools.reads;
      backend = new PostgresBackend({
        write: noticingWrites(write),
        read: pools.read,
        owned: [write],
        listenUrl: writeUrl,
        fts,
        onBackgroundError,
      });
      sqlRead = { readDb: pools.sqlSearch };
    } else {
      const db = await services.openEmbeddedWorker('datastore');
      if (db instanceof PGliteWorkerDatabase) db.maxMemoryBytes = services.config.int('svc.datastore.embedded_max_memory') * 1024 * 1024;
      backend = new PostgresBackend({ write: db, readerRole: EMBEDDED_READER_ROLE, owned: [db], fts, onBackgroundError });
      sqlRead = { readDb: db, readRole: EMBEDDED_READER_ROLE };
    }
    services.onClose.push(() => backend.close());
    await backend.init();
    const readProblem = await backend.readUserProblem();
    if (readProblem)
      services.logger.warn(
        `svc.datastore.read_url: ${readProblem}, so data store reads are not read-only; give it a user that can only read (svc datastore set-permissions)`,
      );
    services.plugins.datastore = backend;
    // A table cannot outlive its resource: deleting the resource or its dataset drops it, once
    // the catalog has committed (a failed request keeps the table).
    onPackageChange(services, async (db, packageId, change, afterCommit) => {
      const ids = await datastoreTablesToDrop(db, packageId, change === 'purged');
      for (const id of ids) await setDatastoreActiveFlag(db, id, false);
      if (!ids.length) return;
      afterCommit(async () => {
        for (const id of ids) {
          await backend.delete({ resource_id: id }).catch((e) => {
            if (!(e instanceof NotFoundError)) throw e;
          });
        }
      });
    });
    services.registry.defineAll(datastoreActions);
    // datastore_search_sql exists only when svc.datastore.sqlsearch.enabled is set.
    registerSearchSql(services, { kind: backend.kind, ...sqlRead });
  },
  routes: async (app, { services }) => dumpExtension.register(app, services),
};
