// All core actions. Each entity's actions live in their own file.
import type { ActionDefinition } from './registry.ts';
import { siteActions } from './site.ts';
import { configActions } from './config.ts';
import { userActions } from './user.ts';
import { apiTokenActions } from './api-token.ts';
import { packageActions } from './package.ts';
import { resourceActions } from './resource.ts';
import { relationshipActions } from './relationship.ts';
import { licenseActions } from './license.ts';
import { tagActions } from './tag.ts';
import { vocabularyActions } from './vocabulary.ts';
import { followActions } from './follow.ts';
import { resourceViewActions } from './resource-view.ts';
import { termTranslationActions } from './term-translation.ts';

import { groupActions } from './group.ts';
import { groupExtraActions } from './group-list.ts';
import { organizationActions } from './organization.ts';
import { memberActions } from './member.ts';
import { collaboratorActions } from './collaborator.ts';
import { searchActions } from './search.ts';
import { hierarchyActions } from './hierarchy.ts';
import { jobActions } from './job.ts';
import { taskStatusActions } from './task-status.ts';
import { trashActions } from './trash.ts';
import { schemingActions } from './scheming.ts';
export const coreActions: ActionDefinition<any, any>[] = [
  ...siteActions,
  ...configActions,
  ...userActions,
  ...apiTokenActions,
  ...packageActions,
  ...resourceActions,
  ...relationshipActions,
  ...licenseActions,
  ...tagActions,
  ...groupActions(false),
  ...organizationActions,
  ...groupExtraActions,
  ...memberActions,
  ...collaboratorActions,
  ...searchActions,
  ...hierarchyActions,
  ...jobActions,
  ...taskStatusActions,
];
coreActions.push(...vocabularyActions, ...followActions, ...resourceViewActions, ...termTranslationActions);
coreActions.push(...trashActions);
coreActions.push(...schemingActions);
