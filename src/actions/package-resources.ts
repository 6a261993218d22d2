// The resources of a dataset write (package_create/update, resource_create/update): a validated
// resource dict split into columns and extras, new rows and replacements (package_update's replace
// semantics), uploads staged in the file store and put in place once the transaction commits.
import { randomUUID } from 'node:crypto';
import type { ActionContext, UploadedFile } from './context.ts';
import { afterCommit } from './registry.ts';
import { mungeFilename } from '../files/storage.ts';
import { openFileStore, type AfterCommitWork, type FileStore } from '../files/store.ts';
import {
  guessFormat,
  guessMimetype,
  insertResource,
  insertResources,
  markResourcesDeleted,
  updateResource,
  updateResources,
  RESOURCE_FIELDS,
  type ResourceRow,
  type ResourceWrite,
} from '../model/resources.ts';
import { BOUNDS } from '../validation/params.ts';
import { RESOURCE_SERVICE_KEYS, resourceSchema } from '../validation/package-schema.ts';

/** A call of the system itself (a job, the harvest) or one that skips the checks. */
export const internal = (ctx: ActionContext) => ctx.ignoreAuth || ctx.identity.via === 'internal';

/**
 * File work of an action: uploads are staged in the file store before the commit (a store that is
 * down fails the action), put in place and removed once its transaction has committed (a failed
 * write never touches stored files).
 */
export class FileOps {
  private readonly ops: ((store: FileStore) => Promise<AfterCommitWork>)[] = [];
  store(resourceId: string, file: UploadedFile) {
    this.ops.push((store) => store.stage(resourceId, file));
  }
  remove(resourceId: string) {
    this.ops.push(async (store) => () => store.remove(resourceId));
  }
  constructor(private readonly ctx: ActionContext) {}
  async run() {
    const ops = this.ops.splice(0);
    if (!ops.length) return;
    const store = await openFileStore(this.ctx.config);
    const work: AfterCommitWork[] = [];
    for (const op of ops) work.push(await op(store));
    return afterCommit(this.ctx, async () => {
      for (const w of work) await w();
    });
  }
}

/** Splits a validated resource dict into columns and extras. */
function resourceParts(r: Record<string, any>): { cols: ResourceWrite; extras: Record<string, unknown>; sent: Set<string> } {
  const cols: Record<string, unknown> = {};
  const extras: Record<string, unknown> = {};
  const known = new Set<string>([...RESOURCE_FIELDS, 'id', 'datastore_active']);
  for (const [k, v] of Object.entries(r)) {
    if (known.has(k)) cols[k] = v;
    else if (!RESOURCE_SERVICE_KEYS.has(k) && !Object.hasOwn(resourceSchema, k)) extras[k] = v;
  }
  return { cols: cols as ResourceWrite, extras, sent: new Set(Object.keys(r)) };
}

const utcNow = () => new Date().toISOString().replace('Z', '');

function lastSegment(url: string): string {
  const seg = url.split('?')[0].split('#')[0].replace(/\/+$/, '').split('/').pop() ?? '';
  try {
    return decodeURIComponent(seg);
  } catch {
    return seg;
  }
}

/** The file name an upload was sent with, without any folder a browser put before it. */
function uploadName(filename: string): string {
  return (filename.split(/[\\/]/).pop() ?? '').trim().slice(0, BOUNDS.key);
}

/**
 * Creates a resource from a validated dict (appended at position). An uploaded file makes it an
 * upload; the file is stored by fileOps after the writes.
 */
export async function createResource(
  ctx: ActionContext,
  packageId: string,
  r: Record<string, any>,
  position: number,
  fileOps: FileOps,
  file?: UploadedFile,
): Promise<ResourceRow> {
  const row = await insertResource(ctx.db, packageId, newResourceWrite(ctx, r, position, file));
  if (file) fileOps.store(row.id, file);
  return row;
}

/** The row of a new resource (its id given or new) from a validated dict. */
function newResourceWrite(
  ctx: ActionContext,
  r: Record<string, any>,
  position: number,
  file?: UploadedFile,
): ResourceWrite & { id: string } {
  const { cols, extras } = resourceParts(r);
  const w: ResourceWrite & { id: string } = { ...cols, id: (cols as { id?: string }).id ?? randomUUID(), extras, position };
  if (!internal(ctx)) delete w.datastore_active;
  if (file) {
    Object.assign(w, uploadedFileColumns(file, cols.mimetype));
    w.last_modified = utcNow();
    // CKAN names a new upload without a name after its file
    if (!w.name) w.name = uploadName(file.filename) || null;
  }
  if (!w.format) w.format = guessFormat(file ? file.filename : String(w.url ?? '')) || (w.format ?? '');
  return w;
}

/** Updates a resource with package_update's replace semantics: fields not sent are cleared, resources not sent are deleted. */
export async function replaceResource(
  ctx: ActionContext,
  old: ResourceRow,
  r: Record<string, any>,
  position: number | undefined,
  fileOps: FileOps,
  file?: UploadedFile,
): Promise<ResourceRow> {
  return updateResource(ctx.db, old.id, replacementWrite(ctx, old, r, position, fileOps, file));
}

/** The changes of replaceResource (its file work registered in fileOps). */
function replacementWrite(
  ctx: ActionContext,
  old: ResourceRow,
  r: Record<string, any>,
  position: number | undefined,
  fileOps: FileOps,
  file?: UploadedFile,
): ResourceWrite {
  const { cols, extras, sent } = resourceParts(r);
  const w: ResourceWrite = { state: 'active', extras };
  // cleared when not sent
  w.description = cols.description ?? null;
  w.resource_type = cols.resource_type ?? null;
  w.mimetype = cols.mimetype ?? null;
  w.mimetype_inner = cols.mimetype_inner ?? null;
  // kept when not sent
  for (const k of ['name', 'format', 'hash', 'size', 'created', 'last_modified', 'cache_url', 'cache_last_updated', 'url_type'] as const) {
    if (sent.has(k)) (w as Record<string, unknown>)[k] = cols[k] ?? null;
  }
  if (sent.has('clear_upload') && r.clear_upload) w.url_type = null;
  if (internal(ctx) && cols.datastore_active !== undefined) w.datastore_active = cols.datastore_active;
  if (position !== undefined) w.position = position;
  const wasUpload = old.url_type === 'upload';
  if (file) {
    Object.assign(w, uploadedFileColumns(file, cols.mimetype));
    if (!sent.has('format') || !cols.format) w.format = guessFormat(file.filename) || (cols.format ?? old.format);
    w.last_modified = utcNow();
    fileOps.store(old.id, file);
  } else {
    const urlType = w.url_type !== undefined ? w.url_type : old.url_type;
    if (urlType === 'upload' && wasUpload) {
      // the file stays; the URL sent back is the download URL: keep its file name
      if (typeof cols.url === 'string' && cols.url) w.url = old.url.includes('/') ? cols.url : mungeFilename(lastSegment(cols.url));
      else w.url = old.url;
    } else {
      w.url = typeof cols.url === 'string' ? cols.url : '';
      if (wasUpload) fileOps.remove(old.id);
    }
  }
  return w;
}

/** The columns an uploaded file sets: its URL (file name), size and type (the one sent wins). */
function uploadedFileColumns(file: UploadedFile, sentMimetype: string | null | undefined): Partial<ResourceWrite> {
  return {
    url_type: 'upload',
    url: mungeFilename(file.filename),
    size: file.size,
    mimetype:
      sentMimetype ??
      guessMimetype(file.filename) ??
      (file.mimetype && file.mimetype !== 'application/octet-stream' ? file.mimetype : null),
  };
}

/** A resource dict's `upload` may name a file of the request ({__file: field}, set by package_revise). */
function attachedFile(ctx: ActionContext, upload: unknown): UploadedFile | undefined {
  if (!upload || typeof upload !== 'object' || typeof (upload as any).__file !== 'string') return undefined;
  return ctx.files?.[(upload as any).__file];
}

/**
 * The resource list of a package_create/update: matched by id, others created (in one statement),
 * missing ones deleted. Each is written with its position in the list. current: the dataset's
 * active resources, sent: the resources of the ids sent (read by the validation, under the
 * dataset's lock).
 */
export async function saveResources(
  ctx: ActionContext,
  pkgId: string,
  list: Record<string, any>[] | undefined,
  fileOps: FileOps,
  { existing: current, sentResources: sent }: { existing: ResourceRow[]; sentResources: Map<string, ResourceRow> },
): Promise<void> {
  const byId = new Map(current.map((r) => [r.id, r]));
  const keep = new Set<string>();
  const created: (ResourceWrite & { id: string })[] = [];
  const replaced: { id: string; changes: ResourceWrite }[] = [];
  for (const [i, r] of (list ?? []).entries()) {
    let old = typeof r.id === 'string' ? byId.get(r.id) : undefined;
    if (!old && typeof r.id === 'string') {
      const any = sent.get(r.id);
      if (any && any.package_id === pkgId) old = any; // a deleted resource of this dataset comes back
    }
    const file = attachedFile(ctx, r.upload);
    if (old) {
      replaced.push({ id: old.id, changes: replacementWrite(ctx, old, r, i, fileOps, file) });
      keep.add(old.id);
    } else {
      const w = newResourceWrite(ctx, r, i, file);
      if (file) fileOps.store(w.id, file);
      created.push(w);
      keep.add(w.id);
    }
  }
  await updateResources(ctx.db, replaced);
  await insertResources(ctx.db, pkgId, created);
  const gone = current.filter((r) => !keep.has(r.id));
  await markResourcesDeleted(
    ctx.db,
    gone.map((r) => r.id),
  );
  for (const r of gone) if (r.url_type === 'upload') fileOps.remove(r.id);
}
