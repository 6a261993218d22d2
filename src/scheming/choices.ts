// choices_helper: the documented helpers that give a field's choices instead of a `choices` list.
// ckanext-scheming documents one, scheming_datastore_choices (the rows of a data store table); its
// choices depend on the table at the time of the request, so the loader only checks the field's
// settings and the callers read the table with datastoreChoicesQuery / datastoreChoicesFromResult.
import type { Choice, SchemingField } from './types.ts';

export interface ChoicesHelper {
  /** What is wrong with the field's settings for this helper, or undefined. */
  check(field: SchemingField): string | undefined;
  /** The choices when they are known at start (undefined: they are read at request time). */
  resolve?(field: SchemingField): Choice[];
}

const DATASTORE_CHOICES_LIMIT = 1000;

/** The datastore_search call whose records are the choices of a scheming_datastore_choices field. */
export function datastoreChoicesQuery(field: SchemingField): { resource_id: string; limit: number; fields?: string[] } {
  const columns = field.datastore_choices_columns as { value: string; label: string } | undefined;
  return {
    resource_id: field.datastore_choices_resource as string,
    limit: (field.datastore_choices_limit as number | undefined) ?? DATASTORE_CHOICES_LIMIT,
    ...(columns ? { fields: [columns.value, columns.label] } : {}),
  };
}

/**
 * The choices from that call's result: the first (or value) column as value, the second (or label)
 * as label, after the field's datastore_additional_choices. A table anonymous callers may not read
 * gives no choices (the caller passes no result).
 */
export function datastoreChoicesFromResult(
  field: SchemingField,
  result?: { fields: { id: string }[]; records: Record<string, unknown>[] },
): Choice[] {
  const additional = (field.datastore_additional_choices as Choice[] | undefined) ?? [];
  if (!result) return [...additional];
  const query = datastoreChoicesQuery(field);
  const [value, label] = query.fields ?? result.fields.map((f) => f.id).filter((id) => id !== '_id');
  return [...additional, ...result.records.map((r) => ({ value: String(r[value] ?? ''), label: String(r[label] ?? '') }))];
}

function checkDatastoreChoices(field: SchemingField): string | undefined {
  const resource = field.datastore_choices_resource;
  if (typeof resource !== 'string' || !resource)
    return 'scheming_datastore_choices needs datastore_choices_resource (a resource id or alias)';
  const columns = field.datastore_choices_columns;
  if (
    columns !== undefined &&
    (typeof columns !== 'object' ||
      columns === null ||
      typeof (columns as Record<string, unknown>).value !== 'string' ||
      typeof (columns as Record<string, unknown>).label !== 'string')
  )
    return 'datastore_choices_columns must give the column names of value and label';
  const limit = field.datastore_choices_limit;
  if (limit !== undefined && !(Number.isInteger(limit) && (limit as number) > 0))
    return 'datastore_choices_limit must be a positive whole number';
  const additional = field.datastore_additional_choices;
  if (additional !== undefined && !isChoiceList(additional))
    return 'datastore_additional_choices must be a list of choices, each with a value';
  return undefined;
}

/** A list of {value, label?} mappings. */
export function isChoiceList(value: unknown): value is Choice[] {
  return Array.isArray(value) && value.every((c) => typeof c === 'object' && c !== null && !Array.isArray(c) && 'value' in c);
}

export const CHOICES_HELPERS: ReadonlyMap<string, ChoicesHelper> = new Map([
  ['scheming_datastore_choices', { check: checkDatastoreChoices }],
]);
