-- How many datasets have a date or number of a custom field in a range (a filter alone: its count
-- without the matching rows, src/search/sql-builder.ts typedCount) was count(DISTINCT package_id)
-- over the index of the values: a sort of every id in the range (17,912 of them: 10-13 ms of
-- 15-20). Each dataset has exactly one row flagged least_ts (least_num) per field among its dates
-- (numbers, migration 018), so the flagged rows in the range are distinct datasets; only the
-- others (items of lists) need a look at their dataset's least row. The indexes carry the flag,
-- so that the count stays an index-only scan. They replace those of migration 017 (the same keys
-- and more included columns).
CREATE INDEX package_search_field_values_ts_flag_idx ON package_search_field_values (field, ts, package_id)
  INCLUDE (state, private, least_ts) WHERE ts IS NOT NULL;
CREATE INDEX package_search_field_values_num_flag_idx ON package_search_field_values (field, num, package_id)
  INCLUDE (state, private, least_num) WHERE num IS NOT NULL;
DROP INDEX package_search_field_values_ts_idx;
DROP INDEX package_search_field_values_num_idx;
ALTER INDEX package_search_field_values_ts_flag_idx RENAME TO package_search_field_values_ts_idx;
ALTER INDEX package_search_field_values_num_flag_idx RENAME TO package_search_field_values_num_idx;
