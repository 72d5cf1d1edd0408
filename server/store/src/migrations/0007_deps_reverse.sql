-- 0007: the reverse import index covers what `impact` reads. An impact walk looks up the
-- importers of every file it reaches (five thousand rows for a file imported across the
-- standard library); with (to_file_id) alone each row cost a second lookup in the table,
-- and grouping by importer a temporary b-tree.

DROP INDEX deps_by_target;
CREATE INDEX deps_by_target ON deps(to_file_id, from_file_id, line);
