//! Fingerprint snapshots of what pages are about, and carrying them forward when a scan
//! changes fingerprints without changing meaning.

use super::*;

/// A file page's subject as a revision's snapshot saw it (`page_snapshots`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageSnapshot {
    /// The file's semantic fingerprint (or content hash) in the map; `None` when the map
    /// did not hold it.
    pub fingerprint: Option<String>,
    /// True when the file was neither in the map nor in the working tree (migration 0013).
    pub subject_missing: bool,
    /// When it was taken (RFC 3339).
    pub snapshot_at: String,
}

/// Records (or replaces) the page-subject snapshot for a revision: the file's fingerprint,
/// and whether the file was missing altogether.
pub fn put_page_snapshot(
    tx: &Transaction<'_>,
    revision_id: i64,
    fingerprint: Option<&str>,
    subject_missing: bool,
) -> Result<()> {
    tx.prepare_cached(
        "INSERT INTO page_snapshots(revision_id, fingerprint, subject_missing) VALUES (?1, ?2, ?3)
         ON CONFLICT(revision_id) DO UPDATE SET fingerprint = excluded.fingerprint,
            subject_missing = excluded.subject_missing,
            snapshot_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')",
    )
    .ctx(|| "writing a page snapshot".into())?
    .execute(params![revision_id, fingerprint, subject_missing])
    .ctx(|| "writing a page snapshot".into())?;
    Ok(())
}

pub(super) fn page_snapshot_row(r: &Row<'_>) -> rusqlite::Result<PageSnapshot> {
    Ok(PageSnapshot {
        fingerprint: r.get(0)?,
        subject_missing: r.get(1)?,
        snapshot_at: r.get(2)?,
    })
}

/// The page-subject snapshot of a revision, if it has one.
pub fn page_snapshot(conn: &Connection, revision_id: i64) -> Result<Option<PageSnapshot>> {
    conn.prepare_cached(
        "SELECT fingerprint, subject_missing, snapshot_at FROM page_snapshots
         WHERE revision_id = ?1",
    )
    .ctx(|| "reading a page snapshot".into())?
    .query_row([revision_id], page_snapshot_row)
    .optional()
    .ctx(|| "reading a page snapshot".into())
}

/// The page snapshots of these revisions, as [`page_snapshot`] reads each, by revision
/// id, in one statement; revisions without one are absent.
pub fn page_snapshots(
    conn: &Connection,
    revision_ids: &[i64],
) -> Result<std::collections::HashMap<i64, PageSnapshot>> {
    if revision_ids.is_empty() {
        return Ok(Default::default());
    }
    let json =
        serde_json::to_string(revision_ids).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    let mut stmt = conn
        .prepare_cached(
            "SELECT revision_id, fingerprint, subject_missing, snapshot_at FROM page_snapshots
             WHERE revision_id IN (SELECT value FROM json_each(?1))",
        )
        .ctx(|| "reading page snapshots".into())?;
    let rows = stmt
        .query_map([json], |r| {
            Ok((
                r.get(0)?,
                PageSnapshot {
                    fingerprint: r.get(1)?,
                    subject_missing: r.get(2)?,
                    snapshot_at: r.get(3)?,
                },
            ))
        })
        .ctx(|| "reading page snapshots".into())?;
    rows.collect::<rusqlite::Result<_>>()
        .ctx(|| "reading page snapshots".into())
}

/// Every path and symbol key that a snapshot of memory names: what a claim resolved to
/// (with a snapshot), each key of a claim tracked as a set of definitions, and the subject
/// of each file page with a page snapshot holding a fingerprint. A scan carries forward
/// only the snapshots of these ([`carry_snapshots_forward`]).
///
/// Errors: [`StoreError::Sqlite`] when memory cannot be read.
pub fn snapshotted_targets(conn: &Connection) -> Result<std::collections::HashSet<String>> {
    let ctx = || "reading what memory snapshots".to_string();
    let mut stmt = conn
        .prepare_cached(
            "SELECT resolved FROM claims
              WHERE resolved IS NOT NULL AND (snapshot IS NOT NULL OR signature_snapshot IS NOT NULL)
             UNION
             SELECT j.value ->> 'key' FROM claims c, json_each(c.definitions) j
              WHERE c.definitions IS NOT NULL
             UNION
             SELECT p.subject FROM pages p
              WHERE p.kind = 'file'
                AND EXISTS (SELECT 1 FROM revisions r JOIN page_snapshots s USING (revision_id)
                             WHERE r.page_id = p.page_id AND s.fingerprint IS NOT NULL)",
        )
        .ctx(ctx)?;
    let rows = stmt.query_map([], |r| r.get(0)).ctx(ctx)?;
    rows.collect::<rusqlite::Result<_>>().ctx(ctx)
}

/// The fingerprints of a file or symbol before and after it was analysed again with the
/// same content by another analysis version (`loci_core::ANALYSIS_VERSION`): the same code
/// described by the new fingerprint rules.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FingerprintChange {
    /// A file's path, or a symbol's key.
    pub target: String,
    /// A file's `ifnull(fingerprint, content_hash)` (what a path claim and a file page
    /// snapshot), or a symbol's body fingerprint, before.
    pub old: String,
    /// The same, after.
    pub new: String,
    /// A symbol's signature fingerprint before and after; `None` for a file.
    pub signature: Option<(String, String)>,
}

/// Carries memory's snapshots across a change of fingerprint rules for code that did not
/// change: each snapshot that equals a target's old fingerprint takes its new one, in
/// every revision (a claim's `snapshot` and `signature_snapshot` where it resolved to the
/// target, the entry of the target's key in a claim tracked as a set, a file page's
/// `page_snapshots.fingerprint` for the target's path), and `snapshot_at` is kept. A
/// snapshot that differs from the old fingerprint was already stale and stays as it is.
/// The updates delete the `revision_marks` rows of the revisions they touch (their
/// triggers, `0015_revision_marks.sql`). Returns how many rows changed.
///
/// Errors: [`StoreError::Sqlite`] when memory cannot be read or written,
/// [`StoreError::Corrupt`] when a claim's definitions are not the JSON they should be.
pub fn carry_snapshots_forward(tx: &Transaction<'_>, changes: &[FingerprintChange]) -> Result<u64> {
    if changes.is_empty() {
        return Ok(0);
    }
    let ctx = || "carrying memory's snapshots to new fingerprints".to_string();
    let json = serde_json::to_string(changes).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    const CHANGES: &str = "SELECT value ->> 'target' AS target, value ->> 'old' AS old,
            value ->> 'new' AS new, value ->> '$.signature[0]' AS old_signature,
            value ->> '$.signature[1]' AS new_signature
       FROM json_each(?1)";
    let mut n = tx
        .prepare_cached(&format!(
            "UPDATE claims
                SET snapshot = CASE WHEN claims.snapshot = ch.old THEN ch.new
                                    ELSE claims.snapshot END,
                    signature_snapshot = CASE WHEN claims.signature_snapshot = ch.old_signature
                                              THEN ch.new_signature
                                              ELSE claims.signature_snapshot END
               FROM ({CHANGES}) AS ch
              WHERE claims.resolved = ch.target
                AND ((claims.snapshot = ch.old AND ch.new <> ch.old)
                     OR (claims.signature_snapshot = ch.old_signature
                         AND ch.new_signature <> ch.old_signature))"
        ))
        .ctx(ctx)?
        .execute([&json])
        .ctx(ctx)?;
    n += tx
        .prepare_cached(&format!(
            "UPDATE page_snapshots SET fingerprint = ch.new
               FROM ({CHANGES}) AS ch
               JOIN pages p ON p.subject = ch.target AND p.kind = 'file'
               JOIN revisions r ON r.page_id = p.page_id
              WHERE ch.old_signature IS NULL AND page_snapshots.revision_id = r.revision_id
                AND page_snapshots.fingerprint = ch.old AND ch.new <> ch.old"
        ))
        .ctx(ctx)?
        .execute([&json])
        .ctx(ctx)?;
    // Claims tracked as sets: few, and their JSON is rewritten here, entry by entry.
    let sets: Vec<(i64, String)> = tx
        .prepare_cached(&format!(
            "SELECT c.claim_id, c.definitions FROM claims c
              WHERE c.definitions IS NOT NULL
                AND EXISTS (SELECT 1 FROM json_each(c.definitions) d
                             WHERE d.value ->> 'key' IN (SELECT target FROM ({CHANGES})
                                                          WHERE old_signature IS NOT NULL))"
        ))
        .ctx(ctx)?
        .query_map([&json], |r| Ok((r.get(0)?, r.get(1)?)))
        .ctx(ctx)?
        .collect::<rusqlite::Result<_>>()
        .ctx(ctx)?;
    if sets.is_empty() {
        return Ok(n as u64);
    }
    let by_key: std::collections::HashMap<&str, &FingerprintChange> = changes
        .iter()
        .filter(|c| c.signature.is_some())
        .map(|c| (c.target.as_str(), c))
        .collect();
    let mut update = tx
        .prepare_cached("UPDATE claims SET definitions = ?2 WHERE claim_id = ?1")
        .ctx(ctx)?;
    for (claim_id, stored) in sets {
        let mut definitions: Vec<ClaimDefinition> = serde_json::from_str(&stored)
            .map_err(|e| StoreError::Corrupt(format!("definitions of claim {claim_id}: {e}")))?;
        let mut changed = false;
        for d in &mut definitions {
            let Some(c) = by_key.get(d.key.as_str()) else {
                continue;
            };
            if d.body == c.old && c.new != c.old {
                d.body.clone_from(&c.new);
                changed = true;
            }
            if let Some((old, new)) = &c.signature
                && &d.signature == old
                && new != old
            {
                d.signature.clone_from(new);
                changed = true;
            }
        }
        if changed {
            n += update
                .execute(params![claim_id, definitions_json(&definitions)?])
                .ctx(ctx)?;
        }
    }
    Ok(n as u64)
}

/// Gives each file page's revision whose snapshot has no fingerprint (and whose file was
/// not missing) the fingerprint of its file as the map now holds it, taken now. Returns
/// how many snapshots were taken.
///
/// Errors: [`StoreError::Sqlite`] when the snapshots cannot be written.
pub fn snapshot_pages_mapped_since(tx: &Transaction<'_>) -> Result<u64> {
    let n = tx
        .prepare_cached(
            "UPDATE page_snapshots
                SET fingerprint = ifnull(f.fingerprint, f.content_hash),
                    snapshot_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
               FROM revisions r
               JOIN pages p ON p.page_id = r.page_id AND p.kind = 'file'
               JOIN files f ON f.path = p.subject
              WHERE page_snapshots.revision_id = r.revision_id
                AND page_snapshots.fingerprint IS NULL
                AND NOT page_snapshots.subject_missing",
        )
        .and_then(|mut st| st.execute([]))
        .ctx(|| "snapshotting the pages of files mapped since they were written".into())?;
    Ok(n as u64)
}
