// Dataset relationships: package_relationship_create/update/delete, package_relationships_list.
import type { ActionContext } from './context.ts';
import type { ActionDefinition, AuthFunction } from './registry.ts';
import { canEditPackage, canReadPackage } from '../auth/authz.ts';
import { denied } from '../auth/rules.ts';
import { NotFoundError, ValidationError } from '../errors.ts';
import { findPackage, lockPackages, notifyPackageChange, packagesByIds, touchPackage, type PackageRow } from '../model/packages.ts';
import { deleteRelationship, findRelationship, RELATIONSHIP_TYPES, relationshipsFrom, saveRelationship } from '../model/relationships.ts';
import { Invalid, type Validator } from '../validation/validate.ts';
import { ignoreMissing, notEmpty, unicodeString } from '../validation/validators.ts';

const relType: Validator = (v) => {
  if (!RELATIONSHIP_TYPES.includes(v)) throw new Invalid(`Relationship type ${v} does not exist.`);
  return v;
};

const schema = {
  subject: [notEmpty, unicodeString],
  object: [notEmpty, unicodeString],
  type: [notEmpty, unicodeString, relType],
  comment: [ignoreMissing, unicodeString],
};

async function both(ctx: ActionContext, p: Record<string, any>): Promise<[PackageRow, PackageRow]> {
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

export const relationshipActions: ActionDefinition<any, any>[] = [
  {
    name: 'package_relationship_create',
    sideEffectFree: false,
    auth: editBoth,
    schema,
    help: 'Create a relationship between two datasets (an existing one gets the new comment). You must be authorized to edit both datasets.\n\n:param subject: id or name of the subject dataset\n:param object: id or name of the object dataset\n:param type: one of depends_on, dependency_of, derives_from, has_derivation, links_to, linked_from, child_of, parent_of\n:param comment: (optional)\n:returns: {subject, type, object, comment}\n:rtype: dictionary',
    handler: async (ctx, p) => {
      const [s, o] = await both(ctx, p);
      await lockPackages(ctx.db, [s.id, o.id]);
      await saveRelationship(ctx.db, s.id, p.type, o.id, p.comment ?? '');
      await touchPackage(ctx.db, s.id);
      await touchPackage(ctx.db, o.id);
      await notifyPackageChange(ctx, s.id);
      await notifyPackageChange(ctx, o.id);
      return relDict(ctx, s.id, p.type, o.id, p.comment ?? '');
    },
  },
  {
    name: 'package_relationship_update',
    sideEffectFree: false,
    auth: editBoth,
    schema,
    help: 'Update the comment of a relationship between two datasets.\n\n:param subject, object, type: identify the relationship\n:param comment: the new comment (optional, default "")\n:rtype: dictionary',
    handler: async (ctx, p) => {
      const [s, o] = await both(ctx, p);
      await lockPackages(ctx.db, [s.id, o.id]);
      const existing = await findRelationship(ctx.db, s.id, p.type, o.id);
      if (!existing) throw new NotFoundError('This relationship between the packages was not found.');
      await saveRelationship(ctx.db, s.id, p.type, o.id, p.comment ?? '');
      await touchPackage(ctx.db, s.id);
      await touchPackage(ctx.db, o.id);
      await notifyPackageChange(ctx, s.id);
      await notifyPackageChange(ctx, o.id);
      return relDict(ctx, s.id, p.type, o.id, p.comment ?? '');
    },
  },
  {
    name: 'package_relationship_delete',
    sideEffectFree: false,
    auth: editBoth,
    schema: { ...schema, comment: [ignoreMissing] },
    help: 'Delete a relationship between two datasets.\n\n:param subject, object, type: identify the relationship',
    handler: async (ctx, p) => {
      const [s, o] = await both(ctx, p);
      await lockPackages(ctx.db, [s.id, o.id]);
      const existing = await findRelationship(ctx.db, s.id, p.type, o.id);
      if (!existing) throw new NotFoundError('This relationship between the packages was not found.');
      await deleteRelationship(ctx.db, existing.id);
      await touchPackage(ctx.db, s.id);
      await touchPackage(ctx.db, o.id);
      await notifyPackageChange(ctx, s.id);
      await notifyPackageChange(ctx, o.id);
      return null;
    },
  },
  {
    name: 'package_relationships_list',
    sideEffectFree: true,
    auth: readBoth,
    schema: { id: [notEmpty, unicodeString], id2: [ignoreMissing, unicodeString], rel: [ignoreMissing, unicodeString] },
    help: 'Return the relationships of a dataset, seen from it (reverse types when it is the object).\n\n:param id: id or name of the dataset\n:param id2: only relationships with this dataset (optional)\n:param rel: only relationships of this type (optional)\n:returns: list of {subject, type, object, comment}\n:rtype: list',
    handler: async (ctx, p) => {
      const pkg = await findPackage(ctx.db, p.id);
      if (!pkg) throw new NotFoundError('First package not found');
      const other = p.id2 ? await findPackage(ctx.db, p.id2) : undefined;
      if (p.id2 && !other) throw new NotFoundError('Second package not found');
      if (p.rel && !RELATIONSHIP_TYPES.includes(p.rel)) throw new ValidationError({ rel: [`Relationship type ${p.rel} does not exist.`] });
      const rels = await relationshipsFrom(ctx.db, pkg.id, other?.id, p.rel);
      // relationships with datasets the caller may not see are left out
      const others = new Map((await packagesByIds(ctx.db, rels.map((r) => r.other))).map((x) => [x.id, x]));
      const out = [];
      for (const r of rels) {
        const o = others.get(r.other);
        if (!o || o.state === 'deleted' || !(await canReadPackage(ctx, o))) continue;
        out.push({ subject: pkg.name, type: r.type, object: o.name, comment: r.comment ?? '' });
      }
      if (p.rel && !out.length) throw new NotFoundError(`Relationship "${p.id} ${p.rel} ${p.id2 ?? ''}" not found.`);
      return out;
    },
  },
];
