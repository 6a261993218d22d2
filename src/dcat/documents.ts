// The RDF documents of the endpoints: one dataset, or a catalog page (the dcat:Catalog, its
// datasets and hydra paging). Profiles add the triples; this module makes the nodes, the URIs and
// the context the profiles share.
import { DataFactory, type NamedNode, type Quad } from 'n3';
import { findLicense } from '../model/licenses.ts';
import { datasetUriOf } from './dcat-ap.ts';
import { Graph } from './graph.ts';
import { dcat, hydra, iri, looksLikeIri, RDF_TYPE, xsd } from './namespaces.ts';
import type { CatalogDict, DatasetDict, DataStoreTable, DcatProfile, OutputContext } from './profiles.ts';

export interface UriSettings {
  /** Base of minted URIs, no trailing slash. */
  baseUri: string;
  /** The site's address, no trailing slash. */
  siteUrl: string;
  groupsAsThemes: boolean;
}

/** A catalog page's place in the whole result (hydra:PartialCollectionView). */
export interface Paging {
  count: number;
  itemsPerPage: number;
  page: number;
  /** The address of page n of the same request. */
  pageUrl(page: number): string;
}

export function outputContext(settings: UriSettings, graph: Graph, tables: Map<string, DataStoreTable>): OutputContext {
  return {
    graph,
    baseUri: settings.baseUri,
    siteUrl: settings.siteUrl,
    groupsAsThemes: settings.groupsAsThemes,
    tables,
    datasetUri: (dataset) => datasetUriOf(settings.baseUri, dataset),
    resourceUri: (dataset, resource) => {
      const own = typeof resource.uri === 'string' ? resource.uri.trim() : '';
      return own && looksLikeIri(own) ? own : `${settings.baseUri}/dataset/${resource.package_id ?? dataset.id}/resource/${resource.id}`;
    },
    licenseUrl: (id) => findLicense(id)?.url || undefined,
  };
}

/** The quads of one dataset under the given profiles (in order). */
export async function addDataset(ctx: OutputContext, profiles: readonly DcatProfile[], dataset: DatasetDict): Promise<NamedNode> {
  const node = iri(ctx.datasetUri(dataset));
  for (const profile of profiles) await profile.datasetToGraph?.(ctx, dataset, node);
  return node;
}

/** A dataset's quads; inCatalog: in a catalog page, with the catalog's dcat:dataset link to it. */
export async function datasetQuads(
  settings: UriSettings,
  profiles: readonly DcatProfile[],
  dataset: DatasetDict,
  tables: Map<string, DataStoreTable>,
  inCatalog = false,
): Promise<Quad[]> {
  const graph = new Graph();
  const node = await addDataset(outputContext(settings, graph, tables), profiles, dataset);
  if (inCatalog) graph.add(catalogUri(settings), dcat('dataset'), node);
  return graph.quads;
}

/** The URI of the catalog itself. */
export function catalogUri(settings: UriSettings): NamedNode {
  return iri(`${settings.baseUri}/`);
}

/** The catalog's description and, with paging, the hydra view of this page. */
export function catalogHead(settings: UriSettings, profiles: readonly DcatProfile[], catalog: CatalogDict, paging?: Paging): Quad[] {
  const graph = new Graph();
  const ctx = outputContext(settings, graph, new Map());
  const node = catalogUri(settings);
  for (const profile of profiles) profile.catalogToGraph?.(ctx, catalog, node);
  if (!graph.quads.some((q) => q.subject.equals(node) && q.predicate.equals(RDF_TYPE))) graph.add(node, RDF_TYPE, dcat('Catalog'));
  if (paging && paging.count > 0) addPaging(graph, node, paging);
  return graph.quads;
}

function addPaging(graph: Graph, catalog: NamedNode, paging: Paging): void {
  const last = Math.max(1, Math.ceil(paging.count / paging.itemsPerPage));
  const view = iri(paging.pageUrl(paging.page));
  graph.add(catalog, hydra('view'), view);
  // ckanext-dcat's harvesters look for either class.
  graph.add(view, RDF_TYPE, hydra('PartialCollectionView'));
  graph.add(view, RDF_TYPE, hydra('PagedCollection'));
  graph.add(view, hydra('first'), iri(paging.pageUrl(1)));
  graph.add(view, hydra('last'), iri(paging.pageUrl(last)));
  if (paging.page < last) graph.add(view, hydra('next'), iri(paging.pageUrl(paging.page + 1)));
  if (paging.page > 1) graph.add(view, hydra('previous'), iri(paging.pageUrl(Math.min(paging.page - 1, last))));
  graph.add(view, hydra('totalItems'), DataFactory.literal(String(paging.count), xsd('integer')));
  graph.add(view, hydra('itemsPerPage'), DataFactory.literal(String(paging.itemsPerPage), xsd('integer')));
}
