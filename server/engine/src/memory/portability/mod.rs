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

mod import;
mod validate;

use std::collections::BTreeSet;
use std::path::Path;

use loci_store::audit as au;
use loci_store::backup::{BackupStats, RestoreStats};
use loci_store::memory::{self as mem, ClaimDefinition, Fact};
use serde::{Deserialize, Serialize};

use super::claims::{ClaimSnapshot, GivenClaim, subject_snapshot};
use crate::{EngineError, Envelope, Result, Workspace};

pub(crate) use self::import::{dismissal_words_known, record_dismissal};
use self::import::{import_dismissals, import_page, import_sessions};
use self::validate::validate;

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
        // else's file: `--db notes.txt restore B` must not replace the notes with the
        // backup.
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
