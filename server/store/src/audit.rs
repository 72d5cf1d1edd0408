//! Typed queries over the audit: contradictions, stale marks, the drift ledger and the
//! per-scan knowledge changes.

use rusqlite::{Connection, OptionalExtension, Row, Transaction, params};
use serde::Serialize;

use crate::{Context, Result};

/// A contradiction row.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Contradiction {
    /// Id (what `loci resolve ID` takes).
    pub contradiction_id: i64,
    /// Identity across lint runs: origin, subject, kind and target.
    pub finding_key: String,
    /// `page` (memory) or `doc` (a repository document).
    pub origin: String,
    /// Page subject or doc path.
    pub subject: String,
    /// For page claims, the revision checked.
    pub revision_id: Option<i64>,
    /// `missing_path`, `missing_symbol`, `version_mismatch`.
    pub kind: String,
    /// `high`, `medium`, `low`.
    pub severity: String,
    /// The claim as written.
    pub claim: String,
    /// Its normalized target.
    pub target: String,
    /// What the code says instead.
    pub truth: Option<String>,
    /// A fix, such as the path it was renamed to.
    pub suggestion: Option<String>,
    /// Zero-based line (in the doc, or in the revision body).
    pub line: u32,
    /// Zero-based byte column.
    pub column: u32,
    /// Zero-based byte column where the claim ends.
    pub end_column: u32,
    /// `open`, `resolved` (auto), `dismissed` (human).
    pub status: String,
    /// `auto` or `human`, once not open.
    pub resolution_kind: Option<String>,
    /// The human's notes on dismissal.
    pub notes: Option<String>,
    /// RFC 3339.
    pub detected_at: String,
    /// RFC 3339.
    pub resolved_at: Option<String>,
    /// How many times it recurred after being auto-resolved.
    pub reopened: i64,
}

const COLUMNS: &str = "contradiction_id, finding_key, origin, subject, revision_id, kind, severity,
    claim, target, truth, suggestion, line, column, end_column, status, resolution_kind, notes,
    detected_at, resolved_at, reopened";

fn contradiction(r: &Row<'_>) -> rusqlite::Result<Contradiction> {
    Ok(Contradiction {
        contradiction_id: r.get(0)?,
        finding_key: r.get(1)?,
        origin: r.get(2)?,
        subject: r.get(3)?,
        revision_id: r.get(4)?,
        kind: r.get(5)?,
        severity: r.get(6)?,
        claim: r.get(7)?,
        target: r.get(8)?,
        truth: r.get(9)?,
        suggestion: r.get(10)?,
        line: r.get(11)?,
        column: r.get(12)?,
        end_column: r.get(13)?,
        status: r.get(14)?,
        resolution_kind: r.get(15)?,
        notes: r.get(16)?,
        detected_at: r.get(17)?,
        resolved_at: r.get(18)?,
        reopened: r.get(19)?,
    })
}

/// Contradictions with the given status (all when `None`), by subject, line, id.
pub fn contradictions(conn: &Connection, status: Option<&str>) -> Result<Vec<Contradiction>> {
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {COLUMNS} FROM contradictions WHERE ?1 IS NULL OR status = ?1
             ORDER BY subject, line, column, contradiction_id"
        ))
        .ctx(|| "reading contradictions".into())?;
    let rows = stmt
        .query_map([status], contradiction)
        .ctx(|| "reading contradictions".into())?;
    rows.collect::<rusqlite::Result<_>>()
        .ctx(|| "reading contradictions".into())
}

/// The open contradictions of one origin (`page` or `doc`) and subject (a page's subject
/// or a doc's path), by line, column, id: what an answer serving that memory or doc must
/// say is false about it.
pub fn open_contradictions_of(
    conn: &Connection,
    origin: &str,
    subject: &str,
) -> Result<Vec<Contradiction>> {
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {COLUMNS} FROM contradictions
              WHERE status = 'open' AND origin = ?1 AND subject = ?2
             ORDER BY line, column, contradiction_id"
        ))
        .ctx(|| format!("reading the open contradictions of `{subject}`"))?;
    let rows = stmt
        .query_map([origin, subject], contradiction)
        .ctx(|| format!("reading the open contradictions of `{subject}`"))?;
    rows.collect::<rusqlite::Result<_>>()
        .ctx(|| format!("reading the open contradictions of `{subject}`"))
}

/// A contradiction by id.
pub fn contradiction_by_id(conn: &Connection, id: i64) -> Result<Option<Contradiction>> {
    conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM contradictions WHERE contradiction_id = ?1"
    ))
    .ctx(|| "reading a contradiction".into())?
    .query_row([id], contradiction)
    .optional()
    .ctx(|| "reading a contradiction".into())
}

/// The contradiction with this finding key, if any.
pub fn contradiction_by_key(conn: &Connection, key: &str) -> Result<Option<Contradiction>> {
    conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM contradictions WHERE finding_key = ?1"
    ))
    .ctx(|| "reading a contradiction".into())?
    .query_row([key], contradiction)
    .optional()
    .ctx(|| "reading a contradiction".into())
}

/// Records a human dismissal made elsewhere (an import): the finding is stored dismissed,
/// so the lint that finds it here suppresses it. `resolved_at` is when it was dismissed.
pub fn insert_dismissed(
    tx: &Transaction<'_>,
    f: &NewFinding,
    notes: Option<&str>,
    resolved_at: &str,
) -> Result<i64> {
    tx.prepare_cached(
        "INSERT INTO contradictions(finding_key, origin, subject, revision_id, kind, severity,
            claim, target, truth, suggestion, line, column, end_column, status, resolution_kind,
            notes, resolved_at)
         VALUES (?1, ?2, ?3, NULL, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, 'dismissed', 'human', ?13, ?14)",
    )
    .ctx(|| "recording a dismissal".into())?
    .execute(params![
        f.finding_key, f.origin, f.subject, f.kind, f.severity, f.claim, f.target, f.truth,
        f.suggestion, f.line, f.column, f.end_column, notes, resolved_at
    ])
    .ctx(|| "recording a dismissal".into())?;
    Ok(tx.last_insert_rowid())
}

/// A finding as lint produces it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NewFinding {
    /// Identity across runs.
    pub finding_key: String,
    /// `page` or `doc`.
    pub origin: &'static str,
    /// Page subject or doc path.
    pub subject: String,
    /// For page claims.
    pub revision_id: Option<i64>,
    /// Kind.
    pub kind: &'static str,
    /// Severity.
    pub severity: &'static str,
    /// As written.
    pub claim: String,
    /// Normalized target.
    pub target: String,
    /// What the code says.
    pub truth: Option<String>,
    /// A fix.
    pub suggestion: Option<String>,
    /// Zero-based line.
    pub line: u32,
    /// Zero-based byte column.
    pub column: u32,
    /// End byte column.
    pub end_column: u32,
}

/// What recording a finding did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recorded {
    /// A new open contradiction.
    Opened,
    /// It was auto-resolved before and fails again (a regression).
    Recurred,
    /// Already open; its details were refreshed.
    StillOpen,
    /// A human dismissed it: suppressed.
    Suppressed,
}

/// Records a failing check: opens, reopens, refreshes or suppresses.
pub fn record_finding(
    tx: &Transaction<'_>,
    f: &NewFinding,
    scan_id: i64,
) -> Result<(i64, Recorded)> {
    let existing: Option<(i64, String)> = tx
        .prepare_cached(
            "SELECT contradiction_id, status FROM contradictions WHERE finding_key = ?1",
        )
        .ctx(|| "reading a contradiction".into())?
        .query_row([&f.finding_key], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()
        .ctx(|| "reading a contradiction".into())?;
    let refresh = |id: i64, reopen: bool| -> Result<()> {
        tx.prepare_cached(
            "UPDATE contradictions SET revision_id = ?2, claim = ?3, truth = ?4, suggestion = ?5,
                line = ?6, column = ?7, end_column = ?8, severity = ?9,
                status = 'open', resolution_kind = NULL, resolved_at = NULL,
                reopened = reopened + ?10, scan_id = CASE WHEN ?10 = 1 THEN ?11 ELSE scan_id END
             WHERE contradiction_id = ?1",
        )
        .ctx(|| "updating a contradiction".into())?
        .execute(params![
            id,
            f.revision_id,
            f.claim,
            f.truth,
            f.suggestion,
            f.line,
            f.column,
            f.end_column,
            f.severity,
            reopen as i64,
            scan_id
        ])
        .ctx(|| "updating a contradiction".into())?;
        Ok(())
    };
    match existing {
        Some((id, status)) if status == "dismissed" => Ok((id, Recorded::Suppressed)),
        Some((id, status)) if status == "open" => {
            refresh(id, false)?;
            Ok((id, Recorded::StillOpen))
        }
        Some((id, _)) => {
            refresh(id, true)?;
            Ok((id, Recorded::Recurred))
        }
        None => {
            tx.prepare_cached(
                "INSERT INTO contradictions(finding_key, origin, subject, revision_id, kind, severity,
                    claim, target, truth, suggestion, line, column, end_column, status, scan_id)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, 'open', ?14)",
            )
            .ctx(|| "recording a contradiction".into())?
            .execute(params![
                f.finding_key, f.origin, f.subject, f.revision_id, f.kind, f.severity, f.claim,
                f.target, f.truth, f.suggestion, f.line, f.column, f.end_column, scan_id
            ])
            .ctx(|| "recording a contradiction".into())?;
            Ok((tx.last_insert_rowid(), Recorded::Opened))
        }
    }
}

/// Marks a contradiction resolved (`auto`: the check passes again) or dismissed
/// (`human`: suppressed permanently).
pub fn close(
    tx: &Transaction<'_>,
    id: i64,
    human: bool,
    notes: Option<&str>,
    scan_id: Option<i64>,
) -> Result<()> {
    tx.prepare_cached(
        "UPDATE contradictions SET status = ?2, resolution_kind = ?3, notes = ifnull(?4, notes),
            resolved_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), scan_id = ifnull(?5, scan_id)
         WHERE contradiction_id = ?1",
    )
    .ctx(|| "closing a contradiction".into())?
    .execute(params![
        id,
        if human { "dismissed" } else { "resolved" },
        if human { "human" } else { "auto" },
        notes,
        scan_id
    ])
    .ctx(|| "closing a contradiction".into())?;
    Ok(())
}

/// A stale mark as stored by the last audit.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StaleMark {
    /// `revision:claim` or `revision:page`.
    pub mark_key: String,
    /// Page subject.
    pub subject: String,
    /// Revision.
    pub revision_id: i64,
    /// Claim, if the mark is about one.
    pub claim_id: Option<i64>,
    /// JSON of the reason.
    pub reason: String,
}

/// Every stored stale mark.
pub fn stale_marks(conn: &Connection) -> Result<Vec<StaleMark>> {
    let mut stmt = conn
        .prepare_cached("SELECT mark_key, subject, revision_id, claim_id, reason FROM stale_marks ORDER BY mark_key")
        .ctx(|| "reading stale marks".into())?;
    let rows = stmt
        .query_map([], |r| {
            Ok(StaleMark {
                mark_key: r.get(0)?,
                subject: r.get(1)?,
                revision_id: r.get(2)?,
                claim_id: r.get(3)?,
                reason: r.get(4)?,
            })
        })
        .ctx(|| "reading stale marks".into())?;
    rows.collect::<rusqlite::Result<_>>()
        .ctx(|| "reading stale marks".into())
}

/// Replaces the stored stale marks.
pub fn replace_stale_marks(tx: &Transaction<'_>, marks: &[StaleMark], scan_id: i64) -> Result<()> {
    tx.execute("DELETE FROM stale_marks", [])
        .ctx(|| "clearing stale marks".into())?;
    let mut stmt = tx
        .prepare_cached("INSERT INTO stale_marks(mark_key, subject, revision_id, claim_id, reason, since_scan) VALUES (?1, ?2, ?3, ?4, ?5, ?6)")
        .ctx(|| "writing stale marks".into())?;
    for m in marks {
        stmt.execute(params![
            m.mark_key,
            m.subject,
            m.revision_id,
            m.claim_id,
            m.reason,
            scan_id
        ])
        .ctx(|| "writing stale marks".into())?;
    }
    Ok(())
}

/// Records one change in the knowledge at a scan revision.
pub fn insert_knowledge_change(
    tx: &Transaction<'_>,
    scan_id: i64,
    change: &str,
    subject: &str,
    detail: &str,
) -> Result<()> {
    tx.prepare_cached(
        "INSERT INTO knowledge_changes(scan_id, change, subject, detail) VALUES (?1, ?2, ?3, ?4)",
    )
    .ctx(|| "recording a knowledge change".into())?
    .execute(params![scan_id, change, subject, detail])
    .ctx(|| "recording a knowledge change".into())?;
    Ok(())
}

/// A drift ledger entry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DriftRow {
    /// Id.
    pub drift_id: i64,
    /// Scan revision that observed it.
    pub scan_id: i64,
    /// The file.
    pub path: String,
    /// `add`, `modify`, `delete`, `rename`, `signature_change`.
    pub kind: String,
    /// Before.
    pub old_hash: Option<String>,
    /// After.
    pub new_hash: Option<String>,
    /// Renamed-from path or symbol key.
    pub detail: Option<String>,
    /// `scan` or `overlay`.
    pub source: String,
    /// RFC 3339.
    pub at: String,
}

/// Drift entries with `scan_id > since`, oldest first.
pub fn drift_since(conn: &Connection, since: i64) -> Result<Vec<DriftRow>> {
    let mut stmt = conn
        .prepare_cached("SELECT drift_id, scan_id, path, kind, old_hash, new_hash, detail, source, at FROM drift WHERE scan_id > ?1 ORDER BY drift_id")
        .ctx(|| "reading drift".into())?;
    let rows = stmt
        .query_map([since], |r| {
            Ok(DriftRow {
                drift_id: r.get(0)?,
                scan_id: r.get(1)?,
                path: r.get(2)?,
                kind: r.get(3)?,
                old_hash: r.get(4)?,
                new_hash: r.get(5)?,
                detail: r.get(6)?,
                source: r.get(7)?,
                at: r.get(8)?,
            })
        })
        .ctx(|| "reading drift".into())?;
    rows.collect::<rusqlite::Result<_>>()
        .ctx(|| "reading drift".into())
}

/// A change in the knowledge.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct KnowledgeChange {
    /// Scan revision.
    pub scan_id: i64,
    /// `became_stale`, `no_longer_stale`, `became_false`, `no_longer_false`, `recurred`.
    pub change: String,
    /// Page subject or doc path.
    pub subject: String,
    /// In words.
    pub detail: String,
}

/// Knowledge changes with `scan_id > since`, oldest first.
pub fn knowledge_changes_since(conn: &Connection, since: i64) -> Result<Vec<KnowledgeChange>> {
    let mut stmt = conn
        .prepare_cached("SELECT scan_id, change, subject, detail FROM knowledge_changes WHERE scan_id > ?1 ORDER BY change_id")
        .ctx(|| "reading knowledge changes".into())?;
    let rows = stmt
        .query_map([since], |r| {
            Ok(KnowledgeChange {
                scan_id: r.get(0)?,
                change: r.get(1)?,
                subject: r.get(2)?,
                detail: r.get(3)?,
            })
        })
        .ctx(|| "reading knowledge changes".into())?;
    rows.collect::<rusqlite::Result<_>>()
        .ctx(|| "reading knowledge changes".into())
}

/// Whether a doc claim ever resolved.
pub fn doc_claim_resolved_before(
    conn: &Connection,
    doc_path: &str,
    kind: &str,
    target: &str,
) -> Result<bool> {
    conn.prepare_cached(
        "SELECT EXISTS(SELECT 1 FROM doc_claims WHERE doc_path = ?1 AND kind = ?2 AND target = ?3)",
    )
    .ctx(|| "reading doc claims".into())?
    .query_row([doc_path, kind, target], |r| r.get(0))
    .ctx(|| "reading doc claims".into())
}

/// Remembers that a doc claim resolved (first sighting wins).
pub fn remember_doc_claim(
    tx: &Transaction<'_>,
    doc_path: &str,
    kind: &str,
    target: &str,
    resolved: &str,
    scan_id: i64,
) -> Result<()> {
    tx.prepare_cached("INSERT OR IGNORE INTO doc_claims(doc_path, kind, target, resolved, first_seen_scan) VALUES (?1, ?2, ?3, ?4, ?5)")
        .ctx(|| "writing doc claims".into())?
        .execute(params![doc_path, kind, target, resolved, scan_id])
        .ctx(|| "writing doc claims".into())?;
    Ok(())
}

/// A claim's name as SQL, over `claims c`: the last segment of its target, a symbol
/// claim's name (`raw_decode` for `JSONDecoder.raw_decode`) or a path claim's file or
/// folder name (`decoder.py` for `json/decoder.py`). Written exactly as the expression of
/// the index `claims_by_name` (migration 0024), so SQLite reads that index for it.
pub const CLAIM_NAME: &str = "CASE c.kind \
    WHEN 'path' THEN replace(c.target, rtrim(c.target, replace(c.target, '/', '')), '') \
    ELSE replace(c.target, rtrim(c.target, replace(c.target, '.', '')), '') END";

/// What the map changed since [`clear_map_changes`] last ran (migration 0024), as the
/// triggers on `symbols` and `files` recorded it: `None` for "everything" (the row `*`:
/// a new or migrated store), else symbol names and, prefixed with `/`, file paths.
///
/// Errors: [`crate::StoreError::Sqlite`] when the rows cannot be read.
pub fn map_changes(conn: &Connection) -> Result<Option<Vec<String>>> {
    let ctx = || "reading what the map changed".to_string();
    let mut stmt = conn
        .prepare_cached("SELECT name FROM map_changes")
        .ctx(ctx)?;
    let names = stmt
        .query_map([], |r| r.get::<_, String>(0))
        .ctx(ctx)?
        .collect::<rusqlite::Result<Vec<_>>>()
        .ctx(ctx)?;
    Ok((!names.iter().any(|n| n == "*")).then_some(names))
}

/// Forgets what the map changed: lint has checked it. With `everything`, the next lint
/// checks every claim (the row `*`).
///
/// Errors: [`crate::StoreError::Sqlite`] when the rows cannot be written.
pub fn clear_map_changes(tx: &Transaction<'_>, everything: bool) -> Result<()> {
    let ctx = || "clearing what the map changed".to_string();
    tx.execute("DELETE FROM map_changes", []).ctx(ctx)?;
    if everything {
        tx.execute("INSERT INTO map_changes(name) VALUES ('*')", [])
            .ctx(ctx)?;
    }
    Ok(())
}

/// The distinct targets of the symbol claims that named nothing when they were written
/// (no target, no set of definitions, not resolved where they were exported from), of any
/// revision, read through the partial index `claims_never_resolved` (migration 0031): a
/// name the map gains elsewhere can make one a near miss, which its own name's changes
/// never say.
///
/// Errors: [`crate::StoreError::Sqlite`] when memory cannot be read.
pub fn never_resolved_symbol_targets(conn: &Connection) -> Result<Vec<String>> {
    let ctx = || "reading the claims that never resolved".to_string();
    let mut stmt = conn
        .prepare_cached(
            "SELECT DISTINCT target FROM claims INDEXED BY claims_never_resolved
              WHERE kind = 'symbol' AND resolved IS NULL AND definitions IS NULL
                AND resolved_elsewhere = 0",
        )
        .ctx(ctx)?;
    let rows = stmt.query_map([], |r| r.get(0)).ctx(ctx)?;
    rows.collect::<rusqlite::Result<_>>().ctx(ctx)
}

/// The distinct targets of the path claims, of any revision, that name neither a file nor
/// a folder of the map (read through the partial index `claims_paths`, migration 0031):
/// their verdict rests on the disk (a git-ignored build output, a file not scanned yet),
/// which can change without the map changing.
///
/// Errors: [`crate::StoreError::Sqlite`] when memory or the map cannot be read.
pub fn unmapped_path_targets(conn: &Connection) -> Result<Vec<String>> {
    let ctx = || "reading the path claims outside the map".to_string();
    let mut stmt = conn
        .prepare_cached(
            "SELECT target FROM (SELECT DISTINCT target FROM claims INDEXED BY claims_paths
                                  WHERE kind = 'path') c
              WHERE NOT EXISTS (SELECT 1 FROM files f WHERE f.path = c.target)
                AND NOT EXISTS (SELECT 1 FROM files f
                                 WHERE f.path > rtrim(c.target, '/') || '/'
                                   AND f.path < rtrim(c.target, '/') || '0')",
        )
        .ctx(ctx)?;
    let rows = stmt.query_map([], |r| r.get(0)).ctx(ctx)?;
    rows.collect::<rusqlite::Result<_>>().ctx(ctx)
}

/// The current revisions (with their page's subject) that hold a claim named one of
/// `names` ([`CLAIM_NAME`]), whose page's subject is one of `subjects`, that were written
/// after revision `after`, or that hold a version claim (with `versions`: a manifest
/// changed): what changed since lint last looked may move their verdicts or marks. Each
/// part is read through an index but the version claims. By revision id.
///
/// Errors: [`crate::StoreError::Sqlite`] when memory cannot be read.
pub fn revisions_to_check(
    conn: &Connection,
    names: &[&str],
    subjects: &[&str],
    after: i64,
    versions: bool,
) -> Result<Vec<(i64, String)>> {
    let ctx = || "reading the revisions to check".to_string();
    let json = |v: &[&str]| {
        serde_json::to_string(v).map_err(|e| crate::StoreError::Corrupt(e.to_string()))
    };
    let (names, subjects) = (json(names)?, json(subjects)?);
    let versions_sql = if versions {
        "UNION SELECT c.revision_id FROM claims c WHERE c.kind = 'version'"
    } else {
        ""
    };
    let sql = format!(
        "SELECT p.current_revision_id, p.subject FROM pages p
          WHERE p.current_revision_id IN (
              SELECT c.revision_id FROM claims c
               WHERE {CLAIM_NAME} IN (SELECT value FROM json_each(?1))
              UNION SELECT current_revision_id FROM pages
               WHERE subject IN (SELECT value FROM json_each(?2))
              UNION SELECT current_revision_id FROM pages WHERE current_revision_id > ?3
              {versions_sql})
          ORDER BY p.current_revision_id"
    );
    let mut stmt = conn.prepare_cached(&sql).ctx(ctx)?;
    let rows = stmt
        .query_map(params![names, subjects, after], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .ctx(ctx)?;
    rows.collect::<rusqlite::Result<_>>().ctx(ctx)
}

/// Moves the findings of `origin` about `from` to `to` (subject and finding key, which
/// names the subject: `page:a.py:missing_symbol:f`), whatever their status. A human
/// dismissal is a decision about the text, not about where it lives: left behind, the
/// renamed file's next lint reported the dismissed finding as new. Where `to` already has
/// a finding with the same key, the one holding a dismissal is kept (a dismissal is
/// authored, never lost), else the one already at `to`.
///
/// Errors: [`crate::StoreError::Sqlite`] when the findings cannot be read or written.
pub fn move_findings(tx: &Transaction<'_>, origin: &str, from: &str, to: &str) -> Result<()> {
    let ctx = || format!("moving the findings of `{from}` to `{to}`");
    let old_prefix = format!("{origin}:{from}:");
    let rows: Vec<(i64, String, String)> = tx
        .prepare_cached(
            "SELECT contradiction_id, finding_key, status FROM contradictions
              WHERE origin = ?1 AND subject = ?2",
        )
        .and_then(|mut st| {
            st.query_map([origin, from], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
                .collect()
        })
        .ctx(ctx)?;
    for (id, key, status) in rows {
        let Some(rest) = key.strip_prefix(&old_prefix) else {
            continue;
        };
        let new_key = format!("{origin}:{to}:{rest}");
        if let Some(there) = contradiction_by_key(tx, &new_key)? {
            if status == "dismissed" && there.status != "dismissed" {
                tx.execute(
                    "DELETE FROM contradictions WHERE contradiction_id = ?1",
                    [there.contradiction_id],
                )
                .ctx(ctx)?;
            } else {
                continue;
            }
        }
        tx.execute(
            "UPDATE contradictions SET subject = ?2, finding_key = ?3 WHERE contradiction_id = ?1",
            params![id, to, new_key],
        )
        .ctx(ctx)?;
    }
    Ok(())
}

/// Paths still in the map that scans saw added, modified or renamed to after `since`
/// (RFC 3339; the drift ledger), distinct, in path order.
///
/// Errors: [`crate::StoreError::Sqlite`] when the ledger cannot be read.
pub fn mapped_paths_changed_since(conn: &Connection, since: &str) -> Result<Vec<String>> {
    let ctx = || "reading the drift ledger".to_string();
    let mut stmt = conn
        .prepare_cached(
            "SELECT DISTINCT d.path FROM drift d JOIN files f ON f.path = d.path
             WHERE d.at > ?1 AND d.kind IN ('add', 'modify', 'rename') ORDER BY d.path",
        )
        .ctx(ctx)?;
    let rows = stmt.query_map([since], |r| r.get(0)).ctx(ctx)?;
    rows.collect::<rusqlite::Result<_>>().ctx(ctx)
}

/// The newest rename in the drift ledger of a file under the folder `folder` (no trailing
/// `/`) that was not one of several files of the same content renamed in one scan:
/// `(old path, new path)`.
///
/// Errors: [`crate::StoreError::Sqlite`] when the ledger cannot be read.
pub fn last_rename_under(conn: &Connection, folder: &str) -> Result<Option<(String, String)>> {
    conn.prepare_cached(
        "SELECT d.detail, d.path FROM drift d WHERE d.kind = 'rename'
         AND substr(d.detail, 1, length(?1) + 1) = ?1 || '/'
         AND NOT EXISTS (SELECT 1 FROM drift e WHERE e.scan_id = d.scan_id
             AND e.kind = 'rename' AND e.new_hash = d.new_hash AND e.drift_id <> d.drift_id)
         ORDER BY d.drift_id DESC LIMIT 1",
    )
    .and_then(|mut s| {
        s.query_row([folder], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()
    })
    .ctx(|| "reading renames".into())
}

/// Where the newest rename in the drift ledger of the file `path` took it, if one did.
///
/// Errors: [`crate::StoreError::Sqlite`] when the ledger cannot be read.
pub fn renamed_to(conn: &Connection, path: &str) -> Result<Option<String>> {
    conn.prepare_cached(
        "SELECT path FROM drift WHERE kind = 'rename' AND detail = ?1 ORDER BY drift_id DESC LIMIT 1",
    )
    .and_then(|mut st| st.query_row([path], |r| r.get(0)).optional())
    .ctx(|| "reading renames".into())
}
