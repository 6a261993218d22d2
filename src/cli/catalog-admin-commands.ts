// The catalog's operator commands (dataset delete/purge, views create, search-index check/clear,
// config runtime values): like admin-commands.ts, run in the running server or in the CLI process.
import type { Services } from '../actions/context.ts';
import { callAction } from '../actions/registry.ts';
import { SYSADMIN_INTERNAL } from '../auth/identity.ts';
import { activePackages } from '../model/package-lists.ts';
import { findPackage } from '../model/packages.ts';
import { allSystemInfo } from '../model/system-info.ts';
import { CliError } from './extensions.ts';

type Args = Record<string, unknown>;

const asSysadmin = (s: Services, action: string, data: Record<string, unknown>) =>
  callAction(s, action, data, { identity: SYSADMIN_INTERNAL });

function strList(args: Args, key: string): string[] {
  const v = args[key] ?? [];
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw new CliError(`${key} must be a list of strings`);
  return v;
}

async function dataset(s: Services, args: Args): Promise<{ id: string; name: string; state: string }> {
  const ref = args.id;
  if (typeof ref !== 'string' || !ref) throw new CliError('id is required');
  const pkg = await findPackage(s.db, ref);
  if (!pkg) throw new CliError(`no dataset ${ref}`);
  return pkg;
}

export const catalogAdminCommands: Record<string, (s: Services, args: Args) => Promise<string[]>> = {
  'dataset delete': async (s, a) => {
    const pkg = await dataset(s, a);
    if (pkg.state === 'deleted') return [`dataset ${pkg.name} is already deleted`];
    await asSysadmin(s, 'package_delete', { id: pkg.id });
    return [`deleted dataset ${pkg.name} (svc dataset purge removes it for good)`];
  },
  'dataset purge': async (s, a) => {
    const pkg = await dataset(s, a);
    await asSysadmin(s, 'dataset_purge', { id: pkg.id });
    return [`purged dataset ${pkg.name}`];
  },
  'views create': async (s, a) => {
    const names = strList(a, 'datasets');
    const targets = names.length ? await Promise.all(names.map((id) => dataset(s, { id }))) : await activePackages(s.db);
    const lines: string[] = [];
    let total = 0;
    for (const pkg of targets) {
      let n = 0;
      for (const createDatastoreViews of [false, true]) {
        const views = (await asSysadmin(s, 'package_create_default_resource_views', {
          package: { id: pkg.id },
          create_datastore_views: createDatastoreViews,
        })) as unknown[];
        n += views.length;
      }
      if (n) lines.push(`${pkg.name}: ${n} view(s) created`);
      total += n;
    }
    lines.push(`created ${total} view(s) on ${targets.length} dataset(s)`);
    return lines;
  },
  'search-index check': async (s) => {
    const { checkSearchIndex } = await import('../search/index-check.ts');
    const c = await checkSearchIndex(s);
    const lines = [
      ...c.missing.map((name) => `missing\t${name}`),
      ...c.stale.map((name) => `stale\t${name}`),
      c.missing.length || c.stale.length || c.orphans
        ? `${c.missing.length} missing, ${c.stale.length} stale, ${c.orphans} of purged datasets: run svc search-index rebuild`
        : 'the search index is up to date',
    ];
    return lines;
  },
  'search-index clear': async (s) => {
    const { clearSearchIndex } = await import('../search/index-check.ts');
    const n = await clearSearchIndex(s);
    return [`cleared the search index (${n} datasets): searches find nothing until svc search-index rebuild`];
  },
  /** The options sysadmins saved with config_option_update: `name<TAB>JSON value` lines. */
  'config runtime': async (s) => {
    const saved = await allSystemInfo(s.db, 'config:');
    return Object.entries(saved).map(([k, v]) => `${k.slice('config:'.length)}\t${v}`);
  },
};
