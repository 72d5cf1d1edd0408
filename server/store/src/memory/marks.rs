//! Stale marks: which current revisions a scan has marked, carrying marks between scans,
//! and storing a scan's marks.

use super::*;

/// The current revisions (by page subject) without stored marks usable now: made from the
/// map of scan `scan_id` (see [`marks_scan`]) by the rules of version `rules`.
///
/// Errors: [`StoreError::Sqlite`] when they cannot be read.
pub fn unmarked_current_revisions(
    conn: &Connection,
    scan_id: i64,
    rules: u32,
) -> Result<Vec<Revision>> {
    // The ids first, from the index of current revisions alone: every lint and scan asks,
    // and the answer is almost always none.
    let ids: Vec<i64> = conn
        .prepare_cached(
            "SELECT p.current_revision_id FROM pages p
              WHERE p.current_revision_id IS NOT NULL
                AND NOT EXISTS (SELECT 1 FROM revision_marks m
                                 WHERE m.revision_id = p.current_revision_id
                                   AND m.scan_id = ?1 AND m.rules = ?2)",
        )
        .and_then(|mut s| {
            s.query_map(params![scan_id, rules], |r| r.get(0))?
                .collect::<rusqlite::Result<_>>()
        })
        .ctx(|| "reading current revisions".into())?;
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let json = serde_json::to_string(&ids).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {REVISION_COLUMNS} FROM pages p JOIN revisions r ON r.revision_id = p.current_revision_id
              WHERE r.revision_id IN (SELECT value FROM json_each(?1))
              ORDER BY p.subject"
        ))
        .ctx(|| "reading current revisions".into())?;
    let rows = stmt
        .query_map([json], revision)
        .ctx(|| "reading current revisions".into())?;
    rows.collect::<rusqlite::Result<_>>()
        .ctx(|| "reading current revisions".into())
}

/// The scan whose map stored revision marks must come from to be used: the last scan,
/// when it finished (`None` while one runs, after one was killed, and before the first).
/// See `0015_revision_marks.sql`.
///
/// Errors: [`StoreError::Sqlite`] when the scans cannot be read.
pub fn marks_scan(conn: &Connection) -> Result<Option<i64>> {
    conn.prepare_cached(
        "SELECT scan_id FROM scans
          WHERE scan_id = (SELECT max(scan_id) FROM scans) AND status = 'finished'",
    )
    .and_then(|mut s| s.query_row([], |r| r.get(0)).optional())
    .ctx(|| "reading the last scan".into())
}

/// The stored marks (JSON) of those of `revision_ids` that have a row usable now: made
/// from the map of [`marks_scan`] by the rules of version `rules`. By revision id.
///
/// Errors: [`StoreError::Sqlite`] when they cannot be read.
pub fn stored_marks(
    conn: &Connection,
    revision_ids: &[i64],
    rules: u32,
) -> Result<std::collections::HashMap<i64, String>> {
    if revision_ids.is_empty() {
        return Ok(Default::default());
    }
    let json =
        serde_json::to_string(revision_ids).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    let mut stmt = conn
        .prepare_cached(
            "SELECT m.revision_id, m.marks FROM revision_marks m
              WHERE m.revision_id IN (SELECT value FROM json_each(?1)) AND m.rules = ?2
                AND m.scan_id = (SELECT scan_id FROM scans
                                  WHERE scan_id = (SELECT max(scan_id) FROM scans)
                                    AND status = 'finished')",
        )
        .ctx(|| "reading stored marks".into())?;
    let rows = stmt
        .query_map(params![json, rules], |r| Ok((r.get(0)?, r.get(1)?)))
        .ctx(|| "reading stored marks".into())?;
    rows.collect::<rusqlite::Result<_>>()
        .ctx(|| "reading stored marks".into())
}

/// The stored marks (JSON) of the current revisions that have something stale, among
/// the rows usable now (see [`stored_marks`]). By revision id; read through the index of
/// stale rows (migration 0024), so it costs what is stale, not what memory holds.
///
/// Errors: [`StoreError::Sqlite`] when they cannot be read.
pub fn stale_current_marks(
    conn: &Connection,
    rules: u32,
) -> Result<std::collections::HashMap<i64, String>> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT m.revision_id, m.marks FROM revision_marks m
               JOIN pages p ON p.current_revision_id = m.revision_id
              WHERE m.marks <> '[]' AND m.rules = ?1
                AND m.scan_id = (SELECT scan_id FROM scans
                                  WHERE scan_id = (SELECT max(scan_id) FROM scans)
                                    AND status = 'finished')",
        )
        .ctx(|| "reading stored marks".into())?;
    let rows = stmt
        .query_map([rules], |r| Ok((r.get(0)?, r.get(1)?)))
        .ctx(|| "reading stored marks".into())?;
    rows.collect::<rusqlite::Result<_>>()
        .ctx(|| "reading stored marks".into())
}

/// Makes the stored marks of scan `from` those of scan `to` (see [`stored_marks`]), but
/// for the revisions `except`: what scan `to` changed cannot have moved the others. The
/// marks made by other rules than `rules` are left as they are (unusable).
///
/// Errors: [`StoreError::Sqlite`] when they cannot be written.
pub fn carry_marks(tx: &Connection, from: i64, to: i64, rules: u32, except: &[i64]) -> Result<()> {
    let json = serde_json::to_string(except).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    tx.execute(
        "UPDATE revision_marks SET scan_id = ?2
          WHERE scan_id = ?1 AND rules = ?3
            AND revision_id NOT IN (SELECT value FROM json_each(?4))",
        params![from, to, rules, json],
    )
    .ctx(|| "carrying stored marks".into())?;
    Ok(())
}

/// The scan before scan `scan_id`, if it finished: the one whose map stored marks were
/// made from until `scan_id` ran.
///
/// Errors: [`StoreError::Sqlite`] when the scans cannot be read.
pub fn finished_scan_before(conn: &Connection, scan_id: i64) -> Result<Option<i64>> {
    conn.prepare_cached(
        "SELECT scan_id FROM scans WHERE scan_id = (SELECT max(scan_id) FROM scans WHERE scan_id < ?1)
            AND status = 'finished'",
    )
    .and_then(|mut s| s.query_row([scan_id], |r| r.get(0)).optional())
    .ctx(|| "reading the previous scan".into())
}

/// Stores the marks (JSON, by revision id) of revisions, made from the map of scan
/// `scan_id` by the rules of version `rules`; with `prune`, the rows no longer usable (of
/// another scan or rules) go first.
///
/// Errors: [`StoreError::Sqlite`] when they cannot be written.
pub fn store_marks(
    tx: &Connection,
    scan_id: i64,
    rules: u32,
    marks: &[(i64, String)],
    prune: bool,
) -> Result<()> {
    if prune {
        tx.execute(
            "DELETE FROM revision_marks WHERE scan_id <> ?1 OR rules <> ?2",
            params![scan_id, rules],
        )
        .ctx(|| "clearing stored marks".into())?;
    }
    let mut stmt = tx
        .prepare_cached(
            "INSERT OR REPLACE INTO revision_marks(revision_id, scan_id, rules, marks)
             VALUES (?1, ?2, ?3, ?4)",
        )
        .ctx(|| "storing marks".into())?;
    for (id, json) in marks {
        stmt.execute(params![id, scan_id, rules, json])
            .ctx(|| format!("storing the marks of revision {id}"))?;
    }
    Ok(())
}
