//! Chunks of text the search indexes: documentation sections, code text, and the dense
//! vectors of chunks (what is not embedded yet, writing and reading vectors).

use super::*;

/// The identifier-aware terms of a documentation section's heading and text, its `terms`
/// column ([`crate::search::text_terms`]; migration 17).
pub fn doc_chunk_terms(heading: &str, text: &str) -> String {
    let heading = crate::search::text_terms(heading);
    let text = crate::search::text_terms(text);
    match (heading.is_empty(), text.is_empty()) {
        (true, _) => text,
        (false, true) => heading,
        (false, false) => format!("{heading} {text}"),
    }
}

/// Inserts a markdown file's sections.
pub fn insert_doc_chunks(
    tx: &Transaction<'_>,
    file_id: i64,
    chunks: &[loci_core::markdown::Chunk],
) -> Result<()> {
    let mut stmt = tx
        .prepare_cached("INSERT INTO doc_chunks(file_id, heading, line, end_line, text, terms) VALUES (?1, ?2, ?3, ?4, ?5, ?6)")
        .ctx(|| "preparing doc chunk insert".into())?;
    for c in chunks {
        let terms = doc_chunk_terms(&c.heading, &c.text);
        stmt.execute(params![
            file_id, c.heading, c.line, c.end_line, c.text, terms
        ])
        .ctx(|| format!("inserting doc section {}", c.heading))?;
    }
    Ok(())
}

/// One chunk of a file's code text as the code-text indexes hold it (migration 19): its
/// place and the text the index is given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexedChunk {
    /// Index into the file's symbols of the definition it is the text of; `None` for
    /// module-level code.
    pub symbol: Option<usize>,
    /// Zero-based first line.
    pub start_line: u32,
    /// Zero-based last line (inclusive).
    pub end_line: u32,
    /// The words of the definition's qualified name (empty for module-level code).
    pub names: String,
    /// The chunk's text followed by its identifier-aware terms
    /// ([`crate::search::text_terms`]).
    pub text: String,
    /// [`loci_core::chunks::embed_hash`]: the key of its vector.
    pub embed_hash: String,
}

/// The code text of a source file as [`insert_code_text`] indexes it.
#[derive(Clone, Debug)]
pub struct CodeText {
    /// The words of its path ([`loci_core::chunks::path_words`]).
    pub path_words: String,
    /// Its chunks ([`loci_core::chunks::code_chunks`]), each with its identifier-aware
    /// terms.
    pub chunks: Vec<IndexedChunk>,
    /// The distinct words of each row it puts in the indexes
    /// ([`crate::common_terms::code_text_words`]).
    pub words: Vec<u8>,
}

/// The code text of a source file as [`insert_code_text`] indexes it. Pure: the scan runs
/// it on its worker threads.
pub fn index_code_text(path: &str, text: &str, symbols: &[Symbol]) -> CodeText {
    let chunks: Vec<IndexedChunk> = loci_core::chunks::code_chunks(text, symbols)
        .into_iter()
        .map(|c| {
            let terms = crate::search::text_terms(&c.text);
            let name = c
                .symbol
                .and_then(|i| symbols.get(i))
                .map_or("", |s| s.qualified_name.as_str());
            IndexedChunk {
                symbol: c.symbol,
                start_line: c.start_line,
                end_line: c.end_line,
                names: loci_core::terms::identifier_words(name).join(" "),
                embed_hash: loci_core::chunks::embed_hash(path, name, &c.text),
                text: if terms.is_empty() {
                    c.text
                } else {
                    format!("{}\n{terms}", c.text)
                },
            }
        })
        .collect();
    let path_words = loci_core::chunks::path_words(path);
    let words = crate::common_terms::code_text_words(&path_words, &chunks);
    CodeText {
        path_words,
        chunks,
        words,
    }
}

/// Inserts a file's code text: its chunks (`code_chunks` and `code_chunks_fts`, the
/// chunk's path column holding the path's words and its definition's names) and the whole
/// file (`file_text_fts`: the chunks' texts, which hold every line that is not blank); for
/// test, example and vendored code (`secondary`), `secondary_chunks_fts` and
/// `secondary_file_text_fts` instead; and the rows' distinct words (`code_text_words`,
/// [`crate::common_terms`]). `symbol_ids` are the row ids [`insert_symbols`] gave the
/// file's symbols.
pub fn insert_code_text(
    tx: &Transaction<'_>,
    file_id: i64,
    code: &CodeText,
    symbol_ids: &[i64],
    secondary: bool,
) -> Result<()> {
    use crate::search::FtsTable;
    let ctx = || "inserting code text".to_string();
    let (path_words, chunks) = (code.path_words.as_str(), code.chunks.as_slice());
    let mut chunk_row = tx
        .prepare_cached(
            "INSERT INTO code_chunks(file_id, symbol_id, start_line, end_line, secondary, embed_hash)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )
        .ctx(ctx)?;
    let mut chunk_text = tx
        .prepare_cached(&format!(
            "INSERT INTO {}(rowid, path, text) VALUES (?1, ?2, ?3)",
            FtsTable::chunks(secondary).name()
        ))
        .ctx(ctx)?;
    let mut whole = String::new();
    for c in chunks {
        let symbol_id = c.symbol.and_then(|i| symbol_ids.get(i)).copied();
        chunk_row
            .execute(params![
                file_id,
                symbol_id,
                c.start_line,
                c.end_line,
                secondary,
                c.embed_hash
            ])
            .ctx(ctx)?;
        let id = tx.last_insert_rowid();
        let path = if c.names.is_empty() {
            path_words.to_string()
        } else {
            format!("{path_words} {}", c.names)
        };
        chunk_text.execute(params![id, path, c.text]).ctx(ctx)?;
        whole.push_str(&c.text);
        whole.push('\n');
    }
    tx.prepare_cached(&format!(
        "INSERT INTO {}(rowid, path, text) VALUES (?1, ?2, ?3)",
        FtsTable::file_text(secondary).name()
    ))
    .ctx(ctx)?
    .execute(params![file_id, path_words, whole])
    .ctx(ctx)?;
    tx.prepare_cached("INSERT INTO code_text_words(file_id, secondary, words) VALUES (?1, ?2, ?3)")
        .ctx(ctx)?
        .execute(params![file_id, secondary, code.words])
        .ctx(ctx)?;
    Ok(())
}

/// A code chunk that has no vector of a model yet: what embedding it needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnembeddedChunk {
    /// `code_chunks.chunk_id`.
    pub chunk_id: i64,
    /// Its file.
    pub path: String,
    /// Zero-based first line.
    pub start_line: u32,
    /// Zero-based last line (inclusive).
    pub end_line: u32,
    /// Its definition's qualified name (empty for module-level code).
    pub name: String,
    /// The key its vector is stored under ([`loci_core::chunks::embed_hash`]).
    pub embed_hash: String,
}

/// Up to `limit` chunks after `after` (a `chunk_id`; 0 from the start) that an embedding
/// model embeds (not test, example or vendored code: `code_chunks.secondary = 0`) and
/// whose text has no vector of `model`, by `chunk_id` (a scan numbers a file's chunks
/// together, in line order).
pub fn unembedded_chunks(
    conn: &Connection,
    model: &str,
    after: i64,
    limit: u32,
) -> Result<Vec<UnembeddedChunk>> {
    conn.prepare_cached(
        "SELECT c.chunk_id, f.path, c.start_line, c.end_line, ifnull(s.qualified_name, ''),
                c.embed_hash
         FROM code_chunks c JOIN files f ON f.file_id = c.file_id
         LEFT JOIN symbols s ON s.symbol_id = c.symbol_id
         WHERE c.chunk_id > ?2 AND c.secondary = 0 AND c.embed_hash IS NOT NULL
           AND NOT EXISTS (SELECT 1 FROM text_vectors v WHERE v.embed_hash = c.embed_hash AND v.model = ?1)
         ORDER BY c.chunk_id LIMIT ?3",
    )
    .and_then(|mut st| {
        st.query_map(params![model, after, limit], |r| {
            Ok(UnembeddedChunk {
                chunk_id: r.get(0)?,
                path: r.get(1)?,
                start_line: r.get(2)?,
                end_line: r.get(3)?,
                name: r.get(4)?,
                embed_hash: r.get(5)?,
            })
        })?
        .collect()
    })
    .ctx(|| "reading the chunks to embed".to_string())
}

/// The chunks an embedding model embeds ([`primary_chunk_count`]), and how many of them
/// have a vector of `model`.
pub fn primary_chunk_counts(conn: &Connection, model: &str) -> Result<(u64, u64)> {
    conn.prepare_cached(
        "SELECT count(*), count(v.embed_hash) FROM code_chunks c
         LEFT JOIN text_vectors v ON v.embed_hash = c.embed_hash AND v.model = ?1
         WHERE c.secondary = 0",
    )
    .and_then(|mut st| st.query_row([model], |r| Ok((r.get(0)?, r.get(1)?))))
    .ctx(|| "counting the chunks with vectors".to_string())
}

/// Stores vectors of `model` (`(embed_hash, scale, i8 components)`), each the vector of
/// every chunk whose text has that hash.
pub fn insert_vectors(
    tx: &Transaction<'_>,
    model: &str,
    vectors: &[(String, f32, Vec<i8>)],
) -> Result<()> {
    let ctx = || "storing chunk vectors".to_string();
    let mut stmt = tx
        .prepare_cached(
            "INSERT OR REPLACE INTO text_vectors(embed_hash, model, scale, vector) VALUES (?1, ?2, ?3, ?4)",
        )
        .ctx(ctx)?;
    for (hash, scale, v) in vectors {
        let bytes: Vec<u8> = v.iter().map(|&x| x as u8).collect();
        stmt.execute(params![hash, model, f64::from(*scale), bytes])
            .ctx(ctx)?;
    }
    Ok(())
}

/// Deletes the vectors whose text no chunk has any more (a file edited or deleted since
/// they were made); returns how many.
pub fn delete_orphan_vectors(tx: &Transaction<'_>) -> Result<u64> {
    tx.execute(
        "DELETE FROM text_vectors WHERE NOT EXISTS
             (SELECT 1 FROM code_chunks c WHERE c.embed_hash = text_vectors.embed_hash)",
        [],
    )
    .map(|n| n as u64)
    .ctx(|| "deleting the vectors of texts no chunk has".to_string())
}

/// A stored vector: `(model, file_id of its chunk, scale, i8 components)`.
pub type ChunkVector = (String, i64, f32, Vec<i8>);

/// Every vector of a chunk an embedding model embeds, with its model and the chunk's file
/// (one per model the text was embedded with).
pub fn chunk_vectors(conn: &Connection) -> Result<Vec<ChunkVector>> {
    conn.prepare_cached(
        "SELECT v.model, c.file_id, v.scale, v.vector
         FROM code_chunks c JOIN text_vectors v ON v.embed_hash = c.embed_hash
         WHERE c.secondary = 0",
    )
    .and_then(|mut st| {
        st.query_map([], |r| {
            // Read in place: one allocation per vector, not a blob copy and then another.
            let values = r.get_ref(3)?.as_blob()?.iter().map(|&b| b as i8).collect();
            Ok((r.get(0)?, r.get(1)?, r.get::<_, f64>(2)? as f32, values))
        })?
        .collect()
    })
    .ctx(|| "reading chunk vectors".into())
}

/// The chunks of code that is not test, example or vendored code (`code_chunks.secondary
/// = 0`: the chunks an embedding model embeds).
pub fn primary_chunk_count(conn: &Connection) -> Result<u64> {
    conn.prepare_cached("SELECT count(*) FROM code_chunks WHERE secondary = 0")
        .and_then(|mut st| st.query_row([], |r| r.get(0)))
        .ctx(|| "counting the code chunks".into())
}

/// The last line (zero-based, inclusive) of the doc section of `path` that starts at
/// `line`, as the scan chunked it; `None` when the map holds no such section.
///
/// Errors: [`StoreError::Sqlite`] when the sections cannot be read.
pub fn doc_section_end(conn: &Connection, path: &str, line: u32) -> Result<Option<u32>> {
    conn.prepare_cached(
        "SELECT d.end_line FROM doc_chunks d JOIN files f USING (file_id)
          WHERE f.path = ?1 AND d.line = ?2 LIMIT 1",
    )
    .and_then(|mut st| st.query_row(params![path, line], |r| r.get(0)).optional())
    .ctx(|| "reading a doc section".into())
}
