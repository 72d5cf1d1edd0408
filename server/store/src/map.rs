//! Typed queries over the structural map: files, symbols, refs, imports, deps, scans.
//!
//! Positions are stored as byte offsets and zero-based lines, exactly as `loci-core`
//! produces them; conversion to editor encodings happens in the language server.

use std::collections::HashMap;

use loci_core::{Import, Symbol};
use rusqlite::{Connection, OptionalExtension, Transaction, params};
use serde::{Deserialize, Serialize};

use crate::{Context, Result, StoreError};

/// What the scanner needs to know about a stored file to decide whether to reparse it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileState {
    /// Row id, kept across modifications and renames.
    pub file_id: i64,
    /// Repo-relative path.
    pub path: String,
    /// Size in bytes.
    pub size: i64,
    /// Change time in nanoseconds since the epoch: the later of the file's modification
    /// and status-change times (the engine's `walk::change_time_ns`).
    pub mtime_ns: i64,
    /// BLAKE3 content hash (32 hex digits).
    pub content_hash: String,
    /// Semantic fingerprint, when parsed.
    pub fingerprint: Option<String>,
    /// The scan that last wrote the row.
    pub scan_id: i64,
    /// The content hash the drift ledger last recorded for the file: its content as of
    /// the last scan that finished, `None` if none has (migration 0012). A killed scan may
    /// have rewritten `content_hash` without recording the change; this one it never
    /// touches ([`settle_drift_hashes`]).
    pub drift_hash: Option<String>,
    /// Why its analysis is incomplete (`parse_timeout: ...`, `too_deep: ...`), if it is.
    pub degraded: Option<String>,
}

/// Every stored file's state, by path.
pub fn file_states(conn: &Connection) -> Result<HashMap<String, FileState>> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT file_id, path, size, mtime_ns, content_hash, fingerprint, scan_id, drift_hash,
                    degraded
             FROM files",
        )
        .ctx(|| "reading file states".into())?;
    let rows = stmt
        .query_map([], |r| {
            Ok(FileState {
                file_id: r.get(0)?,
                path: r.get(1)?,
                size: r.get(2)?,
                mtime_ns: r.get(3)?,
                content_hash: r.get(4)?,
                fingerprint: r.get(5)?,
                scan_id: r.get(6)?,
                drift_hash: r.get(7)?,
                degraded: r.get(8)?,
            })
        })
        .ctx(|| "reading file states".into())?;
    let mut out = HashMap::new();
    for row in rows {
        let row = row.ctx(|| "reading file states".into())?;
        out.insert(row.path.clone(), row);
    }
    Ok(out)
}

/// Every stored file's path, size (bytes) and change time (ns), as the last scan saw
/// them: what a check against the disk needs, without the hashes.
pub fn file_stamps(conn: &Connection) -> Result<Vec<(String, FileStamp)>> {
    let mut stmt = conn
        .prepare_cached("SELECT path, size, mtime_ns, content_hash FROM files")
        .ctx(|| "reading file states".into())?;
    let rows = stmt
        .query_map([], |r| {
            Ok((
                r.get(0)?,
                FileStamp {
                    size: r.get(1)?,
                    mtime_ns: r.get(2)?,
                    content_hash: r.get(3)?,
                },
            ))
        })
        .ctx(|| "reading file states".into())?;
    rows.collect::<rusqlite::Result<_>>()
        .ctx(|| "reading file states".into())
}

/// What the last scan saw of a file: enough to tell whether it changed since.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileStamp {
    /// Size in bytes.
    pub size: i64,
    /// Change time in nanoseconds since the epoch.
    pub mtime_ns: i64,
    /// BLAKE3 content hash ([`loci_core::fingerprint::content_hash`]).
    pub content_hash: String,
}

/// A file's row as the scanner writes it.
#[derive(Clone, Debug)]
pub struct FileRow<'a> {
    /// Repo-relative, `/`-separated path.
    pub path: &'a str,
    /// `Language::name`, `markdown`, or `None` for unknown.
    pub language: Option<&'a str>,
    /// Size in bytes.
    pub size: i64,
    /// Modification time in nanoseconds since the epoch.
    pub mtime_ns: i64,
    /// BLAKE3 content hash.
    pub content_hash: &'a str,
    /// Semantic fingerprint, when parsed.
    pub fingerprint: Option<&'a str>,
    /// Line count.
    pub lines: i64,
    /// tree-sitter ERROR/MISSING nodes.
    pub error_nodes: i64,
    /// Why analysis is incomplete, if it is.
    pub degraded: Option<&'a str>,
    /// Invalid UTF-8 was replaced.
    pub lossy_utf8: bool,
}

/// Inserts or replaces a file's row (keyed by `existing` file id, else by path) and
/// deletes its symbols, refs, imports and outgoing deps so they can be rewritten.
/// Returns the file id.
pub fn put_file(
    tx: &Transaction<'_>,
    existing: Option<i64>,
    row: &FileRow<'_>,
    scan_id: i64,
) -> Result<i64> {
    let ctx = || format!("writing file {}", row.path);
    let file_id = if let Some(id) = existing {
        tx.prepare_cached(
            "UPDATE files SET path = ?2, language = ?3, size = ?4, mtime_ns = ?5,
                content_hash = ?6, fingerprint = ?7, lines = ?8, error_nodes = ?9,
                degraded = ?10, lossy_utf8 = ?11, scan_id = ?12
             WHERE file_id = ?1",
        )
        .ctx(ctx)?
        .execute(params![
            id,
            row.path,
            row.language,
            row.size,
            row.mtime_ns,
            row.content_hash,
            row.fingerprint,
            row.lines,
            row.error_nodes,
            row.degraded,
            row.lossy_utf8,
            scan_id
        ])
        .ctx(ctx)?;
        clear_file_rows(tx, id)?;
        id
    } else {
        tx.prepare_cached(
            "INSERT INTO files(path, language, size, mtime_ns, content_hash, fingerprint,
                lines, error_nodes, degraded, lossy_utf8, scan_id)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        )
        .ctx(ctx)?
        .execute(params![
            row.path,
            row.language,
            row.size,
            row.mtime_ns,
            row.content_hash,
            row.fingerprint,
            row.lines,
            row.error_nodes,
            row.degraded,
            row.lossy_utf8,
            scan_id
        ])
        .ctx(ctx)?;
        tx.last_insert_rowid()
    };
    Ok(file_id)
}

/// Deletes a file's derived rows (symbols, refs, imports, doc chunks, code text, outgoing
/// deps).
pub fn clear_file_rows(tx: &Transaction<'_>, file_id: i64) -> Result<()> {
    for table in ["file_text_fts", "secondary_file_text_fts"] {
        tx.prepare_cached(&format!("DELETE FROM {table} WHERE rowid = ?1"))
            .ctx(|| format!("clearing {table}"))?
            .execute([file_id])
            .ctx(|| format!("clearing {table}"))?;
    }
    for table in [
        "symbols",
        "refs",
        "imports",
        "doc_chunks",
        "code_chunks",
        "code_text_words",
    ] {
        tx.prepare_cached(&format!("DELETE FROM {table} WHERE file_id = ?1"))
            .ctx(|| format!("clearing {table}"))?
            .execute([file_id])
            .ctx(|| format!("clearing {table}"))?;
    }
    for table in ["deps", "ref_deps"] {
        tx.prepare_cached(&format!("DELETE FROM {table} WHERE from_file_id = ?1"))
            .ctx(|| format!("clearing {table}"))?
            .execute([file_id])
            .ctx(|| format!("clearing {table}"))?;
    }
    Ok(())
}

/// The rows of `ref_deps` (migration 0018) from the references that `filter` keeps (an
/// SQL condition on `refs r`): per (file, file of the target), the strongest reference of
/// kind call, type or inherit resolved into another file, and how many there are.
fn ref_deps_insert_sql(filter: &str) -> String {
    format!(
        "INSERT INTO ref_deps(from_file_id, to_file_id, kind, line, provenance, confidence, count)
         SELECT from_id, to_id, kind, line, provenance, confidence, n FROM (
             SELECT r.file_id AS from_id, s.file_id AS to_id, r.kind, r.line, r.provenance,
                    r.confidence, count(*) OVER w AS n,
                    row_number() OVER (w ORDER BY r.provenance = 'stated' DESC,
                                                  r.confidence DESC, r.line, r.column) AS k
             FROM refs r JOIN symbols s ON s.symbol_id = r.target_id
             WHERE {filter} AND r.kind IN ('call', 'type', 'inherit')
               AND s.file_id != r.file_id
             WINDOW w AS (PARTITION BY r.file_id, s.file_id)
         ) WHERE k = 1"
    )
}

/// Rewrites the reference edges (`ref_deps`) out of each of `file_ids` from its stored
/// references: after a scan wrote or re-resolved them.
pub fn replace_ref_deps(tx: &Transaction<'_>, file_ids: &[i64]) -> Result<()> {
    let ctx = || "rewriting reference edges".to_string();
    let mut clear = tx
        .prepare_cached("DELETE FROM ref_deps WHERE from_file_id = ?1")
        .ctx(ctx)?;
    let mut insert = tx
        .prepare_cached(&ref_deps_insert_sql("r.file_id = ?1"))
        .ctx(ctx)?;
    for id in file_ids {
        clear.execute([id]).ctx(ctx)?;
        insert.execute([id]).ctx(ctx)?;
    }
    Ok(())
}

/// Rewrites every reference edge (`ref_deps`) from the stored references in one pass:
/// after a scan that resolved most of the map.
pub fn rebuild_ref_deps(tx: &Transaction<'_>) -> Result<()> {
    let ctx = || "rebuilding reference edges".to_string();
    tx.execute_batch("DELETE FROM ref_deps").ctx(ctx)?;
    tx.execute_batch(&ref_deps_insert_sql("1")).ctx(ctx)?;
    Ok(())
}

/// Updates the size and modification time of a file whose content hash is unchanged (the
/// size too: an older scan may have recorded one from another read than the hash).
pub fn touch_file(tx: &Transaction<'_>, file_id: i64, size: i64, mtime_ns: i64) -> Result<()> {
    tx.prepare_cached("UPDATE files SET size = ?2, mtime_ns = ?3 WHERE file_id = ?1")
        .ctx(|| "updating size and mtime".into())?
        .execute(params![file_id, size, mtime_ns])
        .ctx(|| "updating size and mtime".into())?;
    Ok(())
}

/// Deletes a file and (by cascade) everything derived from it.
pub fn delete_file(tx: &Transaction<'_>, file_id: i64) -> Result<()> {
    tx.prepare_cached("DELETE FROM files WHERE file_id = ?1")
        .ctx(|| "deleting a file".into())?
        .execute([file_id])
        .ctx(|| "deleting a file".into())?;
    Ok(())
}

/// The row id of every symbol of a file, by key: what [`insert_symbols`] gives the same
/// keys again when the file is rewritten, so references into them from other files stay
/// resolved (a rewrite that gave new ids had to resolve every reference into the file
/// again: an edit of `os.py` re-resolved the calls of a thousand files, issue 37).
pub fn symbol_ids_by_key(conn: &Connection, file_id: i64) -> Result<HashMap<String, i64>> {
    let mut stmt = conn
        .prepare_cached("SELECT key, symbol_id FROM symbols WHERE file_id = ?1")
        .ctx(|| "reading symbol ids".into())?;
    let rows = stmt
        .query_map([file_id], |r| Ok((r.get(0)?, r.get(1)?)))
        .ctx(|| "reading symbol ids".into())?;
    rows.collect::<rusqlite::Result<HashMap<_, _>>>()
        .ctx(|| "reading symbol ids".into())
}

/// `(key, name, signature fingerprint)` of every symbol of a file.
pub fn symbol_keys(conn: &Connection, file_id: i64) -> Result<Vec<(String, String, String)>> {
    let mut stmt = conn
        .prepare_cached("SELECT key, name, signature_fingerprint FROM symbols WHERE file_id = ?1")
        .ctx(|| "reading symbol keys".into())?;
    let rows = stmt
        .query_map([file_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .ctx(|| "reading symbol keys".into())?;
    rows.collect::<rusqlite::Result<Vec<_>>>()
        .ctx(|| "reading symbol keys".into())
}

/// What memory snapshots of a file and its symbols, as the map holds them
/// ([`file_fingerprints`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileFingerprints {
    /// The file's `ifnull(fingerprint, content_hash)`: what a path claim or a file page
    /// snapshots.
    pub file: String,
    /// `(key, body fingerprint, signature fingerprint)` of each of its symbols.
    pub symbols: Vec<(String, String, String)>,
}

/// The [`FileFingerprints`] of a file as the map holds them now; `None` when the file is
/// not in the map.
pub fn file_fingerprints(conn: &Connection, file_id: i64) -> Result<Option<FileFingerprints>> {
    let ctx = || format!("reading the fingerprints of file {file_id}");
    let Some(file) = conn
        .prepare_cached("SELECT ifnull(fingerprint, content_hash) FROM files WHERE file_id = ?1")
        .ctx(ctx)?
        .query_row([file_id], |r| r.get(0))
        .optional()
        .ctx(ctx)?
    else {
        return Ok(None);
    };
    let mut stmt = conn
        .prepare_cached(
            "SELECT key, body_fingerprint, signature_fingerprint FROM symbols WHERE file_id = ?1",
        )
        .ctx(ctx)?;
    let symbols = stmt
        .query_map([file_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .ctx(ctx)?
        .collect::<rusqlite::Result<Vec<_>>>()
        .ctx(ctx)?;
    Ok(Some(FileFingerprints { file, symbols }))
}

/// Inserts a file's symbols; returns their row ids, in order. A symbol whose key is in
/// `reuse` (the file's old rows, [`symbol_ids_by_key`], deleted since) gets its old id.
pub fn insert_symbols(
    tx: &Transaction<'_>,
    file_id: i64,
    symbols: &[Symbol],
    reuse: &HashMap<String, i64>,
) -> Result<Vec<i64>> {
    let mut stmt = tx
        .prepare_cached(
            "INSERT INTO symbols(file_id, key, name, qualified_name, kind, start_byte, end_byte,
                start_line, end_line, name_start_byte, name_end_byte, name_line, name_column,
                signature, doc, body_fingerprint, signature_fingerprint, parent_key, terms,
                symbol_id)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20)",
        )
        .ctx(|| "preparing symbol insert".into())?;
    // The symbols that keep their id go in first: a new row takes the table's largest id
    // plus one, which may be an id this file held (its old rows are gone) and a later
    // symbol keeps.
    let mut ids = vec![0; symbols.len()];
    for keeps in [true, false] {
        for (i, s) in symbols.iter().enumerate() {
            if reuse.contains_key(&s.key) != keeps {
                continue;
            }
            let parent = s
                .parent
                .and_then(|i| symbols.get(i as usize))
                .map(|p| p.key.as_str());
            stmt.execute(params![
                file_id,
                s.key,
                s.name,
                s.qualified_name,
                s.kind.as_str(),
                s.span.start,
                s.span.end,
                s.span.line,
                s.span.end_line,
                s.name_span.start,
                s.name_span.end,
                s.name_span.line,
                s.name_span.column,
                s.signature,
                s.doc,
                s.body_fingerprint,
                s.signature_fingerprint,
                parent,
                loci_core::terms::symbol_terms(&s.qualified_name),
                reuse.get(&s.key)
            ])
            .ctx(|| format!("inserting symbol {}", s.key))?;
            ids[i] = tx.last_insert_rowid();
        }
    }
    Ok(ids)
}

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

/// The path of the file `file_id`, if it is in the map.
pub fn file_path(conn: &Connection, file_id: i64) -> Result<Option<String>> {
    conn.prepare_cached("SELECT path FROM files WHERE file_id = ?1")
        .and_then(|mut st| st.query_row([file_id], |r| r.get(0)).optional())
        .ctx(|| "reading a file's path".into())
}

/// The id of the file at `path`, if it is in the map.
pub fn file_id(conn: &Connection, path: &str) -> Result<Option<i64>> {
    conn.prepare_cached("SELECT file_id FROM files WHERE path = ?1")
        .and_then(|mut st| st.query_row([path], |r| r.get(0)).optional())
        .ctx(|| "reading a file's id".into())
}

/// The keys of the symbols `ids` (`symbols.symbol_id`), by id; ids not in the map are left
/// out.
pub fn symbol_keys_by_ids(conn: &Connection, ids: &[i64]) -> Result<HashMap<i64, String>> {
    let json = serde_json::to_string(ids).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    conn.prepare_cached(
        "SELECT symbol_id, key FROM symbols WHERE symbol_id IN (SELECT value FROM json_each(?1))",
    )
    .and_then(|mut st| {
        st.query_map([json], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect()
    })
    .ctx(|| "reading symbol keys".into())
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

/// Inserts a file's import statements.
pub fn insert_imports(tx: &Transaction<'_>, file_id: i64, imports: &[Import]) -> Result<()> {
    let mut stmt = tx
        .prepare_cached("INSERT INTO imports(file_id, module, names, line) VALUES (?1, ?2, ?3, ?4)")
        .ctx(|| "preparing import insert".into())?;
    for i in imports {
        stmt.execute(params![file_id, i.module, i.names.join(","), i.span.line])
            .ctx(|| format!("inserting import {}", i.module))?;
    }
    Ok(())
}

/// A reference row, resolved or not.
#[derive(Clone, Debug, PartialEq)]
pub struct RefRow<'a> {
    /// The referenced name.
    pub name: &'a str,
    /// `RefKind::as_str`.
    pub kind: &'static str,
    /// `Receiver::as_str`: NULL for a bare name.
    pub receiver: Option<&'static str>,
    /// The receiver's last segment (`loci_core::Reference::receiver_name`).
    pub receiver_name: Option<&'a str>,
    /// Zero-based line.
    pub line: u32,
    /// Zero-based byte column.
    pub column: u32,
    /// Byte range of the name.
    pub start_byte: u32,
    /// End of the name, exclusive.
    pub end_byte: u32,
    /// Row id of the innermost enclosing definition (same file).
    pub enclosing_id: Option<i64>,
    /// Row id of the resolved definition.
    pub target_id: Option<i64>,
    /// `stated` or `derived`.
    pub provenance: &'static str,
    /// Confidence in [0, 1].
    pub confidence: f64,
}

/// Rows per `INSERT` statement, largest first: a file's references go in as many
/// statements of [`REF_ROWS_PER_INSERT`]`[0]` rows as fit, then the rest in the smaller
/// sizes. One multi-row statement costs less than as many one-row statements (one step,
/// one reset, one statement journal), and the rows, their order and their row ids are
/// the same. 64 rows bind 832 parameters, under SQLite's limit of 32,766.
const REF_ROWS_PER_INSERT: [usize; 4] = [64, 16, 4, 1];

/// Columns of a `refs` row as [`insert_refs`] binds them.
const REF_INSERT_COLUMNS: usize = 13;

/// The `INSERT` statement for `rows` reference rows.
fn ref_insert_sql(rows: usize) -> String {
    let mut sql = String::from(
        "INSERT INTO refs(file_id, name, kind, line, column, start_byte, end_byte,
            enclosing_id, target_id, provenance, confidence, receiver, receiver_name) VALUES ",
    );
    for row in 0..rows {
        if row > 0 {
            sql.push(',');
        }
        sql.push('(');
        for col in 0..REF_INSERT_COLUMNS {
            if col > 0 {
                sql.push(',');
            }
            sql.push('?');
        }
        sql.push(')');
    }
    sql
}

/// Inserts a file's references, in order (row ids ascend with it).
pub fn insert_refs<'a>(
    tx: &Transaction<'_>,
    file_id: i64,
    refs: impl IntoIterator<Item = RefRow<'a>>,
) -> Result<()> {
    let refs: Vec<RefRow<'a>> = refs.into_iter().collect();
    let mut rest = &refs[..];
    for rows in REF_ROWS_PER_INSERT {
        if rest.len() < rows {
            continue;
        }
        let mut stmt = tx
            .prepare_cached(&ref_insert_sql(rows))
            .ctx(|| "preparing ref insert".into())?;
        while rest.len() >= rows {
            let (chunk, tail) = rest.split_at(rows);
            let mut at = 1;
            for r in chunk {
                let values: [&dyn rusqlite::ToSql; REF_INSERT_COLUMNS] = [
                    &file_id,
                    &r.name,
                    &r.kind,
                    &r.line,
                    &r.column,
                    &r.start_byte,
                    &r.end_byte,
                    &r.enclosing_id,
                    &r.target_id,
                    &r.provenance,
                    &r.confidence,
                    &r.receiver,
                    &r.receiver_name,
                ];
                for value in values {
                    stmt.raw_bind_parameter(at, value)
                        .ctx(|| format!("binding ref {}", r.name))?;
                    at += 1;
                }
            }
            stmt.raw_execute()
                .ctx(|| format!("inserting refs from {}", chunk[0].name))?;
            rest = tail;
        }
    }
    Ok(())
}

/// Updates the resolution of one stored reference.
pub fn set_ref_target(
    tx: &Transaction<'_>,
    ref_id: i64,
    target_id: Option<i64>,
    provenance: &str,
    confidence: f64,
) -> Result<()> {
    tx.prepare_cached(
        "UPDATE refs SET target_id = ?2, provenance = ?3, confidence = ?4 WHERE ref_id = ?1",
    )
    .ctx(|| "updating a ref".into())?
    .execute(params![ref_id, target_id, provenance, confidence])
    .ctx(|| "updating a ref".into())?;
    Ok(())
}

/// `(ref id, target id)` of the references in other files resolved to a symbol of
/// `file_id` (those into a symbol whose key is gone must be resolved again when the file
/// is rewritten or deleted).
pub fn refs_into_file(conn: &Connection, file_id: i64) -> Result<Vec<(i64, i64)>> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT r.ref_id, r.target_id FROM symbols s JOIN refs r ON r.target_id = s.symbol_id
             WHERE s.file_id = ?1 AND r.file_id != ?1",
        )
        .ctx(|| "reading incoming refs".into())?;
    let rows = stmt
        .query_map([file_id], |r| Ok((r.get(0)?, r.get(1)?)))
        .ctx(|| "reading incoming refs".into())?;
    rows.collect::<rusqlite::Result<Vec<_>>>()
        .ctx(|| "reading incoming refs".into())
}

/// Replaces the outgoing dependency edges of a file. `edges` are
/// `(module as written, resolved target file id or None, first line, count)`.
pub fn replace_deps(
    tx: &Transaction<'_>,
    from_file_id: i64,
    edges: &[(String, Option<i64>, u32, u32)],
) -> Result<()> {
    tx.prepare_cached("DELETE FROM deps WHERE from_file_id = ?1")
        .ctx(|| "clearing deps".into())?
        .execute([from_file_id])
        .ctx(|| "clearing deps".into())?;
    let mut stmt = tx
        .prepare_cached(
            "INSERT INTO deps(from_file_id, module, to_file_id, line, count) VALUES (?1, ?2, ?3, ?4, ?5)",
        )
        .ctx(|| "preparing dep insert".into())?;
    for (module, to, line, count) in edges {
        stmt.execute(params![from_file_id, module, to, line, count])
            .ctx(|| format!("inserting dep {module}"))?;
    }
    Ok(())
}

/// A symbol with its file, as queries return it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SymbolHit {
    /// Stable key.
    pub key: String,
    /// Bare name.
    pub name: String,
    /// Qualified name.
    pub qualified_name: String,
    /// Kind.
    pub kind: String,
    /// File path.
    pub path: String,
    /// Zero-based first line of the definition.
    pub line: u32,
    /// Zero-based last line of the definition.
    pub end_line: u32,
    /// Zero-based byte column of the name.
    pub column: u32,
    /// First line of the definition.
    pub signature: String,
    /// Doc comment, if any.
    pub doc: Option<String>,
    /// Body fingerprint.
    pub body_fingerprint: String,
    /// Signature fingerprint.
    pub signature_fingerprint: String,
}

const SYMBOL_COLUMNS: &str = "s.key, s.name, s.qualified_name, s.kind, f.path, s.start_line,
    s.end_line, s.name_column, s.signature, s.doc, s.body_fingerprint, s.signature_fingerprint";

fn symbol_hit(r: &rusqlite::Row<'_>) -> rusqlite::Result<SymbolHit> {
    Ok(SymbolHit {
        key: r.get(0)?,
        name: r.get(1)?,
        qualified_name: r.get(2)?,
        kind: r.get(3)?,
        path: r.get(4)?,
        line: r.get(5)?,
        end_line: r.get(6)?,
        column: r.get(7)?,
        signature: r.get(8)?,
        doc: r.get(9)?,
        body_fingerprint: r.get(10)?,
        signature_fingerprint: r.get(11)?,
    })
}

/// `symbols s` with its file `f`.
const SYMBOL_FROM: &str = "symbols s JOIN files f USING (file_id)";

/// The rows of [`find_symbols`]: a symbol named, qualified-named or keyed `?1`.
const SYMBOLS_NAMED: &str = "s.name = ?1 OR s.qualified_name = ?1 OR s.key = ?1";

/// Symbols whose name or qualified name equals `name`, or whose key equals it; ordered
/// by path then line. At most `limit` rows ([`count_symbols`] counts them all).
pub fn find_symbols(conn: &Connection, name: &str, limit: u32) -> Result<Vec<SymbolHit>> {
    let sql = format!(
        "SELECT {SYMBOL_COLUMNS} FROM {SYMBOL_FROM} WHERE {SYMBOLS_NAMED} ORDER BY f.path, s.start_line LIMIT ?2"
    );
    let mut stmt = conn.prepare_cached(&sql).ctx(|| "finding symbols".into())?;
    let rows = stmt
        .query_map(params![name, limit], symbol_hit)
        .ctx(|| format!("finding symbol {name}"))?;
    rows.collect::<rusqlite::Result<Vec<_>>>()
        .ctx(|| format!("finding symbol {name}"))
}

/// How many symbols [`find_symbols`] finds for `name` without a limit.
pub fn count_symbols(conn: &Connection, name: &str) -> Result<u64> {
    count_rows(conn, SYMBOL_FROM, SYMBOLS_NAMED, params![name])
        .ctx(|| format!("counting symbols named {name}"))
}

/// The rows of [`lookup_symbols`]: a symbol named, qualified-named or keyed `?1`, or named
/// `?2` (the last segment of `?1`) whose qualified name ends with `?3` (`.` then `?1`), of
/// `?4` characters: a suffix at a segment boundary (`RegexBuilder.new` is
/// `string.RegexBuilder.new`). Every term is an indexed lookup (`name`, `qualified_name`,
/// `key`); the suffix is checked on the rows of the name's index only.
const SYMBOLS_ENDING: &str = "s.name = ?1 OR s.qualified_name = ?1 OR s.key = ?1
      OR (s.name = ?2 AND substr(s.qualified_name, -?4) = ?3)";

/// Symbols that [`find_symbols`] finds for `name`, and for a qualified name (`a.b`, no
/// `#`) also those whose qualified name ends with it at a segment boundary
/// (`ValueVisitor.visit_map` finds `Value.deserialize.ValueVisitor.visit_map`): exact
/// matches first, then by path and line. At most `limit` rows ([`count_lookup_symbols`]
/// counts them all).
pub fn lookup_symbols(conn: &Connection, name: &str, limit: u32) -> Result<Vec<SymbolHit>> {
    let Some((last, suffix, chars)) = qualified_suffix(name) else {
        return find_symbols(conn, name, limit);
    };
    let sql = format!(
        "SELECT {SYMBOL_COLUMNS} FROM {SYMBOL_FROM} WHERE {SYMBOLS_ENDING}
         ORDER BY NOT (s.name = ?1 OR s.qualified_name = ?1 OR s.key = ?1), f.path, s.start_line
         LIMIT ?5"
    );
    let mut stmt = conn.prepare_cached(&sql).ctx(|| "finding symbols".into())?;
    let rows = stmt
        .query_map(params![name, last, suffix, chars, limit], symbol_hit)
        .ctx(|| format!("finding symbol {name}"))?;
    rows.collect::<rusqlite::Result<Vec<_>>>()
        .ctx(|| format!("finding symbol {name}"))
}

/// How many symbols [`lookup_symbols`] finds for `name` without a limit.
pub fn count_lookup_symbols(conn: &Connection, name: &str) -> Result<u64> {
    let Some((last, suffix, chars)) = qualified_suffix(name) else {
        return count_symbols(conn, name);
    };
    count_rows(
        conn,
        SYMBOL_FROM,
        SYMBOLS_ENDING,
        params![name, last, suffix, chars],
    )
    .ctx(|| format!("counting symbols named {name}"))
}

/// For a qualified name (`a.b`, not a key): its last segment, `.` before it whole, and
/// that suffix's length in characters (SQLite's `substr` counts characters).
fn qualified_suffix(name: &str) -> Option<(&str, String, i64)> {
    if name.contains('#') {
        return None;
    }
    let (_, last) = name.rsplit_once('.')?;
    if last.is_empty() {
        return None;
    }
    let suffix = format!(".{name}");
    let chars = suffix.chars().count() as i64;
    Some((last, suffix, chars))
}

/// `SELECT COUNT(*) FROM {from} WHERE {filter}`: the size of a listing whose first rows a
/// caller fetched with a `LIMIT` (the listing's own tables and filter, parameters as
/// there without the limit).
fn count_rows(
    conn: &Connection,
    from: &str,
    filter: &str,
    params: &[&dyn rusqlite::ToSql],
) -> rusqlite::Result<u64> {
    conn.prepare_cached(&format!("SELECT COUNT(*) FROM {from} WHERE {filter}"))?
        .query_row(params, |r| r.get::<_, i64>(0))
        .map(|n| n.max(0) as u64)
}

/// The keys of the symbols defined inside `qualified_name` in the file `path` (its
/// members, theirs, …: qualified names `{qualified_name}.…`), by qualified name. Range of
/// the `qualified_name` index: `A.` < a member of `A` < `A/` ('/' follows '.').
pub fn member_keys(conn: &Connection, path: &str, qualified_name: &str) -> Result<Vec<String>> {
    conn.prepare_cached(
        "SELECT s.key FROM symbols s JOIN files f USING (file_id)
          WHERE s.qualified_name > ?2 || '.' AND s.qualified_name < ?2 || '/' AND f.path = ?1
          ORDER BY s.qualified_name, s.key",
    )
    .and_then(|mut st| {
        st.query_map([path, qualified_name], |r| r.get(0))?
            .collect()
    })
    .ctx(|| format!("reading the members of {qualified_name}"))
}

/// The symbol with exactly this key.
pub fn symbol_by_key(conn: &Connection, key: &str) -> Result<Option<SymbolHit>> {
    let sql = format!(
        "SELECT {SYMBOL_COLUMNS} FROM symbols s JOIN files f USING (file_id) WHERE s.key = ?1"
    );
    conn.prepare_cached(&sql)
        .ctx(|| "reading a symbol".into())?
        .query_row([key], symbol_hit)
        .optional()
        .ctx(|| format!("reading symbol {key}"))
}

/// The symbols with these keys (each as [`symbol_by_key`] finds it), by key, in one
/// statement; keys not in the map are absent.
pub fn symbols_by_keys(conn: &Connection, keys: &[&str]) -> Result<HashMap<String, SymbolHit>> {
    if keys.is_empty() {
        return Ok(HashMap::new());
    }
    let json = serde_json::to_string(keys).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    let sql = format!(
        "SELECT {SYMBOL_COLUMNS} FROM symbols s JOIN files f USING (file_id)
         WHERE s.key IN (SELECT value FROM json_each(?1))"
    );
    let mut stmt = conn.prepare_cached(&sql).ctx(|| "reading symbols".into())?;
    let rows = stmt
        .query_map([json], symbol_hit)
        .ctx(|| "reading symbols by key".into())?;
    let mut out = HashMap::new();
    for row in rows {
        let s = row.ctx(|| "reading symbols by key".into())?;
        out.entry(s.key.clone()).or_insert(s);
    }
    Ok(out)
}

/// The symbols of the file `path` whose qualified name is `qualified_name`, by line: a
/// name as code spells it with its module path (`urllib.parse.urlsplit` is
/// `urlsplit` in `urllib/parse.py`). One lookup of the `qualified_name` index.
pub fn symbols_in_file_named(
    conn: &Connection,
    path: &str,
    qualified_name: &str,
) -> Result<Vec<SymbolHit>> {
    let sql = format!(
        "SELECT {SYMBOL_COLUMNS} FROM {SYMBOL_FROM}
         WHERE s.qualified_name = ?2 AND f.path = ?1 ORDER BY s.start_line, s.key"
    );
    let mut stmt = conn.prepare_cached(&sql).ctx(|| "reading symbols".into())?;
    let rows = stmt
        .query_map([path, qualified_name], symbol_hit)
        .ctx(|| format!("reading {qualified_name} in {path}"))?;
    rows.collect::<rusqlite::Result<Vec<_>>>()
        .ctx(|| format!("reading {qualified_name} in {path}"))
}

/// Mapped file paths that contain `part` (a module's last name, `parse`), by path, at
/// most `limit`: the candidates for a module path a dotted name spells. One pass over
/// the `files` table (its paths only).
pub fn paths_containing(conn: &Connection, part: &str, limit: u32) -> Result<Vec<String>> {
    let mut stmt = conn
        .prepare_cached("SELECT path FROM files WHERE instr(path, ?1) > 0 ORDER BY path LIMIT ?2")
        .ctx(|| "reading paths".into())?;
    let rows = stmt
        .query_map(params![part, limit], |r| r.get(0))
        .ctx(|| format!("reading paths containing {part}"))?;
    rows.collect::<rusqlite::Result<Vec<_>>>()
        .ctx(|| format!("reading paths containing {part}"))
}

/// The calls written in the file `path` between the zero-based lines `first` and `last`
/// (a definition's range: its outgoing calls, those of nested definitions included), by
/// line and column, at most `limit`, and how many there are in all. One lookup of the
/// `refs_by_file` index.
pub fn calls_within(
    conn: &Connection,
    path: &str,
    first: u32,
    last: u32,
    limit: u32,
) -> Result<(Vec<RefHit>, u64)> {
    const WITHIN: &str = "r.file_id = (SELECT file_id FROM files WHERE path = ?1)
          AND r.line >= ?2 AND r.line <= ?3 AND r.kind = 'call'";
    let sql = format!(
        "SELECT {REF_COLUMNS} FROM {REF_FROM} WHERE {WITHIN}
         ORDER BY r.line, r.column LIMIT ?4"
    );
    let ctx = || format!("reading the calls of {path}:{first}-{last}");
    let mut stmt = conn.prepare_cached(&sql).ctx(ctx)?;
    let rows = stmt
        .query_map(params![path, first, last, limit], ref_hit)
        .ctx(ctx)?;
    let hits = rows.collect::<rusqlite::Result<Vec<_>>>().ctx(ctx)?;
    let total = if (hits.len() as u64) < u64::from(limit) {
        hits.len() as u64
    } else {
        count_rows(conn, REF_FROM, WITHIN, params![path, first, last]).ctx(ctx)?
    };
    Ok((hits, total))
}

/// Whether a file at `path` or under it (a folder) refers to `name` (a call, a use, an
/// import), read through `refs_by_name`: what a page about that code may name without the
/// map defining it (a builtin, a dependency's function).
///
/// Errors: [`crate::StoreError::Sqlite`] when the map cannot be read.
pub fn referenced_in(conn: &Connection, name: &str, path: &str) -> Result<bool> {
    conn.prepare_cached(
        "SELECT EXISTS(SELECT 1 FROM refs r JOIN files f ON f.file_id = r.file_id
          WHERE r.name = ?1
            AND (f.path = ?2 OR (f.path > ?2 || '/' AND f.path < ?2 || '0')))",
    )
    .and_then(|mut st| st.query_row(params![name, path], |r| r.get(0)))
    .ctx(|| format!("reading the references to {name} in {path}"))
}

/// The names of the symbols in the file at `path` whose qualified name starts with
/// `prefix` (every symbol of the file for `""`), in no particular order: the names alone,
/// for a lint that compares them with a missing member's name (reading whole rows with
/// [`symbols_in_file`] for every file of a common stem had been most of a lint of a
/// 50,000-file map, issue 37).
pub fn symbol_names_in_file(conn: &Connection, path: &str, prefix: &str) -> Result<Vec<String>> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT s.name FROM symbols s JOIN files f USING (file_id)
             WHERE f.path = ?1 AND substr(s.qualified_name, 1, length(?2)) = ?2",
        )
        .ctx(|| "reading symbol names".into())?;
    let rows = stmt
        .query_map([path, prefix], |r| r.get(0))
        .ctx(|| format!("reading the symbol names in {path}"))?;
    rows.collect::<rusqlite::Result<Vec<_>>>()
        .ctx(|| format!("reading the symbol names in {path}"))
}

/// Every symbol of a file, in document order.
pub fn symbols_in_file(conn: &Connection, path: &str) -> Result<Vec<SymbolHit>> {
    let sql = format!(
        "SELECT {SYMBOL_COLUMNS} FROM symbols s JOIN files f USING (file_id)
         WHERE f.path = ?1 ORDER BY s.start_byte, s.key"
    );
    let mut stmt = conn.prepare_cached(&sql).ctx(|| "reading symbols".into())?;
    let rows = stmt
        .query_map([path], symbol_hit)
        .ctx(|| format!("reading symbols of {path}"))?;
    rows.collect::<rusqlite::Result<Vec<_>>>()
        .ctx(|| format!("reading symbols of {path}"))
}

/// The outline of the file `path`: how many symbols it has, how many of them are top-level
/// (a qualified name without `.`: not inside a class, impl or function), and its first
/// `limit` symbols, top-level ones first and each depth in source order. One indexed
/// lookup however many symbols the file has: `context` reads this for an open file.
pub fn file_outline(
    conn: &Connection,
    path: &str,
    limit: u32,
) -> Result<(u64, u64, Vec<SymbolHit>)> {
    let (total, top): (i64, i64) = conn
        .prepare_cached(
            "SELECT count(*), coalesce(sum(instr(s.qualified_name, '.') = 0), 0)
             FROM symbols s JOIN files f USING (file_id) WHERE f.path = ?1",
        )
        .and_then(|mut st| st.query_row([path], |r| Ok((r.get(0)?, r.get(1)?))))
        .ctx(|| format!("counting the symbols of {path}"))?;
    let sql = format!(
        "SELECT {SYMBOL_COLUMNS} FROM symbols s JOIN files f USING (file_id)
         WHERE f.path = ?1
         ORDER BY length(s.qualified_name) - length(replace(s.qualified_name, '.', '')),
                  s.start_byte, s.key
         LIMIT ?2"
    );
    let mut stmt = conn
        .prepare_cached(&sql)
        .ctx(|| "reading an outline".into())?;
    let rows = stmt
        .query_map(params![path, limit], symbol_hit)
        .ctx(|| format!("reading the outline of {path}"))?;
    let first = rows
        .collect::<rusqlite::Result<Vec<_>>>()
        .ctx(|| format!("reading the outline of {path}"))?;
    Ok((total.max(0) as u64, top.max(0) as u64, first))
}

/// The `limit` main symbols of the file `path`, for a reader who opened it: top-level
/// before nested; then public before `_private`; then definitions (functions, classes,
/// types, methods) before constants and variables; then the most referenced (resolved
/// references into them, across the map); then source order. One indexed count per symbol
/// of the file.
pub fn file_main_symbols(conn: &Connection, path: &str, limit: u32) -> Result<Vec<SymbolHit>> {
    let sql = format!(
        "SELECT {SYMBOL_COLUMNS} FROM symbols s JOIN files f USING (file_id)
         WHERE f.path = ?1
         ORDER BY length(s.qualified_name) - length(replace(s.qualified_name, '.', '')),
                  s.name GLOB '_*',
                  s.kind IN ('constant', 'variable', 'field', 'property'),
                  (SELECT count(*) FROM refs r WHERE r.target_id = s.symbol_id) DESC,
                  s.start_byte, s.key
         LIMIT ?2"
    );
    let mut stmt = conn
        .prepare_cached(&sql)
        .ctx(|| "reading main symbols".into())?;
    let rows = stmt
        .query_map(params![path, limit], symbol_hit)
        .ctx(|| format!("reading the main symbols of {path}"))?;
    rows.collect::<rusqlite::Result<Vec<_>>>()
        .ctx(|| format!("reading the main symbols of {path}"))
}

/// A reference with its file, as queries return it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RefHit {
    /// File containing the reference.
    pub path: String,
    /// Zero-based line.
    pub line: u32,
    /// Zero-based byte column.
    pub column: u32,
    /// The referenced name.
    pub name: String,
    /// `call`, `type`, `inherit`, `import`, `other`.
    pub kind: String,
    /// Key of the enclosing definition.
    pub enclosing_key: Option<String>,
    /// Key of the resolved target.
    pub target_key: Option<String>,
    /// `stated` or `derived`.
    pub provenance: String,
    /// Confidence in [0, 1].
    pub confidence: f64,
    /// `scip` when a SCIP index states the edge (`loci scan --scip`,
    /// [`crate::scip`]); absent for loci's own analysis.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

fn ref_hit(r: &rusqlite::Row<'_>) -> rusqlite::Result<RefHit> {
    Ok(RefHit {
        path: r.get(0)?,
        line: r.get(1)?,
        column: r.get(2)?,
        name: r.get(3)?,
        kind: r.get(4)?,
        enclosing_key: r.get(5)?,
        target_key: r.get(6)?,
        provenance: r.get(7)?,
        confidence: r.get(8)?,
        source: r.get(9)?,
    })
}

const REF_COLUMNS: &str = "f.path, r.line, r.column, r.name, r.kind, e.key, t.key,
    r.provenance, r.confidence,
    CASE WHEN r.provenance = 'stated' AND r.confidence = 1.0 AND EXISTS (
        SELECT 1 FROM scip_refs x WHERE x.file_id = r.file_id AND x.start_byte = r.start_byte)
    THEN 'scip' END";

/// `refs r` with its file `f`, enclosing symbol `e` and target `t`.
const REF_FROM: &str = "refs r JOIN files f ON f.file_id = r.file_id
    LEFT JOIN symbols e ON e.symbol_id = r.enclosing_id
    LEFT JOIN symbols t ON t.symbol_id = r.target_id";

/// The rows of [`refs_by_name`]: references written `?1`.
const REFS_NAMED: &str = "r.name = ?1";

/// The rows of [`refs_on`]: references written `?1` resolved to a symbol keyed in the JSON
/// array `?2`, or written on a receiver whose last segment is `?3` and unresolved (any
/// resolution when `?2` is empty).
const REFS_ON: &str = "r.name = ?1
      AND (t.key IN (SELECT value FROM json_each(?2))
           OR ((r.target_id IS NULL OR ?2 = '[]')
               AND (r.receiver_name = ?3 OR r.receiver_name GLOB '*.' || ?3)))";

/// The rows of [`refs_to`]: references resolved to a symbol keyed in the JSON array `?1`,
/// of kind `?2` (any kind when NULL).
const REFS_TO: &str = "r.target_id IN (SELECT symbol_id FROM symbols
                          WHERE key IN (SELECT value FROM json_each(?1)))
      AND (?2 IS NULL OR r.kind = ?2)";

/// The rows of [`calls_to`]: calls resolved to a symbol keyed in the JSON array `?1`,
/// at confidence `?2` or more.
const CALLS_TO: &str = "r.target_id IN (SELECT symbol_id FROM symbols
                          WHERE key IN (SELECT value FROM json_each(?1)))
      AND r.kind = 'call' AND r.confidence >= ?2";

/// The order of a reference listing: by place.
const BY_PLACE: &str = "f.path, r.line, r.column";

/// The order of an edge listing ([`calls_to`]): the surest first, then by place.
const BY_CONFIDENCE: &str = "r.confidence DESC, f.path, r.line, r.column";

/// Rows of a reference listing: `{REF_COLUMNS}` of the references that `filter` (a
/// `REFS_*` constant) keeps, ordered by place ([`BY_PLACE`]), at most `limit`. `params`
/// are the filter's, then the limit.
fn ref_rows(
    conn: &Connection,
    filter: &str,
    params: &[&dyn rusqlite::ToSql],
) -> rusqlite::Result<Vec<RefHit>> {
    ref_rows_ordered(conn, filter, BY_PLACE, params)
}

/// [`ref_rows`] in the `order` given (an SQL `ORDER BY` list).
fn ref_rows_ordered(
    conn: &Connection,
    filter: &str,
    order: &str,
    params: &[&dyn rusqlite::ToSql],
) -> rusqlite::Result<Vec<RefHit>> {
    let sql = format!(
        "SELECT {REF_COLUMNS} FROM {REF_FROM} WHERE {filter}
         ORDER BY {order} LIMIT ?{}",
        params.len()
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(params, ref_hit)?;
    rows.collect()
}

fn keys_json(keys: &[&str]) -> Result<String> {
    serde_json::to_string(keys).map_err(|e| StoreError::Corrupt(e.to_string()))
}

/// References to `name` (as written), ordered by path and line. At most `limit` rows
/// ([`count_refs_by_name`] counts them all).
pub fn refs_by_name(conn: &Connection, name: &str, limit: u32) -> Result<Vec<RefHit>> {
    ref_rows(conn, REFS_NAMED, params![name, limit]).ctx(|| format!("finding refs to {name}"))
}

/// How many references [`refs_by_name`] finds without a limit.
pub fn count_refs_by_name(conn: &Connection, name: &str) -> Result<u64> {
    count_rows(conn, REF_FROM, REFS_NAMED, params![name]).ctx(|| format!("counting refs to {name}"))
}

/// References to `name` (as written) that resolved to one of the symbols `keys`, or that
/// are unresolved and were written on a receiver whose last segment is `receiver`
/// (`meta::Regex::new()`, another crate's: `refs.receiver_name`); with no `keys`, every
/// one written on that receiver (`os.path.join(…)`, resolved or not). Ordered by path and
/// line.
/// At most `limit` rows ([`count_refs_on`] counts them all).
pub fn refs_on(
    conn: &Connection,
    name: &str,
    keys: &[&str],
    receiver: &str,
    limit: u32,
) -> Result<Vec<RefHit>> {
    let keys = keys_json(keys)?;
    ref_rows(conn, REFS_ON, params![name, keys, receiver, limit])
        .ctx(|| format!("finding refs to {name}"))
}

/// How many references [`refs_on`] finds without a limit.
pub fn count_refs_on(conn: &Connection, name: &str, keys: &[&str], receiver: &str) -> Result<u64> {
    let keys = keys_json(keys)?;
    count_rows(conn, REF_FROM, REFS_ON, params![name, keys, receiver])
        .ctx(|| format!("counting refs to {name}"))
}

/// References resolved to the symbol `key`, ordered by path and line. At most `limit` rows.
pub fn refs_to(conn: &Connection, key: &str, limit: u32) -> Result<Vec<RefHit>> {
    refs_to_any(conn, &[key], None, limit)
}

/// References of `kind` (`call`, …; any kind when `None`) resolved to one of the symbols
/// `keys`, ordered by path, line and column. At most `limit` rows ([`count_refs_to_any`]
/// counts them all).
pub fn refs_to_any(
    conn: &Connection,
    keys: &[&str],
    kind: Option<&str>,
    limit: u32,
) -> Result<Vec<RefHit>> {
    let json = keys_json(keys)?;
    ref_rows(conn, REFS_TO, params![json, kind, limit])
        .ctx(|| format!("finding refs to {}", keys.join(", ")))
}

/// How many references [`refs_to_any`] finds without a limit.
pub fn count_refs_to_any(conn: &Connection, keys: &[&str], kind: Option<&str>) -> Result<u64> {
    let json = keys_json(keys)?;
    count_rows(conn, REF_FROM, REFS_TO, params![json, kind])
        .ctx(|| format!("counting refs to {}", keys.join(", ")))
}

/// Calls resolved to one of the symbols `keys` at `min_confidence` or more, the surest
/// first, then by path, line and column. At most `limit` rows ([`count_calls_to`] counts
/// them all).
pub fn calls_to(
    conn: &Connection,
    keys: &[&str],
    min_confidence: f64,
    limit: u32,
) -> Result<Vec<RefHit>> {
    let json = keys_json(keys)?;
    ref_rows_ordered(
        conn,
        CALLS_TO,
        BY_CONFIDENCE,
        params![json, min_confidence, limit],
    )
    .ctx(|| format!("finding calls to {}", keys.join(", ")))
}

/// How many calls [`calls_to`] finds without a limit.
pub fn count_calls_to(conn: &Connection, keys: &[&str], min_confidence: f64) -> Result<u64> {
    let json = keys_json(keys)?;
    count_rows(conn, REF_FROM, CALLS_TO, params![json, min_confidence])
        .ctx(|| format!("counting calls to {}", keys.join(", ")))
}

/// Calls named `name` written on a value whose type the map does not know (receiver
/// `other`, or `typed` with a type expression the map could not follow: see
/// `loci_core::Receiver`) that resolved to none of the symbols `keys` at `min_confidence` or
/// more: unresolved, or matched by name alone below `min_confidence`. What a `callers`
/// answer did not list because no type tied those calls to it (`rt.block_on(..)` on a
/// value returned by a helper outside the map).
pub fn count_untyped_calls(
    conn: &Connection,
    name: &str,
    keys: &[&str],
    min_confidence: f64,
) -> Result<u64> {
    let json = keys_json(keys)?;
    conn.query_row(
        "SELECT count(*) FROM refs r
         WHERE r.name = ?1 AND r.kind = 'call' AND r.receiver IN ('other', 'typed')
           AND (r.target_id IS NULL
                OR (r.confidence < ?3
                    AND r.target_id NOT IN (SELECT symbol_id FROM symbols
                                            WHERE key IN (SELECT value FROM json_each(?2)))))",
        params![name, json, min_confidence],
        |r| r.get::<_, i64>(0),
    )
    .map(|n| n as u64)
    .ctx(|| format!("counting calls of {name} on values of unknown type"))
}

/// A dependency edge between two files (or to an unresolved module).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DepEdge {
    /// Importing file.
    pub from: String,
    /// Imported file; `None` when unresolved.
    pub to: Option<String>,
    /// The module as written.
    pub module: String,
    /// Zero-based line of the first import statement behind the edge.
    pub line: u32,
    /// Number of import statements behind the edge.
    pub count: u32,
}

fn dep_edge(r: &rusqlite::Row<'_>) -> rusqlite::Result<DepEdge> {
    Ok(DepEdge {
        from: r.get(0)?,
        to: r.get(1)?,
        module: r.get(2)?,
        line: r.get(3)?,
        count: r.get(4)?,
    })
}

/// Edges out of `path` (its imports), resolved and unresolved, ordered by module.
pub fn deps_from(conn: &Connection, path: &str) -> Result<Vec<DepEdge>> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT a.path, b.path, d.module, d.line, d.count FROM deps d
             JOIN files a ON a.file_id = d.from_file_id
             LEFT JOIN files b ON b.file_id = d.to_file_id
             WHERE a.path = ?1 ORDER BY d.line, d.module, b.path",
        )
        .ctx(|| "reading deps".into())?;
    let rows = stmt
        .query_map([path], dep_edge)
        .ctx(|| format!("reading deps of {path}"))?;
    rows.collect::<rusqlite::Result<Vec<_>>>()
        .ctx(|| format!("reading deps of {path}"))
}

/// Edges into `path` (the files that import it), ordered by importer.
pub fn deps_to(conn: &Connection, path: &str) -> Result<Vec<DepEdge>> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT a.path, b.path, d.module, d.line, d.count FROM deps d
             JOIN files a ON a.file_id = d.from_file_id
             JOIN files b ON b.file_id = d.to_file_id
             WHERE b.path = ?1 ORDER BY a.path, d.line",
        )
        .ctx(|| "reading reverse deps".into())?;
    let rows = stmt
        .query_map([path], dep_edge)
        .ctx(|| format!("reading reverse deps of {path}"))?;
    rows.collect::<rusqlite::Result<Vec<_>>>()
        .ctx(|| format!("reading reverse deps of {path}"))
}

/// A file reached by [`importers_within`].
#[derive(Clone, Debug, PartialEq)]
pub struct Importer {
    /// The importing file.
    pub path: String,
    /// Hops from the target (1 = imports it directly).
    pub depth: u32,
    /// The file one hop closer to the target that it depends on (through the surest
    /// edge, then the smallest path, when it depends on several of that level).
    pub imports: String,
    /// Zero-based line of the first import statement behind that edge, or of the
    /// strongest reference.
    pub line: u32,
    /// `import`, or the kind of the strongest reference behind the edge (`call`, `type`,
    /// `inherit`) when the file does not import that one.
    pub kind: String,
    /// `stated` for an import; a reference's own.
    pub provenance: String,
    /// 1.0 for an import; a reference's own.
    pub confidence: f64,
}

/// What [`importers_within`] found: every importer counted, the nearest listed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Importers {
    /// Importers reached at each depth: `by_depth[0]` at depth 1, ...; up to the deepest
    /// level reached (empty when nothing imports the file).
    pub by_depth: Vec<u64>,
    /// The first `limit` importers by depth, then confidence (the surest first), then
    /// path (all of them for limit 0).
    pub listed: Vec<Importer>,
}

/// Above this many files whose paths a walk needs, they are read in one pass over the
/// path index instead of one lookup each (a lookup costs about five rows of the pass).
const PATH_SCAN_MIN: usize = 256;

/// The files that depend on `path`, transitively, to `depth` hops: those that import it
/// (`deps`) and those whose references of kind call, type or inherit resolved into it
/// (`ref_deps`: a Java class of its package, a Go file of its directory, a Rust file
/// calling `crate::Deserializer::from_str()` without a `use`; only those at
/// `min_confidence` or more, and with `hard`, only stated ones). A breadth-first walk of
/// the reverse graph over file ids, one cached indexed lookup per file expanded
/// (`deps_by_target` and the key of `ref_deps`, in one statement). Each file is counted
/// once, at the depth it is first reached; `path` itself is not. Only the first `limit`
/// dependents (0: all) are listed, by depth, then by the confidence of the surest edge
/// into the level before (an import, 1.0, first), then path, each with that edge, and
/// only the files of the levels those come from have
/// their paths read: the dependents of a widely imported module (CPython's
/// `urllib/parse.py` reaches over 800 files) are counted without a path lookup each.
///
/// Errors: [`StoreError::Sqlite`] when a read fails.
pub fn importers_within(
    conn: &Connection,
    path: &str,
    depth: u32,
    hard: bool,
    min_confidence: f64,
    limit: u32,
) -> Result<Importers> {
    let ctx = || format!("walking the dependents of {path}");
    let Some(start) = conn
        .query_row("SELECT file_id FROM files WHERE path = ?1", [path], |r| {
            r.get::<_, i64>(0)
        })
        .optional()
        .ctx(ctx)?
    else {
        return Ok(Importers::default());
    };
    // Import edges (no kind), then reference edges; grouping or ordering in SQL cost
    // more than the rows it saved.
    let mut dependents_of = conn
        .prepare_cached(
            "SELECT from_file_id, line, NULL, NULL, NULL FROM deps WHERE to_file_id = ?1
             UNION ALL
             SELECT from_file_id, line, kind, provenance, confidence FROM ref_deps
              WHERE to_file_id = ?1 AND (?2 = 0 OR provenance = 'stated')
                AND confidence >= ?3",
        )
        .ctx(ctx)?;
    // The depth each file was first reached at; the edges from each level's files into
    // the level before, `(from, to, rank, line, reference)`: rank 0 for an import, 1 for
    // a stated reference, 2 for a derived one, whose kind, provenance and confidence are
    // `references[reference]`.
    let mut depth_of: HashMap<i64, u32, IdHash> = HashMap::default();
    depth_of.insert(start, 0);
    let mut levels: Vec<Vec<i64>> = vec![vec![start]];
    let mut edges: Vec<(i64, i64, u8, u32, u32)> = Vec::new();
    let mut references: Vec<(String, String, f64)> = Vec::new();
    for d in 1..=depth {
        let mut level = Vec::new();
        for &to in &levels[d as usize - 1] {
            let mut rows = dependents_of
                .query(params![to, hard, min_confidence])
                .ctx(ctx)?;
            while let Some(row) = rows.next().ctx(ctx)? {
                let from: i64 = row.get(0).ctx(ctx)?;
                match depth_of.get(&from) {
                    None => {
                        depth_of.insert(from, d);
                        level.push(from);
                    }
                    Some(&at) if at == d => {}
                    Some(_) => continue,
                }
                let line: u32 = row.get(1).ctx(ctx)?;
                let kind: Option<String> = row.get(2).ctx(ctx)?;
                match kind {
                    None => edges.push((from, to, 0, line, u32::MAX)),
                    Some(kind) => {
                        let provenance: String = row.get(3).ctx(ctx)?;
                        let rank = if provenance == "stated" { 1 } else { 2 };
                        edges.push((from, to, rank, line, references.len() as u32));
                        references.push((kind, provenance, row.get(4).ctx(ctx)?));
                    }
                }
            }
        }
        if level.is_empty() {
            break;
        }
        levels.push(level);
    }
    let by_depth: Vec<u64> = levels[1..].iter().map(|l| l.len() as u64).collect();
    // The levels the listing comes from: up to the first whose end reaches the limit.
    let mut shown = levels.len() - 1;
    if limit > 0 {
        let mut total = 0;
        for (i, l) in levels[1..].iter().enumerate() {
            total += l.len();
            if total >= limit as usize {
                shown = i + 1;
                break;
            }
        }
    }
    let needed: usize = levels[..=shown].iter().map(Vec::len).sum();
    let mut paths: HashMap<i64, String, IdHash> = HashMap::default();
    paths.reserve(needed);
    if needed > PATH_SCAN_MIN {
        let mut all = conn
            .prepare_cached("SELECT file_id, path FROM files")
            .ctx(ctx)?;
        let mut rows = all.query([]).ctx(ctx)?;
        while let Some(row) = rows.next().ctx(ctx)? {
            let id: i64 = row.get(0).ctx(ctx)?;
            if depth_of.get(&id).is_some_and(|&d| d as usize <= shown) {
                paths.insert(id, row.get(1).ctx(ctx)?);
            }
        }
    } else {
        let mut path_of = conn
            .prepare_cached("SELECT path FROM files WHERE file_id = ?1")
            .ctx(ctx)?;
        for &id in levels[..=shown].iter().flatten() {
            paths.insert(id, path_of.query_row([id], |r| r.get(0)).ctx(ctx)?);
        }
    }
    let path_of = |id: &i64| -> Result<&String> {
        paths
            .get(id)
            .ok_or_else(|| StoreError::Corrupt(format!("{}: file {id} has no path", ctx())))
    };
    edges.sort_unstable();
    let mut listed = Vec::new();
    for (i, level) in levels.iter().enumerate().take(shown + 1).skip(1) {
        let mut reached = Vec::with_capacity(level.len());
        for &from in level {
            // The surest edge into the level before: an import, then a stated reference,
            // then the most confident one; of equals, the one into the smallest path, then
            // the first line.
            let first = edges.partition_point(|e| e.0 < from);
            // (the edge's sort key, its reference).
            let mut best: Option<(EdgeKey<'_>, u32)> = None;
            for &(_, to, rank, line, reference) in edges[first..].iter().take_while(|e| e.0 == from)
            {
                let confidence = references
                    .get(reference as usize)
                    .map_or(1.0, |(_, _, c)| *c);
                // Descending confidence as an ascending key (confidences are in [0, 1]).
                let doubt = (1.0 - confidence).max(0.0).to_bits();
                let candidate = (rank, doubt, path_of(&to)?, line);
                if best.is_none_or(|(b, _)| candidate < b) {
                    best = Some((candidate, reference));
                }
            }
            let ((_, _, imports, line), reference) = best.ok_or_else(|| {
                StoreError::Corrupt(format!("{}: file {from} was reached by no edge", ctx()))
            })?;
            let (kind, provenance, confidence) = match references.get(reference as usize) {
                Some((kind, provenance, confidence)) => {
                    (kind.clone(), provenance.clone(), *confidence)
                }
                None => ("import".to_string(), "stated".to_string(), 1.0),
            };
            reached.push(Importer {
                path: path_of(&from)?.clone(),
                depth: i as u32,
                imports: imports.clone(),
                line,
                kind,
                provenance,
                confidence,
            });
        }
        // Each hop by confidence, the surest first, then by path.
        reached.sort_by(|a, b| {
            b.confidence
                .total_cmp(&a.confidence)
                .then_with(|| a.path.cmp(&b.path))
        });
        let room = if limit == 0 {
            reached.len()
        } else {
            (limit as usize).saturating_sub(listed.len())
        };
        listed.extend(reached.into_iter().take(room));
    }
    Ok(Importers { by_depth, listed })
}

/// How [`importers_within`] ranks the edges out of one file, the surest first: rank (0 an
/// import, 1 a stated reference, 2 a derived one), doubt (`1 - confidence` as ordered
/// bits), the path of the file it goes into, its line.
type EdgeKey<'a> = (u8, u64, &'a String, u32);

/// A hasher for file ids (integer keys this crate made itself, so no defence against
/// chosen collisions is needed): a multiply and a rotate instead of SipHash, whose cost
/// showed in walks of a thousand files.
#[derive(Clone, Copy, Default)]
struct IdHash;

impl std::hash::BuildHasher for IdHash {
    type Hasher = IdHasher;
    fn build_hasher(&self) -> IdHasher {
        IdHasher(0)
    }
}

/// The [`std::hash::Hasher`] of [`IdHash`].
struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_i64(&mut self, n: i64) {
        self.0 = (n as u64)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .rotate_left(26);
    }
}

/// `(size, mtime_ns)` of each of `paths` that the map holds.
pub fn file_stats(conn: &Connection, paths: &[&str]) -> Result<HashMap<String, FileStamp>> {
    // One cached statement, one index lookup per path: an `IN (...)` list of 500
    // placeholders was parsed afresh by every process and cost more than the lookups.
    let mut stmt = conn
        .prepare_cached("SELECT size, mtime_ns, content_hash FROM files WHERE path = ?1")
        .ctx(|| "reading file states".into())?;
    let mut out = HashMap::with_capacity(paths.len());
    for &path in paths {
        let stat = stmt
            .query_row([path], |r| {
                Ok(FileStamp {
                    size: r.get(0)?,
                    mtime_ns: r.get(1)?,
                    content_hash: r.get(2)?,
                })
            })
            .optional()
            .ctx(|| format!("reading the state of {path}"))?;
        if let Some(stat) = stat {
            out.insert(path.to_string(), stat);
        }
    }
    Ok(out)
}

/// Counts of the map's rows.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MapCounts {
    /// Files recorded.
    pub files: u64,
    /// Symbols.
    pub symbols: u64,
    /// References.
    pub refs: u64,
    /// References resolved to a symbol of the map (a target id no symbol has is not
    /// resolved).
    pub refs_resolved: u64,
    /// Dependency edges (resolved).
    pub deps: u64,
    /// Imports that resolved to no file.
    pub deps_unresolved: u64,
    /// Total lines across files.
    pub lines: u64,
}

/// Row counts of the map. `finishing` is the scan that asks as it finishes, its
/// references all resolved.
///
/// A resolved reference is one whose target is a symbol of the map. Only a scan that has
/// not finished (killed, or running now; not `finishing`) can leave a reference on a
/// symbol it deleted, so only then is each target looked up (a join over every
/// reference); else the count is read from the index of targets.
pub fn counts(conn: &Connection, finishing: Option<i64>) -> Result<MapCounts> {
    conn.query_row(
        "SELECT (SELECT count(*) FROM files), (SELECT count(*) FROM symbols),
                (SELECT count(*) FROM refs),
                CASE WHEN EXISTS (SELECT 1 FROM scans WHERE status = 'running' AND scan_id IS NOT ?1)
                     THEN (SELECT count(*) FROM refs r JOIN symbols s ON s.symbol_id = r.target_id)
                     ELSE (SELECT count(*) FROM refs WHERE target_id IS NOT NULL) END,
                (SELECT count(*) FROM deps WHERE to_file_id IS NOT NULL),
                (SELECT count(*) FROM deps WHERE to_file_id IS NULL),
                (SELECT ifnull(sum(lines), 0) FROM files)",
        [finishing],
        |r| {
            Ok(MapCounts {
                files: r.get(0)?,
                symbols: r.get(1)?,
                refs: r.get(2)?,
                refs_resolved: r.get(3)?,
                deps: r.get(4)?,
                deps_unresolved: r.get(5)?,
                lines: r.get(6)?,
            })
        },
    )
    .ctx(|| "counting the map".into())
}

/// The map's row counts and its files and lines per language (`None` = unknown language).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MapTotals {
    /// Row counts.
    pub counts: MapCounts,
    /// Files and lines per language, ordered by language.
    pub languages: Vec<(Option<String>, u64, u64)>,
}

/// `meta` key of the totals the newest scan counted as it finished: `{"scan_id", "totals"}`.
const KEPT_TOTALS: &str = "map_totals";

/// Counts the map ([`counts`] and [`files_by_language`]; `finishing` as for [`counts`]).
pub fn count_totals(conn: &Connection, finishing: Option<i64>) -> Result<MapTotals> {
    Ok(MapTotals {
        counts: counts(conn, finishing)?,
        languages: files_by_language(conn)?,
    })
}

/// Keeps `totals`, counted by scan `scan_id` as it finishes, for [`kept_totals`].
pub fn keep_totals(tx: &Transaction<'_>, scan_id: i64, totals: &MapTotals) -> Result<()> {
    let value = serde_json::json!({ "scan_id": scan_id, "totals": totals }).to_string();
    crate::set_meta(tx, KEPT_TOTALS, &value)
}

/// Drops the kept totals: for writes to the map outside a scan (a SCIP import, a
/// migration).
pub fn forget_totals(tx: &Transaction<'_>) -> Result<()> {
    tx.execute("DELETE FROM meta WHERE key = ?1", [KEPT_TOTALS])
        .ctx(|| "forgetting the map's totals".into())?;
    Ok(())
}

/// The totals the newest scan kept as it finished, while they still hold: that scan is the
/// newest row of `scans` (none started since, none running) and finished, and nothing
/// wrote the map outside a scan since ([`forget_totals`]). Counting the map reads every
/// reference (3.3 M on a 50,000-file map); a scan that changed nothing and `stats` read
/// these instead.
pub fn kept_totals(conn: &Connection) -> Result<Option<MapTotals>> {
    #[derive(Deserialize)]
    struct Kept {
        scan_id: i64,
        totals: MapTotals,
    }
    let kept: Option<String> = conn
        .query_row(
            "SELECT value FROM meta WHERE key = ?1",
            [KEPT_TOTALS],
            |r| r.get(0),
        )
        .optional()
        .ctx(|| "reading the map's kept totals".into())?;
    let Some(kept) = kept.and_then(|v| serde_json::from_str::<Kept>(&v).ok()) else {
        return Ok(None);
    };
    let newest: Option<(i64, String)> = conn
        .query_row(
            "SELECT scan_id, status FROM scans ORDER BY scan_id DESC LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()
        .ctx(|| "reading the newest scan".into())?;
    Ok(match newest {
        Some((id, status)) if id == kept.scan_id && status == "finished" => Some(kept.totals),
        _ => None,
    })
}

/// Files and lines per language (`None` = unknown), ordered by language.
pub fn files_by_language(conn: &Connection) -> Result<Vec<(Option<String>, u64, u64)>> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT language, count(*), ifnull(sum(lines), 0) FROM files GROUP BY language ORDER BY language",
        )
        .ctx(|| "counting files by language".into())?;
    let rows = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .ctx(|| "counting files by language".into())?;
    rows.collect::<rusqlite::Result<Vec<_>>>()
        .ctx(|| "counting files by language".into())
}

/// A path the map does not hold, with why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SkippedFile {
    /// Repo-relative path.
    pub path: String,
    /// `binary`, `too_large`, `unreadable`, `symlink`, `vanished`, `file_limit`, `secret`,
    /// `not_regular`, `non_utf8_path`.
    pub reason: String,
    /// Details, e.g. the OS error.
    pub detail: Option<String>,
    /// Size in bytes when skipped.
    pub size: i64,
    /// Modification time (ns since the epoch) when skipped.
    pub mtime_ns: i64,
}

/// Every skipped path, by path.
pub fn skipped_files(conn: &Connection) -> Result<HashMap<String, SkippedFile>> {
    let mut stmt = conn
        .prepare_cached("SELECT path, reason, detail, size, mtime_ns FROM skipped_files")
        .ctx(|| "reading skipped files".into())?;
    let rows = stmt
        .query_map([], skipped_row)
        .ctx(|| "reading skipped files".into())?;
    let mut out = HashMap::new();
    for row in rows {
        let row = row.ctx(|| "reading skipped files".into())?;
        out.insert(row.path.clone(), row);
    }
    Ok(out)
}

/// A `skipped_files` row selected as `path, reason, detail, size, mtime_ns`.
fn skipped_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<SkippedFile> {
    Ok(SkippedFile {
        path: r.get(0)?,
        reason: r.get(1)?,
        detail: r.get(2)?,
        size: r.get(3)?,
        mtime_ns: r.get(4)?,
    })
}

/// The skip of one path, if the last scan skipped it.
pub fn skipped_file(conn: &Connection, path: &str) -> Result<Option<SkippedFile>> {
    use rusqlite::OptionalExtension;
    conn.prepare_cached(
        "SELECT path, reason, detail, size, mtime_ns FROM skipped_files WHERE path = ?1",
    )
    .and_then(|mut st| st.query_row([path], skipped_row).optional())
    .ctx(|| format!("reading the skip of {path}"))
}

/// How many files the last scan skipped, by reason (`secret`, `too_large`, `binary`, …),
/// in reason order.
pub fn skip_counts(conn: &Connection) -> Result<Vec<(String, u64)>> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT reason, COUNT(*) FROM skipped_files GROUP BY reason ORDER BY reason",
        )
        .ctx(|| "counting skipped files".into())?;
    let rows = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get::<_, i64>(1)? as u64)))
        .ctx(|| "counting skipped files".into())?;
    rows.collect::<rusqlite::Result<Vec<_>>>()
        .ctx(|| "counting skipped files".into())
}

/// Up to `limit` skipped files: binary ones last (they define nothing and are many),
/// else by reason, then path.
pub fn skipped_listed(conn: &Connection, limit: u32) -> Result<Vec<SkippedFile>> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT path, reason, detail, size, mtime_ns FROM skipped_files
             ORDER BY reason = 'binary', reason, path LIMIT ?1",
        )
        .ctx(|| "reading skipped files".into())?;
    let rows = stmt
        .query_map([limit], skipped_row)
        .ctx(|| "reading skipped files".into())?;
    rows.collect::<rusqlite::Result<Vec<_>>>()
        .ctx(|| "reading skipped files".into())
}

/// How many mapped files are degraded (their analysis incomplete: `files.degraded` set),
/// and up to `limit` of them as `(path, why)`, by path. One pass over the table, sorted
/// here: ordered by SQLite, the query walked the path index and looked up every file
/// (34 ms on a 17,000-file map, against 1 to 7 ms for the pass).
pub fn degraded_files(conn: &Connection, limit: u32) -> Result<(u64, Vec<(String, String)>)> {
    let mut stmt = conn
        .prepare_cached("SELECT path, degraded FROM files WHERE degraded IS NOT NULL")
        .ctx(|| "reading degraded files".into())?;
    let rows = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .ctx(|| "reading degraded files".into())?;
    let mut listed: Vec<(String, String)> = rows
        .collect::<rusqlite::Result<Vec<_>>>()
        .ctx(|| "reading degraded files".into())?;
    let count = listed.len() as u64;
    listed.sort();
    listed.truncate(limit as usize);
    Ok((count, listed))
}

/// Replaces the whole skipped-files list.
pub fn replace_skipped_files(tx: &Transaction<'_>, skips: &[SkippedFile]) -> Result<()> {
    tx.execute("DELETE FROM skipped_files", [])
        .ctx(|| "clearing skipped files".into())?;
    let mut stmt = tx
        .prepare_cached(
            "INSERT OR REPLACE INTO skipped_files(path, reason, detail, size, mtime_ns)
             VALUES (?1, ?2, ?3, ?4, ?5)",
        )
        .ctx(|| "writing skipped files".into())?;
    for s in skips {
        stmt.execute(params![s.path, s.reason, s.detail, s.size, s.mtime_ns])
            .ctx(|| format!("writing skipped file {}", s.path))?;
    }
    Ok(())
}

/// One observed change of a file, for the drift ledger.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DriftEntry {
    /// The file (the new path, for renames).
    pub path: String,
    /// `add`, `modify`, `delete`, `rename`, `signature_change`.
    pub kind: &'static str,
    /// Content hash before (signature fingerprint for `signature_change`).
    pub old_hash: Option<String>,
    /// Content hash after (signature fingerprint for `signature_change`).
    pub new_hash: Option<String>,
    /// The old path of a rename, or the symbol key of a signature change.
    pub detail: Option<String>,
}

/// Appends drift entries; an entry already in the ledger (same path, hashes, kind and
/// detail) is not repeated. `source` is `scan` or `overlay`. Returns how many were new.
pub fn insert_drift(
    tx: &Transaction<'_>,
    scan_id: i64,
    entries: &[DriftEntry],
    source: &str,
) -> Result<usize> {
    let mut stmt = tx
        .prepare_cached(
            "INSERT OR IGNORE INTO drift(scan_id, path, kind, old_hash, new_hash, detail, source)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )
        .ctx(|| "writing drift".into())?;
    let mut n = 0;
    for e in entries {
        n += stmt
            .execute(params![
                scan_id, e.path, e.kind, e.old_hash, e.new_hash, e.detail, source
            ])
            .ctx(|| format!("writing drift for {}", e.path))?;
    }
    Ok(n)
}

/// Marks every file's current content as recorded in the drift ledger (`drift_hash`, see
/// [`FileState::drift_hash`]): run by a scan in the transaction that writes its drift.
pub fn settle_drift_hashes(tx: &Transaction<'_>) -> Result<()> {
    tx.prepare_cached(
        "UPDATE files SET drift_hash = content_hash WHERE drift_hash IS NOT content_hash",
    )
    .and_then(|mut st| st.execute([]))
    .ctx(|| "recording the files' drift hashes".into())?;
    Ok(())
}

/// The folded form of a symbol name as SQL: ASCII lower case, `_` removed. Written
/// exactly as the expression of the index `symbols_by_folded_name` (migration 0023), so
/// SQLite reads that index for it; [`fold_name`] is the same in Rust.
pub const FOLDED_NAME: &str = "lower(replace(name, '_', ''))";

/// A name folded as [`FOLDED_NAME`] folds it: `_split_netloc` → `splitnetloc`,
/// `HTTPServer` → `httpserver` (SQLite's `lower` changes ASCII letters only).
pub fn fold_name(name: &str) -> String {
    name.chars()
        .filter(|&c| c != '_')
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// Distinct symbol names whose folded form ([`FOLDED_NAME`]) is `folded`, at most
/// `limit`, in index order. An indexed lookup.
pub fn names_folded_as(conn: &Connection, folded: &str, limit: u32) -> Result<Vec<String>> {
    let sql = format!("SELECT DISTINCT name FROM symbols WHERE {FOLDED_NAME} = ?1 LIMIT ?2");
    let mut stmt = conn.prepare_cached(&sql).ctx(|| "reading names".into())?;
    let rows = stmt
        .query_map(params![folded, limit], |r| r.get(0))
        .ctx(|| format!("reading names folded as {folded}"))?;
    rows.collect::<rusqlite::Result<Vec<_>>>()
        .ctx(|| format!("reading names folded as {folded}"))
}

/// Distinct symbol names whose folded form ([`FOLDED_NAME`]) starts with `prefix`, at
/// most `limit`, in folded order: one range of the index `symbols_by_folded_name`, so the
/// cost is the rows read (at most `limit` distinct names and their repeats), never the
/// size of the map.
pub fn names_folded_with_prefix(
    conn: &Connection,
    prefix: &str,
    limit: u32,
) -> Result<Vec<String>> {
    // Every text starting with `prefix` sorts before `prefix` followed by U+10FFFF, the
    // highest code point (UTF-8 text compares bytewise under BINARY collation).
    let sql = format!(
        "SELECT DISTINCT name FROM symbols
         WHERE {FOLDED_NAME} >= ?1 AND {FOLDED_NAME} < ?1 || char(1114111) LIMIT ?2"
    );
    let mut stmt = conn.prepare_cached(&sql).ctx(|| "reading names".into())?;
    let rows = stmt
        .query_map(params![prefix, limit], |r| r.get(0))
        .ctx(|| format!("reading names starting with {prefix}"))?;
    rows.collect::<rusqlite::Result<Vec<_>>>()
        .ctx(|| format!("reading names starting with {prefix}"))
}

/// Distinct names of symbols whose identifier terms hold `words` as a phrase (the
/// full-text index `symbols_fts`: `legacy_total` for `total`, `load_parse_config` for
/// `parse config`), among the first `limit` symbols that match. Words are lower-case identifier words
/// (`loci_core::terms::identifier_words`); an empty list finds nothing.
pub fn names_with_words(conn: &Connection, words: &[String], limit: u32) -> Result<Vec<String>> {
    if words.is_empty() {
        return Ok(Vec::new());
    }
    // A phrase of quoted words: nothing in them is FTS5 syntax.
    let phrase = format!("\"{}\"", words.join(" ").replace('"', "\"\""));
    // The limit bounds the matches, each a row of `symbols` read for its name, not the
    // distinct names: a common word matches a large share of the map.
    let mut stmt = conn
        .prepare_cached(
            "SELECT DISTINCT s.name
             FROM (SELECT rowid FROM symbols_fts WHERE symbols_fts MATCH 'terms : ' || ?1 LIMIT ?2) f
             JOIN symbols s ON s.symbol_id = f.rowid",
        )
        .ctx(|| "reading names".into())?;
    let rows = stmt
        .query_map(params![phrase, limit], |r| r.get(0))
        .ctx(|| format!("reading names with the words {phrase}"))?;
    rows.collect::<rusqlite::Result<Vec<_>>>()
        .ctx(|| format!("reading names with the words {phrase}"))
}

/// Secondary indexes of `symbols` and `refs` that a bulk load builds at the end.
/// Their definitions must match the migrations (`0001_map.sql`, `0030_ref_receiver_typed.sql`,
/// `0018_ref_deps.sql`, `0023_folded_names.sql`).
const BULK_INDEXES: &[(&str, &str)] = &[
    (
        "refs_by_name",
        "CREATE INDEX IF NOT EXISTS refs_by_name ON refs(name)",
    ),
    (
        "refs_by_target",
        "CREATE INDEX IF NOT EXISTS refs_by_target ON refs(target_id)",
    ),
    (
        "refs_by_file",
        "CREATE INDEX IF NOT EXISTS refs_by_file ON refs(file_id)",
    ),
    (
        "symbols_by_name",
        "CREATE INDEX IF NOT EXISTS symbols_by_name ON symbols(name, qualified_name)",
    ),
    (
        "symbols_by_qualified_name",
        "CREATE INDEX IF NOT EXISTS symbols_by_qualified_name ON symbols(qualified_name)",
    ),
    (
        "symbols_by_folded_name",
        "CREATE INDEX IF NOT EXISTS symbols_by_folded_name ON symbols(lower(replace(name, '_', '')), name)",
    ),
];

/// The full-text triggers a bulk load suspends (FTS5 flushes its pending terms at every
/// statement savepoint, so row-by-row trigger inserts write thousands of tiny segments);
/// the tables are rebuilt in one pass at the end instead. The SQL is exactly that of
/// `0004_search.sql` and `0017_text_terms.sql` (a test checks it).
pub const BULK_FTS_TRIGGERS: &[(&str, &str, &str)] = &[
    (
        "symbols_fts_insert",
        "symbols_fts",
        "CREATE TRIGGER symbols_fts_insert AFTER INSERT ON symbols BEGIN
    INSERT INTO symbols_fts(rowid, terms, signature, doc)
    VALUES (new.symbol_id, new.terms, new.signature, new.doc);
END;",
    ),
    (
        "doc_chunks_fts_insert",
        "doc_chunks_fts",
        "CREATE TRIGGER doc_chunks_fts_insert AFTER INSERT ON doc_chunks BEGIN
    INSERT INTO doc_chunks_fts(rowid, heading, text, terms)
    VALUES (new.chunk_id, new.heading, new.text, new.terms);
END;",
    ),
];

/// Drops the bulk indexes and suspends the full-text insert triggers (before a first
/// scan's bulk load).
pub fn drop_bulk_indexes(tx: &Transaction<'_>) -> Result<()> {
    for (name, _) in BULK_INDEXES {
        tx.execute_batch(&format!("DROP INDEX IF EXISTS {name}"))
            .ctx(|| format!("dropping index {name}"))?;
    }
    for (trigger, _, _) in BULK_FTS_TRIGGERS {
        tx.execute_batch(&format!("DROP TRIGGER IF EXISTS {trigger}"))
            .ctx(|| format!("dropping trigger {trigger}"))?;
    }
    Ok(())
}

/// Creates the bulk indexes that look up references and definitions by name, which a
/// bulk load's reference resolution reads by (the rest come with
/// [`create_bulk_indexes`]; none is built twice).
pub fn create_name_indexes(tx: &Transaction<'_>) -> Result<()> {
    for (name, sql) in BULK_INDEXES {
        if matches!(*name, "refs_by_name" | "symbols_by_name") {
            tx.execute_batch(sql)
                .ctx(|| format!("creating index {name}"))?;
        }
    }
    Ok(())
}

/// True when a bulk load was interrupted before it rebuilt its indexes and triggers.
pub fn bulk_indexes_missing(conn: &Connection) -> Result<bool> {
    let present: usize = conn
        .query_row(&bulk_objects_present_sql(), [], |r| r.get(0))
        .ctx(|| "checking indexes".into())?;
    Ok(present < bulk_objects())
}

/// How many indexes and triggers a bulk load drops and restores.
pub(crate) fn bulk_objects() -> usize {
    BULK_INDEXES.len() + BULK_FTS_TRIGGERS.len()
}

/// A scalar `SELECT` counting the indexes and triggers of [`bulk_objects`] that exist.
pub(crate) fn bulk_objects_present_sql() -> String {
    let names: Vec<String> = BULK_INDEXES
        .iter()
        .map(|(n, _)| *n)
        .chain(BULK_FTS_TRIGGERS.iter().map(|(n, _, _)| *n))
        .map(|n| format!("'{n}'"))
        .collect();
    format!(
        "SELECT count(*) FROM sqlite_master WHERE type IN ('index', 'trigger') AND name IN ({})",
        names.join(", ")
    )
}

/// Creates the bulk indexes if missing, and restores the full-text triggers with a full
/// rebuild of their tables (after a bulk load, and at the start of any scan that finds
/// them missing, so an interrupted load never leaves the map unindexed).
pub fn create_bulk_indexes(tx: &Transaction<'_>) -> Result<()> {
    for (name, sql) in BULK_INDEXES {
        tx.execute_batch(sql)
            .ctx(|| format!("creating index {name}"))?;
    }
    for (trigger, table, sql) in BULK_FTS_TRIGGERS {
        let exists: bool = tx
            .query_row(
                "SELECT EXISTS(SELECT 1 FROM sqlite_master WHERE type = 'trigger' AND name = ?1)",
                [trigger],
                |r| r.get(0),
            )
            .ctx(|| format!("checking trigger {trigger}"))?;
        if !exists {
            // `rebuild` flushes a segment per megabyte of terms (FTS5's `hashsize`): 4
            // for the stdlib's symbols. `optimize` merges them into the one b-tree every
            // search then reads (0.1 s more on the stdlib: 0.34–0.37 s to rebuild, 0.42–0.47 s
            // with the optimize).
            tx.execute_batch(&format!(
                "INSERT INTO {table}({table}) VALUES ('rebuild'); INSERT INTO {table}({table}) VALUES ('optimize');"
            ))
            .ctx(|| format!("rebuilding {table}"))?;
            tx.execute_batch(sql)
                .ctx(|| format!("creating trigger {trigger}"))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{FileRow, RefRow, insert_refs, put_file};

    /// (name, line, start byte, receiver, receiver name) of a stored reference.
    type StoredRef = (String, u32, u32, Option<String>, Option<String>);

    /// 64 + 16 + 4 + 1 + 1 rows go in as five statements of four sizes; every row must
    /// come back in order, with its own values, under ascending row ids.
    #[test]
    fn multi_row_ref_inserts_keep_every_row_and_its_order() {
        let mut store = crate::Store::open_in_memory().expect("store");
        let names: Vec<String> = (0..86).map(|i| format!("name{i}")).collect();
        store
            .write(|tx| {
                tx.execute(
                    "INSERT INTO scans(started_at) VALUES ('2026-12-02T00:00:00Z')",
                    [],
                )
                .expect("scan");
                let scan_id = tx.last_insert_rowid();
                let row = FileRow {
                    path: "a.py",
                    language: Some("python"),
                    size: 1,
                    mtime_ns: 1,
                    content_hash: "00",
                    fingerprint: None,
                    lines: 1,
                    error_nodes: 0,
                    degraded: None,
                    lossy_utf8: false,
                };
                let file_id = put_file(tx, None, &row, scan_id)?;
                let rows = names.iter().enumerate().map(|(i, name)| RefRow {
                    name,
                    kind: "call",
                    receiver: (i % 3 == 0).then_some("other"),
                    receiver_name: (i % 3 == 0).then_some("obj"),
                    line: i as u32,
                    column: 2,
                    start_byte: 10 * i as u32,
                    end_byte: 10 * i as u32 + 5,
                    enclosing_id: None,
                    target_id: None,
                    provenance: "derived",
                    confidence: 0.5,
                });
                insert_refs(tx, file_id, rows)
            })
            .expect("insert");
        let mut stmt = store
            .conn()
            .prepare(
                "SELECT name, line, start_byte, receiver, receiver_name FROM refs ORDER BY ref_id",
            )
            .expect("select");
        let got: Vec<StoredRef> = stmt
            .query_map([], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
            })
            .expect("query")
            .map(|r| r.expect("row"))
            .collect();
        let want: Vec<StoredRef> = (0..86)
            .map(|i| {
                let other = i % 3 == 0;
                (
                    format!("name{i}"),
                    i,
                    10 * i,
                    other.then(|| "other".to_string()),
                    other.then(|| "obj".to_string()),
                )
            })
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn suspended_fts_triggers_match_the_migration() {
        // The symbols trigger is 0004's; the doc chunks one 0017's, which replaced 0004's.
        let migrations = [
            include_str!("migrations/0004_search.sql"),
            include_str!("migrations/0017_text_terms.sql"),
        ];
        for (name, _, sql) in super::BULK_FTS_TRIGGERS {
            assert!(
                migrations.iter().any(|m| m.contains(sql)),
                "trigger {name} differs from its migration"
            );
        }
    }
}
