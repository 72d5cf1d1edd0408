//! Full-text queries (FTS5 BM25) over symbols and documentation sections, and the term
//! statistics (rows, document frequencies) that `context` weighs query terms with. The
//! caller passes an already safe MATCH expression.

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

/// Symbols matching `fts_query`, best first, optionally only those in the file `path_prefix`
/// or under the folder `path_prefix/` (given without a trailing `/`).
pub fn search_symbols(
    conn: &Connection,
    fts_query: &str,
    path_prefix: Option<&str>,
    limit: u32,
) -> Result<Vec<SymbolTextHit>> {
    // Column weights: names matter most, then signatures, then doc comments. Without a
    // path prefix the best `limit` rows are picked from the full-text index alone and only
    // they are joined to their symbols and files (a common word matches thousands).
    let sql = if path_prefix.is_none() {
        "WITH hits AS MATERIALIZED (
             SELECT rowid AS id, bm25(symbols_fts, 4.0, 2.0, 1.0) AS score FROM symbols_fts
             WHERE symbols_fts MATCH ?1 ORDER BY score LIMIT ?3)
         SELECT s.symbol_id, s.key, s.qualified_name, s.kind, f.path, s.start_line, s.signature, s.doc,
                hits.score
         FROM hits JOIN symbols s ON s.symbol_id = hits.id
         JOIN files f ON f.file_id = s.file_id
         WHERE ?2 IS NULL
         ORDER BY hits.score, s.symbol_id"
    } else {
        "SELECT s.symbol_id, s.key, s.qualified_name, s.kind, f.path, s.start_line, s.signature, s.doc,
                bm25(symbols_fts, 4.0, 2.0, 1.0) AS score
         FROM symbols_fts JOIN symbols s ON s.symbol_id = symbols_fts.rowid
         JOIN files f ON f.file_id = s.file_id
         WHERE symbols_fts MATCH ?1 AND (?2 IS NULL OR f.path = ?2 OR substr(f.path, 1, length(?2) + 1) = ?2 || '/')
         ORDER BY score, s.symbol_id LIMIT ?3"
    };
    let mut stmt = conn
        .prepare_cached(sql)
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

/// Documentation sections matching `fts_query`, best first, optionally only those in the file
/// `path_prefix` or under the folder `path_prefix/` (given without a trailing `/`).
pub fn search_docs(
    conn: &Connection,
    fts_query: &str,
    path_prefix: Option<&str>,
    limit: u32,
) -> Result<Vec<DocTextHit>> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT c.chunk_id, f.path, c.heading, c.line,
                    CASE WHEN length(c.text) <= ?4 THEN snippet(doc_chunks_fts, 1, '[', ']', '…', 12) END, c.text,
                    bm25(doc_chunks_fts, 2.0, 1.0, 1.0) AS score
             FROM doc_chunks_fts JOIN doc_chunks c ON c.chunk_id = doc_chunks_fts.rowid
             JOIN files f ON f.file_id = c.file_id
             WHERE doc_chunks_fts MATCH ?1 AND (?2 IS NULL OR f.path = ?2 OR substr(f.path, 1, length(?2) + 1) = ?2 || '/')
             ORDER BY score LIMIT ?3",
        )
        .ctx(|| "searching docs".into())?;
    let rows = stmt
        .query_map(
            params![fts_query, path_prefix, limit, FTS_SNIPPET_CHARS],
            |r| {
                let text: String = r.get(5)?;
                Ok(DocTextHit {
                    chunk_id: r.get(0)?,
                    path: r.get(1)?,
                    heading: r.get(2)?,
                    line: r.get(3)?,
                    snippet: snippet_or_scan(r.get(4)?, &text, fts_query),
                    text,
                    rank: r.get(6)?,
                })
            },
        )
        .ctx(|| format!("searching docs for {fts_query}"))?;
    rows.collect::<rusqlite::Result<_>>()
        .ctx(|| format!("searching docs for {fts_query}"))
}

/// The longest text (characters) whose snippet FTS5's `snippet()` makes. It scores every
/// instance of a matched phrase against every other, so its time grows with the square of
/// the matches in the row: a 120 KB section repeating the searched word took 5.8 s, a
/// 1.8 MB one did not finish in 10 minutes. A longer text gets [`text_snippet`].
pub const FTS_SNIPPET_CHARS: i64 = 8 * 1024;

/// Tokens in a snippet (FTS5's `snippet()` argument, and [`text_snippet`]'s).
pub const SNIPPET_TOKENS: usize = 12;

/// A snippet of `text` for the MATCH expression `fts_query` in one pass: `tokens` tokens
/// from just before the first one the expression quotes, each quoted one in `[`…`]` and
/// `…` where the text was cut. Tokens are runs of letters and digits compared
/// lower-case (as FTS5's `unicode61` tokenizer splits, without its diacritics folding).
/// With no quoted token found, the text's first `tokens` tokens.
pub fn text_snippet(text: &str, fts_query: &str, tokens: usize) -> String {
    let wanted: std::collections::HashSet<String> = quoted_tokens(fts_query);
    let spans: Vec<(usize, usize)> = token_spans(text);
    if spans.is_empty() || tokens == 0 {
        return String::new();
    }
    let hit = |&(a, b): &(usize, usize)| wanted.contains(&text[a..b].to_lowercase());
    let first = spans.iter().position(hit).unwrap_or(0);
    let start = first.saturating_sub(2);
    let end = (start + tokens).min(spans.len());
    let mut out = String::new();
    if start > 0 {
        out.push('…');
    }
    let mut at = spans[start].0;
    for span in &spans[start..end] {
        out.push_str(&text[at..span.0]);
        if hit(span) {
            out.push('[');
            out.push_str(&text[span.0..span.1]);
            out.push(']');
        } else {
            out.push_str(&text[span.0..span.1]);
        }
        at = span.1;
    }
    if end < spans.len() {
        out.push('…');
    }
    out
}

/// FTS5's snippet when the query made one (`CASE WHEN length(text) <= FTS_SNIPPET_CHARS`),
/// else [`text_snippet`] of `text`.
pub(crate) fn snippet_or_scan(fts_snippet: Option<String>, text: &str, fts_query: &str) -> String {
    fts_snippet.unwrap_or_else(|| text_snippet(text, fts_query, SNIPPET_TOKENS))
}

/// Byte spans of the runs of letters and digits in `text`.
fn token_spans(text: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        match (c.is_alphanumeric(), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                spans.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        spans.push((s, text.len()));
    }
    spans
}

/// The lower-case tokens of every `"…"` string of an FTS5 expression (`""` is a quote).
fn quoted_tokens(fts_query: &str) -> std::collections::HashSet<String> {
    let mut out = std::collections::HashSet::new();
    let mut chars = fts_query.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '"' {
            continue;
        }
        let mut quoted = String::new();
        while let Some(c) = chars.next() {
            if c == '"' {
                if chars.peek() == Some(&'"') {
                    chars.next();
                    quoted.push('"');
                    continue;
                }
                break;
            }
            quoted.push(c);
        }
        for (a, b) in token_spans(&quoted) {
            out.insert(quoted[a..b].to_lowercase());
        }
    }
    out
}

/// The identifier-aware terms of prose (a memory revision, a documentation section), the
/// `terms` column of `revisions_fts` and `doc_chunks_fts` as [`symbol_terms`] is that of
/// `symbols_fts`: one mechanism for the three indexes, so `parseConfig`, `parse_config`
/// and `ParseConfig` find each other in memory and documentation as among symbols. The
/// text itself is indexed as the tokenizer splits it (`RotatingFileHandler.doRollover()`
/// as `rotatingfilehandler`, `dorollover`; `parse_config` as `parse`, `config`); the terms
/// hold what that misses. For each whitespace-separated token holding an identifier with
/// inner case changes, the words of the whole token in order (`rotating file handler do
/// rollover`, so a dotted name's words stay a phrase); then, for every identifier of the
/// token made of several words, its joined lower-case form (`parseconfig`). A token of
/// plain words adds nothing.
///
/// [`symbol_terms`]: loci_core::terms::symbol_terms
pub fn text_terms(text: &str) -> String {
    use loci_core::terms::identifier_words;
    let mut out = String::new();
    let push = |out: &mut String, term: &str| {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(term);
    };
    let mut words: Vec<String> = Vec::new();
    let mut joined: Vec<String> = Vec::new();
    for token in text.split_whitespace() {
        // Most tokens are ASCII without a capital: no case change splits a word, so the
        // token adds only the joined forms of its snake_case identifiers, read without
        // allocating each word.
        if token.is_ascii() && !token.bytes().any(|b| b.is_ascii_uppercase()) {
            for ident in token.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
                let mut parts = ident.split('_').filter(|p| !p.is_empty());
                if let (Some(first), Some(second)) = (parts.next(), parts.next()) {
                    push(&mut out, first);
                    out.push_str(second);
                    for p in parts {
                        out.push_str(p);
                    }
                }
            }
            continue;
        }
        words.clear();
        joined.clear();
        let mut case_split = false;
        for ident in token.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
            let parts = identifier_words(ident);
            if parts.is_empty() {
                continue;
            }
            // The tokenizer's own split: at every character that is not alphanumeric.
            let plain = ident
                .split(|c: char| !c.is_alphanumeric())
                .filter(|p| !p.is_empty())
                .count();
            case_split |= parts.len() > plain;
            if parts.len() > 1 {
                joined.push(parts.concat());
            }
            words.extend(parts);
        }
        if case_split {
            for w in &words {
                push(&mut out, w);
            }
        }
        for j in &joined {
            push(&mut out, j);
        }
    }
    out
}

/// One of the full-text indexes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FtsTable {
    /// `revisions_fts`: memory bodies and change summaries (every revision).
    Revisions,
    /// `symbols_fts`: symbol terms, signatures and doc comments.
    Symbols,
    /// `doc_chunks_fts`: documentation sections.
    Docs,
    /// `code_chunks_fts`: the code's text, chunk by chunk (migration 19).
    CodeChunks,
    /// `file_text_fts`: the code's text, file by file (migration 19).
    FileText,
    /// `secondary_chunks_fts`: the text of test, example and vendored code
    /// (`loci_core::secondary`), chunk by chunk (migration 20).
    SecondaryChunks,
    /// `secondary_file_text_fts`: the text of test, example and vendored code, file by
    /// file (migration 20).
    SecondaryFileText,
}

impl FtsTable {
    /// The indexes of memory, symbols and documentation.
    pub const ALL: [FtsTable; 3] = [FtsTable::Revisions, FtsTable::Symbols, FtsTable::Docs];

    /// The indexes of the code's text.
    pub const CODE: [FtsTable; 4] = [
        FtsTable::CodeChunks,
        FtsTable::FileText,
        FtsTable::SecondaryChunks,
        FtsTable::SecondaryFileText,
    ];

    /// The indexes a scan writes (and lists the common terms of).
    pub const MAP: [FtsTable; 6] = [
        FtsTable::Symbols,
        FtsTable::Docs,
        FtsTable::CodeChunks,
        FtsTable::FileText,
        FtsTable::SecondaryChunks,
        FtsTable::SecondaryFileText,
    ];

    /// The chunk index of primary code (`secondary` false) or of test, example and
    /// vendored code.
    pub fn chunks(secondary: bool) -> FtsTable {
        if secondary {
            FtsTable::SecondaryChunks
        } else {
            FtsTable::CodeChunks
        }
    }

    /// The whole-file index of primary code (`secondary` false) or of test, example and
    /// vendored code.
    pub fn file_text(secondary: bool) -> FtsTable {
        if secondary {
            FtsTable::SecondaryFileText
        } else {
            FtsTable::FileText
        }
    }

    /// The FTS5 table's name.
    pub fn name(self) -> &'static str {
        self.names().1
    }

    /// Whether a scan lists this index's common terms ([`refresh_common_terms`]): the
    /// map's two, which only a scan writes. Memory's index is written by every memory write
    /// and is small (1,846 terms for the stdlib benchmark's 505 pages, the most common in
    /// 306 rows), so its terms are always counted.
    pub fn lists_common_terms(self) -> bool {
        self != FtsTable::Revisions
    }

    fn names(self) -> (&'static str, &'static str, &'static str) {
        // (content table with the rows it counts, FTS5 table, fts5vocab table in the
        // connection's temp schema)
        match self {
            FtsTable::Revisions => ("revisions", "revisions_fts", "loci_vocab_revisions"),
            FtsTable::Symbols => ("symbols", "symbols_fts", "loci_vocab_symbols"),
            FtsTable::Docs => ("doc_chunks", "doc_chunks_fts", "loci_vocab_docs"),
            FtsTable::CodeChunks => (
                "code_chunks WHERE secondary = 0",
                "code_chunks_fts",
                "loci_vocab_code_chunks",
            ),
            FtsTable::FileText => ("files", "file_text_fts", "loci_vocab_file_text"),
            FtsTable::SecondaryChunks => (
                "code_chunks WHERE secondary = 1",
                "secondary_chunks_fts",
                "loci_vocab_secondary_chunks",
            ),
            FtsTable::SecondaryFileText => (
                "files",
                "secondary_file_text_fts",
                "loci_vocab_secondary_file_text",
            ),
        }
    }
}

/// Term statistics of one full-text index: its row count and, for each of `terms` (single
/// tokens as the `unicode61` tokenizer emits them: lower-case, no punctuation), the number
/// of rows holding it (its document frequency). The row count is the index's own (see
/// [`fts_row_count`]); the frequencies come from an `fts5vocab` table in the connection's
/// `temp` schema, made on first use (nothing is written to the database; in the main
/// schema, `PRAGMA integrity_check` reports every `fts5vocab` table as an error), all of
/// `terms` in one statement. [`crate::Store::term_stats`] caches these per snapshot.
pub fn term_stats(conn: &Connection, table: FtsTable, terms: &[String]) -> Result<(u64, Vec<u64>)> {
    let rows = fts_row_count(conn, table)?;
    Ok((rows, document_frequencies(conn, table, terms)?))
}

/// The document frequency of each of `terms` in `table` (0 for a term it does not hold),
/// in the order of `terms`. Terms the index's [`refresh_common_terms`] list holds, while
/// that list is current, are read from it (a point lookup each); the others are counted
/// by one `fts5vocab` statement for all of them (each term its own statement opened a
/// vocabulary cursor per term, and SQLite prepares a statement inside every cursor it
/// opens), which walks each term's posting list.
pub fn document_frequencies(
    conn: &Connection,
    table: FtsTable,
    terms: &[String],
) -> Result<Vec<u64>> {
    if terms.is_empty() {
        return Ok(Vec::new());
    }
    let (_, fts, vocab) = table.names();
    let json =
        serde_json::to_string(terms).map_err(|e| crate::StoreError::Corrupt(e.to_string()))?;
    let mut found: std::collections::HashMap<String, i64> = Default::default();
    // One row per term while the list is current (its count, or NULL for a term in fewer
    // than `min_doc` rows); none when the index changed since the list was made.
    if table.lists_common_terms() {
        let mut stmt = conn
            .prepare_cached(&format!(
                "SELECT j.value, t.doc FROM fts_common_terms_stamp s JOIN json_each(?1) j
                 LEFT JOIN fts_common_terms t ON t.fts = s.fts AND t.term = j.value
                 WHERE s.fts = '{fts}' AND s.stamp = coalesce((SELECT block FROM {fts}_data WHERE id = 1), x'')"
            ))
            .ctx(|| format!("reading the common terms of {fts}"))?;
        let rows = stmt
            .query_map([&json], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, Option<i64>>(1)?))
            })
            .ctx(|| format!("reading the common terms of {fts}"))?;
        for row in rows {
            let (term, doc) = row.ctx(|| format!("reading the common terms of {fts}"))?;
            if let Some(doc) = doc {
                found.insert(term, doc);
            }
        }
    }
    let rest: Vec<&String> = terms.iter().filter(|t| !found.contains_key(*t)).collect();
    if !rest.is_empty() {
        let select = format!(
            "SELECT term, doc FROM temp.{vocab} WHERE term IN (SELECT value FROM json_each(?1))"
        );
        let mut stmt = vocabulary_statement(conn, &select, fts)?;
        let json =
            serde_json::to_string(&rest).map_err(|e| crate::StoreError::Corrupt(e.to_string()))?;
        let rows = stmt
            .query_map([json], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?))
            })
            .ctx(|| {
                format!(
                    "reading the document frequencies of {} terms in {fts}",
                    rest.len()
                )
            })?;
        for row in rows {
            let (term, doc) = row.ctx(|| format!("reading the document frequencies in {fts}"))?;
            found.insert(term, doc);
        }
    }
    Ok(terms
        .iter()
        .map(|t| found.get(t).copied().unwrap_or(0).max(0) as u64)
        .collect())
}

/// `select`, a statement over the `fts5vocab` tables, prepared (cached). The vocabulary
/// tables are created once per connection, all three in one batch at the first use (each
/// one on its first use was three failed prepares, three batches and three reads of the
/// temp schema). While the statement is in the cache, no DDL is parsed again.
fn vocabulary_statement<'c>(
    conn: &'c Connection,
    select: &str,
    fts: &str,
) -> Result<rusqlite::CachedStatement<'c>> {
    match conn.prepare_cached(select) {
        Ok(stmt) => Ok(stmt),
        Err(_) => {
            let create: String = FtsTable::ALL
                .iter()
                .chain(&FtsTable::CODE)
                .map(|t| {
                    let (_, fts, vocab) = t.names();
                    format!("CREATE VIRTUAL TABLE IF NOT EXISTS temp.{vocab} USING fts5vocab(main, '{fts}', 'row');")
                })
                .collect();
            conn.execute_batch(&create)
                .ctx(|| "opening the term statistics of the full-text indexes".into())?;
            conn.prepare_cached(select)
                .ctx(|| format!("reading the term statistics of {fts}"))
        }
    }
}

/// Whether `table`'s list of common terms was made from the index as it is now (its
/// averages record is the list's stamp). False for an index that keeps no list.
///
/// Errors: [`crate::StoreError::Sqlite`] when the stamp cannot be read.
pub fn common_terms_current(conn: &Connection, table: FtsTable) -> Result<bool> {
    if !table.lists_common_terms() {
        return Ok(false);
    }
    let (_, fts, _) = table.names();
    conn.prepare_cached(&format!(
        "SELECT EXISTS(SELECT 1 FROM fts_common_terms_stamp
         WHERE fts = '{fts}' AND stamp = coalesce((SELECT block FROM {fts}_data WHERE id = 1), x''))"
    ))
    .and_then(|mut s| s.query_row([], |r| r.get(0)))
    .ctx(|| format!("reading the stamp of the common terms of {fts}"))
}

/// Rows a term must be in to be listed by [`refresh_common_terms`]. A term in fewer is
/// counted by walking its posting list, a few microseconds; the stdlib's symbols index
/// (77,525 rows) has about 900 terms at or above it of its 57,099.
pub const COMMON_TERM_ROWS: u64 = 128;

/// Lists the terms of `table` in at least [`COMMON_TERM_ROWS`] rows, with their document
/// frequencies, in `fts_common_terms` (migration 0014), stamped with the index's averages
/// record; does nothing when the stamp is already the index's, or for an index that keeps
/// no list (see [`FtsTable::lists_common_terms`]). One walk of the whole index: about
/// 40 ms for the stdlib's symbols. A scan calls it in its last transaction, so readers
/// never walk the long posting lists of common terms ([`document_frequencies`]).
///
/// Errors: [`crate::StoreError::Sqlite`] when the index or the list cannot be read or
/// written.
pub fn refresh_common_terms(tx: &Connection, table: FtsTable) -> Result<()> {
    if !table.lists_common_terms() {
        return Ok(());
    }
    if common_terms_current(tx, table)? {
        return Ok(());
    }
    let (_, fts, vocab) = table.names();
    let select = format!(
        "INSERT INTO fts_common_terms(fts, term, doc)
         SELECT '{fts}', term, doc FROM temp.{vocab} WHERE doc >= ?1"
    );
    tx.execute(
        &format!("DELETE FROM fts_common_terms WHERE fts = '{fts}'"),
        [],
    )
    .ctx(|| format!("clearing the common terms of {fts}"))?;
    vocabulary_statement(tx, &select, fts)?
        .execute([COMMON_TERM_ROWS as i64])
        .ctx(|| format!("listing the common terms of {fts}"))?;
    tx.execute(
        &format!(
            "INSERT OR REPLACE INTO fts_common_terms_stamp(fts, stamp, min_doc)
             VALUES ('{fts}', coalesce((SELECT block FROM {fts}_data WHERE id = 1), x''), ?1)"
        ),
        [COMMON_TERM_ROWS as i64],
    )
    .ctx(|| format!("stamping the common terms of {fts}"))?;
    Ok(())
}

/// Leaf pages a write transaction may spend merging the segments of a full-text index
/// ([`merge_segments`], [`merge_levels`]): about 256 KiB written (an FTS5 leaf is `pgsz`,
/// 4,050 bytes), a few milliseconds.
pub const MERGE_PAGES: u32 = 64;

/// Merges the segments (b-trees) of `table` into one, writing at most `pages` leaf pages;
/// a later call goes on where this one stopped, and with one segment it does nothing.
/// Every transaction that writes to an FTS5 table flushes a new segment, and FTS5's own
/// `automerge` (4) leaves up to three per level: 500 memory pages written one at a time
/// left 20, and a search opens every term in every segment (a `loci context` process ran
/// 18% more instructions on them than on one). This is FTS5's `merge` command with a
/// negative page count (<https://sqlite.org/fts5.html#the_merge_command>): all segments
/// are merged, whatever their levels. Runs inside the caller's write transaction.
///
/// Errors: [`crate::StoreError::Sqlite`] when the merge fails.
pub fn merge_segments(conn: &Connection, table: FtsTable, pages: u32) -> Result<()> {
    let (_, fts, _) = table.names();
    conn.prepare_cached(&format!(
        "INSERT INTO {fts}({fts}, rank) VALUES ('merge', ?1)"
    ))
    .and_then(|mut s| s.execute([-i64::from(pages)]))
    .ctx(|| format!("merging the segments of {fts}"))?;
    Ok(())
}

/// Merges the segments of `table` level by level, writing at most `pages` leaf pages: only
/// a level holding `usermerge` segments is merged (FTS5's `merge` command with a positive
/// page count), so each row is rewritten once per level, a logarithmic number of times,
/// and the index keeps one segment per level. What a memory write runs: merging every
/// segment into one on each write ([`merge_segments`]) rewrote the whole index again and
/// again, so a write cost what memory held (15,000 decisions: a third of each write).
/// `usermerge` is 2 for the memory's index (migration 22).
///
/// Errors: [`crate::StoreError::Sqlite`] when the merge fails.
pub fn merge_levels(conn: &Connection, table: FtsTable, pages: u32) -> Result<()> {
    let (_, fts, _) = table.names();
    conn.prepare_cached(&format!(
        "INSERT INTO {fts}({fts}, rank) VALUES ('merge', ?1)"
    ))
    .and_then(|mut s| s.execute([i64::from(pages)]))
    .ctx(|| format!("merging the levels of {fts}"))?;
    Ok(())
}

/// The rows of a full-text index, as the index itself counts them: the first varint of
/// its averages record (`<table>_data` row 1, which FTS5 keeps current on every insert
/// and delete), one page read where `count(*)` of the content table reads all of its
/// smallest index (236 pages for the stdlib's 77,525 symbols: a third of the pages a
/// whole `loci context` process read). Falls back to `count(*)` of the content table when
/// the record is missing or unreadable.
pub fn fts_row_count(conn: &Connection, table: FtsTable) -> Result<u64> {
    use rusqlite::OptionalExtension;
    let (content, fts, _) = table.names();
    let block: Option<Vec<u8>> = conn
        .prepare_cached(&format!("SELECT block FROM {fts}_data WHERE id = 1"))
        .and_then(|mut s| s.query_row([], |r| r.get(0)).optional())
        .ctx(|| format!("reading the row count of {fts}"))?;
    if let Some(n) = block.as_deref().and_then(sqlite_varint) {
        return Ok(n);
    }
    let rows: i64 = conn
        .prepare_cached(&format!("SELECT count(*) FROM {content}"))
        .and_then(|mut s| s.query_row([], |r| r.get(0)))
        .ctx(|| format!("counting the rows of {content}"))?;
    Ok(rows.max(0) as u64)
}

/// The SQLite varint at the start of `bytes` (big-endian groups of 7 bits, the high bit
/// set on every byte but the last; a ninth byte contributes all 8 bits), or `None` when
/// `bytes` ends inside it.
fn sqlite_varint(bytes: &[u8]) -> Option<u64> {
    let mut v: u64 = 0;
    for (i, &b) in bytes.iter().enumerate().take(9) {
        if i == 8 {
            return Some((v << 8) | u64::from(b));
        }
        v = (v << 7) | u64::from(b & 0x7f);
        if b & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

/// Whether `entry` names something retrieval can return: a file of the map, a folder
/// holding one, a symbol key, or the subject of a memory page.
pub fn names_anything(conn: &Connection, entry: &str) -> Result<bool> {
    conn.prepare_cached(
        "SELECT EXISTS(SELECT 1 FROM files WHERE path = ?1 OR (path > ?1 || '/' AND path < ?1 || '0'))
             OR EXISTS(SELECT 1 FROM symbols WHERE key = ?1)
             OR EXISTS(SELECT 1 FROM pages WHERE subject = ?1 OR kind = ?1)",
    )
    .and_then(|mut s| s.query_row([entry], |r| r.get(0)))
    .ctx(|| format!("looking up {entry}"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn text_terms_split_identifiers_as_symbol_terms_do() {
        use super::text_terms;
        assert_eq!(
            text_terms("Call `RotatingFileHandler.doRollover()` only with `Handler.acquire()`"),
            "rotating file handler do rollover rotatingfilehandler dorollover"
        );
        assert_eq!(
            text_terms("uses parse_config and parseConfig"),
            "parseconfig parse config parseconfig"
        );
        assert_eq!(text_terms("plain words, no identifiers."), "");
        assert_eq!(
            text_terms("HTTPConnection"),
            "http connection httpconnection"
        );
    }

    /// The terms of [`text_terms`] as it read every token before its fast path for
    /// ASCII tokens without a capital: the oracle of the test below.
    fn text_terms_general(text: &str) -> String {
        use loci_core::terms::identifier_words;
        let mut out: Vec<String> = Vec::new();
        for token in text.split_whitespace() {
            let mut words: Vec<String> = Vec::new();
            let mut joined: Vec<String> = Vec::new();
            let mut case_split = false;
            for ident in token.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
                let parts = identifier_words(ident);
                if parts.is_empty() {
                    continue;
                }
                let plain = ident
                    .split(|c: char| !c.is_alphanumeric())
                    .filter(|p| !p.is_empty())
                    .count();
                case_split |= parts.len() > plain;
                if parts.len() > 1 {
                    joined.push(parts.concat());
                }
                words.extend(parts);
            }
            if case_split {
                out.append(&mut words);
            }
            out.append(&mut joined);
        }
        out.join(" ")
    }

    /// Every token of up to four characters drawn from lower and upper case letters,
    /// digits, underscores, separators and non-ASCII letters, alone and in a line with
    /// others, gives the terms the general reading gives.
    #[test]
    fn text_terms_fast_path_gives_the_general_terms() {
        let alphabet = ['a', 'B', '1', '_', '.', '(', 'é', 'İ', 'x'];
        let mut line = String::new();
        for a in alphabet {
            for b in alphabet {
                for c in alphabet {
                    for d in ['_', 'y', 'Z', ' '] {
                        let token: String = [a, b, c, d].iter().collect();
                        assert_eq!(text_terms(&token), text_terms_general(&token), "{token:?}");
                        line.push_str(&token);
                        line.push(' ');
                    }
                }
            }
        }
        assert_eq!(text_terms(&line), text_terms_general(&line));
        let code = "def parse_config(self, raw_text):\n    return self._cache.get(raw_text) or HTTPError(__name__)";
        assert_eq!(text_terms(code), text_terms_general(code));
    }

    use super::*;

    #[test]
    fn text_snippet_brackets_the_quoted_tokens_around_the_first_one() {
        let text =
            "Opens the file. Then it parses the Config, and caches parse results for later calls.";
        assert_eq!(
            text_snippet(text, "\"parse\" OR (\"config\" OR \"configs\")", 6),
            "…parses the [Config], and caches [parse]…"
        );
        assert_eq!(
            text_snippet(text, "\"parses\" AND \"nothing\"", 4),
            "…Then it [parses] the…"
        );
        // No quoted token in the text: its first tokens; a quote inside a string.
        assert_eq!(text_snippet(text, "\"zz\"\"q\"", 3), "Opens the file…");
        assert_eq!(text_snippet("", "\"a\"", 3), "");
        assert_eq!(
            text_snippet("café au lait", "\"lait\"", 12),
            "café au [lait]"
        );
    }
}

/// One chunk of a code-text index that matched, with its file.
#[derive(Clone, Debug, PartialEq)]
pub struct MatchedChunk {
    /// `files.file_id`.
    pub file_id: i64,
    /// The file's repo-relative path.
    pub path: String,
    /// Its definition (`symbols.symbol_id`); `None` for module-level code.
    pub symbol_id: Option<i64>,
    /// Zero-based first line.
    pub start_line: u32,
    /// Zero-based last line (inclusive).
    pub end_line: u32,
}

/// The files of the whole-file code-text index `table` matching the FTS5 expression
/// `expr`, best first by BM25 with the path column weighted `path_weight` against the
/// text's 1.0, at most `limit`, each with its path. Files are joined after the top hits
/// are chosen: joining every matched row first costs a lookup each.
///
/// Errors: [`crate::StoreError::Sqlite`] for an invalid expression or an unreadable index.
pub fn files_by_bm25(
    conn: &Connection,
    table: FtsTable,
    expr: &str,
    path_weight: f64,
    limit: u32,
) -> Result<Vec<(i64, String)>> {
    let fts = table.name();
    conn.prepare_cached(&format!(
        "SELECT t.id, f.path FROM (
             SELECT rowid AS id, bm25({fts}, ?3, 1.0) AS score
             FROM {fts} WHERE {fts} MATCH ?1 ORDER BY score LIMIT ?2
         ) t JOIN files f ON f.file_id = t.id ORDER BY t.score"
    ))
    .and_then(|mut st| {
        st.query_map(params![expr, limit, path_weight], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })?
        .collect()
    })
    .ctx(|| format!("searching the code text by file ({fts})"))
}

/// The chunks of the code-text chunk index `table` matching `expr`, best first by BM25 with
/// the path column weighted `path_weight`, at most `limit`, each with its file. Files are
/// joined after the top chunks are chosen.
///
/// Errors: [`crate::StoreError::Sqlite`] for an invalid expression or an unreadable index.
pub fn chunks_by_bm25(
    conn: &Connection,
    table: FtsTable,
    expr: &str,
    path_weight: f64,
    limit: u32,
) -> Result<Vec<MatchedChunk>> {
    let fts = table.name();
    conn.prepare_cached(&format!(
        "SELECT c.file_id, f.path, c.symbol_id, c.start_line, c.end_line FROM (
             SELECT rowid AS id, bm25({fts}, ?3, 1.0) AS score
             FROM {fts} WHERE {fts} MATCH ?1 ORDER BY score LIMIT ?2
         ) t JOIN code_chunks c ON c.chunk_id = t.id
         JOIN files f ON f.file_id = c.file_id ORDER BY t.score"
    ))
    .and_then(|mut st| {
        st.query_map(params![expr, limit, path_weight], |r| {
            Ok(MatchedChunk {
                file_id: r.get(0)?,
                path: r.get(1)?,
                symbol_id: r.get(2)?,
                start_line: r.get(3)?,
                end_line: r.get(4)?,
            })
        })?
        .collect()
    })
    .ctx(|| format!("searching the code text by chunk ({fts})"))
}

/// Whether the row `rowid` of `table` (a file, in a whole-file index) matches `expr`: one
/// indexed lookup.
///
/// Errors: [`crate::StoreError::Sqlite`] for an invalid expression or an unreadable index.
pub fn row_matches(conn: &Connection, table: FtsTable, expr: &str, rowid: i64) -> Result<bool> {
    let fts = table.name();
    conn.prepare_cached(&format!(
        "SELECT EXISTS(SELECT 1 FROM {fts} WHERE {fts} MATCH ?1 AND rowid = ?2)"
    ))
    .and_then(|mut st| st.query_row(params![expr, rowid], |r| r.get(0)))
    .ctx(|| "reading a file's share of the question".into())
}

/// The files of the whole-file index `table` matching `expr`, best BM25 first (all columns
/// weighted 1), at most `limit`, each with its path.
///
/// Errors: [`crate::StoreError::Sqlite`] for an invalid expression or an unreadable index.
pub fn files_matching(
    conn: &Connection,
    table: FtsTable,
    expr: &str,
    limit: u32,
) -> Result<Vec<(i64, String)>> {
    let fts = table.name();
    conn.prepare_cached(&format!(
        "SELECT t.rowid, f.path FROM {fts} t JOIN files f ON f.file_id = t.rowid
         WHERE {fts} MATCH ?1 ORDER BY bm25({fts}) LIMIT ?2"
    ))
    .and_then(|mut st| {
        st.query_map(params![expr, limit], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect()
    })
    .ctx(|| format!("searching {fts}"))
}

/// How many rows of `table` match `expr`, counted up to `at_most` (a count is as dear as
/// the rows it reads).
///
/// Errors: [`crate::StoreError::Sqlite`] for an invalid expression or an unreadable index.
pub fn rows_matching(conn: &Connection, table: FtsTable, expr: &str, at_most: u32) -> Result<u64> {
    let fts = table.name();
    conn.prepare_cached(&format!(
        "SELECT count(*) FROM (SELECT 1 FROM {fts} WHERE {fts} MATCH ?1 LIMIT ?2)"
    ))
    .and_then(|mut st| st.query_row(params![expr, at_most], |r| r.get::<_, i64>(0)))
    .map(|n| n as u64)
    .ctx(|| format!("counting rows of {fts}"))
}

/// Whether any row of `table` matches `expr`.
///
/// Errors: [`crate::StoreError::Sqlite`] for an invalid expression or an unreadable index.
pub fn table_holds(conn: &Connection, table: FtsTable, expr: &str) -> Result<bool> {
    let fts = table.name();
    conn.prepare_cached(&format!(
        "SELECT EXISTS(SELECT 1 FROM {fts} WHERE {fts} MATCH ?1)"
    ))
    .and_then(|mut st| st.query_row([expr], |r| r.get(0)))
    .ctx(|| format!("looking up a name in {fts}"))
}
