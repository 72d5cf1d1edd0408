-- 0018: file edges of resolved references, and a name index that covers qualified names.
--
-- A qualified name in a question matches the symbols whose qualified name ends with it
-- (`RegexBuilder.new` is `string.RegexBuilder.new`, `loci_store::map::lookup_symbols`):
-- the suffix is checked on the rows of the name's index, which now holds the qualified
-- name too, so `Request.__init__` reads 2,144 index entries of the stdlib, not their
-- rows (5.3 → 2.0 ms as a whole process).
DROP INDEX IF EXISTS symbols_by_name;
CREATE INDEX symbols_by_name ON symbols(name, qualified_name);

-- File edges of resolved references. A file depends on another not only through
-- its imports: a Java class calls one of its package without an import, a Go file one of
-- its directory, a Rust file `crate::Deserializer::from_str()` without a `use`. One row
-- per (referencing file, file of the target) for the references of kind call, type and
-- inherit resolved into another file: the strongest of them (stated first, then the
-- highest confidence, then the first in the file), and how many there are. `impact` of a
-- file walks these with the import edges (`loci_store::map::importers_within`); the scan
-- rewrites a file's rows whenever it writes or re-resolves that file's references.

CREATE TABLE ref_deps (
    from_file_id  INTEGER NOT NULL REFERENCES files(file_id) ON DELETE CASCADE,
    to_file_id    INTEGER NOT NULL REFERENCES files(file_id) ON DELETE CASCADE,
    kind          TEXT NOT NULL,                  -- of the strongest reference
    line          INTEGER NOT NULL,               -- zero-based, of the strongest reference
    provenance    TEXT NOT NULL CHECK (provenance IN ('stated', 'derived')),
    confidence    REAL NOT NULL,
    count         INTEGER NOT NULL,               -- references behind the edge
    PRIMARY KEY (to_file_id, from_file_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX ref_deps_by_source ON ref_deps(from_file_id);

INSERT INTO ref_deps(from_file_id, to_file_id, kind, line, provenance, confidence, count)
SELECT from_id, to_id, kind, line, provenance, confidence, n FROM (
    SELECT r.file_id AS from_id, s.file_id AS to_id, r.kind, r.line, r.provenance,
           r.confidence, count(*) OVER w AS n,
           row_number() OVER (w ORDER BY r.provenance = 'stated' DESC, r.confidence DESC,
                                         r.line, r.column) AS k
    FROM refs r JOIN symbols s ON s.symbol_id = r.target_id
    WHERE r.kind IN ('call', 'type', 'inherit') AND s.file_id != r.file_id
    WINDOW w AS (PARTITION BY r.file_id, s.file_id)
) WHERE k = 1;
