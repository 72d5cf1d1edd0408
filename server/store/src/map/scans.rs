//! The scans: one row per scan revision, from its start to its end (finished, or
//! interrupted when a later scan found it still running).

use std::collections::HashSet;

use super::*;

/// A finished scan's row, as [`last_finished_scan`] reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FinishedScan {
    /// The scan revision.
    pub scan_id: i64,
    /// When it finished (RFC 3339, UTC).
    pub finished_at: Option<String>,
    /// Files in the map after it.
    pub files: u64,
    /// Symbols in the map after it.
    pub symbols: u64,
}

/// The newest scan that finished, or `None` before the first.
///
/// Errors: [`StoreError::Sqlite`] when the scans cannot be read.
pub fn last_finished_scan(conn: &Connection) -> Result<Option<FinishedScan>> {
    conn.prepare_cached(
        "SELECT scan_id, finished_at, files, symbols FROM scans
         WHERE status = 'finished' ORDER BY scan_id DESC LIMIT 1",
    )
    .and_then(|mut st| {
        st.query_row([], |r| {
            Ok(FinishedScan {
                scan_id: r.get(0)?,
                finished_at: r.get(1)?,
                files: r.get(2)?,
                symbols: r.get(3)?,
            })
        })
        .optional()
    })
    .ctx(|| "reading the last scan".into())
}

/// The id of the newest finished scan, `None` before the first.
///
/// Errors: [`StoreError::Sqlite`] when the scans cannot be read.
pub fn last_finished_scan_id(conn: &Connection) -> Result<Option<i64>> {
    conn.prepare_cached("SELECT max(scan_id) FROM scans WHERE status = 'finished'")
        .and_then(|mut st| st.query_row([], |r| r.get(0)))
        .ctx(|| "reading the last scan".into())
}

/// The scan revision of the map: the id of the newest finished scan, 0 before the first.
///
/// Errors: [`StoreError::Sqlite`] when the scans cannot be read.
pub fn scan_revision(conn: &Connection) -> Result<i64> {
    conn.prepare_cached("SELECT ifnull(max(scan_id), 0) FROM scans WHERE status = 'finished'")
        .and_then(|mut st| st.query_row([], |r| r.get(0)))
        .ctx(|| "reading the scan revision".into())
}

/// The id of the newest scan, finished or not, 0 before the first: it moves when any scan
/// starts.
///
/// Errors: [`StoreError::Sqlite`] when the scans cannot be read.
pub fn newest_scan_id(conn: &Connection) -> Result<i64> {
    conn.prepare_cached("SELECT ifnull(max(scan_id), 0) FROM scans")
        .and_then(|mut st| st.query_row([], |r| r.get(0)))
        .ctx(|| "reading the scan revision".into())
}

/// Whether any scan has finished on this database.
///
/// Errors: [`StoreError::Sqlite`] when the scans cannot be read.
pub fn any_scan_finished(conn: &Connection) -> Result<bool> {
    conn.prepare_cached("SELECT EXISTS(SELECT 1 FROM scans WHERE status = 'finished')")
        .and_then(|mut st| st.query_row([], |r| r.get(0)))
        .ctx(|| "reading the last scan".into())
}

/// When the newest scan still `running` after scan `after` started (its `started_at`),
/// if there is one: killed, or running now in another process.
///
/// Errors: [`StoreError::Sqlite`] when the scans cannot be read.
pub fn unfinished_scan_after(conn: &Connection, after: i64) -> Result<Option<String>> {
    conn.prepare_cached(
        "SELECT started_at FROM scans WHERE status = 'running' AND scan_id > ?1
         ORDER BY scan_id DESC LIMIT 1",
    )
    .and_then(|mut st| st.query_row([after], |r| r.get(0)).optional())
    .ctx(|| "reading unfinished scans".into())
}

/// The ids of the scans still marked `running` (killed, or running elsewhere).
///
/// Errors: [`StoreError::Sqlite`] when the scans cannot be read.
pub fn running_scans(conn: &Connection) -> Result<HashSet<i64>> {
    let ctx = || "reading interrupted scans".to_string();
    let mut stmt = conn
        .prepare_cached("SELECT scan_id FROM scans WHERE status = 'running'")
        .ctx(ctx)?;
    let ids = stmt
        .query_map([], |r| r.get(0))
        .ctx(ctx)?
        .collect::<rusqlite::Result<_>>()
        .ctx(ctx)?;
    Ok(ids)
}

/// Records a scan's start (now, UTC, to the millisecond) and returns its id: the scan
/// revision it will be once finished.
///
/// Errors: [`StoreError::Sqlite`] when the row cannot be written.
pub fn begin_scan(tx: &Transaction<'_>) -> Result<i64> {
    tx.execute(
        "INSERT INTO scans(started_at) VALUES (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))",
        [],
    )
    .ctx(|| "recording the scan".into())?;
    Ok(tx.last_insert_rowid())
}

/// Marks scan `scan_id` `interrupted` if it is still `running`.
///
/// Errors: [`StoreError::Sqlite`] when the row cannot be written.
pub fn close_interrupted_scan(tx: &Transaction<'_>, scan_id: i64) -> Result<()> {
    tx.execute(
        "UPDATE scans SET status = 'interrupted' WHERE scan_id = ?1 AND status = 'running'",
        [scan_id],
    )
    .ctx(|| "closing interrupted scans".into())?;
    Ok(())
}

/// What a finished scan records in its row: counts of files by what happened to them,
/// its duration and the map's totals after it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScanOutcome {
    /// Files added.
    pub added: u64,
    /// Files modified.
    pub modified: u64,
    /// Files deleted.
    pub deleted: u64,
    /// Files renamed.
    pub renamed: u64,
    /// Files unchanged.
    pub unchanged: u64,
    /// Files skipped.
    pub skipped: u64,
    /// Wall time, in milliseconds.
    pub duration_ms: u64,
    /// Files in the map.
    pub files: u64,
    /// Symbols in the map.
    pub symbols: u64,
}

/// Marks scan `scan_id` `finished` now (UTC, to the millisecond), with its [`ScanOutcome`].
///
/// Errors: [`StoreError::Sqlite`] when the row cannot be written.
pub fn finish_scan(tx: &Transaction<'_>, scan_id: i64, o: &ScanOutcome) -> Result<()> {
    tx.execute(
        "UPDATE scans SET finished_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now'),
            status = 'finished', added = ?2, modified = ?3, deleted = ?4, renamed = ?5, unchanged = ?6,
            skipped = ?7, duration_ms = ?8, files = ?9, symbols = ?10
         WHERE scan_id = ?1",
        params![
            scan_id,
            o.added,
            o.modified,
            o.deleted,
            o.renamed,
            o.unchanged,
            o.skipped,
            o.duration_ms,
            o.files,
            o.symbols
        ],
    )
    .ctx(|| "finishing the scan".into())?;
    Ok(())
}
