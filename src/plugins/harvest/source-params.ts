// A harvest source's fields: the declarations shared by create, update and patch, and the checks
// that need the database (owner organization, unique name, URL and config) or the configuration
// (private addresses).
import { p } from '../../validation/params.ts';
import { Invalid, type Validator } from '../../validation/validate.ts';
import { ValidationError } from '../../errors.ts';
import type { ActionContext } from '../../actions/context.ts';
import { findGroup } from '../../model/groups.ts';
import { findUser } from '../../model/users.ts';
import { harvestSourceNameTaken, sameUrlAndConfig, type HarvestSourceFields, type HarvestSourceRow } from '../../model/harvest-sources.ts';
import { checkSourceUrl } from '../../harvest/fetch.ts';
import { readerConfigError } from '../../harvest/readers.ts';
import type { HarvestSourceType } from '../../harvest/types.ts';

export const SOURCE_TYPES: readonly HarvestSourceType[] = ['ckan', 'dcat_rdf', 'dcat_json'];
/** Other harvesters' names for the same readers (ckanext-dcat, ckanext-spatial-era setups). */
const TYPE_ALIASES: Record<string, HarvestSourceType> = {
  ckan_harvester: 'ckan',
  dcat: 'dcat_rdf',
  dcat_rdf_harvester: 'dcat_rdf',
  dcat_json_harvester: 'dcat_json',
};
export const FREQUENCIES = ['MANUAL', 'ALWAYS', 'HOURLY', 'DAILY', 'WEEKLY', 'BIWEEKLY', 'MONTHLY'] as const;

const sourceType: Validator = (v: string) => {
  const t = (SOURCE_TYPES as readonly string[]).includes(v) ? v : TYPE_ALIASES[v];
  if (!t) throw new Invalid(`Unknown harvester type: ${v}. Registered types: ${SOURCE_TYPES.join(', ')}`);
  return t;
};

const frequency: Validator = (v: string) => {
  const f = v.toUpperCase();
  if (!(FREQUENCIES as readonly string[]).includes(f)) throw new Invalid(`Frequency ${v} not recognised`);
  return f;
};

const LIST_OF_STRINGS = ['default_groups', 'profiles'];
const BOOLEANS = ['override_extras', 'read_only', 'force_all', 'clean_tags', 'keep_deleted'];
const STRINGS = ['user', 'q', 'fq', 'rdf_format'];

/** The config's keys of known types; the message of the first wrong one. */
function configKeyError(c: Record<string, unknown>): string | null {
  for (const k of BOOLEANS) if (k in c && typeof c[k] !== 'boolean') return `${k} must be true or false`;
  for (const k of STRINGS) if (k in c && typeof c[k] !== 'string') return `${k} must be a string`;
  for (const k of LIST_OF_STRINGS)
    if (k in c && !(Array.isArray(c[k]) && (c[k] as unknown[]).every((x) => typeof x === 'string')))
      return `${k} must be a list of strings`;
  if ('default_tags' in c) {
    const t = c.default_tags;
    const ok =
      Array.isArray(t) &&
      t.every((x) => typeof x === 'string' || (x && typeof x === 'object' && typeof (x as { name?: unknown }).name === 'string'));
    if (!ok) return 'default_tags must be a list of strings or of {"name": ...} dicts';
  }
  if ('default_extras' in c) {
    const e = c.default_extras;
    if (!e || typeof e !== 'object' || Array.isArray(e)) return 'default_extras must be a dictionary';
  }
  for (const k of ['remote_groups', 'remote_orgs'])
    if (k in c && c[k] !== 'only_local' && c[k] !== 'create') return `${k} must be "only_local" or "create"`;
  if ('api_version' in c && !(c.api_version === 1 || c.api_version === 2 || c.api_version === 3)) return 'api_version must be 1, 2 or 3';
  return null;
}

/** A JSON object, or its text; stored as the text (ckanext-harvest answers it as text). Unknown keys are kept. */
const configValidator: Validator = (v) => {
  if (v === null || v === '') return null;
  let parsed: unknown = v;
  if (typeof v === 'string') {
    try {
      parsed = JSON.parse(v);
    } catch (e) {
      throw new Invalid(`Error parsing the configuration options: ${(e as Error).message}`);
    }
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new Invalid('Error parsing the configuration options: must be a JSON object');
  const error = configKeyError(parsed as Record<string, unknown>) ?? readerConfigError(parsed as Record<string, unknown>);
  if (error) throw new Invalid(`Error parsing the configuration options: ${error}`);
  return typeof v === 'string' ? v : JSON.stringify(parsed);
};

/** The declarations of a source's fields; `required` for create and update, all optional for patch. */
export function sourceParams(required: boolean) {
  const url = p.url('the URL of the remote catalog (a CKAN site, or a DCAT document or endpoint)');
  const type = p.string(`the kind of source: ${SOURCE_TYPES.join(', ')}`).use(sourceType);
  return {
    url: required ? url.required() : url,
    name: p.name('the name of the source (unique among sources)'),
    title: p.string('the title (default the name)'),
    source_type: required ? type.required() : type,
    frequency: p.string(`how often it runs: ${FREQUENCIES.join(', ')} (default MANUAL)`).use(frequency),
    config: p.any('the configuration: a JSON object, or its text (ckanext-harvest keys; unknown keys are kept)').use(configValidator),
    notes: p.string('a description'),
    owner_org: p.string('id or name of the organization the harvested datasets belong to'),
    private: p.boolean('only members of the organization see the source (the datasets keep their own visibility)'),
    active: p.boolean('inactive sources are not scheduled and cannot be run (default true)'),
  };
}

export interface SourceInput {
  url?: string;
  name?: string;
  title?: string;
  source_type?: string;
  frequency?: string;
  config?: string | null;
  notes?: string;
  owner_org?: string;
  private?: boolean;
  active?: boolean;
}

/** The stored fields of a source from its input (over `base` for patch), with the checks that need the database. */
export async function sourceFields(ctx: ActionContext, input: SourceInput, base: HarvestSourceRow | null): Promise<HarvestSourceFields> {
  const errors: Record<string, string[]> = {};
  const url = (input.url ?? base?.url ?? '').trim();
  const name = input.name ?? base?.name;
  if (!name) errors.name = ['Missing value'];
  else if (await harvestSourceNameTaken(ctx.db, name, base?.id)) errors.name = ['That URL is already in use.'];
  const urlError = checkSourceUrl(url, ctx.config.bool('svc.harvest.allow_private_urls'));
  if (urlError) errors.url = [urlError];
  let ownerOrg = base?.owner_org ?? null;
  if (input.owner_org !== undefined) {
    if (input.owner_org === '') ownerOrg = null;
    else {
      const org = await findGroup(ctx.db, input.owner_org);
      if (!org || !org.is_organization || org.state !== 'active') errors.owner_org = ['Organization does not exist'];
      else ownerOrg = org.id;
    }
  }
  if (!ownerOrg && !ctx.identity.sysadmin && !errors.owner_org) errors.owner_org = ['An organization must be provided'];
  const config = input.config !== undefined ? input.config : (base?.config ?? null);
  const importUser = config ? (JSON.parse(config) as { user?: string }).user : undefined;
  if (importUser && !(await findUser(ctx.db, importUser)))
    errors.config = [`Error parsing the configuration options: user ${importUser} does not exist`];
  if (!errors.url) {
    if (await sameUrlAndConfig(ctx.db, url, config, base?.id))
      errors.url = [`There already is a Harvest Source for this URL (& config): url=${url} config=${config}`];
  }
  if (Object.keys(errors).length) throw new ValidationError(errors);
  return {
    name: name!,
    title: input.title || base?.title || name!,
    url,
    source_type: input.source_type ?? base!.source_type,
    frequency: input.frequency ?? base?.frequency ?? 'MANUAL',
    config,
    notes: input.notes !== undefined ? input.notes : (base?.notes ?? null),
    owner_org: ownerOrg,
    private: input.private ?? base?.private ?? false,
    active: input.active ?? base?.active ?? true,
  };
}
