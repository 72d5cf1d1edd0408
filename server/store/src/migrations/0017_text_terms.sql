-- 0017: identifier-aware terms for memory and documentation, as symbols have had since
-- 0004. Memory revisions and documentation sections get a `terms` column (see
-- `search::text_terms`: the words of `doRollover` and `RotatingFileHandler`, the joined
-- form of `parse_config`), and their full-text indexes index it beside the text, so a
-- question asking for "rollover" finds a note about `doRollover()`, as it finds the symbol.
-- The migration fills the column of every existing row (`migrate::fill_text_terms`: the
-- revisions' bodies and summaries are untouched, only their derived terms are written)
-- and rebuilds both indexes from their content.

DROP TRIGGER revisions_fts_insert;
DROP TABLE revisions_fts;
ALTER TABLE revisions ADD COLUMN terms TEXT NOT NULL DEFAULT '';
CREATE VIRTUAL TABLE revisions_fts USING fts5(
    body, summary, terms, content = 'revisions', content_rowid = 'revision_id',
    tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER revisions_fts_insert AFTER INSERT ON revisions BEGIN
    INSERT INTO revisions_fts(rowid, body, summary, terms)
    VALUES (new.revision_id, new.body, new.summary, new.terms);
END;

DROP TRIGGER IF EXISTS doc_chunks_fts_insert;
DROP TRIGGER doc_chunks_fts_delete;
DROP TABLE doc_chunks_fts;
ALTER TABLE doc_chunks ADD COLUMN terms TEXT NOT NULL DEFAULT '';
CREATE VIRTUAL TABLE doc_chunks_fts USING fts5(
    heading, text, terms, content = 'doc_chunks', content_rowid = 'chunk_id',
    tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER doc_chunks_fts_insert AFTER INSERT ON doc_chunks BEGIN
    INSERT INTO doc_chunks_fts(rowid, heading, text, terms)
    VALUES (new.chunk_id, new.heading, new.text, new.terms);
END;
CREATE TRIGGER doc_chunks_fts_delete AFTER DELETE ON doc_chunks BEGIN
    INSERT INTO doc_chunks_fts(doc_chunks_fts, rowid, heading, text, terms)
    VALUES ('delete', old.chunk_id, old.heading, old.text, old.terms);
END;

-- The common terms of the rebuilt index are counted again by the next scan.
DELETE FROM fts_common_terms WHERE fts = 'doc_chunks_fts';
DELETE FROM fts_common_terms_stamp WHERE fts = 'doc_chunks_fts';
