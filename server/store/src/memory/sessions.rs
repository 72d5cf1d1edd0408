//! Sessions: beginning and ending them (locally or as the team's replica), and reading
//! them back.

use super::*;

/// A session of the diary.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Session {
    /// Id, handed to clients.
    pub session_id: i64,
    /// What the session set out to do.
    pub task: Option<String>,
    /// Who ran it.
    pub author: String,
    /// RFC 3339.
    pub started_at: String,
    /// RFC 3339, when ended.
    pub ended_at: Option<String>,
    /// The closing summary.
    pub summary: Option<String>,
    /// Event high-water mark at begin.
    pub start_event_id: i64,
    /// Revision high-water mark at begin.
    pub start_revision_id: i64,
    /// Event high-water mark at end.
    pub end_event_id: Option<i64>,
    /// Revision high-water mark at end.
    pub end_revision_id: Option<i64>,
    /// Git branch at begin.
    pub branch: Option<String>,
    /// Git commit at begin.
    pub head: Option<String>,
    /// JSON digest, written at end. Not serialized: a door serves it parsed, beside the
    /// row (`loci_engine::memory::SessionView::digest`), not as a JSON string inside the
    /// JSON answer.
    #[serde(skip_serializing)]
    pub digest: Option<String>,
}

pub(super) fn session(r: &Row<'_>) -> rusqlite::Result<Session> {
    Ok(Session {
        session_id: r.get(0)?,
        task: r.get(1)?,
        author: r.get(2)?,
        started_at: r.get(3)?,
        ended_at: r.get(4)?,
        summary: r.get(5)?,
        start_event_id: r.get(6)?,
        start_revision_id: r.get(7)?,
        end_event_id: r.get(8)?,
        end_revision_id: r.get(9)?,
        branch: r.get(10)?,
        head: r.get(11)?,
        digest: r.get(12)?,
    })
}

pub(super) const SESSION_COLUMNS: &str = "session_id, task, author, started_at, ended_at, summary,
    start_event_id, start_revision_id, end_event_id, end_revision_id, branch, head, digest";

/// Begins a session with the current high-water marks.
pub fn begin_session(
    tx: &Transaction<'_>,
    task: Option<&str>,
    author: &str,
    branch: Option<&str>,
    head: Option<&str>,
) -> Result<Session> {
    let (events, revisions) = high_water_marks(tx)?;
    tx.execute(
        "INSERT INTO sessions(task, author, start_event_id, start_revision_id, branch, head)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![task, author, events, revisions, branch, head],
    )
    .ctx(|| "beginning a session".into())?;
    let id = tx.last_insert_rowid();
    session_by_id(tx, id)?.ok_or_else(|| StoreError::Corrupt(format!("session {id} vanished")))
}

/// Ends a session, recording the high-water marks, summary and digest (JSON).
pub fn end_session(
    tx: &Transaction<'_>,
    session_id: i64,
    summary: Option<&str>,
    digest: &str,
) -> Result<()> {
    let (events, revisions) = high_water_marks(tx)?;
    tx.execute(
        "UPDATE sessions SET ended_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), summary = ?2,
            end_event_id = ?3, end_revision_id = ?4, digest = ?5
         WHERE session_id = ?1",
        params![session_id, summary, events, revisions, digest],
    )
    .ctx(|| "ending a session".into())?;
    Ok(())
}

/// Ends a session begun elsewhere (another checkout of a team) as it ended there: at
/// `ended_at` (RFC 3339), with its summary and digest (JSON); the high-water marks are this
/// database's now, as [`insert_session_as`] takes them.
pub fn end_session_as(
    tx: &Transaction<'_>,
    session_id: i64,
    ended_at: &str,
    summary: Option<&str>,
    digest: &str,
) -> Result<()> {
    let (events, revisions) = high_water_marks(tx)?;
    tx.execute(
        "UPDATE sessions SET ended_at = ?2, summary = ?3, end_event_id = ?4,
            end_revision_id = ?5, digest = ?6
         WHERE session_id = ?1",
        params![session_id, ended_at, summary, events, revisions, digest],
    )
    .ctx(|| "ending a session".into())?;
    Ok(())
}

/// Records a session begun elsewhere (an import), with its provenance and digest. Its
/// high-water marks are this database's now, at begin and (when it had ended) at end: the
/// session claims no earlier or later row here by them, only the revisions attributed to it.
pub fn insert_session_as(tx: &Transaction<'_>, s: &Session) -> Result<i64> {
    let (events, revisions) = high_water_marks(tx)?;
    let ended = s.ended_at.is_some();
    tx.execute(
        "INSERT INTO sessions(task, author, started_at, ended_at, summary, start_event_id,
            start_revision_id, end_event_id, end_revision_id, branch, head, digest)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
        params![
            s.task,
            s.author,
            s.started_at,
            s.ended_at,
            s.summary,
            events,
            revisions,
            ended.then_some(events),
            ended.then_some(revisions),
            s.branch,
            s.head,
            s.digest
        ],
    )
    .ctx(|| "recording a session".into())?;
    Ok(tx.last_insert_rowid())
}

/// Every session, oldest first.
pub fn sessions(conn: &Connection) -> Result<Vec<Session>> {
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {SESSION_COLUMNS} FROM sessions ORDER BY session_id"
        ))
        .ctx(|| "reading sessions".into())?;
    let rows = stmt
        .query_map([], session)
        .ctx(|| "reading sessions".into())?;
    rows.collect::<rusqlite::Result<_>>()
        .ctx(|| "reading sessions".into())
}

/// A session by id.
pub fn session_by_id(conn: &Connection, session_id: i64) -> Result<Option<Session>> {
    conn.prepare_cached(&format!(
        "SELECT {SESSION_COLUMNS} FROM sessions WHERE session_id = ?1"
    ))
    .ctx(|| "reading a session".into())?
    .query_row([session_id], session)
    .optional()
    .ctx(|| format!("reading session {session_id}"))
}

/// The last `n` sessions, newest first by when they began (an imported session keeps its
/// time, and its row id is newer than its start).
pub fn recent_sessions(conn: &Connection, n: u32) -> Result<Vec<Session>> {
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {SESSION_COLUMNS} FROM sessions
              ORDER BY julianday(started_at) DESC, session_id DESC LIMIT ?1"
        ))
        .ctx(|| "reading sessions".into())?;
    let rows = stmt
        .query_map([n], session)
        .ctx(|| "reading sessions".into())?;
    rows.collect::<rusqlite::Result<_>>()
        .ctx(|| "reading sessions".into())
}
