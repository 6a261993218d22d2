// Harvest objects: harvest_object_show (a record as received, its state and errors) and
// harvest_objects_import (the import of one object: what the run calls for each).
import { defineAction, type ActionDefinition } from '../../actions/registry.ts';
import type { ActionContext } from '../../actions/context.ts';
import { p } from '../../validation/params.ts';
import { canReadPackage } from '../../auth/authz.ts';
import { NotFoundError, ValidationError } from '../../errors.ts';
import { findPackage } from '../../model/packages.ts';
import { findHarvestSource } from '../../model/harvest-sources.ts';
import { currentObjectOfPackage, findHarvestObject, type HarvestObjectRow } from '../../model/harvest-objects.ts';
import { importObject } from '../../harvest/import.ts';
import { harvestObjectDict, dictOrAttr } from './dicts.ts';
import { canReadSource, requireSourceManager } from './auth.ts';

async function objectOf(ctx: ActionContext, params: { id?: string; dataset_id?: string }): Promise<HarvestObjectRow | undefined> {
  if (params.id) return findHarvestObject(ctx.db, params.id);
  if (params.dataset_id) {
    const pkg = await findPackage(ctx.db, params.dataset_id);
    return pkg ? currentObjectOfPackage(ctx.db, pkg.id) : undefined;
  }
  return undefined;
}

/** Its source is readable and, when it made a dataset, so is that dataset (a private one's record is not shown to others). */
async function authObjectShow(ctx: ActionContext, params: Record<string, any>): Promise<void> {
  const o = await objectOf(ctx, params);
  if (!o) return;
  const s = await findHarvestSource(ctx.db, { id: o.harvest_source_id });
  const pkg = o.package_id ? await findPackage(ctx.db, o.package_id) : undefined;
  if ((s && !(await canReadSource(ctx, s))) || (pkg && !(await canReadPackage(ctx, pkg))))
    throw new NotFoundError(`Harvest object ${params.id ?? params.dataset_id} does not exist`);
}

export const objectActions: ActionDefinition<any, any>[] = [
  defineAction({
    name: 'harvest_object_show',
    sideEffectFree: true,
    auth: authObjectShow,
    description: "Return a harvest object (by id, or a dataset's current one by dataset_id): the record as received, its state and errors.",
    params: {
      id: p.string('id of the object'),
      dataset_id: p.string('id or name of a harvested dataset: its current object'),
      attr: p.string('return only this key of the object dict (e.g. content)'),
    },
    returns: { description: 'the object dict', rtype: 'dictionary' },
    handler: async (ctx, prm) => {
      if (!prm.id && !prm.dataset_id) throw new ValidationError({ id: ['Missing value'] });
      const o = await objectOf(ctx, prm);
      if (!o) throw new NotFoundError(`Harvest object ${prm.id ?? prm.dataset_id} does not exist`);
      const d = await harvestObjectDict(ctx.db, o);
      return dictOrAttr(d, prm.attr);
    },
  }),
  defineAction({
    name: 'harvest_objects_import',
    sideEffectFree: false,
    auth: async (ctx, params) => {
      if (ctx.identity.sysadmin || ctx.ignoreAuth) return; // (what requireSourceManager decides, without reading the object)
      const o = typeof params.harvest_object_id === 'string' ? await findHarvestObject(ctx.db, params.harvest_object_id) : undefined;
      const s = o ? await findHarvestSource(ctx.db, { id: o.harvest_source_id }) : undefined;
      if (s) await requireSourceManager(ctx, s, 'import the objects of');
    },
    description:
      "Import a harvest object: a waiting one (what a job's import does), or a dataset's current one again. One transaction: the dataset write and the object's state.",
    params: { harvest_object_id: p.string('id of the object').required() },
    returns: { description: '{id, outcome}: added, updated, deleted or skipped (nothing to do)', rtype: 'dictionary' },
    handler: async (ctx, prm) => ({ id: prm.harvest_object_id, outcome: await importObject(ctx, prm.harvest_object_id) }),
  }),
];
