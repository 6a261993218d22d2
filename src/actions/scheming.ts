// The schemas of custom dataset, group and organization types, as ckanext-scheming publishes them:
// scheming_{dataset,group,organization}_schema_list and _show. They answer from the schemas loaded
// at start (services.scheming); with none configured the lists are empty and show is Not Found.
import { Type } from '@sinclair/typebox';
import { defineAction, type ActionDefinition } from './registry.ts';
import type { ActionContext } from './context.ts';
import { p } from '../validation/params.ts';
import { anyone } from '../auth/rules.ts';
import { NotFoundError } from '../errors.ts';
import { names } from './result-schemas.ts';
import type { DatasetSchema, GroupSchema } from '../scheming/types.ts';

type Kind = 'dataset' | 'group' | 'organization';

function schemasOf(ctx: ActionContext, kind: Kind): Map<string, DatasetSchema | GroupSchema> | undefined {
  const s = ctx.services.scheming;
  if (!s) return undefined;
  return kind === 'dataset' ? s.datasets : kind === 'group' ? s.groups : s.organizations;
}

/**
 * The schema as its file has it; expanded, each list of fields replaced by its expanded fields
 * (presets merged in), the other keys as in the file.
 */
function schemaDict(schema: DatasetSchema | GroupSchema, expanded: boolean): Record<string, unknown> {
  if (!expanded) return schema.raw;
  const out: Record<string, unknown> = { ...schema.raw };
  if ('dataset_type' in schema) {
    if ('dataset_fields' in out) out.dataset_fields = schema.dataset_fields;
    if ('resource_fields' in out) out.resource_fields = schema.resource_fields;
  } else if ('fields' in out) out.fields = schema.fields;
  return out;
}

const schemaResult = Type.Record(Type.String(), Type.Unknown(), {
  description: "the schema: its type key, about, about_url and lists of fields as in ckanext-scheming's files",
});

function schemaActions(kind: Kind): ActionDefinition<any, any>[] {
  const things = kind === 'dataset' ? 'dataset types' : `${kind} types`;
  return [
    defineAction({
      name: `scheming_${kind}_schema_list`,
      sideEffectFree: true,
      auth: anyone,
      description: `Return the ${things} that have a custom schema (svc.scheming.${kind}_schemas), in the configured order.`,
      returns: { description: `the ${things}`, rtype: 'list of strings', schema: names },
      handler: (ctx) => [...(schemasOf(ctx, kind)?.keys() ?? [])],
    }),
    defineAction({
      name: `scheming_${kind}_schema_show`,
      sideEffectFree: true,
      auth: anyone,
      description: `Return the custom schema of a ${kind} type.`,
      params: {
        type: p.string(`the ${kind} type`).required(),
        expanded: p.boolean("true: each field with its preset's values merged in; false: the fields as written in the file").default(true),
      },
      returns: { description: 'the schema', rtype: 'dictionary', schema: schemaResult },
      handler: (ctx, prm) => {
        const schema = schemasOf(ctx, kind)?.get(prm.type);
        if (!schema) throw new NotFoundError();
        return schemaDict(schema, prm.expanded);
      },
    }),
  ];
}

export const schemingActions: ActionDefinition<any, any>[] = [
  ...schemaActions('dataset'),
  ...schemaActions('group'),
  ...schemaActions('organization'),
];
