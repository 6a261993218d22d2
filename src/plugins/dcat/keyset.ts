// Keyset paging of the whole catalog for `svc dcat export`: newest first as the catalog pages,
// without OFFSET (which reads and drops every earlier row, so the searches at the end of a large
// catalog would cost as much as all before them).
import type { DatasetDict } from '../../dcat/profiles.ts';

/** What the keyset changes in a package_search call. */
interface SearchParams {
  start?: number;
  fq_list?: string[];
  [param: string]: unknown;
}

/** A stored time ('2024-01-02T03:04:05.123456') to the millisecond, as a Date; search ranges have millisecond precision. */
function millisecondOf(modified: string): number {
  const t = Date.parse(/(Z|[+-]\d\d:?\d\d)$/.test(modified) ? modified : `${modified}Z`);
  if (Number.isNaN(t)) throw new Error(`unexpected metadata_modified "${modified}"`);
  return t;
}

/**
 * Keyset paging over the catalog's order (metadata_modified desc, id desc): each search asks for
 * the datasets modified before the end of the millisecond of the last one written (search ranges
 * are to the millisecond), and skips those of that millisecond already written. No OFFSET, so a
 * search costs the same at the end of a large catalog as at its start. Should more than a page of
 * datasets share one millisecond, the searches page through them by offset.
 */
export class CatalogKeyset {
  private before: number | undefined;
  private written = new Set<string>();
  private offset = 0;

  /** The package_search parameters of the next search: the first search's, from where the last one ended. */
  after(params: SearchParams): SearchParams {
    if (this.before === undefined) return { ...params, start: this.offset };
    return {
      ...params,
      start: this.offset,
      fq_list: [...(params.fq_list ?? []), `metadata_modified:[* TO ${new Date(this.before).toISOString()}}`],
    };
  }

  /** The datasets of a search not written yet; remembers where the next search starts. */
  next(results: DatasetDict[]): DatasetDict[] {
    const fresh = results.filter((d) => !this.written.has(d.id));
    const last = results.at(-1);
    if (!last) return fresh;
    const lastMs = millisecondOf(last.metadata_modified);
    if (lastMs + 1 === this.before) {
      // the whole search was in the millisecond the previous one ended in
      this.offset += results.length;
    } else {
      this.before = lastMs + 1;
      this.offset = 0;
      this.written = new Set();
    }
    for (const d of fresh) if (millisecondOf(d.metadata_modified) === lastMs) this.written.add(d.id);
    return fresh;
  }
}
