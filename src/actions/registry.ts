// The action registry: every action is declared once (name, side-effect-free?, auth rule, typed
// parameter declarations, result, handler). Routes, validation, help_show, the OpenAPI document and
// auth checks all come from here.
// Plugins add actions and auth functions to the same registry, or chain existing ones.
import { AuthorizationError, NotFoundError } from '../errors.ts';
import type { TSchema } from '@sinclair/typebox';
import { validateOrThrow, type ExtrasPolicy, type Schema } from '../validation/validate.ts';
import type { ActionContext, AfterCommit, Identity, Services } from './context.ts';
import { backoff, checkInput, databaseErrorAsValidation, isRace, overflowAsValidation } from './call-errors.ts';
import { compileParams, helpText, type ParamValues, type Params } from '../validation/params.ts';
import { schemingHelpNotes } from '../scheming/json-schema.ts';
import { currentRequest } from '../metrics/request-context.ts';
import type { ReadReplicas } from '../db/replicas.ts';
import { savepoint, type Connection } from '../db/database.ts';

/** Throws AuthorizationError when the caller may not do it. */
export type AuthFunction = (ctx: ActionContext, params: Record<string, any>) => void | Promise<void>;

export interface ActionDefinition<P = Record<string, any>, R = unknown> {
  name: string;
  /** Side-effect-free actions may be called with GET and run without a write transaction. */
  sideEffectFree: boolean;
  /** The auth rule; registered as the auth function of the same name. */
  auth: AuthFunction;
  /** Run the auth rule on the raw input before validation (CKAN's order for creates). */
  authBeforeValidation?: boolean;
  /** What the action does: the first paragraph of help_show and the OpenAPI summary. */
  description: string;
  /** The typed parameter declarations (src/validation/params.ts): validation, help and OpenAPI. */
  params?: Params;
  /** What happens to keys the declarations do not name: kept, dropped or refused (default drop: CKAN ignores them). */
  extras?: ExtrasPolicy;
  /**
   * 'handler': the handler validates its input with these declarations itself, because the rules
   * need the stored record first (a dataset's resources and organization on update); the handler
   * then receives the input as sent. Help and the OpenAPI document still come from params.
   */
  validatedBy?: 'registry' | 'handler';
  /** What the action returns (help_show's :returns: and the OpenAPI result schema). */
  returns?: ActionReturns;
  /** The OpenAPI tag (entity); derived from the name when not given. */
  tag?: string;
  /**
   * Top-level list parameters of a large JSON body that reach the handler as bytes, read while
   * they are used (JsonArrayText: datastore_upsert's records). The end of such a list is guessed
   * from the end of the body; the handler must read the whole list on every path that succeeds
   * (the reading checks the guess), and keep nothing when it fails (the HTTP layer then reads the
   * body exactly and may call again).
   */
  lazyLists?: readonly string[];
  /** false: the handler manages its own transactions (long data store loads). */
  transaction?: boolean;
  handler: (ctx: ActionContext, params: P) => Promise<R> | R;
}

export interface ActionReturns {
  description: string;
  /** CKAN's :rtype: (dictionary, list, string, bool, int). */
  rtype?: string;
  /** JSON Schema of the result, for the OpenAPI document. */
  schema?: TSchema;
}

/** Declares an action with typed parameters: the handler's params type comes from the declarations. */
export function defineAction<const P extends Params = {}, R = unknown>(
  def: Omit<ActionDefinition<ParamValues<P>, R>, 'params' | 'description'> & { params?: P; description: string },
): ActionDefinition<ParamValues<P>, R> {
  return def as ActionDefinition<ParamValues<P>, R>;
}

const compiled = new WeakMap<ActionDefinition<any, any>, Schema | null>();

/** The validator schema of an action, compiled once from its declarations. */
export function actionSchema(def: ActionDefinition<any, any>): Schema | null {
  let schema = compiled.get(def);
  if (schema === undefined) {
    schema = def.params && def.validatedBy !== 'handler' ? compileParams(def.params, def.extras ?? 'drop') : null;
    compiled.set(def, schema);
  }
  return schema;
}

/** The help_show text of an action; with services, what the configured custom schemas add (the dataset types). */
export function actionHelp(def: ActionDefinition<any, any>, services?: Pick<Services, 'scheming'>): string {
  const note = services?.scheming ? schemingHelpNotes(services.scheming)[def.name] : undefined;
  return helpText(note ? `${def.description}\n\n${note}` : def.description, def.params, def.returns);
}

export type ActionChain = (next: ActionDefinition['handler']) => ActionDefinition['handler'];
export type AuthChain = (next: AuthFunction) => AuthFunction;

export class Registry {
  private readonly actions = new Map<string, ActionDefinition<any, any>>();
  private readonly auths = new Map<string, AuthFunction>();

  define<P, R>(def: ActionDefinition<P, R>): void {
    this.actions.set(def.name, def);
    this.auths.set(def.name, def.auth);
  }

  defineAll(defs: ActionDefinition<any, any>[]): void {
    defs.forEach((d) => this.define(d));
  }

  /** An auth function that is not an action's own (e.g. 'package_collaborator_manage'). */
  defineAuth(name: string, fn: AuthFunction): void {
    this.auths.set(name, fn);
  }

  /** Wraps an existing action's handler (plugins). */
  chainAction(name: string, wrap: ActionChain): void {
    const def = this.get(name);
    this.actions.set(name, { ...def, handler: wrap(def.handler) });
  }

  chainAuth(name: string, wrap: AuthChain): void {
    const fn = this.auths.get(name);
    if (!fn) throw new Error(`no auth function ${name}`);
    this.auths.set(name, wrap(fn));
    const def = this.actions.get(name);
    if (def) this.actions.set(name, { ...def, auth: this.auths.get(name)! });
  }

  remove(name: string): void {
    this.actions.delete(name);
  }

  has(name: string): boolean {
    return this.actions.has(name);
  }

  get(name: string): ActionDefinition<any, any> {
    const def = this.actions.get(name);
    if (!def) throw new NotFoundError(`action ${name}`);
    return def;
  }

  names(): string[] {
    return [...this.actions.keys()].sort();
  }

  authFunction(name: string): AuthFunction {
    const fn = this.auths.get(name);
    if (!fn) throw new Error(`no auth function ${name}`);
    return fn;
  }
}

/** Runs the named auth function; sysadmins pass every check (CKAN has no core exception). */
export async function checkAccess(ctx: ActionContext, name: string, params: Record<string, any> = {}): Promise<void> {
  if (ctx.identity.user?.state === 'deleted') throw new AuthorizationError();
  if (ctx.ignoreAuth || ctx.identity.sysadmin) return;
  await ctx.services.registry.authFunction(name)(ctx, params);
}

/** Whether the caller passes an auth function, without throwing. */
export async function isAuthorized(ctx: ActionContext, name: string, params: Record<string, any> = {}): Promise<boolean> {
  try {
    await checkAccess(ctx, name, params);
    return true;
  } catch (e) {
    if (e instanceof AuthorizationError) return false;
    throw e;
  }
}

export interface CallOptions {
  identity: Identity;
  files?: ActionContext['files'];
  request?: ActionContext['request'];
  web?: boolean;
  rawJsonAnswer?: boolean;
}

/**
 * The contexts of calls that run in a transaction of their own (callAction's; not those of
 * ctx.call inside another action, whose caller may catch an error and go on in the transaction).
 */
const ownTransactions = new WeakSet<ActionContext>();

/** Whether an error thrown in this call ends its transaction and the call with it (nothing catches it inside). */
export function endsWithItsTransaction(ctx: ActionContext): boolean {
  return ownTransactions.has(ctx);
}

/** How many times a write that lost a race to another transaction is run (call-errors.ts). */
const WRITE_ATTEMPTS = 6;

/**
 * Calls an action from outside (HTTP, CLI): one transaction for the whole call unless it is a read.
 * A write that loses a race is run again from the start; the database's refusals of values
 * become Validation Errors (call-errors.ts).
 */
export async function callAction(services: Services, name: string, input: Record<string, unknown>, opts: CallOptions): Promise<unknown> {
  const def = services.registry.get(name);
  checkInput(input);
  const inTransaction = !(def.sideEffectFree || def.transaction === false);
  // (PGlite runs one transaction at a time: nothing can race there, a failure would only repeat)
  const attempts = services.db.kind === 'postgres' ? WRITE_ATTEMPTS : 1;
  for (let attempt = 1; ; attempt++) {
    const committed: AfterCommit[] = [];
    const base = {
      services,
      config: services.config,
      identity: opts.identity,
      files: opts.files,
      request: opts.request,
      web: opts.web,
      rawJsonAnswer: opts.rawJsonAnswer,
      ignoreAuth: false,
      afterCommit: (fn: AfterCommit) => committed.push(fn),
    };
    let result: unknown;
    // Reads outside a request (jobs, the CLI) stay on the primary: nothing tells them what to wait for.
    const scope = currentRequest();
    const reads = def.sideEffectFree && scope ? services.reads : undefined;
    try {
      result = inTransaction
        ? await services.db.transaction((tx) => {
            const ctx = makeContext({ ...base, db: tx });
            ownTransactions.add(ctx);
            return runDefinition(ctx, def, input);
          })
        : reads
          ? await reads.read(scope, (db) => runDefinition(makeContext({ ...base, db }), def, input))
          : await runDefinition(makeContext({ ...base, db: services.db }), def, input);
    } catch (e) {
      if (inTransaction && attempt < attempts && isRace(e)) {
        await backoff(attempt);
        continue;
      }
      throw overflowAsValidation(databaseErrorAsValidation(e, input), def.lazyLists);
    }
    if (services.reads && !def.sideEffectFree) await noteWrite(services.reads);
    for (const fn of committed) {
      try {
        await fn();
      } catch (e) {
        // The database has the change already: report, do not fail the call.
        services.logger.error({ err: e, action: name }, 'work after commit failed');
      }
    }
    // after the work after commit: a resource's data store table is dropped there
    if (services.datastoreReads && !def.sideEffectFree) await noteDatastoreWrite(services.datastoreReads);
    return result;
  }
}

export interface InTransactionOptions {
  identity: Identity;
  /** The caller's transaction: the call runs in a savepoint of it. */
  tx: Connection;
  /** Takes the call's work after commit: the caller runs it once its transaction has committed. */
  afterCommit: (fn: AfterCommit) => void;
}

/**
 * Calls a writing action from outside (a job) inside the caller's transaction, in a savepoint of
 * its own: an error undoes this call's writes alone (the savepoint is rolled back, the caller's
 * transaction goes on) and is thrown as callAction throws it (database refusals as Validation
 * Errors), except a race (call-errors.ts isRace), thrown as it is: the caller runs its transaction
 * again. The call counts as one that ends with its transaction (endsWithItsTransaction): its
 * savepoint ends with its error. Not for calls in a request's scope (no read-your-writes note).
 */
export async function callActionInTransaction(
  services: Services,
  name: string,
  input: Record<string, unknown>,
  opts: InTransactionOptions,
): Promise<unknown> {
  const def = services.registry.get(name);
  checkInput(input);
  const sp = await savepoint(opts.tx);
  const ctx = makeContext({
    services,
    config: services.config,
    identity: opts.identity,
    db: opts.tx,
    ignoreAuth: false,
    afterCommit: opts.afterCommit,
  });
  ownTransactions.add(ctx);
  let result: unknown;
  try {
    result = await runDefinition(ctx, def, input);
  } catch (e) {
    await sp.rollback();
    if (isRace(e)) throw e;
    throw overflowAsValidation(databaseErrorAsValidation(e, input), def.lazyLists);
  }
  await sp.release();
  return result;
}

/** Keeps the primary's WAL position after a write in the request's scope: the caller's next reads must see it. */
async function noteWrite(reads: ReadReplicas): Promise<void> {
  const scope = currentRequest();
  if (!scope) return;
  const lsn = await reads.primaryLsn().catch(() => null);
  if (lsn === null || (scope.wroteAt !== undefined && lsn <= scope.wroteAt)) return;
  // the answer tells the caller; this request's own later reads (a page after its form) must see it too
  scope.wroteAt = lsn;
  scope.readAfter = lsn;
}

/** The same for the data store's database, when a write transaction ran there during the request (plugins/datastore/replica.ts). */
async function noteDatastoreWrite(reads: ReadReplicas): Promise<void> {
  const state = currentRequest()?.datastore;
  if (!state?.wrote) return;
  state.wrote = false;
  // a read URL known not to be a replica (the primary itself, as the read-only user) is never behind
  if (!reads.mayLag()) return;
  const lsn = await reads.primaryLsn().catch(() => null);
  if (lsn === null || (state.wroteAt !== undefined && lsn <= state.wroteAt)) return;
  state.wroteAt = lsn;
  state.readAfter = lsn;
}

/** Runs fn after the call commits (at once for a context without a transaction of its own). */
export async function afterCommit(ctx: ActionContext, fn: AfterCommit): Promise<void> {
  if (ctx.afterCommit) ctx.afterCommit(fn);
  else await fn();
}

function makeContext(base: Omit<ActionContext, 'call'>): ActionContext {
  const ctx: ActionContext = {
    ...base,
    call: (name, input, opts) => {
      const def = ctx.services.registry.get(name);
      const child = makeContext({
        ...ctx,
        ignoreAuth: opts?.ignoreAuth ?? ctx.ignoreAuth,
        files: opts?.files ?? undefined,
        rawJsonAnswer: undefined,
        idAnswer: opts?.idAnswer,
      });
      if (opts?.endsWithCaller && ownTransactions.has(ctx)) ownTransactions.add(child);
      return runDefinition(child, def, input);
    },
  };
  return ctx;
}

async function runDefinition(ctx: ActionContext, def: ActionDefinition, input: Record<string, unknown>): Promise<unknown> {
  if (def.authBeforeValidation) await checkAccess(ctx, def.name, input);
  const schema = actionSchema(def);
  const params = schema ? await validateOrThrow(schema, input, ctx) : { ...input };
  if (!def.authBeforeValidation) await checkAccess(ctx, def.name, params);
  return def.handler(ctx, params);
}

/** Whether a caller passes an auth function, outside any call (the web pages decide which buttons to show). */
export async function callerMay(
  services: Services,
  identity: Identity,
  authName: string,
  params: Record<string, any> = {},
): Promise<boolean> {
  const ctx = makeContext({ services, config: services.config, identity, db: services.db, ignoreAuth: false, web: true });
  return isAuthorized(ctx, authName, params);
}
