-- 0004: full-text search over symbols (identifier-aware terms, signatures, doc comments)
-- and over documentation sections. Both are external-content FTS5 tables kept in sync by
-- triggers, so every scan keeps them current without extra work in the scanner.

ALTER TABLE symbols ADD COLUMN terms TEXT NOT NULL DEFAULT '';

CREATE VIRTUAL TABLE symbols_fts USING fts5(
    terms, signature, doc, content = 'symbols', content_rowid = 'symbol_id',
    tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER symbols_fts_insert AFTER INSERT ON symbols BEGIN
    INSERT INTO symbols_fts(rowid, terms, signature, doc)
    VALUES (new.symbol_id, new.terms, new.signature, new.doc);
END;
CREATE TRIGGER symbols_fts_delete AFTER DELETE ON symbols BEGIN
    INSERT INTO symbols_fts(symbols_fts, rowid, terms, signature, doc)
    VALUES ('delete', old.symbol_id, old.terms, old.signature, old.doc);
END;

-- Sections of markdown files (split at headings), for search and context.
CREATE TABLE doc_chunks (
    chunk_id  INTEGER PRIMARY KEY,
    file_id   INTEGER NOT NULL REFERENCES files(file_id) ON DELETE CASCADE,
    heading   TEXT NOT NULL,
    line      INTEGER NOT NULL,                  -- zero-based first line
    end_line  INTEGER NOT NULL,
    text      TEXT NOT NULL
) STRICT;
CREATE INDEX doc_chunks_by_file ON doc_chunks(file_id);

CREATE VIRTUAL TABLE doc_chunks_fts USING fts5(
    heading, text, content = 'doc_chunks', content_rowid = 'chunk_id',
    tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER doc_chunks_fts_insert AFTER INSERT ON doc_chunks BEGIN
    INSERT INTO doc_chunks_fts(rowid, heading, text) VALUES (new.chunk_id, new.heading, new.text);
END;
CREATE TRIGGER doc_chunks_fts_delete AFTER DELETE ON doc_chunks BEGIN
    INSERT INTO doc_chunks_fts(doc_chunks_fts, rowid, heading, text)
    VALUES ('delete', old.chunk_id, old.heading, old.text);
END;
