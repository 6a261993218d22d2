// Dataset collaborators: package_collaborator_create/delete/list, package_collaborator_list_for_user.
// Off unless svc.auth.allow_dataset_collaborators; the admin capacity needs svc.auth.allow_admin_collaborators.
import type { ActionContext } from './context.ts';
import type { ActionDefinition, AuthFunction } from './registry.ts';
import { NotFoundError } from '../errors.ts';
import { canManageCollaborators, collaboratorCapacities, collaboratorsEnabled, notAuthorized, requireUser } from '../auth/authz.ts';
import { collaborationsOf, collaboratorsOf, removeCollaborator, upsertCollaborator, type CollaboratorRow } from '../model/collaborators.ts';
import { findPackage, touchAndNotify, type PackageRow } from '../model/packages.ts';
import { findUser } from '../model/users.ts';
import { ignoreMissing, notEmpty, unicodeString } from '../validation/validators.ts';
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

const manageAuth = (action: string, what: string): AuthFunction => async (ctx, p) => {
  requireEnabled(ctx);
  if (action === 'package_collaborator_create') checkCapacity(ctx, p.capacity);
  const pkg = await packageOr404(ctx, p.id);
  requireUser(ctx, action);
  if (!(await canManageCollaborators(ctx, pkg))) throw notAuthorized(ctx, what);
};

const iso = (t: string) => String(t).replace(' ', 'T');
const spaced = (t: string) => String(t).replace('T', ' ');

function collaboratorDict(c: CollaboratorRow, modified: (t: string) => string): Record<string, unknown> {
  return { capacity: c.capacity, modified: modified(c.modified), package_id: c.package_id, user_id: c.user_id };
}

export const collaboratorActions: ActionDefinition<any, any>[] = [
  {
    name: 'package_collaborator_create',
    sideEffectFree: false,
    auth: manageAuth('package_collaborator_create', 'add collaborators to this dataset'),
    schema: { id: [notEmpty, unicodeString], user_id: [notEmpty, unicodeString], capacity: [notEmpty, unicodeString] },
    help: 'Make a user a collaborator on a dataset, or change their capacity. Needs svc.auth.allow_dataset_collaborators. Admins of the dataset\'s organization, and admin collaborators (svc.auth.allow_admin_collaborators).\n\n:param id: the dataset\'s id or name\n:param user_id: the user\'s id or name\n:param capacity: member (read), editor (edit and delete) or, when allowed, admin (also manage collaborators)\n:returns: {package_id, user_id, capacity, modified}\n:rtype: dictionary',
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
  },
  {
    name: 'package_collaborator_delete',
    sideEffectFree: false,
    auth: manageAuth('package_collaborator_delete', 'remove collaborators from this dataset'),
    schema: { id: [notEmpty, unicodeString], user_id: [notEmpty, unicodeString] },
    help: 'Remove a collaborator from a dataset. Same rules as package_collaborator_create.\n\n:param id: the dataset\'s id or name\n:param user_id: the user\'s id or name',
    handler: async (ctx, p) => {
      requireEnabled(ctx);
      const pkg = await packageOr404(ctx, p.id);
      const user = await findUser(ctx.db, p.user_id);
      if (!user) throw new NotFoundError('User not found');
      if (!(await removeCollaborator(ctx.db, pkg.id, user.id))) throw new NotFoundError(`User ${p.user_id} is not a collaborator on this dataset`);
      await touchAndNotify(ctx, [pkg.id]);
      return null;
    },
  },
  {
    name: 'package_collaborator_list',
    sideEffectFree: true,
    auth: manageAuth('package_collaborator_list', 'list collaborators of this dataset'),
    schema: { id: [notEmpty, unicodeString], capacity: [ignoreMissing, unicodeString] },
    help: 'Return the collaborators of a dataset. Same rules as package_collaborator_create.\n\n:param id: the dataset\'s id or name\n:param capacity: only this capacity (optional)\n:returns: list of {package_id, user_id, capacity, modified}\n:rtype: list',
    handler: async (ctx, p) => {
      requireEnabled(ctx);
      checkCapacity(ctx, p.capacity);
      const pkg = await packageOr404(ctx, p.id);
      return (await collaboratorsOf(ctx.db, pkg.id, p.capacity)).map((c) => collaboratorDict(c, spaced));
    },
  },
  {
    name: 'package_collaborator_list_for_user',
    sideEffectFree: true,
    auth: async (ctx, p) => {
      requireEnabled(ctx);
      requireUser(ctx, 'package_collaborator_list_for_user');
      const target = await findUser(ctx.db, p.id);
      if (!target) throw new NotFoundError('User not found');
      if (target.id !== ctx.identity.user!.id) throw notAuthorized(ctx, `list the collaborations of user ${p.id}`);
    },
    schema: { id: [notEmpty, unicodeString], capacity: [ignoreMissing, unicodeString] },
    help: 'Return the datasets a user collaborates on. Yourself or sysadmins. Needs svc.auth.allow_dataset_collaborators.\n\n:param id: the user\'s id or name\n:param capacity: only this capacity (optional)\n:returns: list of {package_id, capacity, modified}\n:rtype: list',
    handler: async (ctx, p) => {
      requireEnabled(ctx);
      checkCapacity(ctx, p.capacity);
      const user = await findUser(ctx.db, p.id);
      if (!user) throw new NotFoundError('User not found');
      return (await collaborationsOf(ctx.db, user.id, p.capacity)).map((c) => ({ capacity: c.capacity, modified: iso(c.modified), package_id: c.package_id }));
    },
  },
];
