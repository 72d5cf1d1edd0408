-- 0030: a method called on a value whose type its file makes evident (`rt.block_on(..)`
-- after `let rt = Runtime::new().unwrap()`, `x.m()` after `x = Foo()`) has its own
-- receiver, 'typed' (`loci_core::Receiver::Typed`), whose `receiver_name` is a type
-- expression the scan's resolver follows through the map's declared return types. SQLite
-- cannot change a CHECK constraint in place, so the table is rebuilt with every row and
-- index it had (its rows keep 'other' until the next scan analyses their file again: the
-- analysis version changed with it).

CREATE TABLE refs_new (
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
    confidence     REAL NOT NULL,
    receiver       TEXT CHECK (receiver IN ('own', 'imported', 'other', 'path', 'typed')),
    receiver_name  TEXT
) STRICT;
INSERT INTO refs_new
SELECT ref_id, file_id, name, kind, line, column, start_byte, end_byte, enclosing_id,
       target_id, provenance, confidence, receiver, receiver_name
FROM refs;
DROP TABLE refs;
ALTER TABLE refs_new RENAME TO refs;
CREATE INDEX refs_by_name ON refs(name);
CREATE INDEX refs_by_target ON refs(target_id);
CREATE INDEX refs_by_file ON refs(file_id);
