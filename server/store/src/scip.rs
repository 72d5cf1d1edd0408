//! References a SCIP index states (migration 0029): the documents an import covers, their
//! edges, and the rule that keeps `refs` equal to them while they hold.
//!
//! Rule (one place, [`stale_documents`] + [`drop_documents`] + [`apply`]): an edge holds
//! while the file it is in and the file of its target still have the content hash they had
//! when the index was imported. [`apply`] writes every edge that holds into `refs`
//! (provenance `stated`, confidence 1.0) where a scan re-resolved it by name; a document
//! whose file changed is dropped with its edges and the edges into it, and the `refs` rows
//! the import had added for them are deleted (loci's own analysis has no reference there).

use std::collections::{BTreeSet, HashMap};

use rusqlite::{Connection, OptionalExtension, Transaction, params};
use serde::Serialize;

use crate::map::{self, RefRow};
use crate::{Context, Result};

/// Provenance and confidence of a SCIP edge in `refs`: stated by a compiler's analysis.
pub const PROVENANCE: &str = "stated";
/// See [`PROVENANCE`].
pub const CONFIDENCE: f64 = 1.0;

/// A file an import covers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Document {
    /// `files.file_id`.
    pub file_id: i64,
    /// `files.content_hash` the index was checked against.
    pub content_hash: String,
    /// The indexer, `name version`.
    pub tool: String,
    /// RFC 3339, UTC.
    pub imported_at: String,
}

/// One reference an index states in a covered file.
#[derive(Clone, Debug, PartialEq)]
pub struct Edge {
    /// `files.file_id` of the referencing file (a covered document).
    pub file_id: i64,
    /// Byte range of the identifier.
    pub start_byte: u32,
    /// End of the identifier, exclusive.
    pub end_byte: u32,
    /// Zero-based line.
    pub line: u32,
    /// Zero-based byte column.
    pub column: u32,
    /// The text at the place.
    pub name: String,
    /// As `refs.kind` (`call`, `type`, ...).
    pub kind: String,
    /// `symbols.key` of the definition; `None` when it is outside the map (another crate,
    /// the standard library, a local variable).
    pub target_key: Option<String>,
    /// The covered document holding the definition.
    pub target_file_id: Option<i64>,
    /// Whether the import inserted the `refs` row (loci had no reference there).
    pub added: bool,
}

/// What [`apply`] wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Applied {
    /// `refs` rows whose target was set to the edge's.
    pub updated: u64,
    /// `refs` rows inserted where loci had no reference.
    pub inserted: u64,
    /// Edges whose target key is no longer in the map: dropped.
    pub dropped: u64,
}

/// Whether any document is covered: a scan of a map without SCIP does nothing more.
pub fn has_documents(conn: &Connection) -> Result<bool> {
    conn.prepare_cached("SELECT 1 FROM scip_documents LIMIT 1")
        .and_then(|mut st| st.query_row([], |_| Ok(())).optional())
        .map(|r| r.is_some())
        .ctx(|| "reading scip documents".into())
}

/// Covered files and edges: (files, edges).
pub fn coverage(conn: &Connection) -> Result<(u64, u64)> {
    conn.query_row(
        "SELECT (SELECT count(*) FROM scip_documents), (SELECT count(*) FROM scip_refs)",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
    .ctx(|| "counting scip coverage".into())
}

/// Covered documents whose file's content changed since the import: (file id, path).
pub fn stale_documents(conn: &Connection) -> Result<Vec<(i64, String)>> {
    let mut st = conn
        .prepare_cached(
            "SELECT d.file_id, f.path FROM scip_documents d JOIN files f USING (file_id)
             WHERE f.content_hash <> d.content_hash ORDER BY f.path",
        )
        .ctx(|| "reading stale scip documents".into())?;
    st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .and_then(|rows| rows.collect())
        .ctx(|| "reading stale scip documents".into())
}

/// Drops the coverage of `file_ids`: their documents, their edges and the edges of other
/// documents into them, deleting the `refs` rows those edges had added. Returns the files
/// whose `refs` lost rows (their `ref_deps` must be rewritten).
pub fn drop_documents(tx: &Transaction<'_>, file_ids: &[i64]) -> Result<BTreeSet<i64>> {
    crate::map::forget_totals(tx)?;
    let ctx = || "dropping scip documents".to_string();
    let mut touched = BTreeSet::new();
    let mut added = tx
        .prepare_cached(
            "SELECT file_id, start_byte FROM scip_refs
             WHERE added = 1 AND (file_id = ?1 OR target_file_id = ?1)",
        )
        .ctx(ctx)?;
    let mut delete_ref = tx
        .prepare_cached("DELETE FROM refs WHERE file_id = ?1 AND start_byte = ?2")
        .ctx(ctx)?;
    let mut into = tx
        .prepare_cached("DELETE FROM scip_refs WHERE target_file_id = ?1")
        .ctx(ctx)?;
    let mut doc = tx
        .prepare_cached("DELETE FROM scip_documents WHERE file_id = ?1")
        .ctx(ctx)?;
    for id in file_ids {
        let rows: Vec<(i64, i64)> = added
            .query_map([id], |r| Ok((r.get(0)?, r.get(1)?)))
            .and_then(|rows| rows.collect())
            .ctx(ctx)?;
        for (file, start) in rows {
            if delete_ref.execute(params![file, start]).ctx(ctx)? > 0 {
                touched.insert(file);
            }
        }
        into.execute([id]).ctx(ctx)?;
        // Its own edges go with it (ON DELETE CASCADE).
        doc.execute([id]).ctx(ctx)?;
    }
    Ok(touched)
}

/// Records `docs` as covered with `edges`, replacing what an earlier import stated for
/// them (call [`drop_documents`] on them first).
pub fn insert_documents(tx: &Transaction<'_>, docs: &[Document], edges: &[Edge]) -> Result<()> {
    let ctx = || "recording scip documents".to_string();
    let mut doc = tx
        .prepare_cached(
            "INSERT INTO scip_documents(file_id, content_hash, tool, imported_at)
             VALUES (?1, ?2, ?3, ?4)",
        )
        .ctx(ctx)?;
    for d in docs {
        doc.execute(params![d.file_id, d.content_hash, d.tool, d.imported_at])
            .ctx(ctx)?;
    }
    let mut edge = tx
        .prepare_cached(
            "INSERT INTO scip_refs(file_id, start_byte, end_byte, line, column, name, kind,
                                   target_key, target_file_id, added)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        )
        .ctx(ctx)?;
    for e in edges {
        edge.execute(params![
            e.file_id,
            e.start_byte,
            e.end_byte,
            e.line,
            e.column,
            e.name,
            e.kind,
            e.target_key,
            e.target_file_id,
            e.added
        ])
        .ctx(ctx)?;
    }
    Ok(())
}

/// Makes the `refs` of the covered `file_ids` hold their edges: a row at an edge's place
/// takes its target (provenance [`PROVENANCE`], confidence [`CONFIDENCE`]) unless it has
/// it already; a missing row is inserted (a rewrite under a new analysis version drops the
/// rows an import added); an edge whose target key is gone is dropped. Rewrites the
/// `ref_deps` of every file it changed, and of `also` (files whose rows
/// [`drop_documents`] deleted).
pub fn apply(tx: &Transaction<'_>, file_ids: &[i64], also: &BTreeSet<i64>) -> Result<Applied> {
    crate::map::forget_totals(tx)?;
    let ctx = || "applying scip edges".to_string();
    let mut applied = Applied::default();
    let mut touched: BTreeSet<i64> = also.clone();
    let mut refs_of = tx
        .prepare_cached(
            "SELECT start_byte, ref_id, target_id, provenance, confidence FROM refs
             WHERE file_id = ?1 ORDER BY ref_id",
        )
        .ctx(ctx)?;
    let mut edges_of = tx
        .prepare_cached(
            "SELECT e.start_byte, e.end_byte, e.line, e.column, e.name, e.kind, e.target_key,
                    s.symbol_id, e.added
             FROM scip_refs e LEFT JOIN symbols s ON s.key = e.target_key
             WHERE e.file_id = ?1 ORDER BY e.start_byte",
        )
        .ctx(ctx)?;
    let mut symbols_of = tx
        .prepare_cached(
            "SELECT symbol_id, start_byte, end_byte FROM symbols WHERE file_id = ?1
             ORDER BY start_byte, end_byte DESC",
        )
        .ctx(ctx)?;
    let mut drop_edge = tx
        .prepare_cached("DELETE FROM scip_refs WHERE file_id = ?1 AND start_byte = ?2")
        .ctx(ctx)?;
    let mut delete_ref = tx
        .prepare_cached("DELETE FROM refs WHERE file_id = ?1 AND start_byte = ?2")
        .ctx(ctx)?;
    let mut mark_added = tx
        .prepare_cached("UPDATE scip_refs SET added = 1 WHERE file_id = ?1 AND start_byte = ?2")
        .ctx(ctx)?;
    type Row = (
        u32,
        u32,
        u32,
        u32,
        String,
        String,
        Option<String>,
        Option<i64>,
        bool,
    );
    for &file_id in file_ids {
        // The first reference at a place is the one an edge sets (loci writes at most one
        // per identifier).
        let mut at: HashMap<u32, (i64, Option<i64>, String, f64)> = HashMap::new();
        for row in refs_of
            .query_map([file_id], |r| {
                Ok((r.get(0)?, (r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))
            })
            .ctx(ctx)?
        {
            let (start, rest): (u32, _) = row.ctx(ctx)?;
            at.entry(start).or_insert(rest);
        }
        let edges: Vec<Row> = edges_of
            .query_map([file_id], |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                    r.get(6)?,
                    r.get(7)?,
                    r.get(8)?,
                ))
            })
            .and_then(|rows| rows.collect())
            .ctx(ctx)?;
        let mut symbols: Option<Vec<(i64, u32, u32)>> = None;
        let mut inserts: Vec<(Row, Option<i64>)> = Vec::new();
        for e in edges {
            let (start, _, _, _, _, _, key, symbol, added) = &e;
            if key.is_some() && symbol.is_none() {
                // Its target's file was rewritten (the scan re-resolved loci's own row at
                // the place by name); a row the import added goes with the edge.
                drop_edge.execute(params![file_id, start]).ctx(ctx)?;
                if *added && at.contains_key(start) {
                    delete_ref.execute(params![file_id, start]).ctx(ctx)?;
                    touched.insert(file_id);
                }
                applied.dropped += 1;
                continue;
            }
            match at.get(start) {
                Some((ref_id, target, provenance, confidence)) => {
                    if target != symbol || provenance != PROVENANCE || *confidence != CONFIDENCE {
                        map::set_ref_target(tx, *ref_id, *symbol, PROVENANCE, CONFIDENCE)?;
                        applied.updated += 1;
                        touched.insert(file_id);
                    }
                }
                None => {
                    let symbols = match &mut symbols {
                        Some(s) => s,
                        None => symbols.insert(
                            symbols_of
                                .query_map([file_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                                .and_then(|rows| rows.collect())
                                .ctx(ctx)?,
                        ),
                    };
                    let enclosing = innermost(symbols, *start);
                    mark_added.execute(params![file_id, start]).ctx(ctx)?;
                    inserts.push((e, enclosing));
                }
            }
        }
        if !inserts.is_empty() {
            applied.inserted += inserts.len() as u64;
            touched.insert(file_id);
            map::insert_refs(
                tx,
                file_id,
                inserts.iter().map(
                    |((start, end, line, column, name, kind, _, symbol, _), enclosing)| RefRow {
                        name,
                        kind: static_kind(kind),
                        receiver: None,
                        receiver_name: None,
                        line: *line,
                        column: *column,
                        start_byte: *start,
                        end_byte: *end,
                        enclosing_id: *enclosing,
                        target_id: *symbol,
                        provenance: PROVENANCE,
                        confidence: CONFIDENCE,
                    },
                ),
            )?;
        }
    }
    let touched: Vec<i64> = touched.into_iter().collect();
    map::replace_ref_deps(tx, &touched)?;
    Ok(applied)
}

/// The kinds an edge can have, as `refs.kind` holds them (`RefRow::kind` is static).
fn static_kind(kind: &str) -> &'static str {
    match kind {
        "call" => "call",
        "macro" => "macro",
        "type" => "type",
        "inherit" => "inherit",
        "import" => "import",
        _ => "other",
    }
}

/// The innermost of `symbols` (id, start, end; by start, the longest first) holding
/// `byte`.
fn innermost(symbols: &[(i64, u32, u32)], byte: u32) -> Option<i64> {
    symbols
        .iter()
        .take_while(|(_, start, _)| *start <= byte)
        .filter(|(_, _, end)| byte < *end)
        .last()
        .map(|(id, ..)| *id)
}

/// The paths of the covered documents and their edges' count, by path.
pub fn documents(conn: &Connection) -> Result<Vec<(String, u64)>> {
    let mut st = conn
        .prepare_cached(
            "SELECT f.path, (SELECT count(*) FROM scip_refs e WHERE e.file_id = d.file_id)
             FROM scip_documents d JOIN files f USING (file_id) ORDER BY f.path",
        )
        .ctx(|| "reading scip documents".into())?;
    st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .and_then(|rows| rows.collect())
        .ctx(|| "reading scip documents".into())
}

/// The ids of the covered documents.
pub fn document_ids(conn: &Connection) -> Result<Vec<i64>> {
    conn.prepare_cached("SELECT file_id FROM scip_documents ORDER BY file_id")
        .and_then(|mut st| st.query_map([], |r| r.get(0))?.collect())
        .ctx(|| "reading scip documents".into())
}

/// A mapped file's id and content hash, by repo-relative path.
pub fn file(conn: &Connection, path: &str) -> Result<Option<(i64, String)>> {
    conn.prepare_cached("SELECT file_id, content_hash FROM files WHERE path = ?1")
        .and_then(|mut st| {
            st.query_row([path], |r| Ok((r.get(0)?, r.get(1)?)))
                .optional()
        })
        .ctx(|| format!("reading the file {path}"))
}

/// A symbol by where its name starts: (zero-based line, byte column) → (id, key, kind).
pub type SymbolsByPlace = HashMap<(u32, u32), (i64, String, String)>;

/// A file's symbols by where their name starts. Of two symbols named at one place (rare),
/// the first.
pub fn symbols_by_name_place(conn: &Connection, file_id: i64) -> Result<SymbolsByPlace> {
    let mut st = conn
        .prepare_cached(
            "SELECT name_line, name_column, symbol_id, key, kind FROM symbols
             WHERE file_id = ?1 ORDER BY symbol_id",
        )
        .ctx(|| "reading symbols".into())?;
    let mut out = HashMap::new();
    for row in st
        .query_map([file_id], |r| {
            Ok(((r.get(0)?, r.get(1)?), (r.get(2)?, r.get(3)?, r.get(4)?)))
        })
        .ctx(|| "reading symbols".into())?
    {
        let (place, symbol) = row.ctx(|| "reading symbols".into())?;
        out.entry(place).or_insert(symbol);
    }
    Ok(out)
}

/// A file's own references by their first byte (not those an import added): kind and
/// target id. Of two at one place, the first (as [`apply`] sets).
pub fn refs_by_place(
    conn: &Connection,
    file_id: i64,
) -> Result<HashMap<u32, (String, Option<i64>)>> {
    let mut st = conn
        .prepare_cached(
            "SELECT start_byte, kind, target_id FROM refs r WHERE file_id = ?1
               AND NOT EXISTS (SELECT 1 FROM scip_refs x WHERE x.file_id = r.file_id
                                 AND x.start_byte = r.start_byte AND x.added = 1)
             ORDER BY ref_id",
        )
        .ctx(|| "reading refs".into())?;
    let mut out = HashMap::new();
    for row in st
        .query_map([file_id], |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?))))
        .ctx(|| "reading refs".into())?
    {
        let (start, rest) = row.ctx(|| "reading refs".into())?;
        out.entry(start).or_insert(rest);
    }
    Ok(out)
}
