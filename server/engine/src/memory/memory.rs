//! Authored memory: pages, append-only revisions, decisions, lessons, topics, facts and
//! sessions, with provenance (design.md "Memory"). Every write is one `BEGIN IMMEDIATE`
//! transaction that records its event, its revision and its claims together; optimistic
//! concurrency (`expect_version`) and idempotent retries (`operation_id`) are checked
//! inside that same transaction.

use loci_store::StoreError;
use loci_store::logs;
use loci_store::memory::{self as mem, NewRevision, Page, Revision};
use loci_store::rusqlite::Transaction;
use serde::{Deserialize, Serialize};

use crate::{EngineError, Envelope, Result, Workspace};

use super::claims::{
    ClaimView, Snapshots, given_of, resolve_claims, snapshot_revision, subject_snapshot,
};
use super::guard::{check_version, page_version, with_receipt};
use super::reads::Shown;

/// Who wrote something, when the caller does not say: `$LOCI_AUTHOR`, else the git
/// identity of the checkout at `root` (`human:NAME <EMAIL>` from `user.name` and
/// `user.email`, the repository's configuration over the global one), else
/// `human:$USER` (then `$LOGNAME`, `$USERNAME`, the home directory's name: `$USER` is
/// unset under code-server or a systemd unit). `human:unknown` only when none of these
/// says who the user is.
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
        let in_map = loci_store::map::file_exists(conn, &rel)?;
        if in_map {
            return Ok((rel, "file"));
        }
        let folder_in_map = loci_store::map::folder_has_files(conn, &rel)?;
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
    /// does unless told to replace (a note never replaces the page). The
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
        // it: a path the map lacks is reported missing [high] here as `loci lint` reports
        // it, and `context` never serves the page first, with no warning, until someone
        // runs `loci lint`.
        let mut findings = self.record_revision_findings(rev)?;
        for c in &mut written.claims {
            c.finding = findings.remove(&c.claim_id);
        }
        self.memory_envelope(written, &[rev], Vec::new())
    }

    pub(super) fn page(&self, subject: &str) -> Result<Page> {
        // `show ""` is an invalid argument, not the root page's "no memory about `.`".
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
        // about `src/print.rs` yet" would hide it).
        let moved = loci_store::memory::page_moved_to(conn, &subject)?;
        Err(EngineError::NotFound(match moved {
            Some(to) => format!(
                "no memory about `{subject}`: its page moved to `{to}` with the file's rename \
                 (`loci show {to}`)"
            ),
            None => format!("no memory about `{subject}` yet"),
        }))
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
            // nothing found: `topic rm TYPO path` must not make an empty page for good.
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
}

/// What a write may record beside its revision, in its transaction: given the revision
/// and its event id (page synthesis's `llm_runs` row).
type AlsoInWrite<'a> = &'a dyn Fn(&Transaction<'_>, &Revision, i64) -> loci_store::Result<()>;

/// The first `n` characters of `s` on one line.
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
