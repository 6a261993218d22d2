// The schemaorg and croissant profiles of the RDF endpoints: the schema.org and Croissant JSON-LD
// objects that the dataset pages embed (schema-org.ts, croissant.ts), turned into quads by jsonld
// (toRDF), so `profiles=schemaorg` or `profiles=croissant` gives them in every RDF format.
import jsonld from 'jsonld';
import { DataFactory, type BlankNode, type Quad_Object } from 'n3';
import { croissantDataset } from './croissant.ts';
import { schemaOrgDataset, type DatasetAddress } from './schema-org.ts';
import type { DatasetDict, OutputContext } from './profiles.ts';
import { registerProfile } from './profiles.ts';

type JsonTerm = { termType: string; value: string; language?: string; datatype?: { value: string } };

/** Adds the quads of a JSON-LD document to the graph; its blank nodes get fresh names (unique in the document). */
async function addJsonLd(ctx: OutputContext, document: object): Promise<void> {
  const quads = (await jsonld.toRDF(document as jsonld.JsonLdDocument)) as unknown as {
    subject: JsonTerm;
    predicate: JsonTerm;
    object: JsonTerm;
  }[];
  const blanks = new Map<string, BlankNode>();
  const blank = (label: string) => {
    let node = blanks.get(label);
    if (!node) {
      node = DataFactory.blankNode();
      blanks.set(label, node);
    }
    return node;
  };
  const term = (t: JsonTerm): Quad_Object => {
    if (t.termType === 'BlankNode') return blank(t.value);
    if (t.termType === 'Literal') {
      if (t.language) return DataFactory.literal(t.value, t.language);
      return DataFactory.literal(t.value, t.datatype ? DataFactory.namedNode(t.datatype.value) : undefined);
    }
    return DataFactory.namedNode(t.value);
  };
  const subject = (t: JsonTerm) => (t.termType === 'BlankNode' ? blank(t.value) : DataFactory.namedNode(t.value));
  for (const q of quads) ctx.graph.add(subject(q.subject), DataFactory.namedNode(q.predicate.value), term(q.object));
}

function address(ctx: OutputContext, dataset: DatasetDict, site: { title: string; description?: string }): DatasetAddress {
  return { site: { url: ctx.siteUrl, ...site }, datasetUrl: `${ctx.siteUrl}/dataset/${encodeURIComponent(dataset.name ?? dataset.id)}` };
}

/** The site's title and description, for the catalog the JSON-LD datasets say they are in. */
export interface SiteText {
  title: string;
  description?: string;
}

/** Registers the two profiles; the site text comes from the configuration when a document is made. */
export function registerJsonLdProfiles(siteText: () => SiteText): void {
  registerProfile({
    name: 'schemaorg',
    description: 'schema.org Dataset (what Google Dataset Search reads), as RDF',
    datasetToGraph: (ctx, dataset) => addJsonLd(ctx, schemaOrgDataset(dataset, address(ctx, dataset, siteText()))),
  });
  registerProfile({
    name: 'croissant',
    description: 'Croissant 1.0 (ML datasets): each data store table a cr:RecordSet with cr:Fields typed from its data dictionary',
    datasetToGraph: (ctx, dataset) =>
      addJsonLd(ctx, croissantDataset(dataset, address(ctx, dataset, siteText()), [...ctx.tables.values()])),
  });
}
