//! Full-text queries (FTS5 BM25) over symbols and documentation sections. The caller
//! passes an already safe MATCH expression.

use rusqlite::{Connection, params};
use serde::Serialize;

use crate::{Context, Result};

/// A symbol found by full-text search.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SymbolTextHit {
    /// Row id.
    pub symbol_id: i64,
    /// Stable key.
    pub key: String,
    /// Qualified name.
    pub qualified_name: String,
    /// Kind.
    pub kind: String,
    /// File.
    pub path: String,
    /// Zero-based line of the definition.
    pub line: u32,
    /// First line of the definition.
    pub signature: String,
    /// Doc comment.
    pub doc: Option<String>,
    /// FTS5 BM25 rank (negative; lower is better).
    pub rank: f64,
}

/// Symbols matching `fts_query`, best first, optionally under a path prefix.
pub fn search_symbols(
    conn: &Connection,
    fts_query: &str,
    path_prefix: Option<&str>,
    limit: u32,
) -> Result<Vec<SymbolTextHit>> {
    // Column weights: names matter most, then signatures, then doc comments.
    let mut stmt = conn
        .prepare_cached(
            "SELECT s.symbol_id, s.key, s.qualified_name, s.kind, f.path, s.start_line, s.signature, s.doc,
                    bm25(symbols_fts, 4.0, 2.0, 1.0) AS score
             FROM symbols_fts JOIN symbols s ON s.symbol_id = symbols_fts.rowid
             JOIN files f ON f.file_id = s.file_id
             WHERE symbols_fts MATCH ?1 AND (?2 IS NULL OR substr(f.path, 1, length(?2)) = ?2)
             ORDER BY score LIMIT ?3",
        )
        .ctx(|| "searching symbols".into())?;
    let rows = stmt
        .query_map(params![fts_query, path_prefix, limit], |r| {
            Ok(SymbolTextHit {
                symbol_id: r.get(0)?,
                key: r.get(1)?,
                qualified_name: r.get(2)?,
                kind: r.get(3)?,
                path: r.get(4)?,
                line: r.get(5)?,
                signature: r.get(6)?,
                doc: r.get(7)?,
                rank: r.get(8)?,
            })
        })
        .ctx(|| format!("searching symbols for {fts_query}"))?;
    rows.collect::<rusqlite::Result<_>>()
        .ctx(|| format!("searching symbols for {fts_query}"))
}

/// A documentation section found by full-text search.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DocTextHit {
    /// Row id.
    pub chunk_id: i64,
    /// The markdown file.
    pub path: String,
    /// The section heading.
    pub heading: String,
    /// Zero-based first line.
    pub line: u32,
    /// A snippet with the match in `[`…`]`.
    pub snippet: String,
    /// The section text.
    pub text: String,
    /// FTS5 BM25 rank (negative; lower is better).
    pub rank: f64,
}

/// Documentation sections matching `fts_query`, best first, optionally under a path prefix.
pub fn search_docs(
    conn: &Connection,
    fts_query: &str,
    path_prefix: Option<&str>,
    limit: u32,
) -> Result<Vec<DocTextHit>> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT c.chunk_id, f.path, c.heading, c.line,
                    snippet(doc_chunks_fts, 1, '[', ']', '…', 12), c.text,
                    bm25(doc_chunks_fts, 2.0, 1.0) AS score
             FROM doc_chunks_fts JOIN doc_chunks c ON c.chunk_id = doc_chunks_fts.rowid
             JOIN files f ON f.file_id = c.file_id
             WHERE doc_chunks_fts MATCH ?1 AND (?2 IS NULL OR substr(f.path, 1, length(?2)) = ?2)
             ORDER BY score LIMIT ?3",
        )
        .ctx(|| "searching docs".into())?;
    let rows = stmt
        .query_map(params![fts_query, path_prefix, limit], |r| {
            Ok(DocTextHit {
                chunk_id: r.get(0)?,
                path: r.get(1)?,
                heading: r.get(2)?,
                line: r.get(3)?,
                snippet: r.get(4)?,
                text: r.get(5)?,
                rank: r.get(6)?,
            })
        })
        .ctx(|| format!("searching docs for {fts_query}"))?;
    rows.collect::<rusqlite::Result<_>>()
        .ctx(|| format!("searching docs for {fts_query}"))
}
