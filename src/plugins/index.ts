// Built-in plugins, by the name used in svc.plugins. Importing a plugin declares its options.
import type { Plugin } from './plugin.ts';
import { expireApiTokenPlugin } from './expire_api_token/index.ts';
import { datastorePlugin } from './datastore/index.ts';
import { activityPlugin } from './activity/index.ts';
import { viewPlugins } from './views/index.ts';
import { loaderPlugin } from './loader/index.ts';
import { dcatPlugin } from './dcat/index.ts';
import { structuredDataPlugin } from './dcat/structured-data.ts';
import { croissantPlugin } from './dcat/croissant.ts';
import { harvestPlugin } from './harvest/index.ts';

export const availablePlugins: Record<string, Plugin> = {
  expire_api_token: expireApiTokenPlugin,
  datastore: datastorePlugin,
  activity: activityPlugin,
  ...viewPlugins,
  loader: loaderPlugin,
  dcat: dcatPlugin,
  structured_data: structuredDataPlugin,
  croissant: croissantPlugin,
  harvest: harvestPlugin,
};
