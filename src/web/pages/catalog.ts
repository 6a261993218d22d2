// The public catalog (issue #14): dataset search and dataset pages, organizations and groups,
// follow and unfollow.
import type { WebRouter } from '../router.ts';
import { datasetPages } from './catalog-dataset.ts';
import { followPages } from './catalog-follow.ts';
import { groupPages } from './catalog-groups.ts';

export function catalogPages(web: WebRouter): void {
  datasetPages(web);
  groupPages(web);
  followPages(web);
}
