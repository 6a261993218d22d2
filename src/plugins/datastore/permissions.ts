// `svc datastore set-permissions`: the SQL a database superuser runs so that the read-only user of
// svc.datastore.read_url can read the data store (and nothing else), and the write user owns it.
// Modelled on CKAN's set_permissions.sql.
import { quoteIdent as qi } from '../../db/sql.ts';
import { METADATA_VIEW, METADATA_VIEW_SQL } from '../../datastore/catalog.ts';
import { cliCommands } from '../../cli/extensions.ts';
import { ConfigError } from '../../config/load.ts';

function parts(url: string, option: string): { user: string; db: string } {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new ConfigError(`${option} is not a valid postgresql:// URL`);
  }
  const user = decodeURIComponent(u.username);
  const db = decodeURIComponent(u.pathname.replace(/^\//, ''));
  if (!user) throw new ConfigError(`${option} has no user name`);
  if (!db) throw new ConfigError(`${option} has no database name`);
  return { user, db };
}

/** The set-permissions SQL for the data store database of writeUrl and the read-only user of readUrl. */
export function setPermissionsSql(writeUrl: string, readUrl: string): string {
  const w = parts(writeUrl, 'svc.datastore.write_url');
  const r = parts(readUrl, 'svc.datastore.read_url');
  if (w.user === r.user) throw new ConfigError('svc.datastore.read_url must use a different user than svc.datastore.write_url');
  const writer = qi(w.user);
  const reader = qi(r.user);
  const db = qi(w.db);
  const shown = w.db.replace(/[^\w.-]/g, '?');
  return `-- svc data store permissions: run as a database superuser, connected to the data store database
-- (for example: svc datastore set-permissions | psql -U postgres -d ${shown} --set ON_ERROR_STOP=1)

-- nobody but the write user may create objects in the data store schema
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
REVOKE USAGE ON SCHEMA public FROM PUBLIC;
GRANT CREATE ON SCHEMA public TO ${writer};
GRANT USAGE ON SCHEMA public TO ${writer};

-- the read-only user may connect and read, nothing more
GRANT CONNECT ON DATABASE ${db} TO ${reader};
GRANT USAGE ON SCHEMA public TO ${reader};
REVOKE CREATE ON SCHEMA public FROM ${reader};
GRANT SELECT ON ALL TABLES IN SCHEMA public TO ${reader};
ALTER DEFAULT PRIVILEGES FOR USER ${writer} IN SCHEMA public GRANT SELECT ON TABLES TO ${reader};
ALTER ROLE ${reader} SET default_transaction_read_only = on;

-- a view listing data store tables and aliases (resource ids and alias names)
${METADATA_VIEW_SQL}
ALTER VIEW ${qi(METADATA_VIEW)} OWNER TO ${writer};
GRANT SELECT ON ${qi(METADATA_VIEW)} TO ${reader};
`;
}

cliCommands.push((program, tools) => {
  const datastore = program.command('datastore').description('the data store');
  datastore
    .command('set-permissions')
    .description(
      'print the SQL a database superuser runs to give the read-only user of svc.datastore.read_url read access (pipe it to psql)',
    )
    .action(async () => {
      const cfg = await tools.config();
      const writeUrl = cfg.str('svc.datastore.write_url');
      const readUrl = cfg.str('svc.datastore.read_url');
      if (!writeUrl) {
        throw new ConfigError(
          'svc.datastore.write_url is not set: the embedded data store creates its read-only role itself and needs no permissions',
        );
      }
      if (!readUrl) throw new ConfigError('svc.datastore.read_url is not set: give the URL of the read-only user');
      tools.io.out(setPermissionsSql(writeUrl, readUrl));
    });
});
