-- 0019: the code's own text is searchable (`context`'s code-text indexes).
--
-- `code_chunks` lists each file's chunks (`loci_core::chunks`: the lines of one
-- definition, or the module-level code, at most 50 lines each). Two contentless FTS5
-- tables index the text — bodies, comments, docstrings, string literals — with the
-- identifier-aware terms the other indexes use, and the path's words in a column of their
-- own: `code_chunks_fts` (rowid = chunk_id) and `file_text_fts` (rowid = file_id, the
-- whole file). Contentless: the text stays in the working tree, the index holds only its
-- terms; `contentless_delete` lets a rewritten file's rows be deleted. The scan fills
-- both (the next scan reanalyses every file: `loci_core::ANALYSIS_VERSION` 11).

CREATE TABLE code_chunks (
    chunk_id    INTEGER PRIMARY KEY,
    file_id     INTEGER NOT NULL REFERENCES files(file_id) ON DELETE CASCADE,
    symbol_id   INTEGER,                          -- the definition; NULL: module-level code
    start_line  INTEGER NOT NULL,                 -- zero-based
    end_line    INTEGER NOT NULL                  -- zero-based, inclusive
) STRICT;
CREATE INDEX code_chunks_by_file ON code_chunks(file_id);

CREATE VIRTUAL TABLE code_chunks_fts USING fts5(
    path, text, content = '', contentless_delete = 1,
    tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER code_chunks_fts_delete AFTER DELETE ON code_chunks BEGIN
    DELETE FROM code_chunks_fts WHERE rowid = old.chunk_id;
END;

CREATE VIRTUAL TABLE file_text_fts USING fts5(
    path, text, content = '', contentless_delete = 1,
    tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER file_text_fts_delete AFTER DELETE ON files BEGIN
    DELETE FROM file_text_fts WHERE rowid = old.file_id;
END;

-- Dense vectors of code chunks (optional: `[embeddings] model`), one per chunk and model,
-- quantized to one signed byte per component with the scale that maps it back
-- (`loci_embed::Quantized`). A rewritten file's chunks take their vectors with them.
CREATE TABLE chunk_vectors (
    chunk_id  INTEGER PRIMARY KEY REFERENCES code_chunks(chunk_id) ON DELETE CASCADE,
    model     TEXT NOT NULL,                      -- `loci_embed::Embedder::model_id`
    scale     REAL NOT NULL,
    vector    BLOB NOT NULL                       -- i8 components
) STRICT;
