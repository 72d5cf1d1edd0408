//! Files the map leaves out (and why), files it read in a degraded way, and the drift
//! entries a scan records.

use super::*;

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
pub(super) fn skipped_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<SkippedFile> {
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

/// Every degraded file (its analysis incomplete: `files.degraded` set) as `(path, why)`,
/// by path.
///
/// Errors: [`StoreError::Sqlite`] when the files cannot be read.
pub fn all_degraded_files(conn: &Connection) -> Result<Vec<(String, String)>> {
    let ctx = || "reading degraded files".to_string();
    let mut stmt = conn
        .prepare_cached("SELECT path, degraded FROM files WHERE degraded IS NOT NULL ORDER BY path")
        .ctx(ctx)?;
    let rows = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .ctx(ctx)?
        .collect::<rusqlite::Result<_>>()
        .ctx(ctx)?;
    Ok(rows)
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
