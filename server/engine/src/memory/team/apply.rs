//! The replica's side of the log: each server event applied to this store once, its
//! claims resolved against this checkout's map.

use loci_store::StoreError;
use loci_store::memory::{self as mem, NewRevision};
use loci_store::rusqlite::Transaction;
use loci_store::team as replica;
use loci_team::ServerEvent;
use serde::Serialize;

use crate::memory::portability::{
    ExportedDismissal, ExportedFact, ExportedSession, dismissal_words_known, fact_hash,
    record_dismissal, session_key,
};

/// What applying one server event did to the replica.
pub(super) enum Applied {
    /// It changed the replica; a revision names the one it made.
    Changed(Option<i64>),
    /// The replica had it already: this checkout wrote it first (a fact, a session, a
    /// dismissal), joined with it, or a pin left the page as it was.
    Known,
}

/// A server event's payload as `T`.
fn payload<T: serde::de::DeserializeOwned>(ev: &ServerEvent) -> loci_store::Result<T> {
    let json = ev.payload.as_deref().unwrap_or("null");
    serde_json::from_str(json).map_err(|e| {
        StoreError::Corrupt(format!(
            "team event {} ({}) has an unreadable payload: {e}",
            ev.seq, ev.kind
        ))
    })
}

/// The local id of the session a revision event names by key (`{"session": KEY}`), if
/// this replica has that session.
fn session_of(tx: &Transaction<'_>, ev: &ServerEvent) -> loci_store::Result<Option<i64>> {
    let Some(key) = ev
        .payload
        .as_deref()
        .and_then(|p| serde_json::from_str::<serde_json::Value>(p).ok())
        .and_then(|v| v["session"].as_str().map(str::to_string))
    else {
        return Ok(None);
    };
    Ok(mem::sessions(tx)?
        .into_iter()
        .find(|s| session_key(&s.author, &s.started_at, s.task.as_deref()) == key)
        .map(|s| s.session_id))
}

/// The revision of this store a join uploaded as `join:UID:vN`, if this store is the one
/// that joined with it.
fn joined_revision(tx: &Transaction<'_>, op_id: &str) -> loci_store::Result<Option<i64>> {
    let Some((uid, version)) = op_id
        .strip_prefix("join:")
        .and_then(|rest| rest.rsplit_once(":v"))
    else {
        return Ok(None);
    };
    let Ok(version) = version.parse::<i64>() else {
        return Ok(None);
    };
    let Some(page) = mem::page_by_uid(tx, uid)? else {
        return Ok(None);
    };
    Ok(mem::revisions_of(tx, page.page_id)?
        .into_iter()
        .find(|r| r.version == version)
        .map(|r| r.revision_id))
}

/// Applies one server event to the replica, once: a revision is appended to its page
/// (created as needed) with the author, summary and time the server holds, its claims
/// resolved and snapshotted against this checkout's map; a pin sets the page's pin; a
/// topic event adds or removes a member; a fact, a session or a dismissal is recorded
/// unless this replica has it (by its content hash, session key or finding key). An event
/// whose operation id is applied already changes nothing. Every event is recorded as
/// applied, which moves the high-water mark.
pub(super) fn apply_event(
    tx: &Transaction<'_>,
    root: &std::path::Path,
    ev: &ServerEvent,
    session: Option<i64>,
) -> loci_store::Result<Applied> {
    if replica::applied(tx, &ev.op_id)?.is_some() {
        return Ok(Applied::Known);
    }
    let payload_json = serde_json::json!({
        "team": {"op_id": ev.op_id, "seq": ev.seq, "checkout": ev.checkout, "commit": ev.commit, "author": ev.author}
    })
    .to_string();
    let source_ref = format!("team:{}", ev.op_id);
    let event = |kind: &str, subject: &str, session: Option<i64>| {
        mem::insert_event(tx, kind, &source_ref, subject, Some(&payload_json), session)
    };
    let applied = match ev.kind.as_str() {
        "revision" => return apply_revision(tx, root, ev, session, &event),
        "pin" | "unpin" => match mem::page_by_subject(tx, &ev.subject)? {
            Some(page) if page.pinned != (ev.kind == "pin") => {
                mem::set_pinned(tx, page.page_id, ev.kind == "pin")?;
                event(&ev.kind, &ev.subject, session)?;
                Applied::Changed(None)
            }
            _ => Applied::Known,
        },
        "topic" => {
            let t: TopicChange = payload(ev)?;
            let page = mem::ensure_page(tx, &ev.subject, "topic")?;
            if mem::set_topic_member(tx, page.page_id, &t.member, t.added)? {
                event("topic", &ev.subject, session)?;
                Applied::Changed(None)
            } else {
                Applied::Known
            }
        }
        "fact" => apply_fact(tx, ev, &event)?,
        "session" => apply_session(tx, ev, &event)?,
        "dismissal" => {
            let d: ExportedDismissal = payload(ev)?;
            if !dismissal_words_known(&d) {
                tracing::warn!(
                    "team event {} dismisses a finding of a kind this loci does not know \
                     (`{}`, `{}`): skipped; upgrade loci",
                    ev.seq,
                    d.origin,
                    d.kind
                );
                Applied::Known
            } else if record_dismissal(tx, &d)? {
                event("resolve", &d.subject, None)?;
                Applied::Changed(None)
            } else {
                Applied::Known
            }
        }
        other => {
            return Err(StoreError::Corrupt(format!(
                "team event {} has an unknown kind `{other}` (a newer loci wrote it?)",
                ev.seq
            )));
        }
    };
    replica::record_applied(tx, &ev.op_id, ev.seq, None)?;
    Ok(applied)
}

/// How an applied event is recorded in `events`: its kind, subject and session.
type RecordEvent<'a> = dyn Fn(&str, &str, Option<i64>) -> loci_store::Result<(i64, bool)> + 'a;

/// A revision event: the revision appended to its page (created as needed) with the
/// author, summary and time the server holds, its claims resolved and snapshotted against
/// this checkout's map, and the event recorded as applied. A revision this store joined
/// with is known already.
fn apply_revision(
    tx: &Transaction<'_>,
    root: &std::path::Path,
    ev: &ServerEvent,
    session: Option<i64>,
    event: &RecordEvent<'_>,
) -> loci_store::Result<Applied> {
    if let Some(revision) = joined_revision(tx, &ev.op_id)? {
        replica::record_applied(tx, &ev.op_id, ev.seq, Some(revision))?;
        return Ok(Applied::Known);
    }
    let session = match session {
        Some(s) => Some(s),
        None => session_of(tx, ev)?,
    };
    let page = mem::ensure_page(tx, &ev.subject, &ev.page_kind)?;
    let version = mem::next_version(tx, page.page_id)?;
    if version != ev.version {
        // The numbering docs/team.md says a join with its own history makes: no
        // warning to the user.
        tracing::debug!(
            "team event {} makes `{}` version {} on the server, version {version} here \
             (this checkout's history of the page differs: it joined with its own)",
            ev.seq,
            ev.subject,
            ev.version
        );
    }
    let (event_id, _) = event(&ev.event_kind, &ev.subject, session)?;
    let body = ev.body.as_deref().unwrap_or_default();
    let revision = mem::insert_revision_as(
        tx,
        &NewRevision {
            page_id: page.page_id,
            body,
            summary: ev.summary.as_deref(),
            author: &ev.author,
            session_id: session,
            event_id: Some(event_id),
        },
        version,
        &ev.written_at,
    )?;
    let snapshot = crate::memory::claims::subject_snapshot(tx, root, &ev.subject, &page.kind)?;
    crate::memory::claims::snapshot_revision(tx, &revision, &ev.subject, snapshot.as_ref(), None)?;
    replica::record_applied(tx, &ev.op_id, ev.seq, Some(revision.revision_id))?;
    Ok(Applied::Changed(Some(revision.revision_id)))
}

/// A fact event: the definition added unless this replica has one with its content hash.
fn apply_fact(
    tx: &Transaction<'_>,
    ev: &ServerEvent,
    event: &RecordEvent<'_>,
) -> loci_store::Result<Applied> {
    let f: ExportedFact = payload(ev)?;
    let hash = fact_hash(&f);
    let known = mem::facts(tx)?
        .iter()
        .any(|x| fact_hash(&ExportedFact::from(x)) == hash);
    let applied = if known {
        Applied::Known
    } else {
        mem::insert_fact_as(
            tx,
            &mem::Fact {
                fact_id: 0,
                claim: f.claim,
                command: f.command,
                expect_output: f.expect_output,
                expect_exit: f.expect_exit,
                author: f.author,
                created_at: f.created_at,
                last_status: None,
                last_run_at: None,
            },
        )?;
        event("fact", "", None)?;
        Applied::Changed(None)
    };
    Ok(applied)
}

/// A session event: the session added unless this replica has it (by its key), or ended
/// when the replica's is still open.
fn apply_session(
    tx: &Transaction<'_>,
    ev: &ServerEvent,
    event: &RecordEvent<'_>,
) -> loci_store::Result<Applied> {
    let s: ExportedSession = payload(ev)?;
    let here = mem::sessions(tx)?
        .into_iter()
        .find(|h| session_key(&h.author, &h.started_at, h.task.as_deref()) == s.key);
    let digest =
        || serde_json::to_string(&s.digest).map_err(|e| StoreError::Corrupt(e.to_string()));
    let applied = match here {
        None => {
            let id = mem::insert_session_as(
                tx,
                &s.new_row(s.ended_at.is_some().then(digest).transpose()?),
            )?;
            event(&ev.event_kind, "", Some(id))?;
            Applied::Changed(None)
        }
        Some(h) if h.ended_at.is_none() && s.ended_at.is_some() => {
            mem::end_session_as(
                tx,
                h.session_id,
                s.ended_at.as_deref().unwrap_or_default(),
                s.summary.as_deref(),
                &digest()?,
            )?;
            event(&ev.event_kind, "", Some(h.session_id))?;
            Applied::Changed(None)
        }
        Some(_) => Applied::Known,
    };
    Ok(applied)
}

/// A topic event's payload: the member, and whether it was added or removed.
#[derive(Debug, Serialize, serde::Deserialize)]
pub(super) struct TopicChange {
    pub(super) member: String,
    pub(super) added: bool,
}
