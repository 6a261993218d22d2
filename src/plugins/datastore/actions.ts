// The data store actions (CKAN's DataStore API): writes (write-actions.ts) and reads
// (read-actions.ts); datastore_search_sql is registered on its own (search-sql.ts).
import type { ActionDefinition } from '../../actions/registry.ts';
import { datastoreReadActions } from './read-actions.ts';
import { datastoreWriteActions } from './write-actions.ts';

export const datastoreActions: ActionDefinition<any, any>[] = [...datastoreWriteActions, ...datastoreReadActions];
