// DCAT-AP 2.x and 3 (euro_dcat_ap_2, euro_dcat_ap_3): a dataset dict as a dcat:Dataset with its
// distributions, after ckanext-dcat's docs/mapping.md. Both the scheming shape (top-level fields
// of dcat_ap_full.yaml) and the legacy extras are read; the catalog gets its own description.
import { DataFactory } from 'n3';
import { addContactPoints, addCreators, addPublishers, addSpatialCoverage, addTemporalCoverage, addTemporalResolution } from './agents.ts';
import { fieldText, fieldValue, objectsOf, textOf } from './dataset-values.ts';
import { addDistribution } from './distributions.ts';
import { type Graph, listValues, type Subject } from './graph.ts';
import { adms, dcat, dcatap, dct, foaf, iri, looksLikeIri, owl, prov, RDF_TYPE, rdfs, skos, xsd } from './namespaces.ts';
import { type DatasetDict, type DcatProfile, type OutputContext, registerProfile } from './profiles.ts';

type Dict = Record<string, any>;

/** A dcat:Dataset's URI from the `uri` field or extra, else baseUri/dataset/{id}. */
export function datasetUriOf(baseUri: string, dataset: DatasetDict): string {
  const own = fieldText(dataset, 'uri');
  return own && looksLikeIri(own) ? own : `${baseUri}/dataset/${dataset.id}`;
}

/** Each list value as a resource when it is a URI, as text otherwise. */
function urisOrTexts(g: Graph, node: Subject, predicate: ReturnType<typeof dct>, values: unknown): void {
  for (const v of listValues(values)) g.uriOrText(node, predicate, v);
}

/** The properties DCAT-AP 2 and 3 share. */
function coreDataset(ctx: OutputContext, dataset: DatasetDict, node: Subject, version: 2 | 3): void {
  const g = ctx.graph;
  const series = dataset.type === 'dataset_series';
  g.add(node, RDF_TYPE, series && version === 3 ? dcat('DatasetSeries') : dcat('Dataset'));
  g.text(node, dct('title'), dataset.title || dataset.name);
  g.text(node, dct('description'), dataset.notes || dataset.title || dataset.name);
  for (const tag of (dataset.tags ?? []) as Dict[]) g.text(node, dcat('keyword'), tag.display_name ?? tag.name);
  g.text(node, dct('identifier'), fieldText(dataset, 'identifier') ?? fieldText(dataset, 'guid') ?? dataset.id);
  g.date(node, dct('issued'), fieldText(dataset, 'issued') ?? dataset.metadata_created);
  g.date(node, dct('modified'), fieldText(dataset, 'modified') ?? dataset.metadata_modified);
  const version_ = textOf(dataset.version) ?? fieldText(dataset, 'dcat_version');
  g.text(node, version === 3 ? dcat('version') : owl('versionInfo'), version_);
  g.text(node, adms('versionNotes'), fieldText(dataset, 'version_notes'));
  const landing = textOf(dataset.url);
  if (landing && looksLikeIri(landing)) {
    const page = iri(landing);
    g.add(node, dcat('landingPage'), page);
    g.add(page, RDF_TYPE, foaf('Document'));
  }
  urisOrTexts(g, node, dct('language'), fieldValue(dataset, 'language'));
  urisOrTexts(g, node, dcat('theme'), fieldValue(dataset, 'theme'));
  if (ctx.groupsAsThemes) {
    for (const group of (dataset.groups ?? []) as Dict[])
      if (group.name) g.add(node, dcat('theme'), iri(`${ctx.baseUri}/group/${group.name}`));
  }
  g.uriOrText(node, dct('accrualPeriodicity'), fieldText(dataset, 'frequency'));
  g.uris(node, dct('conformsTo'), fieldValue(dataset, 'conforms_to'));
  const accessRights = fieldText(dataset, 'access_rights');
  if (accessRights) {
    const rights = looksLikeIri(accessRights) ? iri(accessRights) : g.blank();
    g.add(node, dct('accessRights'), rights);
    g.add(rights, RDF_TYPE, dct('RightsStatement'));
    if (!looksLikeIri(accessRights)) g.text(rights, rdfs('label'), accessRights);
  }
  for (const page of listValues(fieldValue(dataset, 'documentation'))) {
    if (!looksLikeIri(page)) continue;
    g.add(node, foaf('page'), iri(page));
    g.add(iri(page), RDF_TYPE, foaf('Document'));
  }
  for (const statement of listValues(fieldValue(dataset, 'provenance'))) {
    const p = g.blank();
    g.add(node, dct('provenance'), p);
    g.add(p, RDF_TYPE, dct('ProvenanceStatement'));
    g.text(p, rdfs('label'), statement);
  }
  g.uriOrText(node, dct('type'), fieldText(dataset, 'dcat_type'));
  g.uris(node, dct('isReferencedBy'), fieldValue(dataset, 'is_referenced_by'));
  g.uris(node, dct('source'), fieldValue(dataset, 'source'));
  g.uris(node, dct('isVersionOf'), fieldValue(dataset, 'is_version_of'));
  g.uris(node, adms('sample'), fieldValue(dataset, 'sample'));
  g.uris(node, dct('relation'), fieldValue(dataset, 'related_resource'));
  g.uris(node, prov('wasGeneratedBy'), fieldValue(dataset, 'provenance_activity'));
  g.uris(node, dcatap('applicableLegislation'), fieldValue(dataset, 'applicable_legislation'));
  g.uris(node, dcatap('hvdCategory'), fieldValue(dataset, 'hvd_category'));
  for (const meters of listValues(fieldValue(dataset, 'spatial_resolution_in_meters'))) {
    if (Number.isFinite(Number(meters))) g.typed(node, dcat('spatialResolutionInMeters'), meters, xsd('decimal'));
  }
  addTemporalResolution(g, node, listValues(fieldValue(dataset, 'temporal_resolution')));
  for (const attribution of objectsOf(fieldValue(dataset, 'qualified_attribution'))) {
    const a = g.blank();
    g.add(node, prov('qualifiedAttribution'), a);
    g.add(a, RDF_TYPE, prov('Attribution'));
    const agent = objectsOf(attribution.agent)[0];
    if (agent) {
      const agentNode = agent.uri && looksLikeIri(agent.uri) ? iri(agent.uri) : g.blank();
      g.add(a, prov('agent'), agentNode);
      g.add(agentNode, RDF_TYPE, foaf('Agent'));
      g.text(agentNode, foaf('name'), agent.name);
    }
    g.uriOrText(a, dcat('hadRole'), attribution.role);
  }
  addAlternateIdentifiers(g, node, fieldValue(dataset, 'alternate_identifier'), version);
  addContactPoints(ctx, dataset, node);
  addPublishers(ctx, dataset, node);
  addCreators(ctx, dataset, node);
  addTemporalCoverage(ctx, dataset, node);
  addSpatialCoverage(ctx, dataset, node);
  for (const resource of (dataset.resources ?? []) as Dict[]) addDistribution(ctx, dataset, node, resource, version);
}

function addAlternateIdentifiers(g: Graph, node: Subject, values: unknown, version: 2 | 3): void {
  for (const value of listValues(values)) {
    const id = g.blank();
    g.add(node, adms('identifier'), id);
    g.add(id, RDF_TYPE, adms('Identifier'));
    g.add(id, skos('notation'), DataFactory.literal(value));
    if (version === 2) g.text(id, rdfs('label'), value);
  }
}

/** DCAT-AP 3 only: series membership, hasVersion. */
function datasetV3(ctx: OutputContext, dataset: DatasetDict, node: Subject): void {
  const g = ctx.graph;
  g.uris(node, dcat('hasVersion'), fieldValue(dataset, 'has_version'));
  for (const seriesId of listValues(fieldValue(dataset, 'in_series'))) {
    g.add(node, dcat('inSeries'), iri(looksLikeIri(seriesId) ? seriesId : `${ctx.baseUri}/dataset/${seriesId}`));
  }
}

const catalogToGraph: DcatProfile['catalogToGraph'] = (ctx, catalog, node) => {
  const g = ctx.graph;
  g.add(node, RDF_TYPE, dcat('Catalog'));
  g.text(node, dct('title'), catalog.title);
  g.text(node, dct('description'), catalog.description || catalog.title);
  g.add(node, foaf('homepage'), iri(catalog.homepage));
  if (catalog.language) g.uriOrText(node, dct('language'), catalog.language);
  if (catalog.modified) g.date(node, dct('modified'), catalog.modified);
  const publisher = g.blank();
  g.add(node, dct('publisher'), publisher);
  g.add(publisher, RDF_TYPE, foaf('Agent'));
  g.text(publisher, foaf('name'), catalog.title);
};

registerProfile({
  name: 'euro_dcat_ap_2',
  description: 'DCAT-AP 2.x (owl:versionInfo, xsd:decimal byte sizes)',
  datasetToGraph: (ctx, dataset, node) => coreDataset(ctx, dataset, node, 2),
  catalogToGraph,
});

registerProfile({
  name: 'euro_dcat_ap_3',
  description: 'DCAT-AP 3 (the default): dcat:version, dataset series, xsd:nonNegativeInteger byte sizes',
  datasetToGraph: (ctx, dataset, node) => {
    coreDataset(ctx, dataset, node, 3);
    datasetV3(ctx, dataset, node);
  },
  catalogToGraph,
});

// ckanext-dcat's scheming profile reads the scheming shape; ours always read it, so the name is
// accepted for configurations that list it and adds nothing of its own.
registerProfile({
  name: 'euro_dcat_ap_scheming',
  description: 'Accepted for compatibility: the DCAT-AP profiles read the scheming fields already',
});
