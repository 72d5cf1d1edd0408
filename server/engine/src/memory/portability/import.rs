//! What `import` writes: each page with its revisions and claims, sessions and
//! dismissals, idempotent by page uid, revision hash, session key and finding key.

use std::collections::BTreeSet;
use std::path::Path;

use loci_store::audit as au;
use loci_store::memory::{self as mem, NewRevision};
use loci_store::rusqlite::Transaction;

use crate::memory::claims::{Given, SubjectSnapshot, snapshot_revision, subject_snapshot};

use super::{
    ExportedDismissal, ExportedPage, ImportReport, MemoryExport, TrackedClaim, revision_hash,
    session_key,
};

/// Imports one page; see [`Workspace::import_memory`].
pub(super) fn import_page(
    tx: &Transaction<'_>,
    p: &ExportedPage,
    doc: &MemoryExport,
    root: &Path,
    subjects: &std::collections::BTreeMap<(String, String), SubjectSnapshot>,
    sessions: &std::collections::BTreeMap<String, i64>,
    report: &mut ImportReport,
) -> loci_store::Result<()> {
    let Some((page, found_by_uid)) = page_for_import(tx, p, report)? else {
        return Ok(());
    };
    let subject = follow_rename(tx, root, p, &page, found_by_uid, report)?;
    if page.kind != p.kind {
        report.notes.push(format!(
            "`{subject}` is a {} page here and a {} page in the export; kept {}",
            page.kind, p.kind, page.kind
        ));
    }
    let (held, next) = held_revisions(tx, page.page_id)?;
    let last_added = append_revisions(
        tx, p, doc, root, subjects, sessions, &page, &subject, held, next, report,
    )?;
    if let Some((missing, stored)) = last_added {
        note_last_added(report, &subject, &page.kind, missing, &stored);
    }
    for m in &p.members {
        if mem::set_topic_member(tx, page.page_id, m, true)? {
            report.members_added += 1;
        }
    }
    Ok(())
}

/// The page an exported page goes to: the one with its uid, else (not for a decision or
/// lesson) the one with its subject, else a new page (a log entry numbered anew when its
/// number is taken here). `None` when the export's whole-log page was imported and split
/// before; with whether the page was found by uid.
fn page_for_import(
    tx: &Transaction<'_>,
    p: &ExportedPage,
    report: &mut ImportReport,
) -> loci_store::Result<Option<(mem::Page, bool)>> {
    let by_uid = mem::page_by_uid(tx, &p.uid)?;
    let found_by_uid = by_uid.is_some();
    let entry_log = loci_store::logs::log_of_entry(&p.subject);
    if loci_store::logs::entry_prefix(&p.subject).is_some()
        && loci_store::logs::was_split(tx, &p.uid)?
    {
        // A whole-log page of an older export that was imported (and split) before.
        report.notes.push(format!(
            "`{}` of this export was imported before; its entries are here already",
            p.subject
        ));
        return Ok(None);
    }
    // A decision or lesson is the same entry by uid only: entries are numbered per
    // checkout, so another checkout's `decision:3` may be a different decision.
    let by_subject = match entry_log {
        Some(_) => None,
        None => mem::page_by_subject(tx, &p.subject)?,
    };
    let page = match by_uid.or(by_subject) {
        Some(page) => page,
        None => {
            let subject = match entry_log {
                Some(log) if mem::page_by_subject(tx, &p.subject)?.is_some() => {
                    loci_store::logs::next_entry(tx, log)?
                }
                _ => p.subject.clone(),
            };
            report.pages_created.push(subject.clone());
            mem::insert_page_as(tx, &p.uid, &subject, &p.kind, p.pinned, &p.created_at)?
        }
    };
    Ok(Some((page, found_by_uid)))
}

/// The subject the page's revisions are imported under: the export's, when the page was
/// renamed at the source (the page is moved, and the move recorded), else the page's own
/// here, with a note saying why.
fn follow_rename(
    tx: &Transaction<'_>,
    root: &Path,
    p: &ExportedPage,
    page: &mem::Page,
    found_by_uid: bool,
    report: &mut ImportReport,
) -> loci_store::Result<String> {
    let entry_log = loci_store::logs::log_of_entry(&p.subject);
    let mut subject = page.subject.clone();
    // An export older than a rename here names the page's old path: moving the page there
    // would put it back on a path this checkout renamed away and no longer has (then marked
    // deleted). The page stays where its file is, and the report says so, naming both. A
    // rename made at the source (a path this checkout never renamed) is followed.
    let gone_here = |subject: &str| -> loci_store::Result<bool> {
        Ok(matches!(
            crate::memory::claims::subject_snapshot(tx, root, subject, &p.kind)?,
            Some(s) if s.missing
        ))
    };
    let renamed_away_here =
        |from: &str| -> loci_store::Result<bool> { loci_store::memory::renamed_away(tx, from) };
    if found_by_uid
        && page.subject != p.subject
        && entry_log.is_none()
        && renamed_away_here(&p.subject)?
        && gone_here(&p.subject)?
        && !gone_here(&page.subject)?
    {
        report.notes.push(format!(
            "`{}` is `{}` here, and `{}` does not exist here (renamed since the export was \
             written): its revisions were imported under `{}`, which was not moved",
            p.subject, page.subject, p.subject, page.subject
        ));
    } else if found_by_uid && page.subject != p.subject && entry_log.is_none() {
        if mem::page_by_subject(tx, &p.subject)?.is_none() {
            mem::move_page(tx, page.page_id, &p.subject)?;
            let payload = serde_json::json!({"from": page.subject, "to": p.subject}).to_string();
            mem::insert_event(
                tx,
                "rename",
                &format!("rename:import:{}", p.uid),
                &p.subject,
                Some(&payload),
                None,
            )?;
            report
                .pages_moved
                .push((page.subject.clone(), p.subject.clone()));
            subject = p.subject.clone();
        } else {
            report.notes.push(format!(
                "`{}` is `{}` here and another page holds `{}`; its revisions were imported under `{}`",
                p.subject, page.subject, p.subject, page.subject
            ));
        }
    }
    Ok(subject)
}

/// What a page already holds: the hash of each revision, and the original hash of each
/// revision an earlier import appended (possibly under another version); and the version
/// the next revision takes.
fn held_revisions(
    tx: &Transaction<'_>,
    page_id: i64,
) -> loci_store::Result<(BTreeSet<String>, i64)> {
    let mut held = BTreeSet::new();
    let mut next = 1;
    for r in mem::revisions_of(tx, page_id)? {
        held.insert(revision_hash(
            r.version,
            &r.body,
            r.summary.as_deref(),
            &r.author,
            &r.created_at,
        ));
        if let Some(id) = r.event_id
            && let Some(e) = mem::event_by_id(tx, id)?
            && e.kind == "import"
            && let Some(h) = e.source_ref.strip_prefix("import:")
        {
            held.insert(h.to_string());
        }
        next = r.version + 1;
    }
    Ok((held, next))
}

/// Appends the exported revisions the page does not hold, renumbered after its last,
/// each with its import event and its claims snapshotted as they were where it was
/// exported. Returns what the last one appended does not find here: whether its file is
/// missing, and its claims.
#[allow(clippy::too_many_arguments)]
fn append_revisions(
    tx: &Transaction<'_>,
    p: &ExportedPage,
    doc: &MemoryExport,
    root: &Path,
    subjects: &std::collections::BTreeMap<(String, String), SubjectSnapshot>,
    sessions: &std::collections::BTreeMap<String, i64>,
    page: &mem::Page,
    subject: &str,
    mut held: BTreeSet<String>,
    mut next: i64,
    report: &mut ImportReport,
) -> loci_store::Result<Option<(bool, crate::memory::claims::Snapshotted)>> {
    let mut last_added: Option<(bool, crate::memory::claims::Snapshotted)> = None;
    for r in &p.revisions {
        let hash = revision_hash(
            r.version,
            &r.body,
            r.summary.as_deref(),
            &r.author,
            &r.created_at,
        );
        if held.contains(&hash) {
            report.revisions_skipped += 1;
            continue;
        }
        if r.version != next {
            report
                .renumbered
                .push((subject.to_string(), r.version, next));
        }
        let payload = serde_json::json!({
            "from": report.source,
            "exported_at": doc.exported_at,
            "version": r.version,
            "event": r.event,
        })
        .to_string();
        let (event_id, _) = mem::insert_event(
            tx,
            "import",
            &format!("import:{hash}"),
            subject,
            Some(&payload),
            None,
        )?;
        let revision = mem::insert_revision_as(
            tx,
            &NewRevision {
                page_id: page.page_id,
                body: &r.body,
                summary: r.summary.as_deref(),
                author: &r.author,
                session_id: r.session.as_ref().and_then(|k| sessions.get(k).copied()),
                event_id: Some(event_id),
            },
            next,
            &r.created_at,
        )?;
        // The page as it is here (its subject and kind may differ from the export's).
        let snapshot = match subjects.get(&(subject.to_string(), page.kind.clone())) {
            Some(s) => Some(s.clone()),
            None => subject_snapshot(tx, root, subject, &page.kind)?,
        };
        // The snapshots taken where it was exported: a file page's own file keeps that
        // checkout's fingerprint (whether it is missing here is this checkout's to say).
        let given = Given {
            claims: r
                .tracked
                .as_ref()
                .map(|t| t.iter().map(TrackedClaim::given).collect()),
            subject: match (&snapshot, &r.subject_fingerprint) {
                (Some(here), Some(there)) if page.kind == "file" => Some(SubjectSnapshot {
                    fingerprint: Some(there.clone()),
                    missing: here.missing,
                }),
                _ => None,
            },
        };
        let stored = snapshot_revision(tx, &revision, subject, snapshot.as_ref(), Some(&given))?;
        last_added = Some((snapshot.is_some_and(|s| s.missing), stored));
        held.insert(hash);
        report.revisions_added += 1;
        next += 1;
    }
    Ok(last_added)
}

/// The notes on the last revision appended: its page's file missing here, claims that
/// resolved where it was exported and name nothing here, and claims that name other code
/// here.
fn note_last_added(
    report: &mut ImportReport,
    subject: &str,
    kind: &str,
    missing: bool,
    stored: &crate::memory::claims::Snapshotted,
) {
    let claims = &stored.claims;
    if missing {
        report.notes.push(format!(
            "`{subject}` is not a {} of this checkout: its page is kept, and lint marks it \
             deleted until it exists",
            kind
        ));
    }
    let elsewhere: Vec<String> = claims
        .iter()
        .filter(|c| c.resolved_elsewhere)
        .map(|c| format!("`{}`", c.text))
        .collect();
    if !elsewhere.is_empty() {
        report.notes.push(format!(
            "`{subject}`: {} resolved where it was exported but name{} nothing here: {}; \
             lint reports {}",
            if elsewhere.len() == 1 {
                "1 claim".to_string()
            } else {
                format!("{} claims", elsewhere.len())
            },
            if elsewhere.len() == 1 { "s" } else { "" },
            elsewhere.join(", "),
            if elsewhere.len() == 1 { "it" } else { "them" },
        ));
    }
    if !stored.diverged.is_empty() {
        let n = stored.diverged.len();
        let each: Vec<String> = stored
            .diverged
            .iter()
            .map(|d| {
                format!(
                    "`{}` named {} there and names {} here",
                    d.text, d.there, d.here
                )
            })
            .collect();
        report.notes.push(format!(
            "`{subject}`: {} other code here than where it was exported: {}; {} the \
             exported snapshot, and lint marks {} stale",
            if n == 1 {
                "1 claim names".to_string()
            } else {
                format!("{n} claims name")
            },
            each.join("; "),
            if n == 1 { "it keeps" } else { "they keep" },
            if n == 1 { "it" } else { "them" },
        ));
    }
}

/// Adds the export's sessions this database lacks (by [`session_key`]); returns the local
/// id of every exported session, by key.
pub(super) fn import_sessions(
    tx: &Transaction<'_>,
    doc: &MemoryExport,
    report: &mut ImportReport,
) -> loci_store::Result<std::collections::BTreeMap<String, i64>> {
    let mut ids: std::collections::BTreeMap<String, i64> = mem::sessions(tx)?
        .into_iter()
        .map(|s| {
            (
                session_key(&s.author, &s.started_at, s.task.as_deref()),
                s.session_id,
            )
        })
        .collect();
    for s in &doc.sessions {
        if ids.contains_key(&s.key) {
            report.sessions_skipped += 1;
            continue;
        }
        let digest = serde_json::to_string(&s.digest)
            .map_err(|e| loci_store::StoreError::Corrupt(e.to_string()))?;
        let id = mem::insert_session_as(tx, &s.new_row(Some(digest)))?;
        mem::insert_event(
            tx,
            "import",
            &format!("import:session:{}", s.key),
            "",
            Some(&serde_json::json!({"session_id": id, "from": report.source}).to_string()),
            Some(id),
        )?;
        ids.insert(s.key.clone(), id);
        report.sessions_added += 1;
    }
    Ok(ids)
}

/// Records the export's dismissals: a finding dismissed there is dismissed here, whether
/// lint has found it here yet or not.
pub(super) fn import_dismissals(
    tx: &Transaction<'_>,
    doc: &MemoryExport,
    report: &mut ImportReport,
) -> loci_store::Result<()> {
    for d in &doc.dismissals {
        if !record_dismissal(tx, d)? {
            report.dismissals_skipped += 1;
            continue;
        }
        let payload = serde_json::json!({"notes": d.notes, "from": report.source}).to_string();
        mem::insert_event(
            tx,
            "import",
            &format!("import:dismissal:{}", d.finding_key),
            &d.subject,
            Some(&payload),
            None,
        )?;
        report.dismissals_added += 1;
    }
    Ok(())
}

/// Whether a dismissal's origin, kind and severity are words this loci stores (a newer
/// loci may name a kind of finding this one does not know).
pub(crate) fn dismissal_words_known(d: &ExportedDismissal) -> bool {
    ["page", "doc"].contains(&d.origin.as_str())
        && ["missing_path", "missing_symbol", "version_mismatch"].contains(&d.kind.as_str())
        && ["high", "medium", "low"].contains(&d.severity.as_str())
}

/// Records a dismissal made elsewhere (an import, another checkout of the team): the
/// finding with its key is dismissed here, whether lint has found it here yet or not.
/// False when it was dismissed here already (nothing changed).
pub(crate) fn record_dismissal(
    tx: &Transaction<'_>,
    d: &ExportedDismissal,
) -> loci_store::Result<bool> {
    match au::contradiction_by_key(tx, &d.finding_key)? {
        Some(c) if c.status == "dismissed" => return Ok(false),
        Some(c) => au::close(tx, c.contradiction_id, true, d.notes.as_deref(), None)?,
        None => {
            // Only these words reach here: `validate` admitted only them in an import, and
            // a team event with others is skipped before (`super::team`).
            let word = |w: &str| {
                [
                    "page",
                    "doc",
                    "missing_path",
                    "missing_symbol",
                    "version_mismatch",
                ]
                .into_iter()
                .chain(["high", "medium", "low"])
                .find(|k| *k == w)
                .unwrap_or("")
            };
            let finding = au::NewFinding {
                finding_key: d.finding_key.clone(),
                origin: word(&d.origin),
                subject: d.subject.clone(),
                revision_id: None,
                kind: word(&d.kind),
                severity: word(&d.severity),
                claim: d.claim.clone(),
                target: d.target.clone(),
                truth: d.truth.clone(),
                suggestion: d.suggestion.clone(),
                line: d.line,
                column: d.column,
                end_column: d.end_column,
            };
            au::insert_dismissed(tx, &finding, d.notes.as_deref(), &d.dismissed_at)?;
        }
    }
    Ok(true)
}
