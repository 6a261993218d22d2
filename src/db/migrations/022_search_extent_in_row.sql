-- A dataset's spatial extent (package_spatial_extents, migration 019) is kept in its search index
-- row too, so that package_search's ext_bbox is a test on the row itself: the matches are found,
-- counted and ordered by overlap without a join to the extents (a box of a continent, thousands of
-- matches, took 25-38 ms at 100,000 datasets with the join). The public datasets' index holds the
-- id and the modification time as well: their count and their page by overlap or newest first are
-- read from the index alone (index-only scans: 1-2 ms for 3,900 matches; reading them from the
-- table took 5 ms and more). The extents table stays the source of the rows' extents; its own
-- index is no longer searched. The backfill rewrites the index rows of the datasets that have an
-- extent (3 minutes for 100,000 of them on a busy 2-core machine).
ALTER TABLE package_search_index ADD COLUMN extent box;
-- the rows' counts (migrations 011, 017) do not depend on the extent: their update triggers are
-- left out of the backfill
ALTER TABLE package_search_index DISABLE TRIGGER package_search_count_updated, DISABLE TRIGGER package_search_custom_count_updated;
UPDATE package_search_index s SET extent = e.extent FROM package_spatial_extents e WHERE e.package_id = s.package_id;
ALTER TABLE package_search_index ENABLE TRIGGER package_search_count_updated, ENABLE TRIGGER package_search_custom_count_updated;
CREATE INDEX package_search_extent_idx ON package_search_index USING gist (extent) WHERE extent IS NOT NULL;
CREATE INDEX package_search_public_extent_idx ON package_search_index USING gist (extent) INCLUDE (package_id, metadata_modified)
  WHERE extent IS NOT NULL AND state = 'active' AND NOT private;
DROP INDEX package_spatial_extents_extent_idx;
