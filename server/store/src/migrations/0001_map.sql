-- 0001: the structural map (derived, rebuildable from the working tree) and scan history.

CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) STRICT;

-- One row per recorded file. Unparsed files (unknown language, markdown) have a NULL
-- fingerprint. file_id is kept across modifications and renames.
CREATE TABLE files (
    file_id       INTEGER PRIMARY KEY,
    path          TEXT NOT NULL UNIQUE,          -- repo-relative, '/'-separated
    language      TEXT,                          -- Language::name, 'markdown', or NULL
    size          INTEGER NOT NULL,              -- bytes on disk
    mtime_ns      INTEGER NOT NULL,              -- modification time, ns since the epoch
    content_hash  TEXT NOT NULL,                 -- BLAKE3 of the bytes, 32 hex digits
    fingerprint   TEXT,                          -- semantic fingerprint, 16 hex digits
    lines         INTEGER NOT NULL,
    error_nodes   INTEGER NOT NULL DEFAULT 0,    -- tree-sitter ERROR/MISSING nodes
    degraded      TEXT,                          -- why analysis is incomplete, if it is
    lossy_utf8    INTEGER NOT NULL DEFAULT 0,    -- 1 when invalid UTF-8 was replaced
    scan_id       INTEGER NOT NULL               -- the scan that last wrote this row
) STRICT;

CREATE TABLE symbols (
    symbol_id              INTEGER PRIMARY KEY,
    file_id                INTEGER NOT NULL REFERENCES files(file_id) ON DELETE CASCADE,
    key                    TEXT NOT NULL UNIQUE,  -- path#qualified.name@kind[n]
    name                   TEXT NOT NULL,
    qualified_name         TEXT NOT NULL,
    kind                   TEXT NOT NULL,
    start_byte             INTEGER NOT NULL,
    end_byte               INTEGER NOT NULL,
    start_line             INTEGER NOT NULL,      -- zero-based
    end_line               INTEGER NOT NULL,      -- zero-based
    name_start_byte        INTEGER NOT NULL,
    name_end_byte          INTEGER NOT NULL,
    name_line              INTEGER NOT NULL,      -- zero-based
    name_column            INTEGER NOT NULL,      -- zero-based, bytes
    signature              TEXT NOT NULL,
    doc                    TEXT,
    body_fingerprint       TEXT NOT NULL,
    signature_fingerprint  TEXT NOT NULL,
    parent_key             TEXT
) STRICT;
CREATE INDEX symbols_by_name ON symbols(name);
CREATE INDEX symbols_by_file ON symbols(file_id);
CREATE INDEX symbols_by_qualified_name ON symbols(qualified_name);

-- Uses of names. target_id is the resolved definition (NULL when unresolved);
-- provenance 'stated' = proven by a parser (a resolved import names it), 'derived' = a
-- heuristic (same-file or unique-name match) with a confidence in [0, 1]. Symbol ids are
-- integers, not keys, to keep this large table small; they carry no foreign key because
-- the scanner re-resolves every reference into a file it rewrites.
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

-- Import statements as written (the input of dependency resolution).
CREATE TABLE imports (
    import_id  INTEGER PRIMARY KEY,
    file_id    INTEGER NOT NULL REFERENCES files(file_id) ON DELETE CASCADE,
    module     TEXT NOT NULL,
    names      TEXT NOT NULL,                     -- imported names, ',' separated
    line       INTEGER NOT NULL                   -- zero-based
) STRICT;
CREATE INDEX imports_by_file ON imports(file_id);

-- Module→module edges derived from imports. to_file_id NULL = unresolved (kept, not dropped).
CREATE TABLE deps (
    from_file_id  INTEGER NOT NULL REFERENCES files(file_id) ON DELETE CASCADE,
    module        TEXT NOT NULL,
    to_file_id    INTEGER REFERENCES files(file_id) ON DELETE CASCADE,
    line          INTEGER NOT NULL,               -- zero-based line of the first such import
    count         INTEGER NOT NULL                -- import statements behind this edge
) STRICT;
CREATE UNIQUE INDEX deps_unique ON deps(from_file_id, module, ifnull(to_file_id, 0));
CREATE INDEX deps_by_target ON deps(to_file_id);

-- Files seen but not in the map, with why (binary, unreadable, too_large, ...). Kept so a
-- rescan need not re-read an unchanged binary file, and so no file goes silently missing.
CREATE TABLE skipped_files (
    path      TEXT PRIMARY KEY,
    reason    TEXT NOT NULL,
    detail    TEXT,
    size      INTEGER NOT NULL,
    mtime_ns  INTEGER NOT NULL
) STRICT;

-- One row per scan: the scan revision every answer's envelope names.
CREATE TABLE scans (
    scan_id      INTEGER PRIMARY KEY,
    started_at   TEXT NOT NULL,                   -- RFC 3339, UTC
    finished_at  TEXT,
    status       TEXT NOT NULL DEFAULT 'running'  -- running | finished | interrupted
                 CHECK (status IN ('running', 'finished', 'interrupted')),
    added        INTEGER NOT NULL DEFAULT 0,
    modified     INTEGER NOT NULL DEFAULT 0,
    deleted      INTEGER NOT NULL DEFAULT 0,
    renamed      INTEGER NOT NULL DEFAULT 0,
    unchanged    INTEGER NOT NULL DEFAULT 0,
    skipped      INTEGER NOT NULL DEFAULT 0,
    files        INTEGER NOT NULL DEFAULT 0,       -- files in the map after the scan
    symbols      INTEGER NOT NULL DEFAULT 0,       -- symbols in the map after the scan
    duration_ms  INTEGER
) STRICT;
