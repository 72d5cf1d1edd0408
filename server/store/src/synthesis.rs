//! Typed queries of page synthesis: the `llm_runs` provenance rows (migration
//! 0026) and what the plan reads from the map and memory — files with symbols but no page
//! by fan-in, folder pages and the file pages written since them.

use rusqlite::{Connection, Transaction, params};
use serde::{Deserialize, Serialize};

use crate::{Context, Result};

/// One model run whose answer became a revision.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LlmRun {
    /// Row id.
    pub run_id: i64,
    /// The revision the answer became.
    pub revision_id: i64,
    /// The `synthesis` event that wrote it.
    pub event_id: i64,
    /// The command's program name (its first word, without arguments).
    pub command: String,
    /// The `[synthesis] model` label.
    pub model: String,
    /// Estimated tokens of the prompt (characters / 4).
    pub prompt_tokens: i64,
    /// Estimated tokens of the answer (characters / 4).
    pub answer_tokens: i64,
    /// Wall time of the run, in milliseconds.
    pub wall_ms: i64,
    /// The command's exit status.
    pub exit_status: i64,
    /// RFC 3339.
    pub created_at: String,
}

/// What [`insert_llm_run`] records (the ids and time are the database's).
#[derive(Clone, Debug)]
pub struct NewLlmRun<'a> {
    /// The revision the answer became.
    pub revision_id: i64,
    /// The event that wrote it.
    pub event_id: i64,
    /// The program's name.
    pub command: &'a str,
    /// The model label.
    pub model: &'a str,
    /// Estimated prompt tokens.
    pub prompt_tokens: u64,
    /// Estimated answer tokens.
    pub answer_tokens: u64,
    /// Wall time, milliseconds.
    pub wall_ms: u64,
    /// Exit status.
    pub exit_status: i64,
}

/// Records a run (in the write transaction of its revision).
///
/// Errors: [`crate::StoreError::Sqlite`] when the row cannot be written.
pub fn insert_llm_run(tx: &Transaction<'_>, run: &NewLlmRun<'_>) -> Result<i64> {
    tx.prepare_cached(
        "INSERT INTO llm_runs(revision_id, event_id, command, model, prompt_tokens,
                              answer_tokens, wall_ms, exit_status)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )
    .and_then(|mut st| {
        st.execute(params![
            run.revision_id,
            run.event_id,
            run.command,
            run.model,
            run.prompt_tokens as i64,
            run.answer_tokens as i64,
            run.wall_ms as i64,
            run.exit_status
        ])
    })
    .ctx(|| format!("recording the model run of revision {}", run.revision_id))?;
    Ok(tx.last_insert_rowid())
}

/// Every run, oldest first.
///
/// Errors: [`crate::StoreError::Sqlite`] when the rows cannot be read.
pub fn llm_runs(conn: &Connection) -> Result<Vec<LlmRun>> {
    let mut st = conn
        .prepare_cached(
            "SELECT run_id, revision_id, event_id, command, model, prompt_tokens,
                    answer_tokens, wall_ms, exit_status, created_at
               FROM llm_runs ORDER BY run_id",
        )
        .ctx(|| "reading model runs".into())?;
    let rows = st
        .query_map([], |r| {
            Ok(LlmRun {
                run_id: r.get(0)?,
                revision_id: r.get(1)?,
                event_id: r.get(2)?,
                command: r.get(3)?,
                model: r.get(4)?,
                prompt_tokens: r.get(5)?,
                answer_tokens: r.get(6)?,
                wall_ms: r.get(7)?,
                exit_status: r.get(8)?,
                created_at: r.get(9)?,
            })
        })
        .ctx(|| "reading model runs".into())?;
    rows.collect::<rusqlite::Result<Vec<_>>>()
        .ctx(|| "reading model runs".into())
}

/// Files of the map that define at least one symbol and have no page with a revision,
/// with their fan-in (distinct other files whose imports resolve to them), largest first,
/// then by path.
///
/// Errors: [`crate::StoreError::Sqlite`] when the map cannot be read.
pub fn files_without_pages(conn: &Connection) -> Result<Vec<(String, u64)>> {
    let mut st = conn
        .prepare_cached(
            "SELECT f.path,
                    (SELECT count(DISTINCT d.from_file_id) FROM deps d
                      WHERE d.to_file_id = f.file_id AND d.from_file_id <> f.file_id) AS fan_in
               FROM files f
              WHERE EXISTS (SELECT 1 FROM symbols s WHERE s.file_id = f.file_id)
                AND NOT EXISTS (SELECT 1 FROM pages p
                                 WHERE p.subject = f.path AND p.current_revision_id IS NOT NULL)
              ORDER BY fan_in DESC, f.path",
        )
        .ctx(|| "reading files without pages".into())?;
    let rows = st
        .query_map([], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? as u64))
        })
        .ctx(|| "reading files without pages".into())?;
    rows.collect::<rusqlite::Result<Vec<_>>>()
        .ctx(|| "reading files without pages".into())
}

/// File pages (with a revision) by subject, with their current revision id: what folder
/// roll-ups are made of.
///
/// Errors: [`crate::StoreError::Sqlite`] when memory cannot be read.
pub fn file_pages(conn: &Connection) -> Result<Vec<(String, i64)>> {
    let mut st = conn
        .prepare_cached(
            "SELECT subject, current_revision_id FROM pages
              WHERE kind = 'file' AND current_revision_id IS NOT NULL ORDER BY subject",
        )
        .ctx(|| "reading file pages".into())?;
    let rows = st
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .ctx(|| "reading file pages".into())?;
    rows.collect::<rusqlite::Result<Vec<_>>>()
        .ctx(|| "reading file pages".into())
}

/// The current revisions of decisions and lessons with a claim naming `subject`: the path
/// itself, a symbol of it (`path#…`), or for a folder anything under it. `(entry subject,
/// body)`, in entry order.
///
/// Errors: [`crate::StoreError::Sqlite`] when memory cannot be read.
pub fn entries_naming(conn: &Connection, subject: &str) -> Result<Vec<(String, String)>> {
    let mut st = conn
        .prepare_cached(
            "SELECT DISTINCT p.subject, r.body, r.revision_id FROM claims c
               JOIN revisions r ON r.revision_id = c.revision_id
               JOIN pages p ON p.current_revision_id = r.revision_id
              WHERE p.kind IN ('decisions', 'lessons')
                AND (c.resolved = ?1 OR c.target = ?1 OR c.target = ?1 || '/'
                     OR substr(c.resolved, 1, length(?1) + 1) IN (?1 || '#', ?1 || '/'))
              ORDER BY r.revision_id",
        )
        .ctx(|| format!("reading decisions and lessons about {subject}"))?;
    let rows = st
        .query_map([subject], |r| Ok((r.get(0)?, r.get(1)?)))
        .ctx(|| format!("reading decisions and lessons about {subject}"))?;
    rows.collect::<rusqlite::Result<Vec<_>>>()
        .ctx(|| format!("reading decisions and lessons about {subject}"))
}

/// The git `HEAD` a revision's event recorded when it was written (`payload.head`), if any.
///
/// Errors: [`crate::StoreError::Sqlite`] when the event cannot be read.
pub fn revision_head(conn: &Connection, revision_id: i64) -> Result<Option<String>> {
    use rusqlite::OptionalExtension;
    conn.prepare_cached(
        "SELECT e.payload ->> 'head' FROM revisions r JOIN events e ON e.event_id = r.event_id
          WHERE r.revision_id = ?1",
    )
    .and_then(|mut st| {
        st.query_row([revision_id], |r| r.get::<_, Option<String>>(0))
            .optional()
    })
    .map(Option::flatten)
    .ctx(|| format!("reading the event of revision {revision_id}"))
}
