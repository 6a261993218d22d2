// Which reader reads a source of each type, and the checks of the config keys only readers use.
import { FORMAT_CHOICES, formatByName } from '../dcat/parse/read-rdf.ts';
import { resolveProfiles, UnknownProfileError } from '../dcat/profiles.ts';
import { ckanReader } from './ckan-reader.ts';
import { dcatJsonReader } from './dcat-json-reader.ts';
import { dcatRdfReader } from './dcat-reader.ts';
import type { HarvestSourceType, SourceReader } from './types.ts';

const READERS: Record<HarvestSourceType, SourceReader> = {
  ckan: ckanReader,
  dcat_rdf: dcatRdfReader,
  dcat_json: dcatJsonReader,
};

export function readerFor(type: HarvestSourceType): SourceReader {
  const reader = READERS[type];
  if (!reader) throw new Error(`no reader for harvest sources of type ${String(type)}`);
  return reader;
}

const FILTER_KEYS = ['organizations_filter_include', 'organizations_filter_exclude', 'groups_filter_include', 'groups_filter_exclude'];

/** What is wrong with the config keys the readers use (rows, the CKAN filters, rdf_format, profiles), or null. */
export function readerConfigError(config: Record<string, unknown>): string | null {
  if ('rows' in config) {
    const rows = config.rows;
    if (typeof rows !== 'number' || !Number.isInteger(rows) || rows < 1 || rows > 1000) return 'rows must be a whole number from 1 to 1000';
  }
  for (const k of FILTER_KEYS) {
    const v = config[k];
    if (k in config && !(Array.isArray(v) && v.every((x) => typeof x === 'string' && x.trim()))) return `${k} must be a list of names`;
  }
  if (typeof config.rdf_format === 'string' && config.rdf_format && !formatByName(config.rdf_format))
    return `rdf_format "${config.rdf_format.slice(0, 100)}" is not a format svc reads (${FORMAT_CHOICES.join(', ')} or a media type)`;
  if (Array.isArray(config.profiles)) {
    try {
      const profiles = resolveProfiles(config.profiles.map(String));
      if (profiles.length && !profiles.some((p) => p.parseDataset))
        return `none of the profiles ${config.profiles.join(', ')} reads DCAT (euro_dcat_ap_3, euro_dcat_ap_2 and dcat_us_3 do)`;
    } catch (e) {
      if (e instanceof UnknownProfileError) return e.message;
      throw e;
    }
  }
  return null;
}
