//! The checkout's side of team memory (migration 25): which server events this replica
//! has applied (its high-water mark) and the writes queued while the server was
//! unreachable. The server's side is the `loci-team` crate.

use rusqlite::{Connection, OptionalExtension, Transaction, params};

use crate::{Context, Result};

/// The replica's high-water mark: the highest server sequence number applied (0: none).
pub fn high_water_mark(conn: &Connection) -> Result<i64> {
    conn.prepare_cached("SELECT ifnull(max(seq), 0) FROM team_applied")
        .ctx(|| "reading the team high-water mark".into())?
        .query_row([], |r| r.get(0))
        .ctx(|| "reading the team high-water mark".into())
}

/// The server sequence number and local revision of an applied operation.
pub fn applied(conn: &Connection, op_id: &str) -> Result<Option<(i64, Option<i64>)>> {
    conn.prepare_cached("SELECT seq, revision_id FROM team_applied WHERE op_id = ?1")
        .ctx(|| "reading an applied operation".into())?
        .query_row([op_id], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()
        .ctx(|| format!("reading applied operation {op_id}"))
}

/// Records that server event `seq` (operation `op_id`) is applied here, as
/// `revision_id` when it made a revision.
pub fn record_applied(
    tx: &Transaction<'_>,
    op_id: &str,
    seq: i64,
    revision_id: Option<i64>,
) -> Result<()> {
    tx.prepare_cached("INSERT INTO team_applied(op_id, seq, revision_id) VALUES (?1, ?2, ?3)")
        .ctx(|| "recording an applied operation".into())?
        .execute(params![op_id, seq, revision_id])
        .ctx(|| format!("recording applied operation {op_id}"))?;
    Ok(())
}

/// A write waiting for the server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Queued {
    /// Its operation id.
    pub op_id: String,
    /// The write, as JSON (the team crate's `NewEvent`).
    pub write: String,
    /// RFC 3339.
    pub queued_at: String,
    /// Why the server refused it, once it did.
    pub failed: Option<String>,
}

/// Queues a write (a repeat of its operation id changes nothing).
pub fn queue(tx: &Transaction<'_>, op_id: &str, write: &str) -> Result<()> {
    tx.prepare_cached(
        "INSERT INTO team_outbox(op_id, write) VALUES (?1, ?2) ON CONFLICT(op_id) DO NOTHING",
    )
    .ctx(|| "queueing a write".into())?
    .execute([op_id, write])
    .ctx(|| format!("queueing write {op_id}"))?;
    Ok(())
}

/// The queued writes, oldest first: those still to push (`failed` false) or those the
/// server refused (`failed` true).
pub fn outbox(conn: &Connection, failed: bool) -> Result<Vec<Queued>> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT op_id, write, queued_at, failed FROM team_outbox
              WHERE (failed IS NOT NULL) = ?1 ORDER BY outbox_id",
        )
        .ctx(|| "reading the outbox".into())?;
    let rows = stmt
        .query_map([failed], |r| {
            Ok(Queued {
                op_id: r.get(0)?,
                write: r.get(1)?,
                queued_at: r.get(2)?,
                failed: r.get(3)?,
            })
        })
        .ctx(|| "reading the outbox".into())?;
    rows.collect::<rusqlite::Result<_>>()
        .ctx(|| "reading the outbox".into())
}

/// How many writes wait to be pushed, and how many the server refused.
pub fn outbox_counts(conn: &Connection) -> Result<(u64, u64)> {
    conn.prepare_cached(
        "SELECT count(*) FILTER (WHERE failed IS NULL), count(*) FILTER (WHERE failed IS NOT NULL)
           FROM team_outbox",
    )
    .ctx(|| "counting the outbox".into())?
    .query_row([], |r| Ok((r.get(0)?, r.get(1)?)))
    .ctx(|| "counting the outbox".into())
}

/// Removes a pushed write.
pub fn unqueue(tx: &Transaction<'_>, op_id: &str) -> Result<()> {
    tx.prepare_cached("DELETE FROM team_outbox WHERE op_id = ?1")
        .ctx(|| "emptying the outbox".into())?
        .execute([op_id])
        .ctx(|| format!("removing queued write {op_id}"))?;
    Ok(())
}

/// Marks a queued write as refused by the server, with why.
pub fn fail(tx: &Transaction<'_>, op_id: &str, reason: &str) -> Result<()> {
    tx.prepare_cached("UPDATE team_outbox SET failed = ?2 WHERE op_id = ?1")
        .ctx(|| "marking a queued write".into())?
        .execute([op_id, reason])
        .ctx(|| format!("marking queued write {op_id}"))?;
    Ok(())
}

/// The revisions this replica applied from the server (or a join uploaded), with their
/// pages: `(revision_id, page_id)`. Such a page is known to the team's log under its
/// subject.
pub fn applied_revisions(conn: &Connection) -> Result<Vec<(i64, i64)>> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT r.revision_id, r.page_id FROM team_applied a
               JOIN revisions r ON r.revision_id = a.revision_id",
        )
        .ctx(|| "reading the applied revisions".into())?;
    let rows = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .ctx(|| "reading the applied revisions".into())?;
    rows.collect::<rusqlite::Result<_>>()
        .ctx(|| "reading the applied revisions".into())
}
