// The plugin interface: a plugin declares its options at import time (so configuration can
// validate them) and registers actions, auth functions, routes and services in setup().
import type { Services } from '../actions/context.ts';

export interface Plugin {
  name: string;
  setup(services: Services): Promise<void> | void;
}
