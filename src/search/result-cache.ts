import type { PackageQueryResult } from './engine.ts';

/** Results of recent queries, valid while the index generation is unchanged. */
export class ResultCache {
  private readonly entries = new Map<string, { gen: string; result: PackageQueryResult }>();
  constructor(private readonly max = 500) {}

  get(key: string, gen: string): PackageQueryResult | undefined {
    const e = this.entries.get(key);
    if (!e || e.gen !== gen) return undefined;
    this.entries.delete(key); // most recently used last
    this.entries.set(key, e);
    return e.result;
  }

  set(key: string, gen: string, result: PackageQueryResult): void {
    this.entries.delete(key);
    this.entries.set(key, { gen, result });
    while (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value!);
  }
}
