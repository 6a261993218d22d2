// activity: the activity stream. Every create, update and delete of datasets (with their
// resources), groups, organizations and users is recorded with the object's dict at that time.
import type { Plugin } from '../plugin.ts';
import { declareOption } from '../../config/options.ts';
import { activityActions } from './actions.ts';
import { recordActivities } from './record.ts';

const positive = (v: number) => (v > 0 ? undefined : 'must be a positive number');

declareOption({
  name: 'svc.activity_list_limit',
  type: 'int',
  default: 31,
  validate: positive,
  description: 'Default number of activities the *_activity_list actions return',
});
declareOption({
  name: 'svc.activity_list_limit_max',
  type: 'int',
  default: 100,
  validate: positive,
  description: 'Most activities the *_activity_list actions return',
});
declareOption({
  name: 'svc.hide_activity_from_users',
  type: 'list',
  default: [],
  description: 'Names of users whose activity is left out of activity streams (default: the site user)',
});

export const activityPlugin: Plugin = {
  name: 'activity',
  setup(services) {
    recordActivities(services);
    services.registry.defineAll(activityActions);
  },
};
