//! Portability of authored memory: `export` (a JSON document of pages, revisions,
//! decisions, lessons, topics, pins, fact definitions, sessions and dismissals), `import`
//! (idempotent: by page uid, revision, fact and session content hash, and finding key),
//! and the online `backup` / validated `restore` of the whole database.
//!
//! An export carries everything people and agents wrote, with its provenance (author,
//! session, time, version, summary). It never carries fact outcomes (command output can
//! hold anything), operation receipts, event payloads or the map: those are per
//! checkout. Importing re-extracts each revision's claims through `remember`'s
//! [`super::claims::snapshot_revision`], keeping the snapshots the export carries (the
//! code the text was verified against there), so memory stale there is stale here; what
//! the exporting checkout tracked but this one lacks (a page's file, a claimed path or
//! symbol) or names differently is kept, and reported by `lint` and `check`.

use std::collections::BTreeSet;
use std::path::Path;

use loci_store::Context;
use loci_store::audit as au;
use loci_store::backup::{BackupStats, RestoreStats};
use loci_store::memory::{self as mem, ClaimDefinition, Fact, NewRevision};
use loci_store::rusqlite::Transaction;
use serde::{Deserialize, Serialize};

use super::claims::{
    ClaimSnapshot, Given, GivenClaim, SubjectSnapshot, snapshot_revision, subject_snapshot,
};
use crate::{EngineError, Envelope, Result, Workspace};

/// The `format` field of an export document.
pub const EXPORT_FORMAT: &str = "loci-memory";

/// The `format_version` this binary writes and the newest it reads. Version 2 added
/// sessions and dismissals, which a version-1 reader would drop.
pub const EXPORT_FORMAT_VERSION: u32 = 2;

/// An export document (`loci export`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryExport {
    /// Always [`EXPORT_FORMAT`].
    pub format: String,
    /// [`EXPORT_FORMAT_VERSION`] when written by this binary.
    pub format_version: u32,
    /// When it was written (RFC 3339, UTC).
    pub exported_at: String,
    /// Every page, by subject.
    pub pages: Vec<ExportedPage>,
    /// Every fact definition, oldest first (never their runs).
    pub facts: Vec<ExportedFact>,
    /// Every session of the diary, oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sessions: Vec<ExportedSession>,
    /// Every contradiction a human dismissed (`loci resolve`), so the findings stay
    /// suppressed wherever the memory goes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dismissals: Vec<ExportedDismissal>,
}

/// One session in an export: its provenance and digest, not its per-checkout high-water
/// marks.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExportedSession {
    /// [`session_key`]: how revisions name it, and how an import finds it again.
    pub key: String,
    /// What the session set out to do.
    pub task: Option<String>,
    /// Who ran it.
    pub author: String,
    /// RFC 3339.
    pub started_at: String,
    /// RFC 3339, when it had ended.
    pub ended_at: Option<String>,
    /// The closing summary.
    pub summary: Option<String>,
    /// Git branch at begin.
    pub branch: Option<String>,
    /// Git commit at begin.
    pub head: Option<String>,
    /// What it changed, as of the export.
    pub digest: super::session::Digest,
}

impl ExportedSession {
    /// The session as a new row of this store (ids 0: [`mem::insert_session_as`] gives
    /// them), with `digest` as stored (JSON), for an import and for team replication alike.
    pub(crate) fn new_row(&self, digest: Option<String>) -> mem::Session {
        mem::Session {
            session_id: 0,
            task: self.task.clone(),
            author: self.author.clone(),
            started_at: self.started_at.clone(),
            ended_at: self.ended_at.clone(),
            summary: self.summary.clone(),
            start_event_id: 0,
            start_revision_id: 0,
            end_event_id: None,
            end_revision_id: None,
            branch: self.branch.clone(),
            head: self.head.clone(),
            digest,
        }
    }
}

/// A human dismissal of a contradiction in an export: the finding (its key is the same in
/// every checkout: origin, subject, kind and target) and the human's notes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExportedDismissal {
    /// Origin, subject, kind and target of the finding.
    pub finding_key: String,
    /// `page` or `doc`.
    pub origin: String,
    /// Page subject or doc path.
    pub subject: String,
    /// `missing_path`, `missing_symbol`, `version_mismatch`.
    pub kind: String,
    /// `high`, `medium`, `low`.
    pub severity: String,
    /// The claim as written.
    pub claim: String,
    /// Its normalized target.
    pub target: String,
    /// What the code said instead.
    pub truth: Option<String>,
    /// The fix that was offered.
    pub suggestion: Option<String>,
    /// Zero-based line of the claim.
    pub line: u32,
    /// Zero-based byte column.
    pub column: u32,
    /// Zero-based byte column where the claim ends.
    pub end_column: u32,
    /// Why it is not a problem.
    pub notes: Option<String>,
    /// RFC 3339, when it was dismissed.
    pub dismissed_at: String,
}

/// One page in an export.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExportedPage {
    /// Stable identity across databases (kept by renames and imports).
    pub uid: String,
    /// `src/auth.py`, `src`, `.`, `topic:NAME`, `decisions`, `lessons`.
    pub subject: String,
    /// `file`, `folder`, `root`, `topic`, `decisions`, `lessons`.
    pub kind: String,
    /// Never auto-staled.
    pub pinned: bool,
    /// RFC 3339.
    pub created_at: String,
    /// Topic members (topic pages only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<String>,
    /// Every revision, oldest first.
    pub revisions: Vec<ExportedRevision>,
}

/// One revision in an export.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExportedRevision {
    /// 1, 2, 3, ... per page.
    pub version: i64,
    /// Markdown.
    pub body: String,
    /// Change summary.
    pub summary: Option<String>,
    /// `human:NAME`, `agent:NAME`, a model name.
    pub author: String,
    /// RFC 3339.
    pub created_at: String,
    /// The kind of event that produced it (`remember`, `decision`, `rollback`, ...).
    #[serde(default)]
    pub event: Option<String>,
    /// [`revision_hash`] of the fields above; checked on import when present.
    #[serde(default)]
    pub hash: Option<String>,
    /// The [`ExportedSession::key`] of the session it was written in. Not part of
    /// [`Self::hash`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// The claims of the body that resolved in the exporting checkout (to a path, a
    /// symbol, or a set of definitions), in body order, each with its snapshot there. An
    /// import keeps those snapshots (a claim stale there stays stale; where the code is
    /// the same, the fingerprints match and it is fresh), reports a claim that names other
    /// code here, and reports those that name nothing in the importing checkout
    /// (`missing_path`, `missing_symbol`). Absent in exports written before loci tracked
    /// it: then every path and symbol claim counts as resolved there. Not part of
    /// [`Self::hash`]: it is evidence, not authored text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tracked: Option<Vec<TrackedClaim>>,
    /// A file page's snapshot of its own file in the exporting checkout (its semantic
    /// fingerprint in hex, as `page_snapshots` holds it), kept by an import so the page is
    /// stale here where it was stale there. Absent when that checkout had no such file, for
    /// other pages, and in older exports (the import then takes it here). Not part of
    /// [`Self::hash`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject_fingerprint: Option<String>,
}

/// A claim that resolved where it was exported from ([`ExportedRevision::tracked`]), with
/// the snapshot taken there. Exports written before snapshots were carried hold only
/// `kind` and `target`; an import snapshots such a claim against its own map.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct TrackedClaim {
    /// `path` or `symbol`.
    pub kind: String,
    /// The claim's normalized target (`src/lib.rs`, `RegexBuilder.new`).
    pub target: String,
    /// The path or symbol key it resolved to (`src/lib.rs#Regex.new@method`); absent for
    /// a set of definitions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved: Option<String>,
    /// The file's semantic fingerprint (its content hash, for a file loci does not parse)
    /// or the symbol's body fingerprint then, in hex; absent for a folder and a set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<String>,
    /// The symbol's signature fingerprint then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature_snapshot: Option<String>,
    /// For a name with several definitions: each of them then, by key, with its body and
    /// signature fingerprints.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub definitions: Vec<ClaimDefinition>,
}

impl TrackedClaim {
    /// The claim as [`snapshot_revision`] takes it: with its snapshot when the export
    /// carried one.
    fn given(&self) -> GivenClaim {
        let snapshot = ClaimSnapshot {
            resolved: self.resolved.clone(),
            snapshot: self.snapshot.clone(),
            signature_snapshot: self.signature_snapshot.clone(),
            definitions: self.definitions.clone(),
        };
        GivenClaim {
            kind: self.kind.clone(),
            target: self.target.clone(),
            snapshot: (snapshot.resolved.is_some() || !snapshot.definitions.is_empty())
                .then_some(snapshot),
            elsewhere: true,
        }
    }
}

/// One fact definition in an export.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExportedFact {
    /// The claim the command demonstrates.
    pub claim: String,
    /// The command line.
    pub command: String,
    /// Expected output substring.
    pub expect_output: Option<String>,
    /// Expected exit code.
    pub expect_exit: Option<i64>,
    /// Who recorded it.
    pub author: String,
    /// RFC 3339.
    pub created_at: String,
    /// [`fact_hash`] of the fields above; checked on import when present.
    #[serde(default)]
    pub hash: Option<String>,
}

/// What an import did. Importing the same document again reports everything skipped.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ImportReport {
    /// Where the document came from (a path, or `-` for stdin).
    pub source: String,
    /// Pages that did not exist here, by subject.
    pub pages_created: Vec<String>,
    /// Revisions appended.
    pub revisions_added: u64,
    /// Revisions already here (same content hash), not written again.
    pub revisions_skipped: u64,
    /// Revisions appended under another version than in the export because this page
    /// had its own revisions: (subject, exported version, version here).
    pub renumbered: Vec<(String, i64, i64)>,
    /// Pages found by uid under another subject and moved to the export's: (from, to).
    pub pages_moved: Vec<(String, String)>,
    /// Topic members added.
    pub members_added: u64,
    /// Facts added.
    pub facts_added: u64,
    /// Facts already here, not added again.
    pub facts_skipped: u64,
    /// Sessions added.
    pub sessions_added: u64,
    /// Sessions already here, not added again.
    pub sessions_skipped: u64,
    /// Dismissals recorded (a finding dismissed there is dismissed here).
    pub dismissals_added: u64,
    /// Findings already dismissed here.
    pub dismissals_skipped: u64,
    /// Anything to know (a page kept under its local subject, a kind mismatch, a page about
    /// a file this checkout lacks, claims that name nothing here).
    pub notes: Vec<String>,
}

/// The content hash identifying a revision across databases: BLAKE3 (32 hex digits) of
/// the JSON array `[version, body, summary, author, created_at]`.
pub fn revision_hash(
    version: i64,
    body: &str,
    summary: Option<&str>,
    author: &str,
    created_at: &str,
) -> String {
    let canonical = serde_json::json!([version, body, summary, author, created_at]);
    loci_core::fingerprint::content_hash(canonical.to_string().as_bytes())
}

/// The content hash identifying a fact definition: BLAKE3 (32 hex digits) of the JSON
/// array `[claim, command, expect_output, expect_exit, author, created_at]`.
pub fn fact_hash(f: &ExportedFact) -> String {
    let canonical = serde_json::json!([
        f.claim,
        f.command,
        f.expect_output,
        f.expect_exit,
        f.author,
        f.created_at
    ]);
    loci_core::fingerprint::content_hash(canonical.to_string().as_bytes())
}

impl ExportedSession {
    /// The session row `s` with its digest `digest`, keyed by [`session_key`].
    pub fn of(s: mem::Session, digest: super::session::Digest) -> ExportedSession {
        ExportedSession {
            key: session_key(&s.author, &s.started_at, s.task.as_deref()),
            task: s.task,
            author: s.author,
            started_at: s.started_at,
            ended_at: s.ended_at,
            summary: s.summary,
            branch: s.branch,
            head: s.head,
            digest,
        }
    }
}

impl From<au::Contradiction> for ExportedDismissal {
    fn from(c: au::Contradiction) -> ExportedDismissal {
        ExportedDismissal {
            dismissed_at: c.resolved_at.unwrap_or(c.detected_at),
            finding_key: c.finding_key,
            origin: c.origin,
            subject: c.subject,
            kind: c.kind,
            severity: c.severity,
            claim: c.claim,
            target: c.target,
            truth: c.truth,
            suggestion: c.suggestion,
            line: c.line,
            column: c.column,
            end_column: c.end_column,
            notes: c.notes,
        }
    }
}

impl From<&Fact> for ExportedFact {
    fn from(f: &Fact) -> ExportedFact {
        let mut e = ExportedFact {
            claim: f.claim.clone(),
            command: f.command.clone(),
            expect_output: f.expect_output.clone(),
            expect_exit: f.expect_exit,
            author: f.author.clone(),
            created_at: f.created_at.clone(),
            hash: None,
        };
        e.hash = Some(fact_hash(&e));
        e
    }
}

/// The key identifying a session across databases: BLAKE3 (32 hex digits) of the JSON
/// array `[author, started_at, task]`.
pub fn session_key(author: &str, started_at: &str, task: Option<&str>) -> String {
    let canonical = serde_json::json!([author, started_at, task]);
    loci_core::fingerprint::content_hash(canonical.to_string().as_bytes())
}

/// Parses an export document; errors name `source` and the line and column.
pub fn parse_export(text: &str, source: &str) -> Result<MemoryExport> {
    let doc: MemoryExport =
        serde_json::from_str(text).map_err(|e| EngineError::InvalidArgument {
            name: "FILE".into(),
            message: format!("{source}: not a loci memory export: {e}"),
        })?;
    validate(&doc, source)?;
    Ok(doc)
}

/// Checks an export's shape before anything is written: format, subjects, kinds,
/// increasing versions, dates, hashes.
fn validate(doc: &MemoryExport, source: &str) -> Result<()> {
    let bad = |at: String, message: String| EngineError::InvalidArgument {
        name: "FILE".into(),
        message: format!("{source}: {at}: {message}"),
    };
    if doc.format != EXPORT_FORMAT {
        return Err(bad(
            "format".into(),
            format!("is `{}`, expected `{EXPORT_FORMAT}`", doc.format),
        ));
    }
    if doc.format_version == 0 || doc.format_version > EXPORT_FORMAT_VERSION {
        return Err(bad(
            "format_version".into(),
            format!(
                "{} is not supported (this loci reads 1 to {EXPORT_FORMAT_VERSION}); upgrade loci",
                doc.format_version
            ),
        ));
    }
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
            return Err(bad(
                at,
                format!("uid `{}` is not 1-64 letters, digits or `-`", p.uid),
            ));
        }
        if !uids.insert(p.uid.as_str()) || !subjects.insert(p.subject.as_str()) {
            return Err(bad(at, "appears twice (same uid or subject)".into()));
        }
        if let Some(problem) = subject_problem(&p.subject, &p.kind) {
            return Err(bad(at, problem));
        }
        if !is_date(&p.created_at) {
            return Err(bad(
                at,
                format!("created_at `{}` is not an RFC 3339 time", p.created_at),
            ));
        }
        let mut last = 0;
        let mut last_at: Option<(jiff::Timestamp, &str)> = None;
        for (j, r) in p.revisions.iter().enumerate() {
            let at = format!("{at} revisions[{j}]");
            if r.version <= last {
                return Err(bad(
                    at,
                    format!("version {} does not follow version {last}", r.version),
                ));
            }
            if let Some(event) = r.event.as_deref()
                && !REVISION_EVENTS.contains(&event)
            {
                return Err(bad(
                    at,
                    format!(
                        "event `{event}` is not one of {}",
                        REVISION_EVENTS.join(", ")
                    ),
                ));
            }
            if let Ok(t) = r.created_at.parse::<jiff::Timestamp>() {
                if t > latest {
                    return Err(bad(
                        at,
                        format!("created_at `{}` is in the future", r.created_at),
                    ));
                }
                if let Some((before, text)) = last_at
                    && t < before
                {
                    return Err(bad(
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
                return Err(bad(at, "author is empty".into()));
            }
            if !is_date(&r.created_at) {
                return Err(bad(
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
                return Err(bad(
                    at,
                    "hash does not match the content (edited after export?); fix the content or delete the hash"
                        .into(),
                ));
            }
            if let Some(problem) = snapshot_problem(r) {
                return Err(bad(at, problem));
            }
        }
        if !p.members.is_empty() && p.kind != "topic" {
            return Err(bad(at, "only topic pages have members".into()));
        }
    }
    for (i, f) in doc.facts.iter().enumerate() {
        let at = format!("facts[{i}]");
        if f.claim.trim().is_empty() || f.command.trim().is_empty() || f.author.trim().is_empty() {
            return Err(bad(
                at,
                "claim, command and author must not be empty".into(),
            ));
        }
        if !is_date(&f.created_at) {
            return Err(bad(
                at,
                format!("created_at `{}` is not an RFC 3339 time", f.created_at),
            ));
        }
        if f.hash.as_ref().is_some_and(|h| *h != fact_hash(f)) {
            return Err(bad(
                at,
                "hash does not match the content (edited after export?); fix the content or delete the hash"
                    .into(),
            ));
        }
    }
    let mut keys = BTreeSet::new();
    for (i, s) in doc.sessions.iter().enumerate() {
        let at = format!("sessions[{i}]");
        if s.author.trim().is_empty() {
            return Err(bad(at, "author is empty".into()));
        }
        if let Some(t) = [Some(&s.started_at), s.ended_at.as_ref()]
            .into_iter()
            .flatten()
            .find(|t| !is_date(t))
        {
            return Err(bad(at, format!("`{t}` is not an RFC 3339 time")));
        }
        if let Some(ended) = &s.ended_at
            && ended.parse::<jiff::Timestamp>().ok() < s.started_at.parse::<jiff::Timestamp>().ok()
        {
            return Err(bad(
                at,
                format!("ended_at `{ended}` is before started_at `{}`", s.started_at),
            ));
        }
        if s.key != session_key(&s.author, &s.started_at, s.task.as_deref()) {
            return Err(bad(
                at,
                "key does not match author, started_at and task (edited after export?)".into(),
            ));
        }
        keys.insert(s.key.as_str());
    }
    for (i, p) in doc.pages.iter().enumerate() {
        for (j, r) in p.revisions.iter().enumerate() {
            if let Some(k) = r.session.as_deref().filter(|k| !keys.contains(k)) {
                return Err(bad(
                    format!("pages[{i}] (`{}`) revisions[{j}]", p.subject),
                    format!("session `{k}` is not among the export's sessions"),
                ));
            }
        }
    }
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
            return Err(bad(
                at,
                format!("{name} `{value}` is not one of {}", allowed.join(", ")),
            ));
        }
        if d.finding_key.is_empty() || d.finding_key.len() > MAX_KEY_BYTES {
            return Err(bad(at, "finding_key is empty or oversized".into()));
        }
        if !is_date(&d.dismissed_at) {
            return Err(bad(
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

impl Workspace {
    /// Everything authored as one document: every page with its revisions, fact
    /// definition, session and dismissal.
    pub fn export_memory(&self) -> Result<Envelope<MemoryExport>> {
        let conn = self.store.conn();
        let mut sessions = Vec::new();
        let mut session_keys = std::collections::BTreeMap::new();
        for s in mem::sessions(conn)? {
            let key = session_key(&s.author, &s.started_at, s.task.as_deref());
            session_keys.insert(s.session_id, key.clone());
            let digest = match &s.digest {
                Some(json) => serde_json::from_str(json).unwrap_or_default(),
                None => self.digest(&s, None)?,
            };
            sessions.push(ExportedSession::of(s, digest));
        }
        let dismissals = au::contradictions(conn, Some("dismissed"))?
            .into_iter()
            .map(ExportedDismissal::from)
            .collect();
        let mut pages = Vec::new();
        for p in mem::pages(conn)? {
            let mut revisions = Vec::new();
            for r in mem::revisions_of(conn, p.page_id)? {
                // An imported revision reports the event it had where it was written.
                let event = match r.event_id {
                    Some(id) => mem::event_by_id(conn, id)?.map(|e| match e.kind.as_str() {
                        "import" => e
                            .payload
                            .and_then(|p| serde_json::from_str::<serde_json::Value>(&p).ok())
                            .and_then(|v| v["event"].as_str().map(str::to_string))
                            .unwrap_or(e.kind),
                        _ => e.kind,
                    }),
                    None => None,
                };
                let hash = revision_hash(
                    r.version,
                    &r.body,
                    r.summary.as_deref(),
                    &r.author,
                    &r.created_at,
                );
                let mut tracked = Vec::new();
                for c in mem::claims_of(conn, r.revision_id)? {
                    if c.kind != "version"
                        && (c.resolved.is_some()
                            || !c.definitions.is_empty()
                            || c.resolved_elsewhere)
                    {
                        tracked.push(TrackedClaim {
                            kind: c.kind,
                            target: c.target,
                            resolved: c.resolved,
                            snapshot: c.snapshot,
                            signature_snapshot: c.signature_snapshot,
                            definitions: c.definitions,
                        });
                    }
                }
                tracked.dedup();
                let subject_fingerprint = if p.kind == "file" {
                    mem::page_snapshot(conn, r.revision_id)?.and_then(|s| s.fingerprint)
                } else {
                    None
                };
                revisions.push(ExportedRevision {
                    version: r.version,
                    body: r.body,
                    summary: r.summary,
                    author: r.author,
                    created_at: r.created_at,
                    event,
                    hash: Some(hash),
                    session: r.session_id.and_then(|id| session_keys.get(&id).cloned()),
                    tracked: Some(tracked),
                    subject_fingerprint,
                });
            }
            let members = if p.kind == "topic" {
                mem::topic_members(conn, p.page_id)?
            } else {
                Vec::new()
            };
            pages.push(ExportedPage {
                uid: mem::page_uid(conn, p.page_id)?,
                subject: p.subject,
                kind: p.kind,
                pinned: p.pinned,
                created_at: p.created_at,
                members,
                revisions,
            });
        }
        let facts = mem::facts(conn)?.iter().map(ExportedFact::from).collect();
        self.envelope(
            MemoryExport {
                format: EXPORT_FORMAT.into(),
                format_version: EXPORT_FORMAT_VERSION,
                exported_at: crate::envelope::now_rfc3339(),
                pages,
                facts,
                sessions,
                dismissals,
            },
            Vec::new(),
        )
    }

    /// Imports an export document in one transaction. A page is found by uid, else by
    /// subject, else created with the export's uid, subject, pin and time; each revision
    /// whose content hash is not on the page yet is appended with its original author,
    /// time and summary (and its version, unless this page has revisions of its own), with
    /// an `import` event; topic members and facts are added when missing. Importing the
    /// same document twice changes nothing the second time. The workspace is scanned first,
    /// and claims are stored by the same [`super::claims::snapshot_revision`] as `remember`,
    /// keeping the snapshots of [`ExportedRevision::tracked`] and
    /// [`ExportedRevision::subject_fingerprint`] (a claim without one is snapshotted
    /// against the code on disk): a page about a file this checkout lacks is marked
    /// deleted, a claim that names other code here than there is noted and marked stale,
    /// and a claim that resolved where it was exported but names nothing here is reported
    /// missing by lint.
    pub fn import_memory(
        &mut self,
        doc: &MemoryExport,
        source: &str,
    ) -> Result<Envelope<ImportReport>> {
        validate(doc, source)?;
        self.refuse_secrets(doc, source)?;
        // Claims are snapshotted against the code as it is on disk now.
        self.scan(&|_| {})?;
        // Page subjects' snapshots, read outside the transaction.
        let mut subjects = std::collections::BTreeMap::new();
        for p in &doc.pages {
            if let Some(s) = subject_snapshot(self.store.conn(), &self.root, &p.subject, &p.kind)? {
                subjects.insert((p.subject.clone(), p.kind.clone()), s);
            }
        }
        let root = self.root.clone();
        let report = self.store.write(|tx| {
            let mut report = ImportReport {
                source: source.to_string(),
                ..Default::default()
            };
            let sessions = import_sessions(tx, doc, &mut report)?;
            for p in &doc.pages {
                import_page(tx, p, doc, &root, &subjects, &sessions, &mut report)?;
            }
            import_dismissals(tx, doc, &mut report)?;
            // An export written before decisions and lessons were pages of their own holds
            // each log as one page: it becomes entries here, as migration 22 made them.
            loci_store::logs::split_logs(tx)?;
            let mut known: BTreeSet<String> = mem::facts(tx)?
                .iter()
                .map(|f| fact_hash(&ExportedFact::from(f)))
                .collect();
            for f in &doc.facts {
                if known.insert(fact_hash(f)) {
                    let row = Fact {
                        fact_id: 0,
                        claim: f.claim.clone(),
                        command: f.command.clone(),
                        expect_output: f.expect_output.clone(),
                        expect_exit: f.expect_exit,
                        author: f.author.clone(),
                        created_at: f.created_at.clone(),
                        last_status: None,
                        last_run_at: None,
                    };
                    let id = mem::insert_fact_as(tx, &row)?;
                    mem::insert_event(
                        tx,
                        "import",
                        &format!("import:fact:{}", fact_hash(f)),
                        "",
                        Some(&serde_json::json!({"fact_id": id, "from": source}).to_string()),
                        None,
                    )?;
                    report.facts_added += 1;
                } else {
                    report.facts_skipped += 1;
                }
            }
            Ok(report)
        })?;
        self.envelope(report, Vec::new())
    }

    /// Refuses an export document holding a credential-shaped token, or text over a write's
    /// limits, in any text it would store (revision bodies, summaries and authors, fact
    /// claims, commands, expected output and authors):
    /// `Err(InvalidArgument)` naming `FILE`, where in the document, the rule and the
    /// position in that text, so nothing of it is imported.
    fn refuse_secrets(&self, doc: &MemoryExport, source: &str) -> Result<()> {
        use super::guard::{MAX_AUTHOR_BYTES, MAX_MEMORY_TEXT_BYTES};
        let found = |at: String, text: &str| {
            // The limits of a write hold for an import too (an author is a name).
            let limit = if at.ends_with(" author") {
                MAX_AUTHOR_BYTES
            } else {
                MAX_MEMORY_TEXT_BYTES
            };
            if text.len() > limit {
                return Some(EngineError::InvalidArgument {
                    name: "FILE".into(),
                    message: format!(
                        "{source}: {at} is {} bytes; memory takes at most {limit} bytes \
                         there: shorten it in the export and import again",
                        text.len()
                    ),
                });
            }
            self.secrets
                .find_token(text)
                .map(|m| EngineError::InvalidArgument {
                    name: "FILE".into(),
                    message: format!(
                        "{source}: {at} contains {m}; loci does not store credentials in \
                         memory. Remove it from the export (or put a placeholder such as \
                         <TOKEN> in its place) and import again"
                    ),
                })
        };
        for (i, p) in doc.pages.iter().enumerate() {
            for (j, r) in p.revisions.iter().enumerate() {
                let at = format!("pages[{i}] (`{}`) revisions[{j}]", p.subject);
                let texts = [
                    Some(("body", &r.body)),
                    r.summary.as_ref().map(|s| ("summary", s)),
                    Some(("author", &r.author)),
                ];
                for (field, text) in texts.into_iter().flatten() {
                    if let Some(e) = found(format!("{at} {field}"), text) {
                        return Err(e);
                    }
                }
                // Claims' targets and keys are stored too.
                for (k, t) in r.tracked.iter().flatten().enumerate() {
                    let keys = std::iter::once(&t.target)
                        .chain(&t.resolved)
                        .chain(t.definitions.iter().map(|d| &d.key));
                    for key in keys {
                        if let Some(e) = found(format!("{at} tracked[{k}]"), key) {
                            return Err(e);
                        }
                    }
                }
            }
        }
        for (i, f) in doc.facts.iter().enumerate() {
            let texts = [
                Some(("claim", &f.claim)),
                Some(("command", &f.command)),
                f.expect_output.as_ref().map(|s| ("expect_output", s)),
                Some(("author", &f.author)),
            ];
            for (field, text) in texts.into_iter().flatten() {
                if let Some(e) = found(format!("facts[{i}] {field}"), text) {
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    /// Copies the whole database to `dest` (a new file) with SQLite's online backup API;
    /// other processes may keep writing meanwhile. See [`loci_store::backup`].
    ///
    /// Errors: [`EngineError::InvalidArgument`] (`PATH`) when `dest` is a directory or its
    /// folder does not exist (a backup makes no folders, as `--db` makes none); the
    /// store's errors otherwise (`dest` exists, a busy or damaged source).
    pub fn backup(&self, dest: &Path) -> Result<Envelope<BackupStats>> {
        if dest.is_dir() {
            return Err(EngineError::InvalidArgument {
                name: "PATH".into(),
                message: format!(
                    "{} is a directory; give the backup's file name, e.g. {}",
                    dest.display(),
                    dest.join("loci-backup.db").display()
                ),
            });
        }
        if let Some(message) = crate::folder_problem(dest, "backup") {
            return Err(EngineError::InvalidArgument {
                name: "PATH".into(),
                message,
            });
        }
        let stats = self.store.backup_online(dest, None)?;
        self.envelope(stats, Vec::new())
    }

    /// [`Workspace::restore`] for a database [`Workspace::open`] refused as damaged
    /// ([`loci_store::StoreError::Damaged`]): the backup at `src` takes the place of the
    /// database at `db` (default `<root>/.loci/loci.db`), the damaged file is kept under
    /// `backups/` ([`loci_store::backup::restore_over_damaged`]), and the workspace is
    /// opened on the restored store.
    pub fn restore_damaged(
        root: &Path,
        db: Option<&Path>,
        src: &Path,
    ) -> Result<(Workspace, Envelope<RestoreStats>)> {
        // A `--db` outside loci's own folder that is not a SQLite file at all is someone
        // else's file (`--db notes.txt restore B` had replaced the notes with the backup).
        if let Some(db) = db
            && !crate::in_loci_dir_of(root, db)
            && !loci_store::is_sqlite_file(db)
        {
            return Err(EngineError::InvalidArgument {
                name: "db".into(),
                message: format!(
                    "{} is not a SQLite database (it does not begin with SQLite's header): loci will not put a backup in its place; check --db, or move the file aside first",
                    db.display()
                ),
            });
        }
        let default;
        let live = match db {
            Some(db) => db,
            None => {
                default = root.join(crate::LOCI_DIR).join("loci.db");
                &default
            }
        };
        let stats = loci_store::backup::restore_over_damaged(live, src)?;
        let ws = Workspace::open(root, db)?;
        let env = ws.envelope(stats, Vec::new())?;
        Ok((ws, env))
    }

    /// Replaces the database with the backup at `src`, after copying it next to the
    /// database and validating the copy; the replaced database is kept under
    /// `.loci/backups/`. A file that is not a usable loci database is refused with
    /// [`loci_store::StoreError::InvalidDatabase`] and nothing changes.
    pub fn restore(&mut self, src: &Path) -> Result<Envelope<RestoreStats>> {
        if let (Some(live), Ok(src_canon)) = (self.store.path(), src.canonicalize())
            && live.canonicalize().is_ok_and(|l| l == src_canon)
        {
            return Err(EngineError::InvalidArgument {
                name: "PATH".into(),
                message: format!("{} is the live database itself", src.display()),
            });
        }
        let stats = match self.store.restore_from(src) {
            // The live database is damaged past what opening reads (saving it before the
            // restore found it): no connection can restore into it, so the backup takes
            // its place, the damaged file kept, as for one that does not open.
            Err(loci_store::StoreError::Damaged { path, .. }) => {
                // Closes this connection to the damaged file.
                self.store = loci_store::Store::open_in_memory()?;
                let restored = loci_store::backup::restore_over_damaged(&path, src);
                match loci_store::Store::open(&path) {
                    Ok(store) => self.store = store,
                    Err(e) if restored.is_ok() => return Err(e.into()),
                    Err(_) => {}
                }
                restored?
            }
            other => other?,
        };
        // The map changed under any cached import graph.
        *self.graph.lock().unwrap_or_else(|p| p.into_inner()) = None;
        self.envelope(stats, Vec::new())
    }
}

/// Imports one page; see [`Workspace::import_memory`].
fn import_page(
    tx: &Transaction<'_>,
    p: &ExportedPage,
    doc: &MemoryExport,
    root: &Path,
    subjects: &std::collections::BTreeMap<(String, String), SubjectSnapshot>,
    sessions: &std::collections::BTreeMap<String, i64>,
    report: &mut ImportReport,
) -> loci_store::Result<()> {
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
        return Ok(());
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
    let mut subject = page.subject.clone();
    // An export older than a rename here names the page's old path: moving the page there
    // would put it back on a path this checkout renamed away and no longer has (then marked
    // deleted). The page stays where its file is, and the report says so, naming both. A
    // rename made at the source (a path this checkout never renamed) is followed.
    let gone_here = |subject: &str| -> loci_store::Result<bool> {
        Ok(matches!(
            super::claims::subject_snapshot(tx, root, subject, &p.kind)?,
            Some(s) if s.missing
        ))
    };
    let renamed_away_here = |from: &str| -> loci_store::Result<bool> {
        tx.prepare_cached(
            "SELECT EXISTS(SELECT 1 FROM events WHERE kind = 'rename' AND payload ->> 'from' = ?1)",
        )
        .and_then(|mut st| st.query_row([from], |r| r.get(0)))
        .ctx(|| format!("looking up renames of `{from}`"))
    };
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
    if page.kind != p.kind {
        report.notes.push(format!(
            "`{subject}` is a {} page here and a {} page in the export; kept {}",
            page.kind, p.kind, page.kind
        ));
    }
    // What this page already holds: the hash of each revision, and the original hash of
    // each revision an earlier import appended (possibly under another version).
    let mut held = BTreeSet::new();
    let mut next = 1;
    for r in mem::revisions_of(tx, page.page_id)? {
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
    // What the last revision appended (the page's current one) does not find here: whether
    // its file is missing, and its claims.
    let mut last_added: Option<(bool, super::claims::Snapshotted)> = None;
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
            report.renumbered.push((subject.clone(), r.version, next));
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
            &subject,
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
        let snapshot = match subjects.get(&(subject.clone(), page.kind.clone())) {
            Some(s) => Some(s.clone()),
            None => subject_snapshot(tx, root, &subject, &page.kind)?,
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
        let stored = snapshot_revision(tx, &revision, &subject, snapshot.as_ref(), Some(&given))?;
        last_added = Some((snapshot.is_some_and(|s| s.missing), stored));
        held.insert(hash);
        report.revisions_added += 1;
        next += 1;
    }
    if let Some((missing, stored)) = last_added {
        let claims = &stored.claims;
        if missing {
            report.notes.push(format!(
                "`{subject}` is not a {} of this checkout: its page is kept, and lint marks it \
                 deleted until it exists",
                page.kind
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
    for m in &p.members {
        if mem::set_topic_member(tx, page.page_id, m, true)? {
            report.members_added += 1;
        }
    }
    Ok(())
}

/// Adds the export's sessions this database lacks (by [`session_key`]); returns the local
/// id of every exported session, by key.
fn import_sessions(
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
fn import_dismissals(
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
