// change_counter: an example plugin that uses each kind of hook svc offers (docs/plugins.md).
// It counts the committed changes of every dataset in this process, and
// - declares an option (svc.change_counter.keep_tag),
// - listens to dataset changes (onPackageChange, counting once the transaction has committed),
// - adds an action (dataset_change_count) with typed parameters,
// - wraps an action (package_show gains num_changes) and an auth function (package_delete refuses
//   datasets tagged with the keep tag),
// - shares its counter with other code (services.plugins) and cleans up on close (services.onClose),
// - adds an HTTP route (GET /change-counter/:id) that calls its action as the requesting user.
// test/plugin-example.test.ts loads it into the app and checks every hook through HTTP.
import type { Plugin } from '../../../src/plugins/plugin.ts';
import { declareOption } from '../../../src/config/options.ts';
import { callAction, defineAction } from '../../../src/actions/registry.ts';
import { p } from '../../../src/validation/params.ts';
import { anyone } from '../../../src/auth/rules.ts';
import { onPackageChange } from '../../../src/model/packages.ts';
import { requestIdentity } from '../../../src/http/request-identity.ts';
import { ActionError, AuthorizationError } from '../../../src/errors.ts';

// Options are declared when the module is imported, so the configuration can check them at start.
declareOption({
  name: 'svc.change_counter.keep_tag',
  type: 'string',
  default: 'keep',
  description: 'Datasets with this tag may be deleted by sysadmins only (change_counter example plugin)',
});

/** Committed changes per dataset id, in this process. */
export class ChangeCounter {
  private readonly counts = new Map<string, number>();
  count(packageId: string): number {
    return this.counts.get(packageId) ?? 0;
  }
  add(packageId: string): void {
    this.counts.set(packageId, this.count(packageId) + 1);
  }
  forget(packageId: string): void {
    this.counts.delete(packageId);
  }
  clear(): void {
    this.counts.clear();
  }
}

export const changeCounterPlugin: Plugin = {
  name: 'change_counter',

  setup(services) {
    const counter = new ChangeCounter();
    services.plugins.change_counter = counter;
    services.onClose.push(async () => counter.clear());

    // Runs inside the write's transaction; a change that rolls back must not count, so the
    // counting waits for the commit.
    onPackageChange(services, (_db, packageId, change, afterCommit) => {
      afterCommit(() => (change === 'purged' ? counter.forget(packageId) : counter.add(packageId)));
    });

    services.registry.define(
      defineAction({
        name: 'dataset_change_count',
        sideEffectFree: true,
        auth: anyone,
        description: 'How many committed changes of a dataset this server process has seen (example plugin change_counter).',
        params: { id: p.string('id or name of the dataset').required() },
        returns: { description: '{id, name, changes}', rtype: 'dictionary' },
        handler: async (ctx, params) => {
          // package_show checks that the caller may read the dataset (private ones included).
          const pkg = await ctx.call('package_show', { id: params.id });
          return { id: pkg.id, name: pkg.name, changes: counter.count(pkg.id) };
        },
      }),
    );

    services.registry.chainAction('package_show', (next) => async (ctx, params) => {
      const pkg = (await next(ctx, params)) as { id: string };
      return { ...pkg, num_changes: counter.count(pkg.id) };
    });

    // Sysadmins never reach auth functions (checkAccess lets them through), so they still may.
    services.registry.chainAuth('package_delete', (next) => async (ctx, params) => {
      await next(ctx, params);
      const keepTag = ctx.config.str('svc.change_counter.keep_tag');
      const pkg = await ctx.call('package_show', { id: params.id }, { ignoreAuth: true });
      if (pkg.tags.some((t: { name: string }) => t.name === keepTag))
        throw new AuthorizationError(`dataset ${pkg.name} is tagged ${keepTag}: only sysadmins may delete it`);
    });
  },

  // A Fastify plugin, registered on every app the server builds, with the same services.
  routes: async (app, { services }) => {
    app.get<{ Params: { id: string } }>('/change-counter/:id', async (request, reply) => {
      try {
        const identity = await requestIdentity(services, request);
        const result = (await callAction(services, 'dataset_change_count', { id: request.params.id }, { identity })) as {
          changes: number;
        };
        return reply.type('text/plain').send(`${request.params.id}: ${result.changes} changes\n`);
      } catch (e) {
        if (e instanceof ActionError) return reply.code(e.status).type('text/plain').send(`${e.message}\n`);
        throw e;
      }
    });
  },
};
