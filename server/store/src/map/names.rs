//! Names folded for "did you mean": the folded form of a name, and the names that fold
//! alike, share a prefix or share words.

use super::*;

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
