//! Events: the idempotent log of what happened to a subject, and sessions' high-water
//! marks over it.

use super::*;

/// One event of the audit log.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    /// Row id (increasing; used as a high-water mark).
    pub event_id: i64,
    /// `commit`, `remember`, `decision`, `rollback`, `rename`, ...
    pub kind: String,
    /// Commit hash, snapshot ref or operation ref.
    pub source_ref: String,
    /// The subject concerned (`''` when none).
    pub subject: String,
    /// JSON details, as stored. Serialized as the JSON they are (an object), not as a
    /// string holding JSON (as `why --json` prints them); text that is not JSON
    /// stays a string.
    #[serde(serialize_with = "json_text")]
    pub payload: Option<String>,
    /// The session, if any.
    pub session_id: Option<i64>,
    /// RFC 3339.
    pub created_at: String,
}

/// Serializes stored JSON text as the JSON value it holds (a string when it holds none).
pub(super) fn json_text<S: serde::Serializer>(
    text: &Option<String>,
    s: S,
) -> Result<S::Ok, S::Error> {
    use serde::Serialize;
    match text
        .as_deref()
        .map(|t| serde_json::from_str::<serde_json::Value>(t).map_err(|_| t))
    {
        None => s.serialize_none(),
        Some(Ok(value)) => value.serialize(s),
        Some(Err(raw)) => raw.serialize(s),
    }
}

pub(super) fn event(r: &Row<'_>) -> rusqlite::Result<Event> {
    Ok(Event {
        event_id: r.get(0)?,
        kind: r.get(1)?,
        source_ref: r.get(2)?,
        subject: r.get(3)?,
        payload: r.get(4)?,
        session_id: r.get(5)?,
        created_at: r.get(6)?,
    })
}

pub(super) const EVENT_COLUMNS: &str =
    "event_id, kind, source_ref, subject, payload, session_id, created_at";

/// Records an event; idempotent on `(source_ref, subject)`: a repeat returns the existing
/// event's id and changes nothing. Returns `(event_id, inserted)`.
pub fn insert_event(
    tx: &Transaction<'_>,
    kind: &str,
    source_ref: &str,
    subject: &str,
    payload: Option<&str>,
    session_id: Option<i64>,
) -> Result<(i64, bool)> {
    let n = tx
        .prepare_cached(
            "INSERT INTO events(kind, source_ref, subject, payload, session_id)
             VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT(source_ref, subject) DO NOTHING",
        )
        .ctx(|| "recording an event".into())?
        .execute(params![kind, source_ref, subject, payload, session_id])
        .ctx(|| format!("recording event {kind} {source_ref}"))?;
    let id: i64 = tx
        .prepare_cached("SELECT event_id FROM events WHERE source_ref = ?1 AND subject = ?2")
        .ctx(|| "reading an event".into())?
        .query_row([source_ref, subject], |r| r.get(0))
        .ctx(|| "reading an event".into())?;
    Ok((id, n == 1))
}

/// An event by id.
pub fn event_by_id(conn: &Connection, event_id: i64) -> Result<Option<Event>> {
    conn.prepare_cached(&format!(
        "SELECT {EVENT_COLUMNS} FROM events WHERE event_id = ?1"
    ))
    .ctx(|| "reading an event".into())?
    .query_row([event_id], event)
    .optional()
    .ctx(|| format!("reading event {event_id}"))
}

/// Events about `subject` of the given kinds, oldest first, with `event_id <= up_to`.
pub fn events_for_subject(
    conn: &Connection,
    subject: &str,
    kinds: &[&str],
    up_to: i64,
) -> Result<Vec<Event>> {
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {EVENT_COLUMNS} FROM events WHERE subject = ?1 AND event_id <= ?2 ORDER BY event_id"
        ))
        .ctx(|| "reading events".into())?;
    let rows = stmt
        .query_map(params![subject, up_to], event)
        .ctx(|| "reading events".into())?;
    let all: Vec<Event> = rows
        .collect::<rusqlite::Result<_>>()
        .ctx(|| "reading events".into())?;
    Ok(all
        .into_iter()
        .filter(|e| kinds.is_empty() || kinds.contains(&e.kind.as_str()))
        .collect())
}

/// Events with `after < event_id <= up_to` of a kind, oldest first.
pub fn events_between(conn: &Connection, after: i64, up_to: i64, kind: &str) -> Result<Vec<Event>> {
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {EVENT_COLUMNS} FROM events WHERE event_id > ?1 AND event_id <= ?2 AND kind = ?3
             ORDER BY event_id"
        ))
        .ctx(|| "reading events".into())?;
    let rows = stmt
        .query_map(params![after, up_to, kind], event)
        .ctx(|| "reading events".into())?;
    rows.collect::<rusqlite::Result<_>>()
        .ctx(|| "reading events".into())
}

/// The highest event and revision ids (high-water marks; 0 when empty).
pub fn high_water_marks(conn: &Connection) -> Result<(i64, i64)> {
    conn.query_row(
        "SELECT (SELECT ifnull(max(event_id), 0) FROM events),
                (SELECT ifnull(max(revision_id), 0) FROM revisions)",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
    .ctx(|| "reading high-water marks".into())
}

/// Where the newest `rename` event moved the page `subject` (its payload's `to`), if one
/// did.
///
/// Errors: [`StoreError::Sqlite`] when the events cannot be read.
pub fn page_moved_to(conn: &Connection, subject: &str) -> Result<Option<String>> {
    conn.prepare_cached(
        "SELECT payload ->> 'to' FROM events
          WHERE kind = 'rename' AND payload ->> 'from' = ?1
          ORDER BY event_id DESC LIMIT 1",
    )
    .and_then(|mut st| st.query_row([subject], |r| r.get(0)).optional())
    .ctx(|| "looking up a renamed page".into())
}

/// Whether a `rename` event moved a page away from `subject`.
///
/// Errors: [`StoreError::Sqlite`] when the events cannot be read.
pub fn renamed_away(conn: &Connection, subject: &str) -> Result<bool> {
    conn.prepare_cached(
        "SELECT EXISTS(SELECT 1 FROM events WHERE kind = 'rename' AND payload ->> 'from' = ?1)",
    )
    .and_then(|mut st| st.query_row([subject], |r| r.get(0)))
    .ctx(|| format!("looking up renames of `{subject}`"))
}

/// Whether sync has recorded any `commit` event (git history was read into memory).
///
/// Errors: [`StoreError::Sqlite`] when the events cannot be read.
pub fn any_commit_event(conn: &Connection) -> Result<bool> {
    conn.prepare_cached("SELECT 1 FROM events WHERE kind = 'commit' LIMIT 1")
        .and_then(|mut st| st.query_row([], |_| Ok(())).optional())
        .map(|found| found.is_some())
        .ctx(|| "reading commit events".into())
}
