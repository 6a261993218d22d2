// What every action handler receives, and the services a process has. Below the actions layer so
// auth, model, validation, files and http can name these types without reaching up.
import type { Logger } from 'pino';
import type { Config } from './config/load.ts';
import type { Connection, Database, PGliteDatabase, Queryable } from './db/database.ts';
import type { JobService } from './jobs/service.ts';
import type { ReadReplicas } from './db/replicas.ts';
import type { CatalogChanges } from './db/notifications.ts';
import type { UserRow } from './model/users.ts';
import type { Registry } from './actions/registry.ts';
import type { SchemingSchemas } from './scheming/types.ts';

export interface Identity {
  /** null for an anonymous caller. */
  user: UserRow | null;
  sysadmin: boolean;
  /** How the caller authenticated; 'internal' for the CLI and the site user. */
  via?: 'token' | 'apikey' | 'session' | 'internal';
  tokenId?: string;
}

export const ANONYMOUS: Identity = Object.freeze({ user: null, sysadmin: false });

export interface UploadedFile {
  fieldName: string;
  filename: string;
  mimetype: string;
  /** Path of the received bytes in a temporary file (moved into storage by the files layer). */
  path: string;
  size: number;
  /** SHA-256 of the bytes (hex), computed on a thread as they were received; it may come later. */
  sha256?: Promise<string>;
}

/** Long-lived things a process has: configuration, databases, the registry. Plugins add theirs. */
export interface Services {
  config: Config;
  db: Database;
  registry: Registry;
  logger: Logger;
  /** Plugin-provided services, by name (e.g. 'datastore'). */
  plugins: Record<string, unknown>;
  /** Runs when the process stops (plugins close their connections). */
  onClose: (() => Promise<void>)[];
  /** Opens an embedded (PGlite) database by name under svc.storage_path ('catalog', 'datastore'). */
  openEmbedded: (name: string) => Promise<PGliteDatabase>;
  /** Opens an embedded database by name in a worker thread (the data store: its queries can be timed out). */
  openEmbeddedWorker: (name: string) => Promise<Database>;
  /** The background job queue (src/jobs). */
  jobs: JobService;
  /** Streaming replicas serving side-effect-free actions (svc.database_read_urls; PostgreSQL only). */
  reads?: ReadReplicas;
  /** The data store's read URL as a (possible) streaming replica of its write URL's server (PostgreSQL only). */
  datastoreReads?: ReadReplicas;
  /** Changes other processes on the same PostgreSQL catalog announce (PostgreSQL only). */
  changes?: CatalogChanges;
  /** Custom metadata schemas (svc.scheming.*); absent when none is configured. */
  scheming?: SchemingSchemas;
}

/** Work run once a write has committed (files, the data store's own database). */
export type AfterCommit = () => void | Promise<void>;

export interface ActionContext {
  services: Services;
  config: Config;
  identity: Identity;
  /** The current transaction for writes, the database for reads. Always query through this. */
  db: Queryable | Connection;
  /** Files of a multipart request, by field name. */
  files?: Record<string, UploadedFile>;
  /** The HTTP request behind the call, when there is one (for links in results). */
  request?: { method: string; path: string; query: string };
  /** The call comes from a web page rather than the Action API (user_create follows create_user_via_web then). */
  web?: boolean;
  /**
   * The result goes straight into the Action API's JSON answer (a top-level HTTP call, not a call
   * from another action or a page): it may hold a JsonArrayText, written as its bytes.
   */
  rawJsonAnswer?: boolean;
  /** Internal calls may skip auth checks (CKAN's ignore_auth). */
  ignoreAuth: boolean;
  /**
   * Work outside the database (moving and removing files) done once the call's transaction has
   * committed, so a request that fails never touches them; at once when there is no transaction.
   */
  afterCommit?: (fn: AfterCommit) => void;
  /** The caller reads only the answer's id: a write may answer {id} instead of building its dict (ctx.call's idAnswer). */
  idAnswer?: boolean;
  /**
   * Calls another action in the same transaction with the same caller (auth checked unless
   * ignoreAuth). idAnswer: only the answer's id is read. endsWithCaller: the caller lets any error
   * of the call end its own call (nothing catches it), so the call ends with the caller's
   * transaction when the caller does (endsWithItsTransaction).
   */
  call: (
    name: string,
    input: Record<string, unknown>,
    opts?: { ignoreAuth?: boolean; files?: ActionContext['files']; idAnswer?: boolean; endsWithCaller?: boolean },
  ) => Promise<any>;
}
