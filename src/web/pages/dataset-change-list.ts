// What changed between two versions of a dataset (the package dicts of two activities), as CKAN's
// changes page lists it: the dataset's fields, its organization, visibility, licence, tags,
// extras, other (schema) fields, and its resources added, deleted or changed.

type Dict = Record<string, any>;

export type Change =
  /** A field with a message key for its name, or (raw) a field's own name; with keys, the values are message keys too. */
  | { kind: 'field'; label: string; raw: boolean; old: string; new: string; keys?: boolean }
  | { kind: 'tags'; added: string[]; removed: string[] }
  | { kind: 'resource_added'; name: string; id: string }
  | { kind: 'resource_removed'; name: string }
  | { kind: 'resource_field'; resource: string; id: string; label: string; raw: boolean; old: string; new: string };

/** Dataset fields shown with a name of their own, in CKAN's order. */
const NAMED_FIELDS = ['title', 'name', 'notes', 'url', 'version', 'author', 'author_email', 'maintainer', 'maintainer_email'];
/** Keys compared elsewhere, or that change on every save and say nothing to a reader. */
const NOT_EXTENSION = new Set([
  ...NAMED_FIELDS,
  'id',
  'type',
  'owner_org',
  'organization',
  'private',
  'license_id',
  'license_title',
  'license_url',
  'isopen',
  'tags',
  'extras',
  'resources',
  'groups',
  'num_tags',
  'num_resources',
  'metadata_created',
  'metadata_modified',
  'revision_id',
  'creator_user_id',
  'state',
  'relationships_as_object',
  'relationships_as_subject',
  'tracking_summary',
]);
const RESOURCE_NAMED = ['name', 'format', 'description', 'url'];
const RESOURCE_SKIPPED = new Set([
  ...RESOURCE_NAMED,
  'id',
  'package_id',
  'position',
  'created',
  'metadata_modified',
  'last_modified',
  'state',
  'datastore_active',
  'hash',
  'size',
  'mimetype',
  'tracking_summary',
]);

/** JSON with sorted keys, so equal values read the same. */
function sortedJson(value: unknown): string {
  const sort = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(sort)
      : v && typeof v === 'object'
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .map((k) => [k, sort((v as Dict)[k])]),
          )
        : v;
  return JSON.stringify(sort(value));
}

/** A value as a reader sees it: text as is, anything else as JSON; absent is empty. */
function shown(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return sortedJson(value);
}

function compareFields(
  before: Dict,
  after: Dict,
  keys: Iterable<string>,
  make: (key: string, old: string, now: string) => Change,
): Change[] {
  const out: Change[] = [];
  for (const key of keys) {
    const old = shown(before[key]);
    const now = shown(after[key]);
    if (old !== now) out.push(make(key, old, now));
  }
  return out;
}

const extrasOf = (pkg: Dict): Dict =>
  Object.fromEntries((Array.isArray(pkg.extras) ? pkg.extras : []).map((e: Dict) => [String(e.key), e.value]));
const tagNames = (pkg: Dict): Set<string> => new Set((Array.isArray(pkg.tags) ? pkg.tags : []).map((t: Dict) => String(t.name)));
const union = (a: Dict, b: Dict) => [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();

function resourceChanges(before: Dict, after: Dict): Change[] {
  const list = (pkg: Dict): Dict[] => (Array.isArray(pkg.resources) ? pkg.resources : []);
  const old = new Map(list(before).map((r) => [r.id, r]));
  const now = new Map(list(after).map((r) => [r.id, r]));
  const nameOf = (r: Dict) => String(r.name || r.url || r.id);
  const out: Change[] = [];
  for (const r of list(after)) {
    const was = old.get(r.id);
    if (!was) {
      out.push({ kind: 'resource_added', name: nameOf(r), id: r.id });
      continue;
    }
    const field = (label: string, raw: boolean) => (key: string, o: string, n: string) =>
      ({ kind: 'resource_field', resource: nameOf(r), id: r.id, label: raw ? key : `${label}${key}`, raw, old: o, new: n }) as Change;
    out.push(...compareFields(was, r, RESOURCE_NAMED, field('changes.resource.', false)));
    out.push(
      ...compareFields(
        was,
        r,
        union(was, r).filter((k) => !RESOURCE_SKIPPED.has(k)),
        field('', true),
      ),
    );
  }
  for (const r of list(before)) if (!now.has(r.id)) out.push({ kind: 'resource_removed', name: nameOf(r) });
  return out;
}

/** The changes from `before` to `after`, in the order the page lists them; empty when nothing a reader sees changed. */
export function datasetChanges(before: Dict, after: Dict): Change[] {
  const field = (prefix: string, raw: boolean) => (key: string, old: string, now: string) =>
    ({ kind: 'field', label: raw ? key : `${prefix}${key}`, raw, old, new: now }) as Change;
  const out: Change[] = compareFields(before, after, NAMED_FIELDS, field('changes.field.', false));
  const orgTitle = (pkg: Dict) => String(pkg.organization?.title || pkg.organization?.name || '');
  if ((before.owner_org ?? null) !== (after.owner_org ?? null))
    out.push({ kind: 'field', label: 'changes.field.organization', raw: false, old: orgTitle(before), new: orgTitle(after) });
  if (!!before.private !== !!after.private)
    out.push({
      kind: 'field',
      label: 'changes.field.visibility',
      raw: false,
      old: before.private ? 'changes.private' : 'changes.public',
      new: after.private ? 'changes.private' : 'changes.public',
      keys: true,
    });
  if ((before.license_id ?? '') !== (after.license_id ?? ''))
    out.push({
      kind: 'field',
      label: 'changes.field.license',
      raw: false,
      old: String(before.license_title || before.license_id || ''),
      new: String(after.license_title || after.license_id || ''),
    });
  const [tagsBefore, tagsAfter] = [tagNames(before), tagNames(after)];
  const added = [...tagsAfter].filter((t) => !tagsBefore.has(t)).sort();
  const removed = [...tagsBefore].filter((t) => !tagsAfter.has(t)).sort();
  if (added.length || removed.length) out.push({ kind: 'tags', added, removed });
  const [extrasBefore, extrasAfter] = [extrasOf(before), extrasOf(after)];
  out.push(...compareFields(extrasBefore, extrasAfter, union(extrasBefore, extrasAfter), field('', true)));
  out.push(
    ...compareFields(
      before,
      after,
      union(before, after).filter((k) => !NOT_EXTENSION.has(k)),
      field('', true),
    ),
  );
  out.push(...resourceChanges(before, after));
  return out;
}
