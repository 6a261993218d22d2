// Dataset collaborators: package_collaborator_create/delete/list, package_collaborator_list_for_user.
// Off unless svc.auth.allow_dataset_collaborators; the admin capacity needs svc.auth.allow_admin_collaborators.
import type { ActionContext } from './context.ts';
import { defineAction, type ActionDefinition, type AuthFunction } from './registry.ts';
import { Type } from '@sinclair/typebox';
import { p } from '../validation/params.ts';
import { listOf } from './result-schemas.ts';
import { NotFoundError } from '../errors.ts';
import { canManageCollaborators, collaboratorCapacities, collaboratorsEnabled, notAuthorized, requireUser } from '../auth/authz.ts';
import { collaborationsOf, collaboratorsOf, removeCollaborator, upsertCollaborator, type CollaboratorRow } from '../model/collaborators.ts';
import { findPackage, touchAndNotify, type PackageRow } from '../model/packages.ts';
import { findUser } from '../model/users.ts';
import { validationMessage } from './group.ts';

function requireEnabled(ctx: ActionContext): void {
  if (!collaboratorsEnabled(ctx)) throw validationMessage('Dataset collaborators not enabled');
}

function checkCapacity(ctx: ActionContext, capacity: string | undefined): void {
  const allowed = collaboratorCapacities(ctx);
  if (capacity !== undefined && !allowed.includes(capacity)) throw validationMessage(`Role must be one of "${allowed.join(', ')}"`);
}

async function packageOr404(ctx: ActionContext, id: string): Promise<PackageRow> {
  const pkg = await findPackage(ctx.db, id);
  if (!pkg) throw new NotFoundError('Dataset not found');
  return pkg;
}

const manageAuth =
  (action: string, what: string): AuthFunction =>
  async (ctx, p) => {
    requireEnabled(ctx);
    if (action === 'package_collaborator_create') checkCapacity(ctx, p.capacity);
    const pkg = await packageOr404(ctx, p.id);
    requireUser(ctx, action);
    if (!(await canManageCollaborators(ctx, pkg))) throw notAuthorized(ctx, what);
  };

const iso = (t: string) => String(t).replace(' ', 'T');
const spaced = (t: string) => String(t).replace('T', ' ');

const collaboratorSchema = Type.Object(
  {
    package_id: Type.String(),
    user_id: Type.String(),
    capacity: Type.String(),
    modified: Type.String(),
  },
  { additionalProperties: true, title: 'Collaborator' },
);

const datasetId = p.string("the dataset's id or name").required();
// The capacities allowed depend on the configuration (admin only with allow_admin_collaborators):
// checked by checkCapacity with CKAN's message.
const capacity = (description: string) => p.string(description);

function collaboratorDict(c: CollaboratorRow, modified: (t: string) => string): Record<string, unknown> {
  return { capacity: c.capacity, modified: modified(c.modified), package_id: c.package_id, user_id: c.user_id };
}

export const collaboratorActions: ActionDefinition<any, any>[] = [
  defineAction({
    name: 'package_collaborator_create',
    sideEffectFree: false,
    auth: manageAuth('package_collaborator_create', 'add collaborators to this dataset'),
    description:
      "Make a user a collaborator on a dataset, or change their capacity. Needs svc.auth.allow_dataset_collaborators. Admins of the dataset's organization, and admin collaborators (svc.auth.allow_admin_collaborators).",
    params: {
      id: datasetId,
      user_id: p.string("the user's id or name").required(),
      capacity: capacity('member (read), editor (edit and delete) or, when allowed, admin (also manage collaborators)').required(),
    },
    returns: { description: '{package_id, user_id, capacity, modified}', rtype: 'dictionary', schema: collaboratorSchema },
    handler: async (ctx, p) => {
      requireEnabled(ctx);
      checkCapacity(ctx, p.capacity);
      const pkg = await packageOr404(ctx, p.id);
      const user = await findUser(ctx.db, p.user_id);
      if (!user || user.state === 'deleted') throw new NotFoundError('User not found');
      const c = await upsertCollaborator(ctx.db, pkg.id, user.id, p.capacity);
      await touchAndNotify(ctx, [pkg.id]);
      return collaboratorDict(c, iso);
    },
  }),
  defineAction({
    name: 'package_collaborator_delete',
    sideEffectFree: false,
    auth: manageAuth('package_collaborator_delete', 'remove collaborators from this dataset'),
    description: 'Remove a collaborator from a dataset. Same rules as package_collaborator_create.',
    params: { id: datasetId, user_id: p.string("the user's id or name").required() },
    returns: { description: 'null', schema: Type.Null() },
    handler: async (ctx, p) => {
      requireEnabled(ctx);
      const pkg = await packageOr404(ctx, p.id);
      const user = await findUser(ctx.db, p.user_id);
      if (!user) throw new NotFoundError('User not found');
      if (!(await removeCollaborator(ctx.db, pkg.id, user.id)))
        throw new NotFoundError(`User ${p.user_id} is not a collaborator on this dataset`);
      await touchAndNotify(ctx, [pkg.id]);
      return null;
    },
  }),
  defineAction({
    name: 'package_collaborator_list',
    sideEffectFree: true,
    auth: manageAuth('package_collaborator_list', 'list collaborators of this dataset'),
    description: 'Return the collaborators of a dataset. Same rules as package_collaborator_create.',
    params: { id: datasetId, capacity: capacity('only this capacity') },
    returns: { description: 'list of {package_id, user_id, capacity, modified}', rtype: 'list', schema: listOf(collaboratorSchema) },
    handler: async (ctx, p) => {
      requireEnabled(ctx);
      checkCapacity(ctx, p.capacity);
      const pkg = await packageOr404(ctx, p.id);
      return (await collaboratorsOf(ctx.db, pkg.id, p.capacity)).map((c) => collaboratorDict(c, spaced));
    },
  }),
  defineAction({
    name: 'package_collaborator_list_for_user',
    sideEffectFree: true,
    auth: async (ctx, p) => {
      requireEnabled(ctx);
      requireUser(ctx, 'package_collaborator_list_for_user');
      const target = await findUser(ctx.db, p.id);
      if (!target) throw new NotFoundError('User not found');
      if (target.id !== ctx.identity.user!.id) throw notAuthorized(ctx, `list the collaborations of user ${p.id}`);
    },
    description: 'Return the datasets a user collaborates on. Yourself or sysadmins. Needs svc.auth.allow_dataset_collaborators.',
    params: { id: p.string("the user's id or name").required(), capacity: capacity('only this capacity') },
    returns: {
      description: 'list of {package_id, capacity, modified}',
      rtype: 'list',
      schema: listOf(
        Type.Object({ package_id: Type.String(), capacity: Type.String(), modified: Type.String() }, { additionalProperties: true }),
      ),
    },
    handler: async (ctx, p) => {
      requireEnabled(ctx);
      checkCapacity(ctx, p.capacity);
      const user = await findUser(ctx.db, p.id);
      if (!user) throw new NotFoundError('User not found');
      return (await collaborationsOf(ctx.db, user.id, p.capacity)).map((c) => ({
        capacity: c.capacity,
        modified: iso(c.modified),
        package_id: c.package_id,
      }));
    },
  }),
];
