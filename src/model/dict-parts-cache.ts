// The parts of a dataset's dict read inside a write's transaction, kept for the next dict of that
// dataset in the same transaction: the activity of a dataset write reads them (its change listener
// runs after all the others), the action's answer then assembles its own dict from them (with its
// caller's view of relationships) instead of reading them again. Every write of a dataset's parts
// is followed by its change notification (notifyPackageChange), which forgets them first; an entry
// is used at most once, and only for the very row it was read with.
import type { Queryable } from '../db/database.ts';

const kept = new WeakMap<Queryable, Map<string, unknown>>();

export function keepDictParts(db: Queryable, packageId: string, parts: unknown): void {
  const byId = kept.get(db) ?? new Map<string, unknown>();
  kept.set(db, byId);
  byId.set(packageId, parts);
}

/** The parts kept for this dataset in this transaction (forgotten by this call). */
export function takeDictParts(db: Queryable, packageId: string): unknown {
  const byId = kept.get(db);
  const parts = byId?.get(packageId);
  byId?.delete(packageId);
  return parts;
}

export function forgetDictParts(db: Queryable, packageId: string): void {
  kept.get(db)?.delete(packageId);
}
