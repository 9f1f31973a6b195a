-- Slugs by byte-wise prefix: publishing looks up which `base-N` forms of each new tool's slug are taken
-- (store/catalog-store.ts takenSlugs) with range operators this index serves under any collation; without
-- it every publish read every tool of the catalog.
CREATE INDEX tools_slug_pattern ON tools (slug text_pattern_ops);
