import type { PGlite } from '@electric-sql/pglite';
export declare const EMBEDDED_SHARED_BUFFERS: string;
export declare function openPGlite(opts: { dataDir?: string; template?: string; loadDataDir?: Blob }): Promise<PGlite>;
