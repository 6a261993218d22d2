// Dataset relationships: package_relationship_create/update/delete, package_relationships_list.
import type { ActionContext } from './context.ts';
import { defineAction, type ActionDefinition, type AuthFunction } from './registry.ts';
import { Type } from '@sinclair/typebox';
import { p, type ParamValues } from '../validation/params.ts';
import { listOf } from './result-schemas.ts';
import { canEditPackage, canReadPackage } from '../auth/authz.ts';
import { denied } from '../auth/rules.ts';
import { NotFoundError } from '../errors.ts';
import { findPackage, lockPackages, notifyPackageChange, packagesByIds, touchPackage, type PackageRow } from '../model/packages.ts';
import { deleteRelationship, findRelationship, RELATIONSHIP_TYPES, relationshipsFrom, saveRelationship } from '../model/relationships.ts';
import { Invalid, type Validator } from '../validation/validate.ts';
import { unicodeString } from '../validation/validators.ts';

const relType: Validator = (v) => {
  if (!RELATIONSHIP_TYPES.includes(v)) throw new Invalid(`Relationship type ${v} does not exist.`);
  return v;
};

const relTypeParam = (description: string) =>
  p.custom<string>(description, [unicodeString, relType], Type.Union(RELATIONSHIP_TYPES.map((t) => Type.Literal(t))));

const params = {
  subject: p.string('id or name of the subject dataset').required(),
  object: p.string('id or name of the object dataset').required(),
  type: relTypeParam(`the relationship type: ${RELATIONSHIP_TYPES.join(', ')}`).required(),
  comment: p.string('a comment (default "")'),
};
type RelationshipParams = ParamValues<typeof params>;

const relationshipSchema = Type.Object(
  {
    subject: Type.String(),
    type: Type.String(),
    object: Type.String(),
    comment: Type.String(),
  },
  { additionalProperties: true, title: 'Relationship' },
);

async function both(ctx: ActionContext, p: { subject?: unknown; object?: unknown }): Promise<[PackageRow, PackageRow]> {
  const s = await findPackage(ctx.db, String(p.subject ?? ''));
  if (!s) throw new NotFoundError(`Subject package ${JSON.stringify(p.subject)} was not found.`);
  const o = await findPackage(ctx.db, String(p.object ?? ''));
  if (!o) throw new NotFoundError(`Object package ${JSON.stringify(p.object)} was not found.`);
  return [s, o];
}

const editBoth: AuthFunction = async (ctx, p) => {
  const [s, o] = await both(ctx, p);
  if (!(await canEditPackage(ctx, s)) || !(await canEditPackage(ctx, o))) throw denied(ctx, 'edit these packages');
};

const readBoth: AuthFunction = async (ctx, p) => {
  const pkg = await findPackage(ctx.db, String(p.id ?? ''));
  if (!pkg) throw new NotFoundError('First package not found');
  if (!(await canReadPackage(ctx, pkg))) throw denied(ctx, `read package ${p.id}`);
  if (p.id2) {
    const other = await findPackage(ctx.db, String(p.id2));
    if (!other) throw new NotFoundError('Second package not found');
    if (!(await canReadPackage(ctx, other))) throw denied(ctx, `read package ${p.id2}`);
  }
};

async function relDict(ctx: ActionContext, subjectId: string, type: string, objectId: string, comment: string | null) {
  const pkgs = new Map((await packagesByIds(ctx.db, [subjectId, objectId])).map((x) => [x.id, x.name]));
  return { subject: pkgs.get(subjectId), type, object: pkgs.get(objectId), comment: comment ?? '' };
}

/** Both datasets changed: their metadata_modified moves and their listeners hear it. */
async function touchBoth(ctx: ActionContext, s: PackageRow, o: PackageRow): Promise<void> {
  await touchPackage(ctx.db, s.id);
  await touchPackage(ctx.db, o.id);
  await notifyPackageChange(ctx, s.id);
  await notifyPackageChange(ctx, o.id);
}

/** Creates or updates a relationship (update needs it to exist) and answers its dict. */
function saveRelationshipAction(mustExist: boolean) {
  return async (ctx: ActionContext, p: RelationshipParams) => {
    const [s, o] = await both(ctx, p);
    await lockPackages(ctx.db, [s.id, o.id]);
    if (mustExist && !(await findRelationship(ctx.db, s.id, p.type, o.id))) {
      throw new NotFoundError('This relationship between the packages was not found.');
    }
    await saveRelationship(ctx.db, s.id, p.type, o.id, p.comment ?? '');
    await touchBoth(ctx, s, o);
    return relDict(ctx, s.id, p.type, o.id, p.comment ?? '');
  };
}

export const relationshipActions: ActionDefinition<any, any>[] = [
  defineAction({
    name: 'package_relationship_create',
    sideEffectFree: false,
    auth: editBoth,
    description:
      'Create a relationship between two datasets (an existing one gets the new comment). You must be authorized to edit both datasets.',
    params,
    returns: { description: '{subject, type, object, comment}', rtype: 'dictionary', schema: relationshipSchema },
    handler: saveRelationshipAction(false),
  }),
  defineAction({
    name: 'package_relationship_update',
    sideEffectFree: false,
    auth: editBoth,
    description: 'Update the comment of a relationship between two datasets (subject, object and type identify it).',
    params,
    returns: { description: '{subject, type, object, comment}', rtype: 'dictionary', schema: relationshipSchema },
    handler: saveRelationshipAction(true),
  }),
  defineAction({
    name: 'package_relationship_delete',
    sideEffectFree: false,
    auth: editBoth,
    description: 'Delete a relationship between two datasets (subject, object and type identify it).',
    params: { ...params, comment: p.any('not used').hidden() },
    returns: { description: 'null', schema: Type.Null() },
    handler: async (ctx, p) => {
      const [s, o] = await both(ctx, p);
      await lockPackages(ctx.db, [s.id, o.id]);
      const existing = await findRelationship(ctx.db, s.id, p.type, o.id);
      if (!existing) throw new NotFoundError('This relationship between the packages was not found.');
      await deleteRelationship(ctx.db, existing.id);
      await touchBoth(ctx, s, o);
      return null;
    },
  }),
  defineAction({
    name: 'package_relationships_list',
    sideEffectFree: true,
    auth: readBoth,
    description: 'Return the relationships of a dataset, seen from it (reverse types when it is the object).',
    params: {
      id: p.string('id or name of the dataset').required(),
      id2: p.string('only relationships with this dataset'),
      rel: relTypeParam('only relationships of this type'),
    },
    returns: { description: 'list of {subject, type, object, comment}', rtype: 'list', schema: listOf(relationshipSchema) },
    handler: async (ctx, p) => {
      const pkg = await findPackage(ctx.db, p.id);
      if (!pkg) throw new NotFoundError('First package not found');
      const other = p.id2 ? await findPackage(ctx.db, p.id2) : undefined;
      if (p.id2 && !other) throw new NotFoundError('Second package not found');
      const rels = await relationshipsFrom(ctx.db, pkg.id, other?.id, p.rel);
      // relationships with datasets the caller may not see are left out
      const others = new Map(
        (
          await packagesByIds(
            ctx.db,
            rels.map((r) => r.other),
          )
        ).map((x) => [x.id, x]),
      );
      const out = [];
      for (const r of rels) {
        const o = others.get(r.other);
        if (!o || o.state === 'deleted' || !(await canReadPackage(ctx, o))) continue;
        out.push({ subject: pkg.name, type: r.type, object: o.name, comment: r.comment ?? '' });
      }
      if (p.rel && !out.length) throw new NotFoundError(`Relationship "${p.id} ${p.rel} ${p.id2 ?? ''}" not found.`);
      return out;
    },
  }),
];
