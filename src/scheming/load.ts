// Loads the configured schema files (svc.scheming.*) at start. Filled in by the scheming loader work.
import type { Config } from '../config/load.ts';
import type { SchemingSchemas } from './types.ts';

/** The configured schemas, checked; undefined when none is configured (svc behaves as without scheming). */
export async function loadSchemingSchemas(config: Config): Promise<SchemingSchemas | undefined> {
  const files = [
    ...config.list('svc.scheming.dataset_schemas'),
    ...config.list('svc.scheming.group_schemas'),
    ...config.list('svc.scheming.organization_schemas'),
  ];
  if (!files.length) return undefined;
  throw new Error('custom schemas are not loaded yet');
}
