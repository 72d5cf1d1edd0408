//! Unsaved editor buffers shared through the store (migration 27): what a running language
//! server writes so that agents' answers judge memory against the text being typed.

use rusqlite::{Connection, Transaction, params};

use crate::{Context, Result};

/// The most bytes of one buffer that are shared; a larger buffer is not shared at all (an
/// answer would judge a cut text wrongly).
pub const MAX_SHARED_BYTES: usize = 1024 * 1024;

/// One shared buffer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnsavedBuffer {
    /// Repo-relative path.
    pub path: String,
    /// The editor's document version.
    pub version: i64,
    /// The unsaved text.
    pub text: String,
    /// The language server that shares it.
    pub server_pid: i64,
    /// When it was written (RFC 3339, UTC).
    pub updated_at: String,
}

/// Shares (or replaces) the buffer of `path`.
pub fn put(tx: &Transaction<'_>, path: &str, version: i64, text: &str, pid: i64) -> Result<()> {
    tx.execute(
        "INSERT INTO unsaved_buffers (path, version, text, server_pid) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT(path) DO UPDATE SET version = ?2, text = ?3, server_pid = ?4,
             updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')",
        params![path, version, text, pid],
    )
    .ctx(|| format!("sharing the unsaved buffer of {path}"))?;
    Ok(())
}

/// Stops sharing the buffer of `path` (any server's: the file was saved or closed).
pub fn drop_path(tx: &Transaction<'_>, path: &str) -> Result<()> {
    tx.execute("DELETE FROM unsaved_buffers WHERE path = ?1", [path])
        .ctx(|| format!("dropping the unsaved buffer of {path}"))?;
    Ok(())
}

/// Stops sharing every buffer of the servers `dead` says are not running, or of `pid`.
pub fn drop_servers(
    tx: &Transaction<'_>,
    pid: Option<i64>,
    dead: &dyn Fn(i64) -> bool,
) -> Result<u64> {
    let pids: Vec<i64> = tx
        .prepare("SELECT DISTINCT server_pid FROM unsaved_buffers")
        .and_then(|mut st| st.query_map([], |r| r.get(0))?.collect())
        .ctx(|| "reading the servers sharing unsaved buffers".into())?;
    let mut dropped = 0;
    for p in pids.into_iter().filter(|&p| Some(p) == pid || dead(p)) {
        dropped += tx
            .execute("DELETE FROM unsaved_buffers WHERE server_pid = ?1", [p])
            .ctx(|| "dropping the unsaved buffers of a server".into())? as u64;
    }
    Ok(dropped)
}

/// The shared buffers of `paths`, by path (one indexed lookup each; the table is empty
/// unless an editor has unsaved files open).
pub fn of_paths(conn: &Connection, paths: &[&str]) -> Result<Vec<UnsavedBuffer>> {
    let any: bool = conn
        .query_row("SELECT EXISTS(SELECT 1 FROM unsaved_buffers)", [], |r| {
            r.get(0)
        })
        .ctx(|| "reading unsaved buffers".into())?;
    if !any {
        return Ok(Vec::new());
    }
    let mut stmt = conn
        .prepare_cached(
            "SELECT path, version, text, server_pid, updated_at FROM unsaved_buffers
             WHERE path = ?1",
        )
        .ctx(|| "reading unsaved buffers".into())?;
    let mut out = Vec::new();
    for p in paths {
        let row = stmt
            .query_map([p], |r| {
                Ok(UnsavedBuffer {
                    path: r.get(0)?,
                    version: r.get(1)?,
                    text: r.get(2)?,
                    server_pid: r.get(3)?,
                    updated_at: r.get(4)?,
                })
            })
            .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
            .ctx(|| format!("reading the unsaved buffer of {p}"))?;
        out.extend(row);
    }
    Ok(out)
}
