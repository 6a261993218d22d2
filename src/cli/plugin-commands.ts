// The plugins' CLI modules, imported for every command line so that their commands show in
// --help: each only declares its commands and imports its code when one runs.
export async function loadPluginCommands(): Promise<void> {
  await Promise.all([
    import('../plugins/datastore/permissions.ts'),
    import('../plugins/datastore/fts-cli.ts'),
    import('../plugins/loader/cli.ts'),
    import('../plugins/dcat/cli.ts'),
    import('./harvest-commands.ts'),
  ]);
}
