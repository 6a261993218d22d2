// Organization actions: the group implementation (group.ts) with isOrganization = true.
import type { ActionDefinition } from './registry.ts';
import { groupActions } from './group.ts';

export const organizationActions: ActionDefinition<any, any>[] = groupActions(true);
