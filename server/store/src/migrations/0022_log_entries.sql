-- 0022: each decision and lesson is a page of its own, with its own append-only revisions
-- and claims (subject `decision:N` with kind `decisions`, `lesson:N` with kind
-- `lessons`); the logs `decisions` and `lessons` are views over their entries. A log page
-- whose every revision held the whole log grew with the square of its entries.
--
-- The migration's fill (`logs::split_logs`) moves each revision of a whole-log page to
-- the entry it changed, keeping its id, author, session, event, time and summary, with
-- the claims that lie in that entry (their snapshots as taken); findings about the log
-- (dismissals and resolutions among them) move to the entries that make them. Nothing
-- here needs SQL of its own.

-- The entries of a log by number: the next number is the highest plus one, and a log is
-- read in number order, without reading every entry.
CREATE INDEX pages_by_entry_number
    ON pages(kind, CAST(substr(subject, instr(subject, ':') + 1) AS INTEGER));

-- The memory's full-text index is merged level by level on each write
-- (`search::merge_levels`): a level is merged when it holds two segments.
INSERT INTO revisions_fts(revisions_fts, rank) VALUES ('usermerge', 2);
