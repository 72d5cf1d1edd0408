//! The checks of an export document before anything of it is written: its format and
//! version, every key, subject, date and event it holds, and its claims' snapshots.

use std::collections::BTreeSet;

use crate::{EngineError, Result};

use super::{
    EXPORT_FORMAT, EXPORT_FORMAT_VERSION, ExportedRevision, MemoryExport, fact_hash, revision_hash,
    session_key,
};

/// Checks an export's shape before anything is written: format, subjects, kinds,
/// increasing versions, dates, hashes.
pub(super) fn validate(doc: &MemoryExport, source: &str) -> Result<()> {
    let checks: [fn(&MemoryExport) -> Problem; 5] = [
        check_format,
        check_pages,
        check_facts,
        check_sessions,
        check_dismissals,
    ];
    for check in checks {
        check(doc).map_err(|(at, message)| EngineError::InvalidArgument {
            name: "FILE".into(),
            message: format!("{source}: {at}: {message}"),
        })?;
    }
    Ok(())
}

/// The first problem of a part of an export document: where (`pages[2] (`a.py`)`) and
/// what is wrong there.
type Problem = std::result::Result<(), (String, String)>;

/// The document's format and version.
fn check_format(doc: &MemoryExport) -> Problem {
    if doc.format != EXPORT_FORMAT {
        return Err((
            "format".into(),
            format!("is `{}`, expected `{EXPORT_FORMAT}`", doc.format),
        ));
    }
    if doc.format_version == 0 || doc.format_version > EXPORT_FORMAT_VERSION {
        return Err((
            "format_version".into(),
            format!(
                "{} is not supported (this loci reads 1 to {EXPORT_FORMAT_VERSION}); upgrade loci",
                doc.format_version
            ),
        ));
    }
    Ok(())
}

/// Every page: its uid, subject, kind and creation time, once each; its revisions in
/// version and time order, none in the future, with their authors, hashes and snapshots.
fn check_pages(doc: &MemoryExport) -> Problem {
    // Clocks differ between machines; a day ahead is still a mistake, not skew.
    let latest = jiff::Timestamp::now()
        .checked_add(jiff::SignedDuration::from_hours(24))
        .unwrap_or(jiff::Timestamp::MAX);
    let mut uids = BTreeSet::new();
    let mut subjects = BTreeSet::new();
    for (i, p) in doc.pages.iter().enumerate() {
        let at = format!("pages[{i}] (`{}`)", p.subject);
        let uid_ok = !p.uid.is_empty()
            && p.uid.len() <= 64
            && p.uid
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-');
        if !uid_ok {
            return Err((
                at,
                format!("uid `{}` is not 1-64 letters, digits or `-`", p.uid),
            ));
        }
        if !uids.insert(p.uid.as_str()) || !subjects.insert(p.subject.as_str()) {
            return Err((at, "appears twice (same uid or subject)".into()));
        }
        if let Some(problem) = subject_problem(&p.subject, &p.kind) {
            return Err((at, problem));
        }
        if !is_date(&p.created_at) {
            return Err((
                at,
                format!("created_at `{}` is not an RFC 3339 time", p.created_at),
            ));
        }
        let mut last = 0;
        let mut last_at: Option<(jiff::Timestamp, &str)> = None;
        for (j, r) in p.revisions.iter().enumerate() {
            let at = format!("{at} revisions[{j}]");
            if r.version <= last {
                return Err((
                    at,
                    format!("version {} does not follow version {last}", r.version),
                ));
            }
            if let Some(event) = r.event.as_deref()
                && !REVISION_EVENTS.contains(&event)
            {
                return Err((
                    at,
                    format!(
                        "event `{event}` is not one of {}",
                        REVISION_EVENTS.join(", ")
                    ),
                ));
            }
            if let Ok(t) = r.created_at.parse::<jiff::Timestamp>() {
                if t > latest {
                    return Err((
                        at,
                        format!("created_at `{}` is in the future", r.created_at),
                    ));
                }
                if let Some((before, text)) = last_at
                    && t < before
                {
                    return Err((
                        at,
                        format!(
                            "created_at `{}` is before version {last}'s `{text}`",
                            r.created_at
                        ),
                    ));
                }
                last_at = Some((t, &r.created_at));
            }
            last = r.version;
            if r.author.trim().is_empty() {
                return Err((at, "author is empty".into()));
            }
            if !is_date(&r.created_at) {
                return Err((
                    at,
                    format!("created_at `{}` is not an RFC 3339 time", r.created_at),
                ));
            }
            let hash = revision_hash(
                r.version,
                &r.body,
                r.summary.as_deref(),
                &r.author,
                &r.created_at,
            );
            if r.hash.as_ref().is_some_and(|h| *h != hash) {
                return Err((
                    at,
                    "hash does not match the content (edited after export?); fix the content or delete the hash"
                        .into(),
                ));
            }
            if let Some(problem) = snapshot_problem(r) {
                return Err((at, problem));
            }
        }
        if !p.members.is_empty() && p.kind != "topic" {
            return Err((at, "only topic pages have members".into()));
        }
    }
    Ok(())
}

/// Every fact definition: its claim, command, author, time and hash.
fn check_facts(doc: &MemoryExport) -> Problem {
    for (i, f) in doc.facts.iter().enumerate() {
        let at = format!("facts[{i}]");
        if f.claim.trim().is_empty() || f.command.trim().is_empty() || f.author.trim().is_empty() {
            return Err((at, "claim, command and author must not be empty".into()));
        }
        if !is_date(&f.created_at) {
            return Err((
                at,
                format!("created_at `{}` is not an RFC 3339 time", f.created_at),
            ));
        }
        if f.hash.as_ref().is_some_and(|h| *h != fact_hash(f)) {
            return Err((
                at,
                "hash does not match the content (edited after export?); fix the content or delete the hash"
                    .into(),
            ));
        }
    }
    Ok(())
}

/// Every session (its author, times and key), and every revision's session among them.
fn check_sessions(doc: &MemoryExport) -> Problem {
    let mut keys = BTreeSet::new();
    for (i, s) in doc.sessions.iter().enumerate() {
        let at = format!("sessions[{i}]");
        if s.author.trim().is_empty() {
            return Err((at, "author is empty".into()));
        }
        if let Some(t) = [Some(&s.started_at), s.ended_at.as_ref()]
            .into_iter()
            .flatten()
            .find(|t| !is_date(t))
        {
            return Err((at, format!("`{t}` is not an RFC 3339 time")));
        }
        if let Some(ended) = &s.ended_at
            && ended.parse::<jiff::Timestamp>().ok() < s.started_at.parse::<jiff::Timestamp>().ok()
        {
            return Err((
                at,
                format!("ended_at `{ended}` is before started_at `{}`", s.started_at),
            ));
        }
        if s.key != session_key(&s.author, &s.started_at, s.task.as_deref()) {
            return Err((
                at,
                "key does not match author, started_at and task (edited after export?)".into(),
            ));
        }
        keys.insert(s.key.as_str());
    }
    for (i, p) in doc.pages.iter().enumerate() {
        for (j, r) in p.revisions.iter().enumerate() {
            if let Some(k) = r.session.as_deref().filter(|k| !keys.contains(k)) {
                return Err((
                    format!("pages[{i}] (`{}`) revisions[{j}]", p.subject),
                    format!("session `{k}` is not among the export's sessions"),
                ));
            }
        }
    }
    Ok(())
}

/// Every dismissal: its origin, kind, severity, finding key and time.
fn check_dismissals(doc: &MemoryExport) -> Problem {
    for (i, d) in doc.dismissals.iter().enumerate() {
        let at = format!("dismissals[{i}] (`{}`)", d.finding_key);
        let fields = [
            ("origin", d.origin.as_str(), &["page", "doc"][..]),
            (
                "kind",
                d.kind.as_str(),
                &["missing_path", "missing_symbol", "version_mismatch"][..],
            ),
            (
                "severity",
                d.severity.as_str(),
                &["high", "medium", "low"][..],
            ),
        ];
        if let Some((name, value, allowed)) = fields.iter().find(|(_, v, a)| !a.contains(v)) {
            return Err((
                at,
                format!("{name} `{value}` is not one of {}", allowed.join(", ")),
            ));
        }
        if d.finding_key.is_empty() || d.finding_key.len() > MAX_KEY_BYTES {
            return Err((at, "finding_key is empty or oversized".into()));
        }
        if !is_date(&d.dismissed_at) {
            return Err((
                at,
                format!("dismissed_at `{}` is not an RFC 3339 time", d.dismissed_at),
            ));
        }
    }
    Ok(())
}

/// The events a revision can be written by (`events.kind` of the revision's event).
const REVISION_EVENTS: &[&str] = &[
    "remember", "decision", "lesson", "rollback", "import", "confirm",
];

/// The longest claim target or key an export's snapshots may hold, in bytes.
const MAX_KEY_BYTES: usize = 4096;

/// What is wrong with a revision's snapshots ([`ExportedRevision::tracked`],
/// [`ExportedRevision::subject_fingerprint`]), if anything: a fingerprint that is not 1-64
/// hex digits, a kind other than `path` or `symbol`, an empty or oversized target or key.
fn snapshot_problem(r: &ExportedRevision) -> Option<String> {
    let hex = |f: &str| !f.is_empty() && f.len() <= 64 && f.bytes().all(|b| b.is_ascii_hexdigit());
    let key = |k: &str| !k.is_empty() && k.len() <= MAX_KEY_BYTES;
    if let Some(f) = &r.subject_fingerprint
        && !hex(f)
    {
        return Some(format!("subject_fingerprint `{f}` is not 1-64 hex digits"));
    }
    for (i, t) in r.tracked.iter().flatten().enumerate() {
        let at = format!("tracked[{i}]");
        if t.kind != "path" && t.kind != "symbol" {
            return Some(format!("{at}: kind `{}` is not `path` or `symbol`", t.kind));
        }
        let keys = std::iter::once(&t.target)
            .chain(&t.resolved)
            .chain(t.definitions.iter().map(|d| &d.key));
        if let Some(k) = keys.into_iter().find(|k| !key(k)) {
            return Some(format!(
                "{at}: a target or key is empty or over {MAX_KEY_BYTES} bytes ({} bytes)",
                k.len()
            ));
        }
        let prints = [&t.snapshot, &t.signature_snapshot]
            .into_iter()
            .flatten()
            .chain(t.definitions.iter().flat_map(|d| [&d.body, &d.signature]));
        if let Some(f) = prints.into_iter().find(|f| !hex(f)) {
            return Some(format!("{at}: fingerprint `{f}` is not 1-64 hex digits"));
        }
    }
    None
}

/// Why `subject` cannot be a page of `kind`, if it cannot.
fn subject_problem(subject: &str, kind: &str) -> Option<String> {
    let fixed = match subject {
        "." => Some("root"),
        "decisions" => Some("decisions"),
        "lessons" => Some("lessons"),
        s if s.starts_with("topic:") => Some("topic"),
        s => loci_store::logs::log_of_entry(s),
    };
    match (fixed, kind) {
        (Some(expected), k) if k != expected => Some(format!(
            "kind `{kind}` does not fit subject `{subject}` (expected `{expected}`)"
        )),
        (Some(_), _) if subject == "topic:" => Some("a topic needs a name".into()),
        (Some(_), _) => None,
        (None, "file" | "folder") => {
            let bad_path = subject.is_empty()
                || subject.starts_with('/')
                || subject.contains('\\')
                || subject.contains('\0')
                || subject
                    .split('/')
                    .any(|seg| seg.is_empty() || seg == "." || seg == "..");
            bad_path.then(|| {
                format!("subject `{subject}` is not a repo-relative path (no leading `/`, no `..`)")
            })
        }
        (None, _) => Some(format!(
            "kind `{kind}` is not one of file, folder, root, topic, decisions, lessons"
        )),
    }
}

fn is_date(s: &str) -> bool {
    s.parse::<jiff::Timestamp>().is_ok()
}
