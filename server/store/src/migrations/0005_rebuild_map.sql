-- 0005: during development the refs table changed from symbol keys to symbol ids without a
-- migration of its own, so a database at version 4 may hold either layout. Normalize
-- every database: recreate refs in the current layout and empty the derived map, which
-- the next scan rebuilds from the working tree. Authored memory is untouched (claims
-- name symbols by key, which is stable).

DROP TABLE IF EXISTS refs;
CREATE TABLE refs (
    ref_id         INTEGER PRIMARY KEY,
    file_id        INTEGER NOT NULL REFERENCES files(file_id) ON DELETE CASCADE,
    name           TEXT NOT NULL,
    kind           TEXT NOT NULL,
    line           INTEGER NOT NULL,              -- zero-based
    column         INTEGER NOT NULL,              -- zero-based, bytes
    start_byte     INTEGER NOT NULL,
    end_byte       INTEGER NOT NULL,
    enclosing_id   INTEGER,                       -- symbols.symbol_id in the same file
    target_id      INTEGER,                       -- symbols.symbol_id of the definition
    provenance     TEXT NOT NULL CHECK (provenance IN ('stated', 'derived')),
    confidence     REAL NOT NULL
) STRICT;
CREATE INDEX refs_by_name ON refs(name);
CREATE INDEX refs_by_target ON refs(target_id);
CREATE INDEX refs_by_file ON refs(file_id);

DELETE FROM deps;
DELETE FROM imports;
DELETE FROM doc_chunks;
DELETE FROM symbols;
DELETE FROM files;
DELETE FROM skipped_files;
