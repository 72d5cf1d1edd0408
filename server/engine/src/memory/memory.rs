//! Authored memory: pages, append-only revisions, decisions, lessons, topics, facts and
//! sessions, with provenance (design.md "Memory"). Every write is one `BEGIN IMMEDIATE`
//! transaction that records its event, its revision and its claims together; optimistic
//! concurrency (`expect_version`) and idempotent retries (`operation_id`) are checked
//! inside that same transaction.

use std::collections::BTreeSet;

use loci_core::claims::{ClaimKind, extract_claims};
use loci_store::logs;
use loci_store::map;
use loci_store::memory::{self as mem, ClaimDefinition, ClaimRow, NewRevision, Page, Revision};
use loci_store::rusqlite::{Connection, Transaction};
use loci_store::{Context, StoreError};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::{EngineError, Envelope, Result, Workspace};

/// Who wrote something, when the caller does not say: `$LOCI_AUTHOR`, else the git
/// identity of the checkout at `root` (`human:NAME <EMAIL>` from `user.name` and
/// `user.email`, the repository's configuration over the global one), else
/// `human:$USER` (then `$LOGNAME`, `$USERNAME`, the home directory's name). Issue 33,
/// item 7: with `$USER` unset (code-server, a systemd unit) writes were `human:unknown`;
/// that is left only when none of these says who the user is.
pub fn default_author_in(root: Option<&std::path::Path>) -> String {
    if let Some(a) = std::env::var("LOCI_AUTHOR")
        .ok()
        .filter(|a| !a.trim().is_empty())
    {
        return a;
    }
    if let Some(identity) = crate::map::git::user_identity(root) {
        return format!("human:{identity}");
    }
    let name = ["USER", "LOGNAME", "USERNAME"]
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|u| !u.trim().is_empty()))
        .or_else(|| {
            std::env::var_os("HOME")
                .map(std::path::PathBuf::from)
                .and_then(|h| h.file_name().map(|n| n.to_string_lossy().into_owned()))
                .filter(|n| !n.is_empty())
        })
        .unwrap_or_else(|| "unknown".into());
    format!("human:{name}")
}

/// [`default_author_in`] for a process without a checkout (global git configuration only).
pub fn default_author() -> String {
    default_author_in(None)
}

/// Options every memory write accepts.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct WriteOptions {
    /// Author (`human:NAME`, `agent:NAME`, a model name); default: the session's author,
    /// else [`default_author`].
    pub author: Option<String>,
    /// The session this write belongs to.
    pub session: Option<i64>,
    /// One-line change summary.
    pub summary: Option<String>,
    /// Optimistic concurrency: fail with a conflict unless the page is at this version
    /// (0 = the page must not exist yet).
    pub expect_version: Option<i64>,
    /// Idempotency key: an exact retry returns the original result; a different request
    /// under the same key is an error.
    pub operation_id: Option<String>,
}

/// A claim as answers show it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClaimView {
    /// Row id.
    pub claim_id: i64,
    /// `path`, `symbol`, `version`.
    pub kind: String,
    /// As written.
    pub text: String,
    /// Normalized target.
    pub target: String,
    /// What it resolved to when snapshotted (a path or symbol key).
    pub resolved: Option<String>,
    /// For a symbol claim naming several definitions: their keys, tracked as one set
    /// (empty otherwise).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub definitions: Vec<String>,
    /// True for an imported claim that resolved where it was exported from but names
    /// nothing here (lint reports it missing); [`Self::resolved`] is then what it resolved
    /// to there, when the export carried its snapshot.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub resolved_elsewhere: bool,
    /// Zero-based line in the body.
    pub line: u32,
    /// What `loci lint` reports about the claim now, when it fails (a write's answer
    /// says so at once; `None` elsewhere, and when it holds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finding: Option<ClaimFinding>,
}

/// A failing claim as `loci lint` reports it ([`crate::audit::lint`]): its kind (`missing_path`,
/// `missing_symbol`, `version_mismatch`, …), severity (`high`, `medium`, `low`), what the
/// code says, and a fix when one is near.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClaimFinding {
    /// The finding's kind.
    pub kind: String,
    /// `high`, `medium` or `low`.
    pub severity: String,
    /// What the code says (`` `app/storage.py` does not exist ``).
    pub truth: Option<String>,
    /// The nearest existing path or name, if any.
    pub suggestion: Option<String>,
}

impl ClaimFinding {
    /// In words, as a write's claim line gives it: `missing_path [high]: `app/x.py` does
    /// not exist (did you mean `app/y.py`?); `loci lint` reports it`.
    pub fn describe(&self) -> String {
        format!(
            "{} [{}]{}{}; `loci lint` reports it",
            self.kind,
            self.severity,
            self.truth
                .as_ref()
                .map(|t| format!(": {t}"))
                .unwrap_or_default(),
            self.suggestion
                .as_ref()
                .map(|s| format!(" (did you mean `{s}`?)"))
                .unwrap_or_default()
        )
    }
}

impl ClaimView {
    /// What the claim is checked against, in words: `None` when it resolved to one target
    /// ([`Self::resolved`]) that this map holds; else `N definitions, tracked as a set: KEY, KEY`, or why it is
    /// not checked against a snapshot.
    pub fn untracked_or_set(&self) -> Option<String> {
        if self.resolved_elsewhere
            && let Some(there) = &self.resolved
        {
            return Some(format!(
                "not in this map, though it resolved to {there} where it was exported from: \
                 lint reports it"
            ));
        }
        if self.resolved.is_some() {
            return None;
        }
        Some(if !self.definitions.is_empty() {
            format!(
                "{} definitions, tracked as a set: {}",
                self.definitions.len(),
                self.definitions.join(", ")
            )
        } else if self.resolved_elsewhere {
            "not in this map, though it resolved where it was exported from: lint reports it".into()
        } else {
            untracked_reason(&self.kind).into()
        })
    }
}

/// Why a claim of `kind` that resolved to nothing is not tracked, in words (the CLI's and
/// MCP's claim lines): a path the map lacks, or a symbol with no definition in the map or
/// more than [`MAX_TRACKED_DEFINITIONS`]. One text had served all three.
pub fn untracked_reason(kind: &str) -> &'static str {
    match kind {
        "path" => "no file or folder of that path in the map: not tracked",
        "symbol" => "no definition in the map, or more than the 8 a set tracks: not tracked",
        _ => "nothing in the map to check it against: not tracked",
    }
}

impl From<&ClaimRow> for ClaimView {
    fn from(c: &ClaimRow) -> ClaimView {
        ClaimView {
            claim_id: c.claim_id,
            kind: c.kind.clone(),
            text: c.text.clone(),
            target: c.target.clone(),
            resolved: c.resolved.clone(),
            definitions: c.definitions.iter().map(|d| d.key.clone()).collect(),
            resolved_elsewhere: c.resolved_elsewhere,
            line: c.line,
            finding: None,
        }
    }
}

/// The result of a memory write.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Written {
    /// The page written.
    pub page: Page,
    /// The new revision (published).
    pub revision: Revision,
    /// The claims found in its body and what they resolved to.
    pub claims: Vec<ClaimView>,
    /// The triggering event.
    pub event_id: i64,
    /// True when this is the stored result of an earlier identical request
    /// (same `operation_id`); nothing was written this time.
    #[serde(default)]
    pub replayed: bool,
    /// Team memory only: the operation id of a write queued while the team server was
    /// unreachable. It is not in this checkout's replica yet (`revision.revision_id` is
    /// 0, `version` what it will be if nobody writes first); it is pushed when the server
    /// returns (docs/team.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queued: Option<String>,
}

/// A page with one of its revisions.
#[derive(Clone, Debug, Serialize)]
pub struct Shown {
    /// The page.
    pub page: Page,
    /// The revision shown.
    pub revision: Revision,
    /// Its claims.
    pub claims: Vec<ClaimView>,
    /// Whether this is the page's current revision.
    pub current: bool,
    /// Topic members, for topic pages.
    pub members: Vec<String>,
}

/// A page's revisions, oldest first (bodies omitted).
#[derive(Clone, Debug, Serialize)]
pub struct History {
    /// The page.
    pub page: Page,
    /// Revisions with their triggering events' kinds.
    pub revisions: Vec<HistoryEntry>,
}

/// One line of history.
#[derive(Clone, Debug, Serialize)]
pub struct HistoryEntry {
    /// In the history of a log (`decisions`, `lessons`): the entry this revision is of
    /// (`decision:7`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry: Option<String>,
    /// Version (of the entry, in a log's history).
    pub version: i64,
    /// Author.
    pub author: String,
    /// RFC 3339.
    pub created_at: String,
    /// Change summary.
    pub summary: Option<String>,
    /// Session id.
    pub session_id: Option<i64>,
    /// Kind of the triggering event (`remember`, `rollback`, `decision`, ...).
    pub event: Option<String>,
    /// Body size in bytes.
    pub bytes: usize,
}

/// Memory as it stood at a moment.
#[derive(Clone, Debug, Serialize)]
pub struct AsOf {
    /// The moment asked for, as given.
    pub at: String,
    /// For each page that existed then: subject, version, author, date.
    pub pages: Vec<AsOfPage>,
    /// The revision of the `show` subject current at that moment, if asked.
    pub shown: Option<Revision>,
}

/// One page in an [`AsOf`] answer.
#[derive(Clone, Debug, Serialize)]
pub struct AsOfPage {
    /// Subject (as named today).
    pub subject: String,
    /// Version current at the moment.
    pub version: i64,
    /// Its author.
    pub author: String,
    /// When it was written.
    pub created_at: String,
}

/// A topic and its members.
pub type Topic = (String, Vec<String>);
/// One page of a memory listing ([`Workspace::memory_list`]).
#[derive(Clone, Debug, Serialize)]
pub struct PageEntry {
    /// The subject: a path, `.`, `topic:NAME`, `decision:N`, `lesson:N`.
    pub subject: String,
    /// `file`, `folder`, `root`, `topic`, `decision` or `lesson`.
    pub kind: String,
    /// The current revision's version (0: a topic without a body).
    pub version: i64,
    /// Who wrote the current revision.
    pub author: Option<String>,
    /// When the page last changed (RFC 3339).
    pub updated_at: Option<String>,
    /// The first non-blank line of its body, at most 120 characters.
    pub first_line: String,
    /// Whether it is pinned (never marked stale).
    pub pinned: bool,
    /// Why it is stale (the first reason), when it is.
    pub stale: Option<String>,
    /// Members, for a topic.
    pub members: u64,
}

/// How a decision or lesson names its subject, `(about `…`)`: so that the subject is a
/// path claim of the entry when it is a file or folder, linked as any claim is (`why`,
/// `context --open`, `search --path`, staleness). A folder is written with a trailing `/`
/// (`logging/`: a bare `logging` is no path claim, and the entry named nothing), a file
/// the claim rules do not take for a path (`Makefile`) with a leading `./`; the claim's
/// target is the subject either way. Topics, the root and the episodic pages are named
/// as they are.
fn subject_claim_text(subject: &str, kind: &str) -> String {
    let names_it = |text: &str| {
        loci_core::claims::extract_claims(&format!("`{text}`"))
            .iter()
            .any(|c| c.kind == loci_core::claims::ClaimKind::Path && c.target == subject)
    };
    let candidates = match kind {
        "folder" => vec![format!("{subject}/"), format!("./{subject}/")],
        "file" => vec![subject.to_string(), format!("./{subject}")],
        _ => return subject.to_string(),
    };
    candidates
        .into_iter()
        .find(|t| names_it(t))
        .unwrap_or_else(|| subject.to_string())
}

/// Subject kinds (`pages.kind`).
fn page_kind_for_fixed(subject: &str) -> Option<&'static str> {
    match subject {
        "." => Some("root"),
        "decisions" => Some("decisions"),
        "lessons" => Some("lessons"),
        s if s.starts_with("topic:") && s.len() > "topic:".len() => Some("topic"),
        s => logs::log_of_entry(s),
    }
}

impl Workspace {
    /// Normalizes a subject and finds its page kind: `.`, `decisions`, `lessons`, one of
    /// their entries (`decision:7`, which must exist), `topic:NAME`, or a path (a file or
    /// folder in the map or on disk).
    pub fn resolve_subject(&self, subject: &str) -> Result<(String, &'static str)> {
        let s = subject.trim();
        if s.is_empty() {
            return Err(EngineError::InvalidArgument {
                name: "subject".into(),
                message: "must not be empty".into(),
            });
        }
        if let Some(kind) = page_kind_for_fixed(s) {
            if logs::log_of_entry(s).is_some() && !logs::entry_exists(self.store.conn(), s)? {
                return Err(EngineError::NotFound(format!(
                    "no entry `{s}` (`loci show {kind}` lists them)"
                )));
            }
            return Ok((s.to_string(), kind));
        }
        let rel = self.contain("subject", s)?;
        if rel == "." {
            return Ok((".".into(), "root"));
        }
        // A page that already exists keeps its kind (its file may be gone: memory stays).
        if let Some(page) = mem::page_by_subject(self.store.conn(), &rel)? {
            let kind = if page.kind == "folder" {
                "folder"
            } else {
                "file"
            };
            return Ok((rel, kind));
        }
        let conn = self.store.conn();
        let in_map: bool = conn
            .query_row(
                "SELECT EXISTS(SELECT 1 FROM files WHERE path = ?1)",
                [&rel],
                |r| r.get(0),
            )
            .ctx(|| "looking up a subject".into())?;
        if in_map {
            return Ok((rel, "file"));
        }
        let folder_in_map: bool = conn
            .query_row(
                "SELECT EXISTS(SELECT 1 FROM files WHERE path > ?1 || '/' AND path < ?1 || '0')",
                [&rel],
                |r| r.get(0),
            )
            .ctx(|| "looking up a subject".into())?;
        let on_disk = self.root.join(&rel);
        if folder_in_map || on_disk.is_dir() {
            return Ok((rel, "folder"));
        }
        if on_disk.is_file() {
            return Ok((rel, "file"));
        }
        Err(EngineError::InvalidArgument {
            name: "subject".into(),
            message: format!(
                "`{rel}` is not a file or folder of the workspace; use `topic:NAME` for a concept, \
                 `.` for the whole repository, or `decisions` / `lessons`"
            ),
        })
    }

    /// Writes a new revision of `subject`'s page with `body` (it replaces the page's text;
    /// earlier revisions are kept).
    pub fn remember(
        &mut self,
        subject: &str,
        body: &str,
        opts: &WriteOptions,
    ) -> Result<Envelope<Written>> {
        self.write_page(subject, body, false, opts)
    }

    /// Adds `text` to `subject`'s page: a new revision whose body is the current one, a
    /// blank line, then `text` (just `text` for a new page). What an editor's "remember"
    /// does unless told to replace (issue 33, item 6: a note had replaced the page). The
    /// current body is read inside the write's transaction, so a concurrent write is never
    /// lost.
    pub fn remember_append(
        &mut self,
        subject: &str,
        text: &str,
        opts: &WriteOptions,
    ) -> Result<Envelope<Written>> {
        self.write_page(subject, text, true, opts)
    }

    fn write_page(
        &mut self,
        subject: &str,
        body: &str,
        append: bool,
        opts: &WriteOptions,
    ) -> Result<Envelope<Written>> {
        let (subject, kind) = self.resolve_subject(subject)?;
        if let Some(log) = super::logs::log_named(&subject) {
            return Err(EngineError::InvalidArgument {
                name: "subject".into(),
                message: format!(
                    "`{log}` is a view of its entries; add one with `loci {}`, or rewrite one \
                     with `loci remember {}N`",
                    if log == "decisions" {
                        "decide"
                    } else {
                        "learn"
                    },
                    logs::entry_prefix(log).unwrap_or_default()
                ),
            });
        }
        if body.trim().is_empty() {
            return Err(EngineError::InvalidArgument {
                name: "body".into(),
                message: "the memory text is empty".into(),
            });
        }
        self.accept_text("body", body)?;
        let op = if append {
            "remember_append"
        } else {
            "remember"
        };
        let request = serde_json::json!({"op": op, "subject": subject, "body": body, "summary": opts.summary});
        let written = self.write_revision(
            &request,
            opts,
            &subject,
            kind,
            "remember",
            Snapshots::Here,
            |current| {
                Ok(match current.filter(|_| append) {
                    Some(r) if !r.body.trim().is_empty() => {
                        format!("{}\n\n{}", r.body.trim_end(), body.trim())
                    }
                    _ => body.to_string(),
                })
            },
            None,
        )?;
        self.written_envelope(written)
    }

    /// Writes a page's text that a model wrote (page synthesis, [`super::synthesis`]):
    /// a new revision through the same write path as `remember` (its claims extracted,
    /// snapshotted and checked at once), triggered by a `synthesis` event, authored by
    /// `opts.author` (`llm:MODEL`), with `run`'s `llm_runs` row in the same transaction.
    pub(crate) fn write_synthesized(
        &mut self,
        subject: &str,
        kind: &str,
        body: &str,
        opts: &WriteOptions,
        run: &super::synthesis::RunFacts,
    ) -> Result<Envelope<Written>> {
        self.accept_text("answer", body)?;
        let request = serde_json::json!({"op": "synthesize", "subject": subject,
            "body": body, "command": run.command, "model": run.model});
        let record = |tx: &Transaction<'_>, rev: &Revision, event_id: i64| {
            loci_store::synthesis::insert_llm_run(
                tx,
                &loci_store::synthesis::NewLlmRun {
                    revision_id: rev.revision_id,
                    event_id,
                    command: &run.command,
                    model: &run.model,
                    prompt_tokens: run.prompt_tokens,
                    answer_tokens: run.answer_tokens,
                    wall_ms: run.wall_ms,
                    exit_status: run.exit_status,
                },
            )
            .map(|_| ())
        };
        let written = self.write_revision(
            &request,
            opts,
            subject,
            kind,
            "synthesis",
            Snapshots::Here,
            |_| Ok(body.to_string()),
            Some(&record),
        )?;
        self.written_envelope(written)
    }

    /// Who a write is by: its `author`, else the author of the session it belongs to, else
    /// [`default_author`].
    pub(crate) fn author_of(&self, opts: &WriteOptions) -> Result<String> {
        if let Some(a) = opts.author.as_ref().filter(|a| !a.trim().is_empty()) {
            return Ok(a.clone());
        }
        if let Some(id) = opts.session
            && let Some(s) = mem::session_by_id(self.store.conn(), id)?
        {
            return Ok(s.author);
        }
        Ok(default_author_in(Some(&self.root)))
    }

    /// Adds a decision: an entry of the `decisions` log, a page of its own (`decision:N`),
    /// and a `decision` event.
    pub fn decide(
        &mut self,
        text: &str,
        subject: Option<&str>,
        opts: &WriteOptions,
    ) -> Result<Envelope<Written>> {
        self.append_entry("decisions", "decision", text, subject, opts)
    }

    /// Adds a lesson: an entry of the `lessons` log, a page of its own (`lesson:N`), and a
    /// `lesson` event.
    pub fn learn(
        &mut self,
        text: &str,
        subject: Option<&str>,
        opts: &WriteOptions,
    ) -> Result<Envelope<Written>> {
        self.append_entry("lessons", "lesson", text, subject, opts)
    }

    fn append_entry(
        &mut self,
        log: &'static str,
        event: &'static str,
        text: &str,
        subject: Option<&str>,
        opts: &WriteOptions,
    ) -> Result<Envelope<Written>> {
        let text = text.trim();
        if text.is_empty() {
            return Err(EngineError::InvalidArgument {
                name: "text".into(),
                message: format!("the {event} is empty"),
            });
        }
        self.accept_text("text", text)?;
        let resolved = match subject {
            Some(s) => Some(self.resolve_subject(s)?),
            None => None,
        };
        let about = resolved.as_ref().map(|(s, _)| s.clone());
        let request = serde_json::json!({"op": event, "text": text, "subject": about});
        let about_text = resolved.map(|(s, kind)| subject_claim_text(&s, kind));
        let mut opts = opts.clone();
        if opts.summary.is_none() {
            opts.summary = Some(first_chars(text, 80));
        }
        // The entry's own text: the log's view adds the marker and the author.
        let mut body = text.to_string();
        if let Some(s) = &about_text {
            body.push_str(&format!(" (about `{s}`)"));
        }
        let written = self.write_revision(
            &request,
            &opts,
            log,
            log,
            event,
            Snapshots::Here,
            |_| Ok(body.clone()),
            None,
        )?;
        self.written_envelope(written)
    }

    /// The shared write path: one transaction that checks the receipt and the expected
    /// version, records the event, inserts the revision built by `body_for` from the
    /// current one, and snapshots its claims ([`snapshot_revision`], as `snapshots` says).
    #[allow(clippy::too_many_arguments)]
    fn write_revision(
        &mut self,
        request: &serde_json::Value,
        opts: &WriteOptions,
        subject: &str,
        kind: &str,
        event_kind: &str,
        snapshots: Snapshots<'_>,
        mut body_for: impl FnMut(Option<&Revision>) -> Result<String>,
        also: Option<AlsoInWrite<'_>>,
    ) -> Result<Written> {
        self.accept_options(opts)?;
        let author = self.author_of(opts)?;
        let session = opts.session;
        if let Some(id) = session {
            let s = mem::session_by_id(self.store.conn(), id)?;
            match s {
                None => {
                    return Err(EngineError::InvalidArgument {
                        name: "session".into(),
                        message: format!("no session {id}; begin one with `loci session begin`"),
                    });
                }
                Some(s) if s.ended_at.is_some() => {
                    return Err(EngineError::InvalidArgument {
                        name: "session".into(),
                        message: format!("session {id} has ended"),
                    });
                }
                Some(_) => {}
            }
        }
        if self.team_configured() {
            // Team memory: the server is the system of record (super::team).
            return self.team_write_revision(
                request,
                opts,
                &author,
                subject,
                kind,
                event_kind,
                &mut body_for,
            );
        }
        let subject_snapshot = subject_snapshot(self.store.conn(), &self.root, subject, kind)?;
        // The code it was written against: the checkout's HEAD, in the write's event (what
        // a hover names when no synced commit is known).
        let head = git_position(&self.root).1;
        let mut error: Option<EngineError> = None;
        let result = with_receipt(
            &mut self.store,
            opts.operation_id.as_deref(),
            request,
            |tx| {
                // Writing to a log adds an entry: a page of its own, numbered here, in the
                // transaction, so concurrent writers never share one.
                let page = match logs::entry_prefix(subject) {
                    Some(_) => logs::new_entry(tx, subject)?,
                    None => mem::ensure_page(tx, subject, kind)?,
                };
                let subject = page.subject.as_str();
                let current = match page.current_revision_id {
                    Some(id) => mem::revision_by_id(tx, id)?,
                    None => None,
                };
                let current_version = current.as_ref().map_or(0, |r| r.version);
                check_version(subject, current_version, opts.expect_version)?;
                let body = match body_for(current.as_ref()) {
                    Ok(b) => b,
                    Err(e) => {
                        let message = e.to_string();
                        error = Some(e);
                        return Err(StoreError::Conflict(message));
                    }
                };
                let source_ref = format!("{event_kind}:{}:v{}", page.page_id, current_version + 1);
                let mut payload = serde_json::json!({"request": request});
                if let Some(head) = &head {
                    payload["head"] = serde_json::Value::String(head.clone());
                }
                let payload = payload.to_string();
                let (event_id, _) = mem::insert_event(
                    tx,
                    event_kind,
                    &source_ref,
                    subject,
                    Some(&payload),
                    session,
                )?;
                let revision = mem::insert_revision(
                    tx,
                    &NewRevision {
                        page_id: page.page_id,
                        body: &body,
                        summary: opts.summary.as_deref(),
                        author: &author,
                        session_id: session,
                        event_id: Some(event_id),
                    },
                )?;
                let given = match snapshots {
                    Snapshots::Given(g) => Some(g),
                    Snapshots::Here => None,
                };
                snapshot_revision(tx, &revision, subject, subject_snapshot.as_ref(), given)?;
                if let Some(also) = also {
                    also(tx, &revision, event_id)?;
                }
                crate::audit::audit::store_marks(tx, Some(&[revision.revision_id]))?;
                let stored = mem::claims_of(tx, revision.revision_id)?;
                let page = mem::page_by_id(tx, page.page_id)?
                    .ok_or_else(|| StoreError::Corrupt("page vanished".into()))?;
                Ok(Written {
                    page,
                    revision,
                    claims: stored.iter().map(ClaimView::from).collect(),
                    event_id,
                    replayed: false,
                    queued: None,
                })
            },
        );
        match (result, error) {
            (Err(_), Some(e)) => Err(e),
            (r, _) => r,
        }
    }

    fn written_envelope(&mut self, mut written: Written) -> Result<Envelope<Written>> {
        if written.queued.is_some() || written.revision.revision_id == 0 {
            // Not in the replica yet (queued, or stored on a team server that went away
            // before this replica pulled it): nothing here to check.
            return self.envelope(written, Vec::new());
        }
        let rev = written.revision.revision_id;
        // What lint will say about the new revision, said now and recorded as lint records
        // it: a path the map lacks had been "not tracked" here while `loci lint` reported
        // it missing [high], and `context` served the page first, with no warning, until
        // someone ran `loci lint`.
        let mut findings = self.record_revision_findings(rev)?;
        for c in &mut written.claims {
            c.finding = findings.remove(&c.claim_id);
        }
        self.memory_envelope(written, &[rev], Vec::new())
    }

    fn page(&self, subject: &str) -> Result<Page> {
        // `show ""` had shown the root page's "no memory about `.`".
        if subject.trim().is_empty() {
            return Err(EngineError::InvalidArgument {
                name: "subject".into(),
                message: "must not be empty (the root's page is `.`)".into(),
            });
        }
        if let Some(log) = super::logs::log_named(subject) {
            return Err(super::logs::not_a_page(log));
        }
        let (subject, _) = match self.resolve_subject(subject) {
            Ok(found) => found,
            // A page whose file is gone is still a page (a path that leaves the workspace
            // is still refused).
            Err(EngineError::InvalidArgument { .. }) => (self.contain("subject", subject)?, "file"),
            Err(other) => return Err(other),
        };
        let conn = self.store.conn();
        if let Some(page) = mem::page_by_subject(conn, &subject)? {
            return Ok(page);
        }
        // A page that followed its file's rename is named where it went ("no memory
        // about `src/print.rs` yet" had hidden it).
        use loci_store::rusqlite::OptionalExtension;
        let moved: Option<String> = conn
            .prepare_cached(
                "SELECT payload ->> 'to' FROM events
                  WHERE kind = 'rename' AND payload ->> 'from' = ?1
                  ORDER BY event_id DESC LIMIT 1",
            )
            .and_then(|mut st| st.query_row([&subject], |r| r.get(0)).optional())
            .ctx(|| "looking up a renamed page".into())?;
        Err(EngineError::NotFound(match moved {
            Some(to) => format!(
                "no memory about `{subject}`: its page moved to `{to}` with the file's rename \
                 (`loci show {to}`)"
            ),
            None => format!("no memory about `{subject}` yet"),
        }))
    }

    /// A page's current revision, or version `version`.
    /// A log (`decisions`, `lessons`) is shown as the view of its entries ([`super::logs`]).
    pub fn show(&self, subject: &str, version: Option<i64>) -> Result<Envelope<Shown>> {
        if let Some(log) = super::logs::log_named(subject) {
            if version.is_some() {
                return Err(super::logs::not_a_page(log));
            }
            return self.show_log(log, &self.log_revisions(log)?);
        }
        let page = self.page(subject)?;
        let conn = self.store.conn();
        let revision = match version {
            Some(v) => mem::revision_by_version(conn, page.page_id, v)?.ok_or_else(|| {
                EngineError::NotFound(format!("`{}` has no version {v}", page.subject))
            })?,
            None => match page.current_revision_id {
                Some(id) => mem::revision_by_id(conn, id)?,
                None => None,
            }
            .ok_or_else(|| EngineError::NotFound(format!("`{}` has no revisions", page.subject)))?,
        };
        let claims = mem::claims_of(conn, revision.revision_id)?
            .iter()
            .map(ClaimView::from)
            .collect();
        let members = if page.kind == "topic" {
            mem::topic_members(conn, page.page_id)?
        } else {
            Vec::new()
        };
        let current = page.current_revision_id == Some(revision.revision_id);
        let rev = revision.revision_id;
        self.memory_envelope(
            Shown {
                page,
                revision,
                claims,
                current,
                members,
            },
            &[rev],
            Vec::new(),
        )
    }

    /// Every revision of a page, oldest first; of a log, every revision of its entries.
    pub fn history(&self, subject: &str) -> Result<Envelope<History>> {
        let conn = self.store.conn();
        let (page, all) = match super::logs::log_named(subject) {
            Some(log) => {
                let all = logs::revisions(conn, log)?;
                (super::logs::log_page(log, &all), all)
            }
            None => {
                let page = self.page(subject)?;
                let all = mem::revisions_of(conn, page.page_id)?;
                (page, all)
            }
        };
        let mut revisions = Vec::new();
        for r in all {
            let event = match r.event_id {
                Some(id) => mem::event_by_id(conn, id)?.map(|e| e.kind),
                None => None,
            };
            revisions.push(HistoryEntry {
                entry: logs::log_of_entry(&r.subject).map(|_| r.subject.clone()),
                version: r.version,
                author: r.author,
                created_at: r.created_at,
                summary: r.summary,
                session_id: r.session_id,
                event,
                bytes: r.body.len(),
            });
        }
        self.envelope(History { page, revisions }, Vec::new())
    }

    /// Pins (never auto-staled) or unpins a page. Honours `expect_version` (the page's
    /// current version) and `operation_id`; the summary goes into the event.
    pub fn pin(
        &mut self,
        subject: &str,
        pinned: bool,
        opts: &WriteOptions,
    ) -> Result<Envelope<Page>> {
        self.accept_options(opts)?;
        let page = self.page(subject)?;
        let session = opts.session;
        let kind = if pinned { "pin" } else { "unpin" };
        let request = serde_json::json!({"op": kind, "subject": page.subject});
        let payload = serde_json::json!({"author": self.author_of(opts)?, "summary": opts.summary})
            .to_string();
        if self.team_configured() {
            let author = self.author_of(opts)?;
            let page = self.team_pin(&page, pinned, opts, &author, &request)?;
            return self.envelope(page, Vec::new());
        }
        let page = with_receipt(
            &mut self.store,
            opts.operation_id.as_deref(),
            &request,
            |tx| {
                check_version(
                    &page.subject,
                    page_version(tx, page.page_id)?,
                    opts.expect_version,
                )?;
                mem::set_pinned(tx, page.page_id, pinned)?;
                let (events, _) = mem::high_water_marks(tx)?;
                mem::insert_event(
                    tx,
                    kind,
                    &format!("{kind}:{}:e{}", page.page_id, events + 1),
                    &page.subject,
                    Some(&payload),
                    session,
                )?;
                mem::page_by_id(tx, page.page_id)?
                    .ok_or_else(|| StoreError::Corrupt("page vanished".into()))
            },
        )?;
        self.envelope(page, Vec::new())
    }

    /// Publishes version `version`'s body again as a new revision (history is untouched).
    /// The new revision keeps the snapshots of the one it restores (its claims' and its
    /// page subject's): rolling back restores text, it does not verify it again, so a body
    /// that was stale comes back stale (`confirm` verifies). A claim that had no snapshot
    /// is snapshotted now.
    pub fn rollback(
        &mut self,
        subject: &str,
        version: i64,
        opts: &WriteOptions,
    ) -> Result<Envelope<Written>> {
        let page = self.page(subject)?;
        let old = mem::revision_by_version(self.store.conn(), page.page_id, version)?.ok_or_else(
            || EngineError::NotFound(format!("`{}` has no version {version}", page.subject)),
        )?;
        let mut opts = opts.clone();
        if opts.summary.is_none() {
            opts.summary = Some(format!("rollback to version {version}"));
        }
        // A body written before a secret rule existed is not published again.
        self.accept_text("version", &old.body)?;
        let given = given_of(self.store.conn(), old.revision_id)?;
        let request =
            serde_json::json!({"op": "rollback", "subject": page.subject, "version": version});
        let kind = page.kind.clone();
        let kind: &'static str = match kind.as_str() {
            "folder" => "folder",
            "root" => "root",
            "topic" => "topic",
            "decisions" => "decisions",
            "lessons" => "lessons",
            _ => "file",
        };
        let written = self.write_revision(
            &request,
            &opts,
            &page.subject,
            kind,
            "rollback",
            Snapshots::Given(&given),
            |current| {
                // Rolling back to the text the page already has would only add a duplicate.
                match current {
                    Some(c) if c.body == old.body => Err(EngineError::InvalidArgument {
                        name: "version".into(),
                        message: format!(
                            "`{}` v{} already reads as version {version}; nothing to roll back",
                            page.subject, c.version
                        ),
                    }),
                    _ => Ok(old.body.clone()),
                }
            },
            None,
        )?;
        self.written_envelope(written)
    }

    /// Memory as it stood at `at` (a date `2026-11-01` or a time `2026-11-01T12:00:00Z`),
    /// and optionally the revision of `show` current then.
    pub fn asof(&self, at: &str, show: Option<&str>) -> Result<Envelope<AsOf>> {
        let at_norm = normalize_moment(self.store.conn(), at)?;
        let revisions = mem::revisions_as_of(self.store.conn(), &at_norm)?;
        let shown = match show {
            Some(s) if super::logs::log_named(s).is_some() => {
                let log = super::logs::log_named(s).unwrap_or_default();
                let entries: Vec<Revision> = revisions
                    .iter()
                    .filter(|r| logs::log_of_entry(&r.subject) == Some(log))
                    .cloned()
                    .collect();
                Some(self.show_log(log, &entries)?.result.revision)
            }
            Some(s) => {
                let page = self.page(s)?;
                Some(
                    revisions
                        .iter()
                        .find(|r| r.page_id == page.page_id)
                        .cloned()
                        .ok_or_else(|| {
                            EngineError::NotFound(format!(
                                "`{}` had no memory at {at}",
                                page.subject
                            ))
                        })?,
                )
            }
            None => None,
        };
        let pages = revisions
            .into_iter()
            .map(|r| AsOfPage {
                subject: r.subject,
                version: r.version,
                author: r.author,
                created_at: r.created_at,
            })
            .collect();
        self.envelope(
            AsOf {
                at: at.to_string(),
                pages,
                shown,
            },
            Vec::new(),
        )
    }

    /// Re-snapshots the current revision's claims (and the page's subject fingerprint)
    /// without rewriting its prose: a reviewer saying "still true".
    pub fn confirm(&mut self, subject: &str, opts: &WriteOptions) -> Result<Envelope<Shown>> {
        self.accept_options(opts)?;
        // Snapshot the code as it is on disk now, not as the last scan saw it.
        self.scan(&|_| {})?;
        let page = self.page(subject)?;
        let Some(rev_id) = page.current_revision_id else {
            return Err(EngineError::NotFound(format!(
                "`{}` has no revisions",
                page.subject
            )));
        };
        self.refuse_confirming_falsehood(&page.subject, rev_id)?;
        let session = opts.session;
        let author = self.author_of(opts)?;
        let subject_snapshot =
            subject_snapshot(self.store.conn(), &self.root, &page.subject, &page.kind)?;
        let page_subject = page.subject.clone();
        let request = serde_json::json!({"op": "confirm", "subject": page.subject});
        with_receipt(
            &mut self.store,
            opts.operation_id.as_deref(),
            &request,
            |tx| {
                let revision = mem::revision_by_id(tx, rev_id)?
                    .ok_or_else(|| StoreError::Corrupt("revision vanished".into()))?;
                check_version(&page_subject, revision.version, opts.expect_version)?;
                let fresh = resolve_claims(tx, &revision.body, Some(&page_subject))?;
                let stored = mem::claims_of(tx, rev_id)?;
                for (old, new) in stored.iter().zip(fresh.iter()) {
                    mem::update_claim_snapshot(tx, old.claim_id, new)?;
                }
                if let Some(s) = &subject_snapshot {
                    mem::put_page_snapshot(tx, rev_id, s.fingerprint.as_deref(), s.missing)?;
                }
                let (events, _) = mem::high_water_marks(tx)?;
                let payload = serde_json::json!({"revision_id": rev_id, "author": author, "summary": opts.summary})
                .to_string();
                let (event_id, _) = mem::insert_event(
                    tx,
                    "confirm",
                    &format!("confirm:{rev_id}:e{}", events + 1),
                    &page_subject,
                    Some(&payload),
                    session,
                )?;
                Ok(event_id)
            },
        )?;
        self.show(&page.subject, None)
    }

    /// Refuses to confirm a revision whose claims the code contradicts (a path or symbol
    /// that no longer exists, a version that differs), naming each open contradiction: a
    /// confirmation says the text is true of the code, so it must not hide one. A finding
    /// a human dismissed does not count.
    fn refuse_confirming_falsehood(&mut self, subject: &str, rev_id: i64) -> Result<()> {
        let failing = self.record_revision_findings(rev_id)?;
        if failing.is_empty() {
            return Ok(());
        }
        let open = loci_store::audit::contradictions(self.store.conn(), Some("open"))?;
        let mut named = Vec::new();
        for c in mem::claims_of(self.store.conn(), rev_id)? {
            let Some(f) = failing.get(&c.claim_id) else {
                continue;
            };
            let id = open
                .iter()
                .find(|o| o.origin == "page" && o.subject == subject && o.target == c.target)
                .map(|o| format!(" (#{})", o.contradiction_id))
                .unwrap_or_default();
            named.push(format!(
                "`{}`: {} [{}]{}{id}",
                c.text,
                f.kind,
                f.severity,
                f.truth
                    .as_ref()
                    .map(|t| format!(": {t}"))
                    .unwrap_or_default()
            ));
        }
        named.dedup();
        Err(EngineError::InvalidArgument {
            name: "SUBJECT".into(),
            message: format!(
                "`{subject}` was not confirmed: the code contradicts {} of its claims: {}. \
                 Correct the page (`loci remember`), or dismiss a finding that is not a \
                 problem (`loci resolve ID --notes WHY`) and confirm again",
                named.len(),
                named.join("; ")
            ),
        })
    }

    /// Adds or removes a member (a path or subject) of a `topic:NAME` page; the page is
    /// created empty if needed.
    pub fn topic_set(
        &mut self,
        topic: &str,
        member: &str,
        add: bool,
        opts: &WriteOptions,
    ) -> Result<Envelope<Vec<String>>> {
        self.accept_options(opts)?;
        let topic = topic.trim();
        let topic = if topic.starts_with("topic:") {
            topic.to_string()
        } else {
            format!("topic:{topic}")
        };
        if topic.len() <= "topic:".len() {
            return Err(EngineError::InvalidArgument {
                name: "topic".into(),
                message: "a topic needs a name".into(),
            });
        }
        let member = if add {
            self.resolve_subject(member)?.0
        } else {
            member
                .trim()
                .trim_start_matches("./")
                .trim_end_matches('/')
                .to_string()
        };
        if !add {
            // Removing from a topic that does not exist, or what it does not hold, is
            // nothing found: `topic rm TYPO path` had made an empty page for good.
            let conn = self.store.conn();
            let Some(page) = mem::page_by_subject(conn, &topic)? else {
                return Err(EngineError::NotFound(format!(
                    "no topic `{topic}` (`loci topic list` shows the topics)"
                )));
            };
            if !mem::topic_members(conn, page.page_id)?.contains(&member) {
                return Err(EngineError::NotFound(format!(
                    "`{member}` is not a member of `{topic}`"
                )));
            }
        }
        if self.team_configured() {
            // Team memory: the server orders every checkout's changes (super::team).
            let author = self.author_of(opts)?;
            let members = self.team_topic(&topic, &member, add, opts, &author)?;
            return self.envelope(members, Vec::new());
        }
        let session = opts.session;
        let members = self.store.write(|tx| {
            let page = mem::ensure_page(tx, &topic, "topic")?;
            if mem::set_topic_member(tx, page.page_id, &member, add)? {
                let (events, _) = mem::high_water_marks(tx)?;
                let payload = serde_json::json!({"member": member, "added": add}).to_string();
                mem::insert_event(
                    tx,
                    "topic",
                    &format!("topic:{}:e{}", page.page_id, events + 1),
                    &topic,
                    Some(&payload),
                    session,
                )?;
            }
            mem::topic_members(tx, page.page_id)
        })?;
        self.envelope(members, Vec::new())
    }

    /// Topics and their members: `(topic:NAME, members)`.
    pub fn topics(&self) -> Result<Envelope<Vec<Topic>>> {
        let conn = self.store.conn();
        let mut out = Vec::new();
        for p in mem::pages(conn)?.into_iter().filter(|p| p.kind == "topic") {
            out.push((p.subject.clone(), mem::topic_members(conn, p.page_id)?));
        }
        self.envelope(out, Vec::new())
    }

    /// The memory pages whose subject is `prefix` or lies under it (`src/auth` takes
    /// `src/auth` and `src/auth/…`, not `src/authz`; `topic:` every topic, `decision:`
    /// every decision; empty: every page), of the kinds `kinds` (`file`, `folder`, `root`,
    /// `topic`, `decision`, `lesson`; empty: all), by subject (log entries by number), at
    /// most `limit` (0: all). Each with its current version, author, first line, and
    /// whether it is stale; `limits` counts them.
    ///
    /// Errors: [`EngineError::InvalidArgument`] for an unknown kind.
    pub fn memory_list(
        &self,
        prefix: &str,
        kinds: &[String],
        limit: u32,
    ) -> Result<Envelope<Vec<PageEntry>>> {
        const KINDS: &[&str] = &["file", "folder", "root", "topic", "decision", "lesson"];
        if let Some(bad) = kinds.iter().find(|k| !KINDS.contains(&k.as_str())) {
            return Err(EngineError::InvalidArgument {
                name: "kinds".into(),
                message: format!("`{bad}` is not a kind of page; kinds: {}", KINDS.join(", ")),
            });
        }
        self.store.read(|| {
            let conn = self.store.conn();
            let prefix = prefix.trim().trim_start_matches("./");
            let prefix = if prefix.len() > 1 {
                prefix.trim_end_matches('/')
            } else {
                prefix
            };
            let under = |subject: &str| {
                prefix.is_empty()
                    || subject == prefix
                    || (prefix.ends_with(':') && subject.starts_with(prefix))
                    || (prefix == "." && !subject.contains(':'))
                    || subject
                        .strip_prefix(prefix)
                        .is_some_and(|rest| rest.starts_with('/') || rest.starts_with(':'))
            };
            let kind_of = |p: &mem::Page| {
                match p.kind.as_str() {
                    "decisions" => "decision",
                    "lessons" => "lesson",
                    k => k,
                }
                .to_string()
            };
            let mut pages: Vec<mem::Page> = mem::pages(conn)?
                .into_iter()
                .filter(|p| p.current_revision_id.is_some() || p.kind == "topic")
                .filter(|p| under(&p.subject))
                .filter(|p| kinds.is_empty() || kinds.contains(&kind_of(p)))
                .collect();
            // Log entries in number order: `decision:10` after `decision:9`.
            pages.sort_by_cached_key(|p| match p.subject.split_once(':') {
                Some((log, n)) if n.bytes().all(|b| b.is_ascii_digit()) => (
                    log.to_string(),
                    n.parse::<u64>().unwrap_or(0),
                    String::new(),
                ),
                _ => (p.subject.clone(), 0, String::new()),
            });
            let total = pages.len() as u64;
            if limit > 0 {
                pages.truncate(limit as usize);
            }
            let mut out = Vec::with_capacity(pages.len());
            let mut relies = Vec::new();
            for p in pages {
                let revision = match p.current_revision_id {
                    Some(id) => mem::revision_by_id(conn, id)?,
                    None => None,
                };
                let stale = match &revision {
                    Some(r) if !p.pinned => self
                        .stale_warnings_for_revisions(&[r.revision_id])?
                        .into_iter()
                        .map(|w| format!("{}: {}", w.path, w.reason))
                        .next(),
                    _ => None,
                };
                if p.kind == "file" {
                    relies.push(p.subject.clone());
                }
                let members = if p.kind == "topic" {
                    mem::topic_members(conn, p.page_id)?.len() as u64
                } else {
                    0
                };
                out.push(PageEntry {
                    kind: kind_of(&p),
                    version: revision.as_ref().map_or(0, |r| r.version),
                    author: revision.as_ref().map(|r| r.author.clone()),
                    updated_at: p.updated_at.clone(),
                    first_line: revision
                        .as_ref()
                        .and_then(|r| r.body.lines().map(str::trim).find(|l| !l.is_empty()))
                        .map(|l| l.chars().take(120).collect())
                        .unwrap_or_default(),
                    pinned: p.pinned,
                    stale,
                    members,
                    subject: p.subject,
                });
            }
            let listed = out.len() as u64;
            let mut env = self.envelope(out, relies)?;
            env.limits = crate::envelope::Limits {
                budget: (limit > 0).then_some(u64::from(limit)),
                used: listed,
                truncated: total > listed,
                omitted: total - listed,
            };
            if total == 0 {
                env.capability.notes.push(if prefix.is_empty() {
                    "no memory yet: `remember`, `decide` and `learn` write some".to_string()
                } else {
                    format!("no memory under `{prefix}`")
                });
            }
            Ok(env)
        })
    }

    /// The envelope of an answer that serves the memory of `revisions` (and relies on the
    /// files `relies_on`): the files that memory relies on — its page's file and every
    /// file a claim resolved to — are compared with the disk (a warning per file changed
    /// since the last scan, counted in `freshness.changed_since_scan`), and each
    /// revision's stale marks are added. Every answer that serves memory builds its
    /// envelope here, so `show`, `why`, `search` and a write warn alike.
    pub(crate) fn memory_envelope<T>(
        &self,
        result: T,
        revisions: &[i64],
        relies_on: Vec<String>,
    ) -> Result<Envelope<T>> {
        let marks = self.stale_warnings_for_revisions(revisions)?;
        self.memory_envelope_with(result, revisions, relies_on, marks)
    }

    /// [`Workspace::memory_envelope`] with the stale marks of `revisions` already read
    /// (`context` reads them once for ranking, [`Workspace::cached_staleness`]): the disk
    /// check of the files that memory relies on, the marks, then what lint found false in
    /// it ([`Workspace::false_warnings_for_revisions`]). An answer that serves memory and
    /// leaves out one of the three tells less than `show` about the same text.
    pub(crate) fn memory_envelope_with<T>(
        &self,
        result: T,
        revisions: &[i64],
        mut relies_on: Vec<String>,
        marks: Vec<crate::StaleWarning>,
    ) -> Result<Envelope<T>> {
        let conn = self.store.conn();
        let file_of = |key: &str| key.split('#').next().unwrap_or(key).to_string();
        for &id in revisions {
            // A subject that is not a mapped file (a folder, `decisions`) is not compared.
            relies_on.extend(mem::revision_by_id(conn, id)?.map(|r| r.subject));
            for c in mem::claims_of(conn, id)? {
                relies_on.extend(c.resolved.as_deref().map(file_of));
                relies_on.extend(c.definitions.iter().map(|d| file_of(&d.key)));
            }
        }
        let mut env = self.envelope(result, relies_on)?;
        env.stale_warnings.extend(marks);
        env.stale_warnings
            .extend(self.false_warnings_for_revisions(revisions)?);
        Ok(env)
    }

    /// What lint found false in the given revisions: one warning per open contradiction of
    /// the revision's page (origin `page`), as `` memory `a.py` v2 claim `f()` is false:
    /// TRUTH (did you mean `g`?) (contradiction #7) ``. A page's open contradictions are
    /// about its current revision; a revision that is not current gets those lint recorded
    /// against it. A stale mark says the code changed under a claim; a contradiction says
    /// the claim names what is not there, which a claim that never resolved (written after
    /// a rename, or a near miss) shows only here.
    pub fn false_warnings_for_revisions(
        &self,
        revision_ids: &[i64],
    ) -> Result<Vec<crate::StaleWarning>> {
        let conn = self.store.conn();
        let mut out = Vec::new();
        let mut seen: Vec<i64> = Vec::new();
        for &id in revision_ids {
            if seen.contains(&id) {
                continue;
            }
            seen.push(id);
            let Some(rev) = mem::revision_by_id(conn, id)? else {
                continue;
            };
            let current = mem::page_by_id(conn, rev.page_id)?
                .is_some_and(|p| p.current_revision_id == Some(id));
            for c in loci_store::audit::open_contradictions_of(conn, "page", &rev.subject)? {
                if !current && c.revision_id != Some(id) {
                    continue;
                }
                out.push(crate::StaleWarning {
                    path: rev.subject.clone(),
                    reason: false_reason(&rev.subject, rev.version, &c),
                });
            }
        }
        Ok(out)
    }

    /// Stale warnings for the given revisions: claims whose target changed or vanished
    /// since they were snapshotted, and file pages whose file changed.
    pub fn stale_warnings_for_revisions(
        &self,
        revision_ids: &[i64],
    ) -> Result<Vec<crate::StaleWarning>> {
        let mut out = Vec::new();
        for &id in revision_ids {
            for s in crate::audit::audit::revision_staleness(self.store.conn(), id)? {
                out.push(crate::StaleWarning {
                    path: s.subject.clone(),
                    reason: s.describe(),
                });
            }
        }
        Ok(out)
    }
}

/// An open contradiction of memory in words, as the language server says a claim is false
/// ([`crate::audit::live`]): `` memory `a.py` v2 claim `f()` is false: TRUTH (did you mean `g`?)
/// (contradiction #7) ``; the id is what `loci resolve` takes.
pub(crate) fn false_reason(
    subject: &str,
    version: i64,
    c: &loci_store::audit::Contradiction,
) -> String {
    let mut reason = format!(
        "memory `{subject}` v{version} claim `{}` is false: {}",
        c.claim,
        c.truth.as_deref().unwrap_or(&c.kind)
    );
    if let Some(s) = &c.suggestion {
        reason.push_str(&format!(" (did you mean `{s}`?)"));
    }
    reason.push_str(&format!(" (contradiction #{})", c.contradiction_id));
    reason
}

/// Runs `f` in one write transaction guarded by an operation receipt: an identical retry
/// returns the stored result (with `replayed` set), a different request under the same id
/// is a conflict.
pub(crate) fn with_receipt<T: Serialize + DeserializeOwned + Replay>(
    store: &mut loci_store::Store,
    operation_id: Option<&str>,
    request: &serde_json::Value,
    mut f: impl FnMut(&Transaction<'_>) -> loci_store::Result<T>,
) -> Result<T> {
    let hash = loci_core::fingerprint::content_hash(request.to_string().as_bytes());
    let value = store.write(|tx| {
        if let Some(op) = operation_id
            && let Some((stored_hash, result)) = mem::receipt(tx, op)?
        {
            if stored_hash != hash {
                return Err(StoreError::Conflict(format!(
                    "operation id `{op}` was already used for a different request; use a new id"
                )));
            }
            let mut value: T = serde_json::from_str(&result)
                .map_err(|e| StoreError::Corrupt(format!("receipt {op}: {e}")))?;
            value.mark_replayed();
            return Ok(value);
        }
        let value = f(tx)?;
        if let Some(op) = operation_id {
            let json =
                serde_json::to_string(&value).map_err(|e| StoreError::Corrupt(e.to_string()))?;
            mem::put_receipt(tx, op, &hash, &json)?;
        }
        Ok(value)
    })?;
    Ok(value)
}

/// Results that can say they were replayed from a receipt.
pub(crate) trait Replay {
    /// Flags the value as replayed, for results that carry a `replayed` field.
    fn mark_replayed(&mut self) {}
}

impl Replay for Page {}

/// An id (event, fact) written by the operation.
impl Replay for i64 {}

/// Fails with a conflict naming the current version unless `expected` is absent or equal
/// to `current` (0: the page has no revisions yet).
pub(crate) fn check_version(
    subject: &str,
    current: i64,
    expected: Option<i64>,
) -> loci_store::Result<()> {
    match expected {
        Some(expected) if expected != current => Err(StoreError::Conflict(format!(
            "version conflict on `{subject}`: it is at version {current}, \
             the write expected {expected}; read it again and retry"
        ))),
        _ => Ok(()),
    }
}

/// The version of a page's current revision (0 when it has none).
fn page_version(conn: &Connection, page_id: i64) -> loci_store::Result<i64> {
    Ok(mem::page_by_id(conn, page_id)?
        .and_then(|p| p.current_revision_id)
        .map(|id| mem::revision_by_id(conn, id))
        .transpose()?
        .flatten()
        .map_or(0, |r| r.version))
}

impl Replay for Written {
    fn mark_replayed(&mut self) {
        self.replayed = true;
    }
}

/// The semantic fingerprint (or, for unparsed files, the content hash) of a file in the map.
pub(crate) fn file_fingerprint(
    conn: &Connection,
    path: &str,
) -> loci_store::Result<Option<String>> {
    use loci_store::rusqlite::OptionalExtension;
    conn.prepare_cached("SELECT ifnull(fingerprint, content_hash) FROM files WHERE path = ?1")
        .ctx(|| "reading a fingerprint".into())?
        .query_row([path], |r| r.get(0))
        .optional()
        .ctx(|| "reading a fingerprint".into())
}

/// A file or folder page's subject as a revision snapshots it: a file's fingerprint in the
/// map, and whether the file or folder is missing altogether (in neither the map nor the
/// working tree: a page whose file was deleted, or an imported page about a path this
/// checkout lacks).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct SubjectSnapshot {
    /// [`file_fingerprint`] of a file subject (`None` for a folder).
    pub fingerprint: Option<String>,
    /// True when the subject is in neither the map nor the working tree under `root`.
    pub missing: bool,
}

/// The [`SubjectSnapshot`] of the page `subject` (repo-relative) of `kind` under `root`,
/// read now; `None` for pages that are not about a path (root, topics, decisions,
/// lessons).
pub(crate) fn subject_snapshot(
    conn: &Connection,
    root: &std::path::Path,
    subject: &str,
    kind: &str,
) -> loci_store::Result<Option<SubjectSnapshot>> {
    Ok(match kind {
        "file" => {
            let fingerprint = file_fingerprint(conn, subject)?;
            let missing = fingerprint.is_none() && !root.join(subject).exists();
            Some(SubjectSnapshot {
                fingerprint,
                missing,
            })
        }
        "folder" => Some(SubjectSnapshot {
            fingerprint: None,
            missing: resolve_path(conn, subject)?.is_none() && !root.join(subject).is_dir(),
        }),
        _ => None,
    })
}

/// A claim's snapshot as it was taken (where a revision was exported from, or when a
/// revision a rollback restores was written): what it resolved to and the fingerprints
/// then, the fields of [`ClaimRow`] that staleness compares with the code.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct ClaimSnapshot {
    /// The path or symbol key it resolved to (`None` for a set).
    pub resolved: Option<String>,
    /// The file's or the symbol body's fingerprint.
    pub snapshot: Option<String>,
    /// The symbol's signature fingerprint.
    pub signature_snapshot: Option<String>,
    /// The set of definitions, by key (empty unless the name had several).
    pub definitions: Vec<ClaimDefinition>,
}

impl ClaimSnapshot {
    /// The snapshot a claim row holds, if it holds one (it resolved to a target or a set).
    pub(crate) fn of(c: &ClaimRow) -> Option<ClaimSnapshot> {
        (c.resolved.is_some() || !c.definitions.is_empty()).then(|| ClaimSnapshot {
            resolved: c.resolved.clone(),
            snapshot: c.snapshot.clone(),
            signature_snapshot: c.signature_snapshot.clone(),
            definitions: c.definitions.clone(),
        })
    }

    /// The keys it names: the one it resolved to, or the set's.
    fn keys(&self) -> Vec<&str> {
        match &self.resolved {
            Some(k) => vec![k.as_str()],
            None => self.definitions.iter().map(|d| d.key.as_str()).collect(),
        }
    }
}

/// Where a new revision's claim snapshots come from.
#[derive(Clone, Copy)]
enum Snapshots<'a> {
    /// The code as it is now (a page written or rewritten).
    Here,
    /// Another revision's (a rollback restores text, not its verification).
    Given(&'a Given),
}

/// The claim and subject snapshots of revision `revision_id`, to carry into another.
fn given_of(
    conn: &loci_store::rusqlite::Connection,
    revision_id: i64,
) -> loci_store::Result<Given> {
    Ok(Given {
        claims: Some(
            mem::claims_of(conn, revision_id)?
                .iter()
                .filter(|c| ClaimSnapshot::of(c).is_some() || c.resolved_elsewhere)
                .map(|c| GivenClaim {
                    kind: c.kind.clone(),
                    target: c.target.clone(),
                    snapshot: ClaimSnapshot::of(c),
                    elsewhere: c.resolved_elsewhere,
                })
                .collect(),
        ),
        subject: mem::page_snapshot(conn, revision_id)?.map(|s| SubjectSnapshot {
            fingerprint: s.fingerprint,
            missing: s.subject_missing,
        }),
    })
}

/// A claim of a revision that was verified before this checkout wrote it
/// ([`Given::claims`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct GivenClaim {
    /// `path` or `symbol`.
    pub kind: String,
    /// The normalized target.
    pub target: String,
    /// Its snapshot there; `None` when only the fact that it resolved is known (an export
    /// written before exports carried snapshots, a claim imported from one).
    pub snapshot: Option<ClaimSnapshot>,
    /// True when it resolved in another checkout (every claim of an export; a restored
    /// claim that was imported so): if it names nothing here it is stored
    /// `resolved_elsewhere`, and lint reports it missing. A restored claim of this
    /// checkout's own whose code was deleted since is stale instead (deleted).
    pub elsewhere: bool,
}

/// The snapshots a new revision keeps instead of taking its own: the exporting checkout's
/// (`import`) or those of the revision a `rollback` restores. Restoring or carrying text
/// is not verifying it again (`confirm` does that), so a claim that was stale stays stale.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Given {
    /// The claims that resolved where the revision comes from, matched to the body's by
    /// kind and target (the first of each); `None` when not known (an export written
    /// before exports said which claims resolved: every path and symbol claim counts as
    /// resolved there).
    pub claims: Option<Vec<GivenClaim>>,
    /// The page's subject as snapshotted there (a file or folder page); `None` to take it
    /// here.
    pub subject: Option<SubjectSnapshot>,
}

/// A claim that names other code here than in its given snapshot ([`Given`]): a key the
/// map lacks, or another set of definitions. It keeps the given snapshot, so staleness
/// marks it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Diverged {
    /// The claim as written.
    pub text: String,
    /// What it named there: a key, or `N definitions`.
    pub there: String,
    /// What it names here.
    pub here: String,
}

/// What [`snapshot_revision`] stored.
#[derive(Clone, Debug, Default)]
pub(crate) struct Snapshotted {
    /// The claims as inserted (row ids not read back).
    pub claims: Vec<ClaimRow>,
    /// Claims with a given snapshot that name other code here (none without [`Given`]).
    pub diverged: Vec<Diverged>,
}

/// `key`, or `N definitions` for a set, or `nothing`.
fn named(keys: &[&str]) -> String {
    match keys {
        [] => "nothing".into(),
        [one] => (*one).to_string(),
        many => format!("{} definitions ({})", many.len(), many.join(", ")),
    }
}

/// The one way a new revision is checked against the code (`remember`, `decide`, `learn`,
/// `rollback`, `import`): its claims are extracted and resolved against the map with their
/// snapshots ([`resolve_claims`]), and a file or folder page's subject is snapshotted
/// (`subject`, `None` for other pages).
///
/// With `given` (import, rollback), a claim that has a given snapshot keeps it instead of
/// the one taken now, and the page keeps the given subject snapshot: staleness then
/// compares the code here with the code the text was verified against. A claim that
/// names other code here than its given snapshot is listed in [`Snapshotted::diverged`].
/// A claim that resolved in another checkout ([`GivenClaim::elsewhere`]) but names
/// nothing here is stored `resolved_elsewhere`, so lint reports it missing. A claim without a given snapshot is
/// snapshotted now, as `remember` does.
pub(crate) fn snapshot_revision(
    tx: &Transaction<'_>,
    revision: &Revision,
    page_subject: &str,
    subject: Option<&SubjectSnapshot>,
    given: Option<&Given>,
) -> loci_store::Result<Snapshotted> {
    let mut claims = resolve_claims(tx, &revision.body, Some(page_subject))?;
    let mut diverged = Vec::new();
    if let Some(given) = given {
        for c in &mut claims {
            if c.kind == "version" {
                continue;
            }
            let (elsewhere, snapshot) = match &given.claims {
                None => (true, None),
                Some(list) => match list
                    .iter()
                    .find(|g| g.kind == c.kind && g.target == c.target)
                {
                    Some(g) => (g.elsewhere, g.snapshot.as_ref()),
                    None => (false, None),
                },
            };
            let here = ClaimSnapshot::of(c);
            c.resolved_elsewhere = elsewhere && here.is_none();
            let Some(there) = snapshot else {
                continue;
            };
            let here_keys = here.as_ref().map(ClaimSnapshot::keys).unwrap_or_default();
            let there_keys = there.keys();
            // One key there: staleness follows that key, wherever the name resolves here.
            // A set: staleness compares the whole set with the one the name has here.
            let differs = match &there.resolved {
                Some(key) => !here_keys.contains(&key.as_str()),
                None => {
                    let mut a = here_keys.clone();
                    a.sort_unstable();
                    a != there_keys
                }
            };
            if differs && here.is_some() {
                diverged.push(Diverged {
                    text: c.text.clone(),
                    there: named(&there_keys),
                    here: named(&here_keys),
                });
            }
            c.resolved = there.resolved.clone();
            c.snapshot = there.snapshot.clone();
            c.signature_snapshot = there.signature_snapshot.clone();
            c.definitions = there.definitions.clone();
        }
    }
    mem::insert_claims(tx, revision.revision_id, &claims)?;
    let subject = match (subject, given.and_then(|g| g.subject.as_ref())) {
        (Some(_), Some(there)) => Some(there),
        (here, _) => here,
    };
    if let Some(s) = subject {
        mem::put_page_snapshot(
            tx,
            revision.revision_id,
            s.fingerprint.as_deref(),
            s.missing,
        )?;
    }
    Ok(Snapshotted { claims, diverged })
}

/// The most definitions a symbol claim is tracked as a set of: a name defined more often
/// (`new`, `__init__`) says too little about which code the prose means, and any edit to
/// any of them would mark it stale. Such a claim stays untracked, and says so.
pub const MAX_TRACKED_DEFINITIONS: usize = 8;

/// The snapshot of a set of definitions, ordered by key (see [`ClaimDefinition`]).
pub(crate) fn definitions_of(hits: &[map::SymbolHit]) -> Vec<ClaimDefinition> {
    let mut out: Vec<ClaimDefinition> = hits
        .iter()
        .map(|h| ClaimDefinition {
            key: h.key.clone(),
            body: h.body_fingerprint.clone(),
            signature: h.signature_fingerprint.clone(),
        })
        .collect();
    out.sort();
    out
}

/// Starts tracking the claims of current revisions that named nothing in the map when
/// written and do now: memory written before the first scan finished (it had stayed
/// untracked for good, and lint called it fine), or about code written since. A path or
/// symbol claim qualifies when it resolved to nothing, has no set of definitions and was
/// not imported as resolved elsewhere, and its target is now a mapped path or folder, or
/// its last name is defined; its revision's claims are resolved again and only those
/// claims take the new snapshot (one that resolved keeps its own: taking the code as it
/// is now would hide its staleness). Returns how many claims were snapshotted.
pub(crate) fn track_claims_resolved_since(tx: &Transaction<'_>) -> loci_store::Result<u64> {
    let mut tracked = track_pages_mapped_since(tx)?;
    let untracked: Vec<(i64, String, String)> = tx
        .prepare_cached(
            "SELECT c.revision_id, c.kind, c.target FROM claims c
               JOIN pages p ON p.current_revision_id = c.revision_id
              WHERE c.kind IN ('path', 'symbol') AND c.resolved IS NULL
                AND c.definitions IS NULL AND NOT c.resolved_elsewhere",
        )
        .and_then(|mut st| {
            st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
                .collect()
        })
        .ctx(|| "reading untracked claims".into())?;
    let mut revisions: BTreeSet<i64> = BTreeSet::new();
    for (revision_id, kind, target) in &untracked {
        if revisions.contains(revision_id) {
            continue;
        }
        let now = if kind == "path" {
            resolve_path(tx, target)?.is_some()
        } else {
            let name = target.rsplit(['.', ':']).next().unwrap_or(target);
            tx.prepare_cached("SELECT EXISTS(SELECT 1 FROM symbols WHERE name = ?1)")
                .and_then(|mut st| st.query_row([name], |r| r.get(0)))
                .ctx(|| "looking up a name".into())?
        };
        if now {
            revisions.insert(*revision_id);
        }
    }
    for revision_id in revisions {
        let Some(rev) = mem::revision_by_id(tx, revision_id)? else {
            continue;
        };
        let fresh = resolve_claims(tx, &rev.body, Some(&rev.subject))?;
        for (old, new) in mem::claims_of(tx, revision_id)?.iter().zip(&fresh) {
            let was_untracked = matches!(old.kind.as_str(), "path" | "symbol")
                && old.resolved.is_none()
                && old.definitions.is_empty()
                && !old.resolved_elsewhere;
            if was_untracked && (new.resolved.is_some() || !new.definitions.is_empty()) {
                mem::update_claim_snapshot(tx, old.claim_id, new)?;
                tracked += 1;
            }
        }
    }
    Ok(tracked)
}

/// Starts tracking the file pages written while their file was on disk but not in the map
/// (before the first scan, or before a scan mapped a new file): their snapshot had no
/// fingerprint, so no later change of the file ever marked them, and an export carried
/// `null`. Each such revision of a page whose file the map now holds takes the file's
/// fingerprint as the scan mapped it, the first code loci saw under the text. A page
/// written about a file missing altogether keeps its mark ("does not exist here", see
/// [`SubjectSnapshot`]). Returns how many snapshots were taken.
pub(crate) fn track_pages_mapped_since(tx: &Transaction<'_>) -> loci_store::Result<u64> {
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

/// Extracts the claims of a body and resolves each against the map, taking snapshots:
/// one target's fingerprints, or for a symbol with several definitions (up to
/// [`MAX_TRACKED_DEFINITIONS`]) the set of them. `subject` (a page's subject) breaks ties
/// between same-named symbols.
pub(crate) fn resolve_claims(
    conn: &Connection,
    body: &str,
    subject: Option<&str>,
) -> loci_store::Result<Vec<ClaimRow>> {
    let mut out = Vec::new();
    for c in extract_claims(body) {
        let mut definitions = Vec::new();
        let (resolved, snapshot, signature_snapshot) = match c.kind {
            ClaimKind::Path => match resolve_path(conn, &c.target)? {
                Some((path, fp)) => (Some(path), fp, None),
                None => (None, None, None),
            },
            ClaimKind::Symbol => match resolve_symbol(conn, &c.target, subject)? {
                SymbolResolution::Unique(s) => (
                    Some(s.key),
                    Some(s.body_fingerprint),
                    Some(s.signature_fingerprint),
                ),
                SymbolResolution::Ambiguous(hits) => {
                    if hits.len() <= MAX_TRACKED_DEFINITIONS {
                        definitions = definitions_of(&hits);
                    }
                    (None, None, None)
                }
                SymbolResolution::Missing => (None, None, None),
            },
            ClaimKind::Version => (None, None, None),
        };
        out.push(ClaimRow {
            claim_id: 0,
            revision_id: 0,
            kind: c.kind.as_str().into(),
            text: c.text,
            target: c.target,
            version: c.version,
            start_byte: c.start,
            end_byte: c.end,
            line: c.line,
            resolved,
            snapshot,
            signature_snapshot,
            snapshot_at: String::new(),
            definitions,
            resolved_elsewhere: false,
        });
    }
    Ok(out)
}

/// A path claim's target in the map: a file (with its fingerprint) or a folder (no
/// fingerprint). `None` when missing.
pub(crate) fn resolve_path(
    conn: &Connection,
    path: &str,
) -> loci_store::Result<Option<(String, Option<String>)>> {
    if let Some(fp) = file_fingerprint(conn, path)? {
        return Ok(Some((path.to_string(), Some(fp))));
    }
    let folder: bool = conn
        .prepare_cached(
            "SELECT EXISTS(SELECT 1 FROM files WHERE path > ?1 || '/' AND path < ?1 || '0')",
        )
        .ctx(|| "looking up a folder".into())?
        .query_row([path], |r| r.get(0))
        .ctx(|| "looking up a folder".into())?;
    Ok(folder.then(|| (path.to_string(), None)))
}

/// How a symbol claim resolved.
#[derive(Clone, Debug)]
pub(crate) enum SymbolResolution {
    /// Exactly one definition.
    Unique(Box<map::SymbolHit>),
    /// Several definitions and nothing to choose between them: all of them (one per
    /// key; see [`symbol_candidates`] for the bound on their number).
    Ambiguous(Vec<map::SymbolHit>),
    /// None.
    Missing,
}

/// Resolves `A.b.c` (written `A::b::c`, `A.b.c()` ...): the qualified name exactly, then
/// its last two segments as a qualified-name suffix, then — a module path — a top-level
/// `c` in a file or folder named like the nearest qualifier segment that names one
/// (`json.decoder.scanstring` → `json/decoder.py`); a bare name matches by name. Ties are
/// broken by the page subject (a definition in that file or folder wins).
pub(crate) fn resolve_symbol(
    conn: &Connection,
    target: &str,
    subject: Option<&str>,
) -> loci_store::Result<SymbolResolution> {
    let mut candidates = definitions_named(conn, target, subject)?;
    match candidates.len() {
        0 => Ok(SymbolResolution::Missing),
        1 => Ok(SymbolResolution::Unique(Box::new(candidates.remove(0)))),
        _ => Ok(SymbolResolution::Ambiguous(candidates)),
    }
}

/// The definitions a claim on `target` in a page about `subject` names: those of
/// [`symbol_candidates`] in the subject's file or folder when there are any (the subject
/// breaks ties), else all of them. One is what the claim resolves to; several are the
/// set it is tracked as (the same rule when the claim was written and when it is checked).
pub(crate) fn definitions_named(
    conn: &Connection,
    target: &str,
    subject: Option<&str>,
) -> loci_store::Result<Vec<map::SymbolHit>> {
    let candidates = symbol_candidates(conn, target)?;
    if candidates.len() > 1
        && let Some(subject) = subject
    {
        let near: Vec<map::SymbolHit> = candidates
            .iter()
            .filter(|c| c.path == subject || c.path.starts_with(&format!("{subject}/")))
            .cloned()
            .collect();
        if !near.is_empty() {
            return Ok(near);
        }
    }
    Ok(candidates)
}

/// Every definition `target` names, one per key, before any tie-break (what
/// [`resolve_symbol`] chooses from): the map's matches of the qualified name (at most 50),
/// else of its last two segments or a module path, else of the bare name (at most 200).
pub(crate) fn symbol_candidates(
    conn: &Connection,
    target: &str,
) -> loci_store::Result<Vec<map::SymbolHit>> {
    let segs: Vec<&str> = target.split('.').filter(|s| !s.is_empty()).collect();
    let Some(last) = segs.last() else {
        return Ok(Vec::new());
    };
    let mut candidates = map::find_symbols(conn, target, 50)?;
    if candidates.is_empty() && segs.len() >= 2 {
        let tail = format!("{}.{}", segs[segs.len() - 2], last);
        candidates = map::find_symbols(conn, last, 200)?
            .into_iter()
            .filter(|s| s.qualified_name == tail || s.qualified_name.ends_with(&format!(".{tail}")))
            .collect();
        if candidates.is_empty() {
            // A module path (`os.path.join`, `loci_core::claims::extract_claims`): a
            // top-level definition in a file or folder named like the nearest qualifier
            // segment that names one. A farther segment names a package's own module only
            // (`email.py`, `email/__init__.py`, `email/mod.rs`: what it re-exports), never
            // any file under its folder: `email.utils.formataddr` had resolved to
            // `email/addr.py` once `email/utils.py` was renamed, through `email`, and the
            // claim naming a module that is gone was called fine.
            let tops: Vec<map::SymbolHit> = map::find_symbols(conn, last, 200)?
                .into_iter()
                .filter(|s| s.qualified_name == *last)
                .collect();
            for (i, seg) in segs[..segs.len() - 1].iter().rev().enumerate() {
                let named: Vec<map::SymbolHit> = tops
                    .iter()
                    .filter(|s| {
                        if i > 0 {
                            return package_module(&s.path, seg);
                        }
                        s.path
                            .split('/')
                            .any(|part| part == *seg || part.split('.').next() == Some(seg))
                    })
                    .cloned()
                    .collect();
                if !named.is_empty() {
                    candidates = named;
                    break;
                }
            }
        }
    } else if candidates.is_empty() {
        candidates = map::find_symbols(conn, last, 200)?;
    }
    // Definitions only count once per key.
    let mut seen = BTreeSet::new();
    candidates.retain(|c| seen.insert(c.key.clone()));
    Ok(candidates)
}

/// Whether `path` is the module of package `name` itself: `name.py` (any extension) or the
/// index file of a folder `name` (`__init__.py`, `mod.rs`, `lib.rs`, `index.js`, …).
fn package_module(path: &str, name: &str) -> bool {
    let mut parts = path.rsplit('/');
    let file = parts.next().unwrap_or(path);
    let stem = file.split('.').next().unwrap_or(file);
    stem == name
        || (matches!(stem, "__init__" | "mod" | "lib" | "index") && parts.next() == Some(name))
}

/// Turns `2026-11-01` into the end of that day and validates the moment with SQLite.
fn normalize_moment(conn: &Connection, at: &str) -> Result<String> {
    let at = at.trim();
    let candidate = if at.len() == 10 {
        format!("{at}T23:59:59.999Z")
    } else {
        at.to_string()
    };
    // SQLite's date functions roll an impossible day over (`2026-02-30` is March 2), so a
    // date is valid only when its calendar day survives the round trip.
    let day: Option<String> = conn
        .query_row("SELECT strftime('%Y-%m-%d', ?1)", [&candidate], |r| {
            r.get(0)
        })
        .map_err(|e| StoreError::sqlite("reading a date", e))?;
    if day.is_none_or(|d| !candidate.starts_with(&d)) {
        return Err(EngineError::InvalidArgument {
            name: "date".into(),
            message: format!("`{at}` is not a date (use 2026-11-01 or 2026-11-01T12:00:00Z)"),
        });
    }
    Ok(candidate)
}

/// The first `n` characters of `s` on one line.
/// The largest memory text one write accepts (a `remember` body, a decision or lesson, a
/// summary), in bytes: 1 MiB, about 262,000 tokens at four bytes a token, more than any
/// context window a page is written for. Larger text is refused, not truncated.
pub const MAX_MEMORY_TEXT_BYTES: usize = 1 << 20;

impl Workspace {
    /// The one check of memory text (bodies, decisions and lessons, summaries, session
    /// tasks, fact claims and commands, resolution notes) before it is written: refused
    /// over [`MAX_MEMORY_TEXT_BYTES`], or holding a credential (see
    /// [`crate::secrets::SecretRules::refuse`]), with an invalid-argument error naming
    /// `name`.
    pub(crate) fn accept_text(&self, name: &str, text: &str) -> Result<()> {
        refuse_oversized(name, text)?;
        self.secrets.refuse(name, text)
    }

    /// The check of a write's options: its summary as memory text ([`Self::accept_text`])
    /// and its author ([`Self::accept_author`]).
    pub(crate) fn accept_options(&self, opts: &WriteOptions) -> Result<()> {
        if let Some(summary) = &opts.summary {
            self.accept_text("summary", summary)?;
        }
        if let Some(author) = &opts.author {
            self.accept_author(author)?;
        }
        Ok(())
    }

    /// An author is a name (`agent:NAME`, `human:NAME`, a model name) shown in every
    /// revision header: at most [`MAX_AUTHOR_BYTES`], and never a credential.
    pub(crate) fn accept_author(&self, author: &str) -> Result<()> {
        if author.len() > MAX_AUTHOR_BYTES {
            return Err(EngineError::InvalidArgument {
                name: "author".into(),
                message: format!(
                    "the author is {} bytes; an author is a name such as `agent:NAME` of at \
                     most {MAX_AUTHOR_BYTES} bytes",
                    author.len()
                ),
            });
        }
        self.secrets.refuse("author", author)
    }
}

/// What a write may record beside its revision, in its transaction: given the revision
/// and its event id (page synthesis's `llm_runs` row).
type AlsoInWrite<'a> = &'a dyn Fn(&Transaction<'_>, &Revision, i64) -> loci_store::Result<()>;

/// The longest author name a write accepts, in bytes.
pub const MAX_AUTHOR_BYTES: usize = 256;

/// Refuses `text` longer than [`MAX_MEMORY_TEXT_BYTES`], naming the argument and both
/// sizes.
fn refuse_oversized(name: &str, text: &str) -> Result<()> {
    if text.len() <= MAX_MEMORY_TEXT_BYTES {
        return Ok(());
    }
    Err(EngineError::InvalidArgument {
        name: name.into(),
        message: format!(
            "the text is {} bytes; memory takes at most {MAX_MEMORY_TEXT_BYTES} bytes \
             (1 MiB) per write: keep the page to what an agent should read, and link the rest",
            text.len()
        ),
    })
}

pub(crate) fn first_chars(s: &str, n: usize) -> String {
    let line = s.lines().next().unwrap_or("");
    let mut out: String = line.chars().take(n).collect();
    if line.chars().count() > n {
        out.push('…');
    }
    out
}

/// The git branch and head commit of the workspace, when it is a repository with commits.
pub(crate) fn git_position(root: &std::path::Path) -> (Option<String>, Option<String>) {
    match crate::map::git::repo_state(root) {
        Ok(crate::map::git::RepoState::Branch { name, head }) => (Some(name), Some(head)),
        Ok(crate::map::git::RepoState::Detached { head }) => (None, Some(head)),
        _ => (None, None),
    }
}

/// Where git says `path` was renamed to (over the last 1,000 commits), if the workspace
/// is a repository and the new path still exists.
pub(crate) fn renamed_to(root: &std::path::Path, path: &str) -> Option<String> {
    crate::map::git::renamed_to(root, path, 1_000)
        .ok()
        .flatten()
        .filter(|to| root.join(to).exists())
}
