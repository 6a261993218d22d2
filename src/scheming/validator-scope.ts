// What a scheming validator factory is given (the field, its schema, the site's locale), and the
// small facts about values and calls that the validators of every extension share.
import type { ActionContext } from '../context.ts';
import { MISSING, type FieldContext, type Validator } from '../validation/validate.ts';
import type { SchemingField } from './types.ts';

/** What a factory knows besides its arguments: the field, its schema, the site's default locale. */
export interface ValidatorScope {
  field: SchemingField;
  /** The schema as written (draft_fields_required, form_languages). */
  schema: Record<string, unknown>;
  /** svc.locale_default: the language of a plain string in a multilingual field. */
  defaultLocale: string;
}

export type Factory = (args: unknown[], scope: ValidatorScope) => Validator;

export const isBlank = (v: unknown) => v === MISSING || v === null || v === undefined;
export const isEmpty = (v: unknown) => isBlank(v) || v === '' || (Array.isArray(v) && v.length === 0);

/** The action context, whether the chain runs for a dataset ({ctx, pkg, input}) or a group ({ctx, group, input}). */
export function actionContext(f: FieldContext): ActionContext {
  return (f.context?.ctx ?? f.context) as ActionContext;
}

/** The dict as sent (before any conversion), when the caller passed it. */
export function inputOf(f: FieldContext): Record<string, unknown> {
  return (f.context?.input as Record<string, unknown> | undefined) ?? f.data;
}

/**
 * A draft leaves required fields optional (a schema's draft_fields_required: false). Without a
 * state sent, the dataset keeps its state (a new one is active): CKAN counts a missing state as a
 * draft, which let API creates skip every required field.
 */
export function isDraft(f: FieldContext): boolean {
  const state = f.data.state ?? inputOf(f).state ?? f.context?.pkg?.state ?? f.context?.group?.state ?? 'active';
  return typeof state === 'string' && state.startsWith('draft');
}

export function requiredEnforced(scope: ValidatorScope, f: FieldContext): boolean {
  return scope.schema.draft_fields_required !== false || !isDraft(f);
}

/** scheming_load_json: JSON text becomes its value; anything else stays. */
export const loadJson: Validator = (v) => {
  if (typeof v !== 'string') return v;
  try {
    return JSON.parse(v);
  } catch {
    return v;
  }
};
