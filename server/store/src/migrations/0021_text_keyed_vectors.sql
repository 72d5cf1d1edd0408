-- 0021: chunk vectors are keyed by the text the model embeds, not by the chunk's row.
--
-- A scan rewrites every chunk of a file it analyses again (new `chunk_id`s), and a new
-- analysis version rewrites them all: vectors keyed by `chunk_id` went with them, and an
-- edit of one line had `loci embed` embed its whole file again (the stdlib: 26 minutes
-- after every analysis version). `code_chunks.embed_hash` is the BLAKE3 of the chunk's
-- text as a model sees it (`loci_core::chunks::embed_text`: path, definition name,
-- lines); `text_vectors` holds one vector per such text and model. A chunk whose text is
-- unchanged finds its vector again; `loci embed` deletes the vectors no chunk's text has.
-- The vectors keyed by chunk are dropped (the next scan reanalyses every file and fills
-- the hashes: `loci_core::ANALYSIS_VERSION` 14; its rewrite would have dropped them too).

DROP TABLE chunk_vectors;

ALTER TABLE code_chunks ADD COLUMN embed_hash TEXT;
CREATE INDEX code_chunks_by_embed_hash ON code_chunks(embed_hash) WHERE embed_hash IS NOT NULL;

CREATE TABLE text_vectors (
    embed_hash  TEXT NOT NULL,                    -- `code_chunks.embed_hash`
    model       TEXT NOT NULL,                    -- `loci_embed::Embedder::model_id`
    scale       REAL NOT NULL,
    vector      BLOB NOT NULL,                    -- i8 components
    PRIMARY KEY (embed_hash, model)
) STRICT, WITHOUT ROWID;
