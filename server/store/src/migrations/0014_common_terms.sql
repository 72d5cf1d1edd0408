-- 0014: the document frequencies of the common terms of the map's full-text indexes.
--
-- A search weighs each term by how many rows hold it, and FTS5 can only count those by
-- walking the term's whole posting list (`fts5vocab`): "test" is in 46,232 of the stdlib's
-- 77,525 symbols, and counting it was a quarter of a `loci context` question that asked
-- about tests. A scan that changed `symbols_fts` or `doc_chunks_fts` writes here every
-- term at least `min_doc` rows hold (one walk of the index, at its end), with `stamp`,
-- the index's averages record (`<index>_data` row 1: its row count and token totals)
-- when it did. A reader uses the table only while the index's record is still `stamp`,
-- and counts the other terms itself (each in fewer than `min_doc` rows); else it counts
-- every term as before. Derived data: it can be deleted at any time.

CREATE TABLE fts_common_terms (
    fts   TEXT NOT NULL,                         -- 'symbols_fts' or 'doc_chunks_fts'
    term  TEXT NOT NULL,                         -- as the unicode61 tokenizer emits it
    doc   INTEGER NOT NULL,                      -- rows holding it
    PRIMARY KEY (fts, term)
) STRICT, WITHOUT ROWID;

CREATE TABLE fts_common_terms_stamp (
    fts      TEXT PRIMARY KEY,
    stamp    BLOB NOT NULL,                      -- `<fts>_data` row 1 when written (x'' if none)
    min_doc  INTEGER NOT NULL                    -- every term in at least this many rows is listed
) STRICT;
