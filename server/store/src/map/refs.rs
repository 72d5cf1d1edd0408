//! References: writing a file's references and their targets, the per-pair summary
//! `ref_deps`, and the lookups by name, symbol and target.

use super::*;

/// The rows of `ref_deps` (migration 0018) from the references that `filter` keeps (an
/// SQL condition on `refs r`): per (file, file of the target), the strongest reference of
/// kind call, macro, type or inherit resolved into another file, and how many there are.
pub(super) fn ref_deps_insert_sql(filter: &str) -> String {
    format!(
        "INSERT INTO ref_deps(from_file_id, to_file_id, kind, line, provenance, confidence, count)
         SELECT from_id, to_id, kind, line, provenance, confidence, n FROM (
             SELECT r.file_id AS from_id, s.file_id AS to_id, r.kind, r.line, r.provenance,
                    r.confidence, count(*) OVER w AS n,
                    row_number() OVER (w ORDER BY r.provenance = 'stated' DESC,
                                                  r.confidence DESC, r.line, r.column) AS k
             FROM refs r JOIN symbols s ON s.symbol_id = r.target_id
             WHERE {filter} AND r.kind IN ('call', 'macro', 'type', 'inherit')
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
pub(super) const REF_ROWS_PER_INSERT: [usize; 4] = [64, 16, 4, 1];

/// Columns of a `refs` row as [`insert_refs`] binds them.
pub(super) const REF_INSERT_COLUMNS: usize = 13;

/// The `INSERT` statement for `rows` reference rows.
pub(super) fn ref_insert_sql(rows: usize) -> String {
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

pub(super) fn ref_hit(r: &rusqlite::Row<'_>) -> rusqlite::Result<RefHit> {
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

pub(super) const REF_COLUMNS: &str = "f.path, r.line, r.column, r.name, r.kind, e.key, t.key,
    r.provenance, r.confidence,
    CASE WHEN r.provenance = 'stated' AND r.confidence = 1.0 AND EXISTS (
        SELECT 1 FROM scip_refs x WHERE x.file_id = r.file_id AND x.start_byte = r.start_byte)
    THEN 'scip' END";

/// `refs r` with its file `f`, enclosing symbol `e` and target `t`.
pub(super) const REF_FROM: &str = "refs r JOIN files f ON f.file_id = r.file_id
    LEFT JOIN symbols e ON e.symbol_id = r.enclosing_id
    LEFT JOIN symbols t ON t.symbol_id = r.target_id";

/// The rows of [`refs_by_name`]: references written `?1`.
pub(super) const REFS_NAMED: &str = "r.name = ?1";

/// The rows of [`refs_on`]: references written `?1` resolved to a symbol keyed in the JSON
/// array `?2`, or written on a receiver whose last segment is `?3` and unresolved (any
/// resolution when `?2` is empty).
pub(super) const REFS_ON: &str = "r.name = ?1
      AND (t.key IN (SELECT value FROM json_each(?2))
           OR ((r.target_id IS NULL OR ?2 = '[]')
               AND (r.receiver_name = ?3 OR r.receiver_name GLOB '*.' || ?3)))";

/// The rows of [`refs_to`]: references resolved to a symbol keyed in the JSON array `?1`,
/// of kind `?2` (any kind when NULL).
pub(super) const REFS_TO: &str = "r.target_id IN (SELECT symbol_id FROM symbols
                          WHERE key IN (SELECT value FROM json_each(?1)))
      AND (?2 IS NULL OR r.kind = ?2)";

/// The rows of [`calls_to`]: calls resolved to a symbol keyed in the JSON array `?1`,
/// at confidence `?2` or more.
pub(super) const CALLS_TO: &str = "r.target_id IN (SELECT symbol_id FROM symbols
                          WHERE key IN (SELECT value FROM json_each(?1)))
      AND r.kind IN ('call', 'macro') AND r.confidence >= ?2";

/// The order of a reference listing: by place.
pub(super) const BY_PLACE: &str = "f.path, r.line, r.column";

/// The order of an edge listing ([`calls_to`]): the surest first, then by place.
pub(super) const BY_CONFIDENCE: &str = "r.confidence DESC, f.path, r.line, r.column";

/// Rows of a reference listing: `{REF_COLUMNS}` of the references that `filter` (a
/// `REFS_*` constant) keeps, ordered by place ([`BY_PLACE`]), at most `limit`. `params`
/// are the filter's, then the limit.
pub(super) fn ref_rows(
    conn: &Connection,
    filter: &str,
    params: &[&dyn rusqlite::ToSql],
) -> rusqlite::Result<Vec<RefHit>> {
    ref_rows_ordered(conn, filter, BY_PLACE, params)
}

/// [`ref_rows`] in the `order` given (an SQL `ORDER BY` list).
pub(super) fn ref_rows_ordered(
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

pub(super) fn keys_json(keys: &[&str]) -> Result<String> {
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

/// Whether some reference reads or calls `name` on a module its file imports
/// (`crypt.METHOD_BLOWFISH`, `refs.receiver = 'imported'`), on the module written
/// `module` (`crypt`) when one is given: a name that module provides, even where it
/// builds the name at run time.
pub fn read_on_a_module(conn: &Connection, name: &str, module: Option<&str>) -> Result<bool> {
    conn.prepare_cached(
        "SELECT EXISTS(SELECT 1 FROM refs WHERE name = ?1 AND receiver = 'imported'
                       AND (?2 IS NULL OR receiver_name = ?2))",
    )
    .and_then(|mut stmt| stmt.query_row(params![name, module], |r| r.get(0)))
    .ctx(|| format!("finding reads of {name} on a module"))
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
/// value returned by a helper outside the map). Counted by file (path, calls), by path.
pub fn untyped_calls_by_file(
    conn: &Connection,
    name: &str,
    keys: &[&str],
    min_confidence: f64,
) -> Result<Vec<(String, u64)>> {
    let json = keys_json(keys)?;
    conn.prepare_cached(
        "SELECT f.path, count(*) FROM refs r JOIN files f ON f.file_id = r.file_id
         WHERE r.name = ?1 AND r.kind = 'call' AND r.receiver IN ('other', 'typed')
           AND (r.target_id IS NULL
                OR (r.confidence < ?3
                    AND r.target_id NOT IN (SELECT symbol_id FROM symbols
                                            WHERE key IN (SELECT value FROM json_each(?2)))))
         GROUP BY f.path ORDER BY f.path",
    )
    .and_then(|mut stmt| {
        stmt.query_map(params![name, json, min_confidence], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? as u64))
        })?
        .collect()
    })
    .ctx(|| format!("counting calls of {name} on values of unknown type"))
}
