//! Counts over the map: per file, per language, the map's totals and the totals kept
//! between scans.

use super::*;

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
pub(super) const KEPT_TOTALS: &str = "map_totals";

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
