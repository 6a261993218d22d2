// Which reader reads a source of each type.
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
