-- 0024: what the map changed since lint last looked, so that lint checks again only the
-- claims whose verdict the change can move, and the end of a scan marks again only the
-- revisions whose marks it can move: both cost what changed, not what memory holds
-- (issue 30: 15,000 entries had made every lint read and resolve 20,500 claims).
--
-- `map_changes` holds the names of symbols inserted or deleted (a rescanned file deletes
-- and inserts all of its symbols) and, prefixed with `/`, the paths of files inserted,
-- deleted, renamed or changed and the new subjects of pages moved, written by the
-- triggers below whatever writes the map or moves a page.
-- Lint reads them all, checks again the claims with those names (`claims_by_name`), and
-- deletes them in its write transaction, under the store lock that scans take too. The row `*`
-- means "everything": lint checks every claim and deletes it; while it is there the
-- triggers record nothing (a first scan writes every symbol of the repository).
-- Derived data: deleting every row and inserting `*` is always safe.

CREATE TABLE map_changes (
    name  TEXT PRIMARY KEY
) STRICT, WITHOUT ROWID;

INSERT INTO map_changes(name) VALUES ('*');

CREATE TRIGGER map_changes_symbol_insert AFTER INSERT ON symbols
WHEN NOT EXISTS (SELECT 1 FROM map_changes WHERE name = '*') BEGIN
    INSERT OR IGNORE INTO map_changes(name) VALUES (new.name);
END;
CREATE TRIGGER map_changes_symbol_delete AFTER DELETE ON symbols
WHEN NOT EXISTS (SELECT 1 FROM map_changes WHERE name = '*') BEGIN
    INSERT OR IGNORE INTO map_changes(name) VALUES (old.name);
END;
CREATE TRIGGER map_changes_file_insert AFTER INSERT ON files
WHEN NOT EXISTS (SELECT 1 FROM map_changes WHERE name = '*') BEGIN
    INSERT OR IGNORE INTO map_changes(name) VALUES ('/' || new.path);
END;
CREATE TRIGGER map_changes_file_delete AFTER DELETE ON files
WHEN NOT EXISTS (SELECT 1 FROM map_changes WHERE name = '*') BEGIN
    INSERT OR IGNORE INTO map_changes(name) VALUES ('/' || old.path);
END;
CREATE TRIGGER map_changes_file_update AFTER UPDATE OF path, content_hash, fingerprint ON files
WHEN (old.path IS NOT new.path OR old.content_hash IS NOT new.content_hash
      OR old.fingerprint IS NOT new.fingerprint)
     AND NOT EXISTS (SELECT 1 FROM map_changes WHERE name = '*') BEGIN
    INSERT OR IGNORE INTO map_changes(name) VALUES ('/' || old.path), ('/' || new.path);
END;

-- A page moved to another subject (a rename memory followed, an import): its claims may
-- resolve otherwise there (a name is looked for near the page's subject first).
CREATE TRIGGER map_changes_page_move AFTER UPDATE OF subject ON pages
WHEN old.subject IS NOT new.subject
     AND NOT EXISTS (SELECT 1 FROM map_changes WHERE name = '*') BEGIN
    INSERT OR IGNORE INTO map_changes(name) VALUES ('/' || new.subject);
END;

-- A claim by the last segment of its target: a symbol claim's name (`raw_decode` for
-- `JSONDecoder.raw_decode`), a path claim's file or folder name (`decoder.py` for
-- `json/decoder.py`). Written exactly as `loci_store::memory::CLAIM_NAME`, so that SQLite
-- reads this index for it.
CREATE INDEX claims_by_name ON claims(
    CASE kind WHEN 'path' THEN replace(target, rtrim(target, replace(target, '/', '')), '')
              ELSE replace(target, rtrim(target, replace(target, '.', '')), '') END);

-- The stale marks of current revisions, read by every lint: few rows among many.
CREATE INDEX revision_marks_stale ON revision_marks(revision_id) WHERE marks <> '[]';
