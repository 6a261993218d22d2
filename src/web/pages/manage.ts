// Managing the catalog through forms (issue #14): datasets, resources, organizations and groups
// with their members, and the sysadmin pages.
import type { WebRouter } from '../router.ts';
import { datasetFormPages } from './manage-datasets.ts';
import { resourceFormPages } from './manage-resources.ts';
import { groupFormPages } from './manage-groups.ts';
import { adminPages } from './manage-admin.ts';

export function managePages(web: WebRouter): void {
  datasetFormPages(web);
  resourceFormPages(web);
  groupFormPages(web);
  adminPages(web);
}
