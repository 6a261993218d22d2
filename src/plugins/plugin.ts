// The plugin interface: a plugin declares its options at import time (so configuration can
// validate them) and registers actions, auth functions, routes and services in setup().
import type { FastifyPluginAsync } from 'fastify';
import type { Services } from '../context.ts';

export interface Plugin {
  name: string;
  setup(services: Services): Promise<void> | void;
  /** HTTP routes of the plugin, registered on each app built (after setup) with the same services. */
  routes?: FastifyPluginAsync<{ services: Services }>;
}
