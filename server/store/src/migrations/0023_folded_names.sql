-- 0023: symbol names by their folded form (ASCII lower case, `_` removed), so lint's
-- "did you mean" reads its candidates through an index (`_splitnetloc` finds
-- `_split_netloc`, `httpserver` finds `HTTPServer`, a prefix range finds `Header.encode`
-- for `encod`) instead of comparing a claim with every name of the map: 1.09 M symbols
-- of a 48,000-file repository had made every lint after a one-file rescan take 40 s
-- (issue 37). The expression must be written exactly so in a query for SQLite to use it
-- (`loci_store::map::FOLDED_NAME`). The name itself is the index's second column, so a
-- candidate is read from the index alone: reading each row's name from the table had
-- touched a page of `symbols` per row (360 MiB of the memory map for one lint).
CREATE INDEX symbols_by_folded_name ON symbols(lower(replace(name, '_', '')), name);
