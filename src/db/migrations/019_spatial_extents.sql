-- The bounding box of each dataset's `spatial` GeoJSON geometry (ckanext-spatial's field), for
-- package_search's ext_bbox: core PostgreSQL's box type with a GiST index, so the same SQL runs on
-- PGlite and PostgreSQL. A dataset without a geometry has no row.
CREATE TABLE package_spatial_extents (
  package_id text PRIMARY KEY REFERENCES packages (id) ON DELETE CASCADE,
  extent box NOT NULL
);
CREATE INDEX package_spatial_extents_extent_idx ON package_spatial_extents USING gist (extent);
