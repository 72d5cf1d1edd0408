-- 0015: the stale marks of each current revision, as the last finished scan's map gives
-- them, so that a question does not check every claim of every page it serves again.
--
-- `marks` is the JSON array of the revision's marks (loci-engine `audit::Staleness`;
-- `[]` when nothing is stale), computed from the map of scan `scan_id` by the rules of
-- version `rules` (loci-engine `audit::MARK_RULES`). A reader uses a row only while
-- `scan_id` is the last scan and that scan finished (a scan records itself before it
-- writes the map, so a running or killed one invalidates every row) and `rules` is its
-- own; otherwise it checks the claims as before. A scan writes the rows of every current
-- revision when it finishes, and a memory write the row of the revision it adds. What a
-- mark is computed from outside the map (the revision's claims and page snapshot, its
-- page's subject, kind and pin) deletes the row when it changes (the triggers below).
-- Derived data: it can be deleted at any time; a migration that changes the map or the
-- claims must delete it.

CREATE TABLE revision_marks (
    revision_id  INTEGER PRIMARY KEY REFERENCES revisions(revision_id) ON DELETE CASCADE,
    scan_id      INTEGER NOT NULL,
    rules        INTEGER NOT NULL,
    marks        TEXT NOT NULL
) STRICT;

CREATE TRIGGER revision_marks_claim_insert AFTER INSERT ON claims BEGIN
    DELETE FROM revision_marks WHERE revision_id = new.revision_id;
END;
CREATE TRIGGER revision_marks_claim_update AFTER UPDATE ON claims BEGIN
    DELETE FROM revision_marks WHERE revision_id IN (old.revision_id, new.revision_id);
END;
CREATE TRIGGER revision_marks_claim_delete AFTER DELETE ON claims BEGIN
    DELETE FROM revision_marks WHERE revision_id = old.revision_id;
END;
CREATE TRIGGER revision_marks_snapshot_insert AFTER INSERT ON page_snapshots BEGIN
    DELETE FROM revision_marks WHERE revision_id = new.revision_id;
END;
CREATE TRIGGER revision_marks_snapshot_update AFTER UPDATE ON page_snapshots BEGIN
    DELETE FROM revision_marks WHERE revision_id IN (old.revision_id, new.revision_id);
END;
CREATE TRIGGER revision_marks_snapshot_delete AFTER DELETE ON page_snapshots BEGIN
    DELETE FROM revision_marks WHERE revision_id = old.revision_id;
END;
CREATE TRIGGER revision_marks_page_update AFTER UPDATE OF subject, kind, pinned ON pages BEGIN
    DELETE FROM revision_marks
     WHERE revision_id IN (SELECT revision_id FROM revisions WHERE page_id = new.page_id);
END;
