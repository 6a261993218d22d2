-- A dataset's tsvector stays in its index row. Under the default storage every row over ~2 KB
-- moved its largest value, usually doc, to the TOAST table, so a query testing or ranking the
-- words of many rows fetched each such doc from there: `q=data&start=5000` (6,000 rows tested
-- in date order) took 10.9 ms against 7.3, a two-word query (1,000 rows ranked) 14.8 against 13.0.
-- Other columns leave the row first; a doc over a page still goes out of line. Rows keep their
-- old storage until they are written again (any change of the dataset, or
-- `svc search-index rebuild`), so that the migration never rewrites a large catalog.
ALTER TABLE package_search_index ALTER COLUMN doc SET STORAGE MAIN;
