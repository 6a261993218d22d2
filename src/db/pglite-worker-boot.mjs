// Entry of the data store's PGlite worker thread: TypeScript loading (tsx) is per thread, so the
// worker registers it before it loads its module.
import { register } from 'tsx/esm/api';

register();
await import('./pglite-worker-thread.ts');
