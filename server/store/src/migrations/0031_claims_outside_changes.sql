-- 0031: the claims whose verdict what `map_changes` records cannot find by their own name,
-- so that a lint of what changed still equals a lint of everything (issue 30, fresh-user
-- trial): lint reads them through these indexes, in proportion to them and not to what
-- memory holds.
--
-- A symbol claim that never named anything (`frobnicate()` before any such function) is
-- reported once it is a near miss of a real name (`frobnicat`, added in another file
-- later) or a call on a type the map gains: lint compares the names the map changed with
-- these claims' names (`loci_engine::audit::near_miss_names`).
CREATE INDEX claims_never_resolved ON claims(target)
    WHERE kind = 'symbol' AND resolved IS NULL AND definitions IS NULL AND resolved_elsewhere = 0;

-- A path claim is true when its path is in the map or on disk: one outside the map (a
-- git-ignored build output) can appear or go without any change to the map. Lint checks
-- again, at every run, the claims whose path is not a file or folder of the map.
CREATE INDEX claims_paths ON claims(target) WHERE kind = 'path';
