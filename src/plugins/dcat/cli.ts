// `svc dcat export`: the whole public catalog as one RDF document, streamed page by page (memory
// stays flat at any catalog size), to a file or standard output; progress on standard error.
import fs from 'node:fs';
import { once } from 'node:events';
import { cliCommands, CliError } from '../../cli/extensions.ts';

interface ExportOptions {
  format: string;
  profiles?: string;
  q?: string;
  fq?: string;
  output?: string;
  pageSize: string;
}

cliCommands.push((program, tools) => {
  const dcat = program.command('dcat').description('linked data (DCAT)');
  dcat
    .command('export')
    .description('write the public catalog as one DCAT RDF document (what /catalog.{format} pages hold, all pages at once)')
    .option('-f, --format <format>', 'ttl, nt, n3, jsonld, xml (or rdf)', 'ttl')
    .option('-p, --profiles <names>', 'RDF profiles, comma separated (default svc.dcat.rdf.profiles)')
    .option('-q, --q <query>', 'only datasets matching this search query')
    .option('--fq <filter>', 'only datasets matching this filter query')
    .option('-o, --output <file>', 'write to this file instead of standard output')
    .option('--page-size <n>', 'datasets read per search', '1000')
    .action(async (o: ExportOptions) =>
      tools.withServices(async (services) => {
        const { rdfFormat } = await import('../../dcat/serialize.ts');
        const { profileList } = await import('../../dcat/profiles.ts');
        const { readContext } = await import('../../actions/read-context.ts');
        const { ANONYMOUS } = await import('../../context.ts');
        const { streamCatalog } = await import('./output.ts');
        const format = rdfFormat(o.format);
        if (!format) throw new CliError(`unknown format "${o.format}": use ttl, nt, n3, jsonld or xml`);
        const pageSize = Number(o.pageSize);
        if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 1000) throw new CliError('--page-size must be between 1 and 1000');
        const file = o.output ? fs.createWriteStream(o.output) : undefined;
        const sink = async (chunk: string) => {
          if (!file) return tools.io.out(chunk);
          if (!file.write(chunk)) await once(file, 'drain');
        };
        const started = performance.now();
        const ctx = readContext(services, ANONYMOUS);
        const total = await streamCatalog(
          ctx,
          format,
          { profiles: o.profiles ? profileList(o.profiles) : undefined, q: o.q, fq: o.fq },
          sink,
          { pageSize, onPage: (done, count) => tools.io.err(`\r${done} of ${count} datasets`) },
        );
        if (file) {
          file.end();
          await once(file, 'finish');
        }
        const seconds = (performance.now() - started) / 1000;
        tools.io.err(`\n${total} datasets in ${seconds.toFixed(1)} s (${Math.round(total / Math.max(seconds, 0.001))} datasets/s)\n`);
      }),
    );
});
