//! The session diary: begin, end with a digest of what the session changed, and a recap
//! of the last sessions. Rows belong to a session by explicit attribution (the session id
//! each write carries) and commits by event high-water marks — never by timestamps, so
//! two sessions begun in the same second never take each other's rows.

use loci_store::memory::{self as mem, Session};
use serde::{Deserialize, Serialize};

use crate::{EngineError, Envelope, Result, Workspace};

/// What a session changed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Digest {
    /// Pages written: subject, version, change summary.
    pub pages: Vec<DigestPage>,
    /// Decisions recorded (their summaries).
    pub decisions: Vec<String>,
    /// Lessons recorded (their summaries).
    pub lessons: Vec<String>,
    /// Commits synced during the session: short hash and summary line.
    pub commits: Vec<(String, String)>,
}

/// One page write in a digest.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DigestPage {
    /// Subject.
    pub subject: String,
    /// Version written.
    pub version: i64,
    /// Change summary.
    pub summary: Option<String>,
}

/// A session and its digest.
#[derive(Clone, Debug, Serialize)]
pub struct SessionView {
    /// The session row.
    pub session: Session,
    /// What it changed (computed live for an open session).
    pub digest: Digest,
}

impl Workspace {
    /// Begins a session; pass its id with every write (`--session`, `LOCI_SESSION`).
    pub fn session_begin(
        &mut self,
        task: Option<&str>,
        author: Option<&str>,
    ) -> Result<Envelope<Session>> {
        if let Some(task) = task {
            self.accept_text("task", task)?;
        }
        if let Some(author) = author {
            self.accept_author(author)?;
        }
        let author = author
            .map(str::to_string)
            .unwrap_or_else(|| super::memory::default_author_in(Some(&self.root)));
        let (branch, head) = super::memory::git_position(&self.root);
        let share = self.team_share();
        let session = self.store.write(|tx| {
            let s = mem::begin_session(tx, task, &author, branch.as_deref(), head.as_deref())?;
            // Team memory: the session is shared (super::team::LocalShare).
            if let Some(share) = &share {
                let shared = super::portability::ExportedSession::of(s.clone(), Digest::default());
                share.queue(tx, "session", "session_begin", "", &author, &shared)?;
            }
            let payload = serde_json::json!({"task": task}).to_string();
            mem::insert_event(
                tx,
                "session_begin",
                &format!("session:{}", s.session_id),
                "",
                Some(&payload),
                Some(s.session_id),
            )?;
            Ok(s)
        })?;
        self.team_push_shared();
        let mut env = self.envelope(session, Vec::new())?;
        // An agent starting a task hears that memory lags the commits (one meta row).
        env.capability.notes.extend(self.pages_behind_note()?);
        Ok(env)
    }

    /// Ends a session, storing its digest.
    pub fn session_end(
        &mut self,
        session_id: i64,
        summary: Option<&str>,
    ) -> Result<Envelope<SessionView>> {
        if let Some(summary) = summary {
            self.accept_text("summary", summary)?;
        }
        let s = mem::session_by_id(self.store.conn(), session_id)?
            .ok_or_else(|| EngineError::NotFound(format!("no session {session_id}")))?;
        if s.ended_at.is_some() {
            return Err(EngineError::InvalidArgument {
                name: "session".into(),
                message: format!("session {session_id} has already ended"),
            });
        }
        let digest = self.digest(&s, None)?;
        let json =
            serde_json::to_string(&digest).map_err(|e| EngineError::Internal(e.to_string()))?;
        let share = self.team_share();
        self.store.write(|tx| {
            mem::insert_event(
                tx,
                "session_end",
                &format!("session:{session_id}:end"),
                "",
                None,
                Some(session_id),
            )?;
            mem::end_session(tx, session_id, summary, &json)?;
            // Team memory: how it ended is shared, digest and all (super::team::LocalShare).
            if let Some(share) = &share
                && let Some(ended) = mem::session_by_id(tx, session_id)?
            {
                let author = ended.author.clone();
                let shared = super::portability::ExportedSession::of(ended, digest.clone());
                share.queue(tx, "session", "session_end", "", &author, &shared)?;
            }
            Ok(())
        })?;
        self.team_push_shared();
        let session = mem::session_by_id(self.store.conn(), session_id)?
            .ok_or_else(|| EngineError::Internal("session vanished".into()))?;
        self.envelope(SessionView { session, digest }, Vec::new())
    }

    /// The last `n` sessions, newest first, each with its digest.
    pub fn recap(&self, n: u32) -> Result<Envelope<Vec<SessionView>>> {
        let mut out = Vec::new();
        for session in mem::recent_sessions(self.store.conn(), n.max(1))? {
            let digest = match &session.digest {
                Some(json) => serde_json::from_str(json).unwrap_or_default(),
                None => self.digest(&session, None)?,
            };
            out.push(SessionView { session, digest });
        }
        self.envelope(out, Vec::new())
    }

    pub(crate) fn digest(&self, s: &Session, up_to_event: Option<i64>) -> Result<Digest> {
        let conn = self.store.conn();
        let mut d = Digest::default();
        for r in mem::revisions_in_session(conn, s.session_id)? {
            // A decision's or lesson's own text is in its event's request.
            let entry = || -> Result<Option<String>> {
                let Some(id) = r.event_id else {
                    return Ok(None);
                };
                let payload = mem::event_by_id(conn, id)?.and_then(|e| e.payload);
                Ok(payload
                    .and_then(|p| serde_json::from_str::<serde_json::Value>(&p).ok())
                    .and_then(|v| v["request"]["text"].as_str().map(str::to_string)))
            };
            match loci_store::logs::log_of_entry(&r.subject) {
                Some("decisions") => d.decisions.extend(entry()?),
                Some("lessons") => d.lessons.extend(entry()?),
                _ => {}
            }
            d.pages.push(DigestPage {
                subject: r.subject,
                version: r.version,
                summary: r.summary,
            });
        }
        let end = up_to_event.or(s.end_event_id).unwrap_or(i64::MAX);
        let mut seen = std::collections::BTreeSet::new();
        for e in mem::events_between(conn, s.start_event_id, end, "commit")? {
            if seen.insert(e.source_ref.clone())
                && let Some(c) = mem::commit(conn, &e.source_ref)?
            {
                let short: String = c.hash.chars().take(12).collect();
                d.commits
                    .push((short, c.message.lines().next().unwrap_or("").to_string()));
            }
        }
        Ok(d)
    }
}
