// The search page of a type with a custom schema facets on the schema's choice fields (select,
// radio, checkboxes, multiple select), titled by their labels, each value shown by its choice's label.
import type { Choice, SchemingField } from '../../scheming/types.ts';
import type { ExtraFacet } from '../pages/catalog-search.ts';
import { fieldLabel, labelText, widgetKind } from './widgets.ts';

const CHOICE_KINDS = new Set(['select', 'radio', 'checkboxes', 'multiselect']);
/** The usual facets take five of package_search's twenty. */
const MAX_CHOICE_FACETS = 15;

export function choiceFacets(fields: SchemingField[], lang: string, helperChoices?: ReadonlyMap<SchemingField, Choice[]>): ExtraFacet[] {
  const choicesOf = (f: SchemingField) => helperChoices?.get(f) ?? (Array.isArray(f.choices) ? f.choices : []);
  return fields
    .filter((f) => (choicesOf(f).length || f.choices_helper) && CHOICE_KINDS.has(widgetKind(f)))
    .slice(0, MAX_CHOICE_FACETS)
    .map((f) => ({
      field: f.field_name,
      title: fieldLabel(f, lang),
      labels: Object.fromEntries(choicesOf(f).map((c) => [String(c.value), labelText(c.label, lang) || String(c.value)])),
    }));
}
