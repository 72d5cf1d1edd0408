-- 0020: test, example and vendored code has code-text indexes of its own.
--
-- Such code (`loci_core::secondary`) is most of a large repository's text (69% of the
-- stdlib's code chunks) and `context` asks for it only when a question is about it: in
-- the same index it cost every question the matching and BM25 scoring of its rows, and
-- filled the budget of rows a question may match. `secondary_chunks_fts` and
-- `secondary_file_text_fts` hold it as `code_chunks_fts` and `file_text_fts` hold the
-- rest; `code_chunks.secondary` says which index holds a chunk's text. The next scan
-- reanalyses every file and moves it (`loci_core::ANALYSIS_VERSION` 12).

ALTER TABLE code_chunks ADD COLUMN secondary INTEGER NOT NULL DEFAULT 0;

DROP TRIGGER code_chunks_fts_delete;
CREATE TRIGGER code_chunks_fts_delete AFTER DELETE ON code_chunks WHEN old.secondary = 0 BEGIN
    DELETE FROM code_chunks_fts WHERE rowid = old.chunk_id;
END;

CREATE VIRTUAL TABLE secondary_chunks_fts USING fts5(
    path, text, content = '', contentless_delete = 1,
    tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER secondary_chunks_fts_delete AFTER DELETE ON code_chunks WHEN old.secondary = 1 BEGIN
    DELETE FROM secondary_chunks_fts WHERE rowid = old.chunk_id;
END;

-- A file's whole text is in one of the two file indexes, and which one is not recorded:
-- deleting the file's row deletes its rowid from both.
CREATE VIRTUAL TABLE secondary_file_text_fts USING fts5(
    path, text, content = '', contentless_delete = 1,
    tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER secondary_file_text_fts_delete AFTER DELETE ON files BEGIN
    DELETE FROM secondary_file_text_fts WHERE rowid = old.file_id;
END;
