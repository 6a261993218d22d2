// DCAT-US 3 (dcat_us_3): DCAT-AP 3 plus the US properties: liability statement, purpose, usage
// note, geographic bounding boxes, data dictionaries (dcat-us:describedBy; a data store table's
// is our datastore_info), and character encoding and identifier of distributions.
import { DataFactory } from 'n3';
import { fieldText, fieldValue, objectsOf, textOf } from './dataset-values.ts';
import type { Graph, Subject } from './graph.ts';
import { cnt, dcat, dcatus, dct, iri, looksLikeIri, RDF_TYPE, rdfs, skos, xsd } from './namespaces.ts';
import { type DatasetDict, type OutputContext, registerProfile } from './profiles.ts';
import { mediaTypeOf } from './distributions.ts';

type Dict = Record<string, any>;

/** A data dictionary: a dcat:Distribution (its address, media type, format) or, without an address, text. */
function addDataDictionary(g: Graph, node: Subject, dictionary: Dict): void {
  const url = textOf(dictionary.url);
  if (!url || !looksLikeIri(url)) {
    const text = textOf(dictionary.text) ?? textOf(dictionary.description);
    if (text) g.add(node, dcatus('describedBy'), DataFactory.literal(text));
    return;
  }
  const d = g.blank();
  g.add(node, dcatus('describedBy'), d);
  g.add(d, RDF_TYPE, dcat('Distribution'));
  g.add(d, dcat('accessURL'), iri(url));
  const type = mediaTypeOf({ mimetype: dictionary.media_type ?? dictionary.mimetype, format: dictionary.format });
  if (type) g.add(d, dcat('mediaType'), iri(`https://www.iana.org/assignments/media-types/${type}`));
  g.uriOrText(d, dct('format'), dictionary.format);
  g.uriOrText(d, dct('license'), dictionary.license);
}

function addBoundingBoxes(g: Graph, node: Subject, boxes: Dict[]): void {
  for (const box of boxes) {
    const sides = [
      [dcatus('westBoundingLongitude'), box.west],
      [dcatus('eastBoundingLongitude'), box.east],
      [dcatus('northBoundingLatitude'), box.north],
      [dcatus('southBoundingLatitude'), box.south],
    ] as const;
    if (!sides.some(([, v]) => Number.isFinite(Number(v)) && textOf(v))) continue;
    const b = g.blank();
    g.add(node, dcatus('geographicBoundingBox'), b);
    g.add(b, RDF_TYPE, dcatus('GeographicBoundingBox'));
    for (const [predicate, v] of sides) if (textOf(v) && Number.isFinite(Number(v))) g.typed(b, predicate, v, xsd('decimal'));
  }
}

function usDataset(ctx: OutputContext, dataset: DatasetDict, node: Subject): void {
  const g = ctx.graph;
  const liability = fieldText(dataset, 'liability');
  if (liability) {
    const l = g.blank();
    g.add(node, dcatus('liabilityStatement'), l);
    g.add(l, RDF_TYPE, dcatus('LiabilityStatement'));
    g.text(l, rdfs('label'), liability);
  }
  g.text(node, dcatus('purpose'), fieldText(dataset, 'purpose'));
  g.text(node, skos('scopeNote'), fieldText(dataset, 'usage'));
  addBoundingBoxes(g, node, objectsOf(fieldValue(dataset, 'bbox')));
  for (const dictionary of objectsOf(fieldValue(dataset, 'data_dictionary'), 'url')) addDataDictionary(g, node, dictionary);
  for (const resource of (dataset.resources ?? []) as Dict[]) {
    const distribution = iri(ctx.resourceUri(dataset, resource));
    g.text(distribution, dct('identifier'), resource.identifier ?? resource.id);
    g.text(distribution, cnt('characterEncoding'), resource.character_encoding);
    const dictionaries = objectsOf(resource.data_dictionary, 'url');
    if (!dictionaries.length && ctx.tables.has(resource.id)) {
      dictionaries.push({ url: `${ctx.siteUrl}/api/3/action/datastore_info?id=${resource.id}`, media_type: 'application/json' });
    }
    for (const dictionary of dictionaries) addDataDictionary(g, distribution, dictionary);
  }
}

registerProfile({
  name: 'dcat_us_3',
  description: 'DCAT-US 3: DCAT-AP 3 with the US properties (liability, purpose, bounding boxes, data dictionaries)',
  basedOn: ['euro_dcat_ap_3'],
  datasetToGraph: usDataset,
});
