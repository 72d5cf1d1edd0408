//! Writes of a team-backed checkout: revisions and pins through the server (or its
//! outbox), and what a checkout shares after writing it here first (facts, sessions,
//! dismissals, topic members).

use loci_store::memory::{self as mem, Revision};
use loci_store::rusqlite::Transaction;
use loci_store::team as replica;
use loci_store::{StoreError, logs};
use loci_team::{NewEvent, TeamError, WriteOutcome};
use serde::Serialize;

use crate::memory::claims::ClaimView;
use crate::memory::memory::{WriteOptions, Written};
use crate::memory::portability::session_key;
use crate::{EngineError, Result, Workspace};

use super::apply::TopicChange;
use super::{conflict, host, new_op_id, next_entry_here, not_written, reused};

impl Workspace {
    /// The shared write path of a team-backed checkout ([`super::memory`] calls it in
    /// place of its local transaction): sync, build the body from the replica's current
    /// revision, write to the server with the guard, then pull — the write arrives here
    /// as every event does. A log's new entry takes the next number the replica knows;
    /// another checkout's entry under that number is retried with the next. An
    /// unreachable server queues the write.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn team_write_revision(
        &mut self,
        request: &serde_json::Value,
        opts: &WriteOptions,
        author: &str,
        subject: &str,
        kind: &str,
        event_kind: &str,
        body_for: &mut dyn FnMut(Option<&Revision>) -> Result<String>,
    ) -> Result<Written> {
        let hash = loci_core::fingerprint::content_hash(request.to_string().as_bytes());
        let op_id = match &opts.operation_id {
            Some(op) => format!("op:{op}"),
            None => new_op_id(&self.root),
        };
        // The replica first, so the body and the guard see what the team wrote.
        let offline = match self.team_push().and_then(|_| self.team_pull(None)) {
            Ok(_) => false,
            Err(EngineError::Team {
                kind: "team_unreachable",
                ..
            }) => true,
            Err(e) => return Err(e),
        };
        let entry_log = logs::entry_prefix(subject).is_some();
        let session_payload = self.session_payload(opts.session)?;
        let (branch, commit) = crate::memory::memory::git_position(&self.root);
        let _ = branch;
        for _ in 0..16 {
            if let Some((_, Some(rev))) = replica::applied(self.store.conn(), &op_id)? {
                return self.written_from(rev, true);
            }
            let conn = self.store.conn();
            let target = if entry_log {
                next_entry_here(conn, subject)?
            } else {
                subject.to_string()
            };
            let current =
                match mem::page_by_subject(conn, &target)?.and_then(|p| p.current_revision_id) {
                    Some(id) => mem::revision_by_id(conn, id)?,
                    None => None,
                };
            let current_version = current.as_ref().map_or(0, |r| r.version);
            if !entry_log
                && let Some(expected) = opts.expect_version
                && offline
                && expected != current_version
            {
                // Offline, the replica is the best knowledge of the page: a guard that
                // already fails here is said now, not after the server returns.
                return Err(conflict(&target, current_version, expected));
            }
            let body = body_for(current.as_ref())?;
            let event = NewEvent {
                op_id: op_id.clone(),
                request_hash: hash.clone(),
                kind: "revision".into(),
                event_kind: event_kind.into(),
                subject: target.clone(),
                page_kind: kind.into(),
                expect_version: if entry_log {
                    Some(0)
                } else {
                    opts.expect_version
                },
                body: Some(body),
                summary: opts.summary.clone(),
                author: author.into(),
                checkout: Some(format!("{}:{}", host(), self.root.display())),
                commit: commit.clone(),
                written_at: crate::envelope::now_rfc3339(),
                payload: session_payload.clone(),
            };
            let outcome = if offline {
                Err(TeamError::Unreachable {
                    server: self.link()?.server(),
                    message: "not reached before this write".into(),
                })
            } else {
                self.link()?.call(|t| t.write(&event))
            };
            match outcome {
                Ok(
                    WriteOutcome::Written { version, .. } | WriteOutcome::Replayed { version, .. },
                ) => {
                    match self.team_pull(Some((&op_id, opts.session))) {
                        Ok(_) => {}
                        // Stored on the server, which went away before this replica got
                        // it: the write is made (never queue it again), and arrives here
                        // at the next pull.
                        Err(EngineError::Team {
                            kind: "team_unreachable",
                            ..
                        }) => return self.not_yet_pulled(event, version, None),
                        Err(e) => return Err(e),
                    }
                    let rev = replica::applied(self.store.conn(), &op_id)?
                        .and_then(|(_, rev)| rev)
                        .ok_or_else(|| {
                            StoreError::Corrupt(format!(
                                "the team server stored write {op_id} but the replica did not receive it"
                            ))
                        })?;
                    return self.written_from(rev, false);
                }
                Ok(WriteOutcome::Conflict { .. }) if entry_log => {
                    // Another checkout took this entry number: take the next one.
                    self.team_pull(None)?;
                    continue;
                }
                Ok(WriteOutcome::Conflict { current }) => {
                    return Err(conflict(
                        &target,
                        current,
                        opts.expect_version.unwrap_or_default(),
                    ));
                }
                Ok(WriteOutcome::OpReused) => {
                    return Err(reused(opts.operation_id.as_deref().unwrap_or(&op_id)));
                }
                Err(e) if e.is_unreachable() => return self.queue_write(event, current, opts),
                Err(e) if e.is_not_permitted() => return Err(not_written(&target, e)),
                Err(e) => return Err(e.into()),
            }
        }
        Err(EngineError::Internal(format!(
            "no free entry number in `{subject}` after 16 tries; run `loci team sync` and retry"
        )))
    }

    /// Queues a write for the server and answers what it will be: the page at the next
    /// version, not yet in this replica (`queued` holds its operation id).
    fn queue_write(
        &mut self,
        event: NewEvent,
        current: Option<Revision>,
        opts: &WriteOptions,
    ) -> Result<Written> {
        let json = serde_json::to_string(&event).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        self.store
            .write(|tx| replica::queue(tx, &event.op_id, &json))?;
        let version = current.map_or(0, |r| r.version) + 1;
        let op_id = event.op_id.clone();
        self.not_yet_pulled(event, version, Some(op_id))
            .map(|mut w| {
                w.revision.session_id = opts.session;
                w
            })
    }

    /// The answer for a write this replica does not hold yet: the page at `version`
    /// (queued: what it will be), its revision's text as written; `queued` holds the
    /// operation id of a queued write.
    fn not_yet_pulled(
        &mut self,
        event: NewEvent,
        version: i64,
        queued: Option<String>,
    ) -> Result<Written> {
        let conn = self.store.conn();
        let page = mem::page_by_subject(conn, &event.subject)?.unwrap_or(mem::Page {
            page_id: 0,
            subject: event.subject.clone(),
            kind: event.page_kind.clone(),
            pinned: false,
            current_revision_id: None,
            created_at: event.written_at.clone(),
            updated_at: None,
        });
        Ok(Written {
            revision: Revision {
                revision_id: 0,
                page_id: page.page_id,
                subject: event.subject.clone(),
                version,
                body: event.body.clone().unwrap_or_default(),
                summary: event.summary.clone(),
                author: event.author.clone(),
                session_id: None,
                event_id: None,
                created_at: event.written_at.clone(),
            },
            page,
            claims: Vec::new(),
            event_id: 0,
            replayed: false,
            queued,
        })
    }

    /// The [`Written`] of a revision this replica applied.
    fn written_from(&self, revision_id: i64, replayed: bool) -> Result<Written> {
        let conn = self.store.conn();
        let revision = mem::revision_by_id(conn, revision_id)?
            .ok_or_else(|| StoreError::Corrupt(format!("revision {revision_id} vanished")))?;
        let page = mem::page_by_id(conn, revision.page_id)?
            .ok_or_else(|| StoreError::Corrupt("page vanished".into()))?;
        let claims = mem::claims_of(conn, revision_id)?
            .iter()
            .map(ClaimView::from)
            .collect();
        Ok(Written {
            event_id: revision.event_id.unwrap_or_default(),
            page,
            revision,
            claims,
            replayed,
            queued: None,
        })
    }

    /// Pins or unpins a page on the server (the guard and operation id as for a
    /// revision), then pulls.
    pub(crate) fn team_pin(
        &mut self,
        page: &mem::Page,
        pinned: bool,
        opts: &WriteOptions,
        author: &str,
        request: &serde_json::Value,
    ) -> Result<mem::Page> {
        let hash = loci_core::fingerprint::content_hash(request.to_string().as_bytes());
        let op_id = match &opts.operation_id {
            Some(op) => format!("op:{op}"),
            None => new_op_id(&self.root),
        };
        self.team_push()?;
        self.team_pull(None)?;
        let event = NewEvent {
            op_id: op_id.clone(),
            request_hash: hash,
            kind: if pinned { "pin" } else { "unpin" }.into(),
            event_kind: if pinned { "pin" } else { "unpin" }.into(),
            subject: page.subject.clone(),
            page_kind: page.kind.clone(),
            expect_version: opts.expect_version,
            body: None,
            summary: opts.summary.clone(),
            author: author.into(),
            checkout: Some(format!("{}:{}", host(), self.root.display())),
            commit: crate::memory::memory::git_position(&self.root).1,
            written_at: crate::envelope::now_rfc3339(),
            payload: self.session_payload(opts.session)?,
        };
        let outcome = self
            .link()?
            .call(|t| t.write(&event))
            .map_err(|e| match e {
                e @ TeamError::NotPermitted { .. } => not_written(&page.subject, e),
                e => e.into(),
            })?;
        match outcome {
            WriteOutcome::Written { .. } | WriteOutcome::Replayed { .. } => {
                self.team_pull(Some((&op_id, opts.session)))?;
            }
            WriteOutcome::Conflict { current } => {
                return Err(conflict(
                    &page.subject,
                    current,
                    opts.expect_version.unwrap_or_default(),
                ));
            }
            WriteOutcome::OpReused => {
                return Err(reused(opts.operation_id.as_deref().unwrap_or(&op_id)));
            }
        }
        mem::page_by_id(self.store.conn(), page.page_id)?
            .ok_or_else(|| StoreError::Corrupt("page vanished".into()).into())
    }
}

/// How a team-backed checkout shares what it writes to its own store first — fact
/// definitions, sessions and dismissals: each is queued in the outbox in the transaction
/// that writes it here (so neither happens without the other, whatever crashes), then
/// pushed. Unlike a revision these need no guard and no number from the server: each is
/// added once under a key that is the same in every checkout (a fact's content hash, a
/// session's key, a finding's key) and never taken back, so the order in which checkouts
/// apply them does not matter, and applying this checkout's own again from the log
/// changes nothing ([`Applied::Known`]).
pub(crate) struct LocalShare {
    checkout: String,
    commit: Option<String>,
    root: std::path::PathBuf,
}

impl LocalShare {
    /// Queues the event of a write made in `tx`; `payload` is its content as another
    /// checkout applies it.
    pub(crate) fn queue(
        &self,
        tx: &Transaction<'_>,
        kind: &str,
        event_kind: &str,
        subject: &str,
        author: &str,
        payload: &impl Serialize,
    ) -> loci_store::Result<()> {
        let payload =
            serde_json::to_string(payload).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        let event = NewEvent {
            op_id: new_op_id(&self.root),
            request_hash: loci_core::fingerprint::content_hash(payload.as_bytes()),
            kind: kind.into(),
            event_kind: event_kind.into(),
            subject: subject.into(),
            page_kind: String::new(),
            expect_version: None,
            body: None,
            summary: None,
            author: author.into(),
            checkout: Some(self.checkout.clone()),
            commit: self.commit.clone(),
            written_at: crate::envelope::now_rfc3339(),
            payload: Some(payload),
        };
        let json = serde_json::to_string(&event).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        replica::queue(tx, &event.op_id, &json)
    }
}

impl Workspace {
    /// [`LocalShare`] for this checkout, when memory is team-backed.
    pub(crate) fn team_share(&self) -> Option<LocalShare> {
        self.team.as_ref()?;
        Some(LocalShare {
            checkout: format!("{}:{}", host(), self.root.display()),
            commit: crate::memory::memory::git_position(&self.root).1,
            root: self.root.clone(),
        })
    }

    /// After a write [`LocalShare::queue`]d its event: pushes the outbox. A failure is
    /// not the write's (it is stored here and stays queued): the answer's `team` block
    /// says so (`pending_writes`, `last_error`), and the next contact pushes it.
    pub(crate) fn team_push_shared(&mut self) {
        if self.team.is_some()
            && let Err(e) = self.team_push()
        {
            tracing::debug!("a shared write stays queued: {e}");
        }
    }

    /// A revision's payload naming the session it was written in by its key (the same in
    /// every checkout, where the local id is not), so the session's digest holds it
    /// everywhere.
    fn session_payload(&self, session: Option<i64>) -> Result<Option<String>> {
        let Some(id) = session else {
            return Ok(None);
        };
        Ok(mem::session_by_id(self.store.conn(), id)?.map(|s| {
            serde_json::json!({"session": session_key(&s.author, &s.started_at, s.task.as_deref())})
                .to_string()
        }))
    }

    /// Adds (`added`) or removes a member of a topic page on the server — the page's
    /// members are the result of every checkout's additions and removals in the log's
    /// order, so each checkout applies them as the server ordered them, its own included
    /// — then pulls; an unreachable server queues it. Returns the members as they are (or,
    /// queued, will be) after it.
    pub(crate) fn team_topic(
        &mut self,
        topic: &str,
        member: &str,
        added: bool,
        opts: &WriteOptions,
        author: &str,
    ) -> Result<Vec<String>> {
        let payload = serde_json::to_string(&TopicChange {
            member: member.into(),
            added,
        })
        .map_err(|e| StoreError::Corrupt(e.to_string()))?;
        let op_id = match &opts.operation_id {
            Some(op) => format!("op:{op}"),
            None => new_op_id(&self.root),
        };
        let event = NewEvent {
            op_id: op_id.clone(),
            request_hash: loci_core::fingerprint::content_hash(
                format!("{topic}\n{payload}").as_bytes(),
            ),
            kind: "topic".into(),
            event_kind: "topic".into(),
            subject: topic.into(),
            page_kind: "topic".into(),
            expect_version: None,
            body: None,
            summary: opts.summary.clone(),
            author: author.into(),
            checkout: Some(format!("{}:{}", host(), self.root.display())),
            commit: crate::memory::memory::git_position(&self.root).1,
            written_at: crate::envelope::now_rfc3339(),
            payload: Some(payload),
        };
        let outcome = self
            .team_push()
            .and_then(|_| self.team_pull(None))
            .and_then(|_| {
                self.link()?.call(|t| t.write(&event)).map_err(|e| match e {
                    e @ TeamError::NotPermitted { .. } => not_written(topic, e),
                    e => e.into(),
                })
            });
        match outcome {
            Ok(WriteOutcome::Written { .. } | WriteOutcome::Replayed { .. }) => {
                self.team_pull(Some((&op_id, opts.session)))?;
            }
            Ok(WriteOutcome::OpReused) => {
                return Err(reused(opts.operation_id.as_deref().unwrap_or(&op_id)));
            }
            // Topics take no guard: the server never answers a conflict.
            Ok(WriteOutcome::Conflict { current }) => {
                return Err(conflict(topic, current, 0));
            }
            Err(EngineError::Team {
                kind: "team_unreachable",
                ..
            }) => {
                let json = serde_json::to_string(&event)
                    .map_err(|e| StoreError::Corrupt(e.to_string()))?;
                self.store.write(|tx| replica::queue(tx, &op_id, &json))?;
                let conn = self.store.conn();
                let mut members = match mem::page_by_subject(conn, topic)? {
                    Some(p) => mem::topic_members(conn, p.page_id)?,
                    None => Vec::new(),
                };
                members.retain(|m| m != member);
                if added {
                    members.push(member.into());
                    members.sort();
                }
                return Ok(members);
            }
            Err(e) => return Err(e),
        }
        let conn = self.store.conn();
        Ok(match mem::page_by_subject(conn, topic)? {
            Some(p) => mem::topic_members(conn, p.page_id)?,
            None => Vec::new(),
        })
    }
}
