// How PGlite returns values, in plain JavaScript: used by database.ts and by the data store's
// worker thread (pglite-worker-thread.mjs), which runs without a TypeScript loader.
// Timestamps are stored UTC without zone and returned as CKAN does: ISO 8601 without zone.
export const TIMESTAMP = 1114;
export const TIMESTAMPTZ = 1184;
export const DATE = 1082;
export const INT8 = 20;
export const NUMERIC = 1700;

/** @param {string} s */
export const isoTimestamp = (s) => s.replace(' ', 'T');

/** @param {string} s */
const same = (s) => s;

export const pgliteParsers = {
  [TIMESTAMP]: isoTimestamp,
  [TIMESTAMPTZ]: same,
  [DATE]: same,
  [INT8]: same,
  [NUMERIC]: same,
};
