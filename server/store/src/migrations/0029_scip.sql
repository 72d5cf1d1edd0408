-- 0029: references a SCIP index states (`loci scan --scip FILE`, server/engine/src/scip.rs).
--
-- Needs 0028 before it (the list of migrations stays gapless once both have landed).
--
-- A SCIP index (rust-analyzer, scip-python, scip-typescript, scip-java) says, for every
-- identifier of the files it covers, which definition it names: what loci's name-based
-- resolution guesses. Its edges are written into `refs` (provenance 'stated', confidence
-- 1.0) so that every answer uses them; they are also kept here, because a scan re-resolves
-- stored references by name (a name gained a definition, a target's file was rewritten)
-- and a rescan rewrites a file's references: after each scan that changed the map, the
-- edges still true are written into `refs` again and the others dropped
-- (`loci_store::scip`).
--
-- Rule: an edge holds while the file it is in and the file of its target have the content
-- hash they had when the index was imported (`scip_documents.content_hash`). A document
-- whose file changed loses its coverage, with its edges and the edges into it; its
-- references are name-based again. Derived data: deleting every row is always safe (the
-- next scan re-resolves by name what was SCIP's).

CREATE TABLE scip_documents (
    file_id       INTEGER PRIMARY KEY REFERENCES files(file_id) ON DELETE CASCADE,
    content_hash  TEXT NOT NULL,                 -- files.content_hash when imported
    tool          TEXT NOT NULL,                 -- the indexer, `name version`
    imported_at   TEXT NOT NULL                  -- RFC 3339, UTC
) STRICT;

-- One row per reference the index states in a covered file. `added` = 1 when no reference
-- of loci's own was at that place (the import inserted the `refs` row; it is deleted with
-- the edge).
CREATE TABLE scip_refs (
    file_id         INTEGER NOT NULL REFERENCES scip_documents(file_id) ON DELETE CASCADE,
    start_byte      INTEGER NOT NULL,
    end_byte        INTEGER NOT NULL,
    line            INTEGER NOT NULL,              -- zero-based
    column          INTEGER NOT NULL,              -- zero-based, bytes
    name            TEXT NOT NULL,                 -- the text at the place
    kind            TEXT NOT NULL,                 -- as refs.kind
    target_key      TEXT,                          -- symbols.key; NULL: outside the map
    target_file_id  INTEGER,                       -- scip_documents.file_id of the target
    added           INTEGER NOT NULL,
    PRIMARY KEY (file_id, start_byte)
) STRICT, WITHOUT ROWID;
CREATE INDEX scip_refs_by_target_file ON scip_refs(target_file_id);
