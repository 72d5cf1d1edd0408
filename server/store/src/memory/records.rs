//! The smaller records beside pages: commits, topic members, facts and their runs, and
//! operation receipts (idempotent retries).

use super::*;

/// A commit recorded by sync.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommitRow {
    /// Full hex id.
    pub hash: String,
    /// Full message.
    pub message: String,
    /// `Name <email>`.
    pub author: String,
    /// RFC 3339.
    pub committed_at: String,
    /// Touched paths.
    pub files: Vec<String>,
}

/// Records a commit (idempotent).
pub fn put_commit(tx: &Transaction<'_>, c: &CommitRow) -> Result<()> {
    let files = serde_json::to_string(&c.files).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    tx.prepare_cached(
        "INSERT INTO commits(hash, message, author, committed_at, files) VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT(hash) DO NOTHING",
    )
    .ctx(|| "recording a commit".into())?
    .execute(params![c.hash, c.message, c.author, c.committed_at, files])
    .ctx(|| "recording a commit".into())?;
    Ok(())
}

/// A commit by hash.
pub fn commit(conn: &Connection, hash: &str) -> Result<Option<CommitRow>> {
    conn.prepare_cached(
        "SELECT hash, message, author, committed_at, files FROM commits WHERE hash = ?1",
    )
    .ctx(|| "reading a commit".into())?
    .query_row([hash], |r| {
        let files: String = r.get(4)?;
        Ok(CommitRow {
            hash: r.get(0)?,
            message: r.get(1)?,
            author: r.get(2)?,
            committed_at: r.get(3)?,
            files: serde_json::from_str(&files).unwrap_or_default(),
        })
    })
    .optional()
    .ctx(|| "reading a commit".into())
}

/// Topic members, by subject.
pub fn topic_members(conn: &Connection, topic_page_id: i64) -> Result<Vec<String>> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT subject FROM topic_members WHERE topic_page_id = ?1 ORDER BY subject",
        )
        .ctx(|| "reading topic members".into())?;
    let rows = stmt
        .query_map([topic_page_id], |r| r.get(0))
        .ctx(|| "reading topic members".into())?;
    rows.collect::<rusqlite::Result<_>>()
        .ctx(|| "reading topic members".into())
}

/// Adds (true) or removes (false) a topic member; returns whether anything changed.
pub fn set_topic_member(
    tx: &Transaction<'_>,
    topic_page_id: i64,
    subject: &str,
    member: bool,
) -> Result<bool> {
    let n = if member {
        tx.execute(
            "INSERT INTO topic_members(topic_page_id, subject) VALUES (?1, ?2) ON CONFLICT DO NOTHING",
            params![topic_page_id, subject],
        )
    } else {
        tx.execute(
            "DELETE FROM topic_members WHERE topic_page_id = ?1 AND subject = ?2",
            params![topic_page_id, subject],
        )
    }
    .ctx(|| "updating a topic".into())?;
    Ok(n > 0)
}

/// An executable fact.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fact {
    /// Id.
    pub fact_id: i64,
    /// The claim the command demonstrates.
    pub claim: String,
    /// The command line (split into arguments; never run through a shell).
    pub command: String,
    /// Expected substring of the output.
    pub expect_output: Option<String>,
    /// Expected exit code.
    pub expect_exit: Option<i64>,
    /// Who recorded it.
    pub author: String,
    /// RFC 3339.
    pub created_at: String,
    /// The last run's status (`pass`, `fail`, `error`, `timeout`), if run.
    pub last_status: Option<String>,
    /// When it last ran.
    pub last_run_at: Option<String>,
}

/// Records a fact.
pub fn insert_fact(
    tx: &Transaction<'_>,
    claim: &str,
    command: &str,
    expect_output: Option<&str>,
    expect_exit: Option<i64>,
    author: &str,
    session_id: Option<i64>,
) -> Result<i64> {
    tx.execute(
        "INSERT INTO facts(claim, command, expect_output, expect_exit, author, session_id)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![
            claim,
            command,
            expect_output,
            expect_exit,
            author,
            session_id
        ],
    )
    .ctx(|| "recording a fact".into())?;
    Ok(tx.last_insert_rowid())
}

/// Every fact with its last run.
pub fn facts(conn: &Connection) -> Result<Vec<Fact>> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT f.fact_id, f.claim, f.command, f.expect_output, f.expect_exit, f.author, f.created_at,
                    (SELECT status FROM fact_runs r WHERE r.fact_id = f.fact_id ORDER BY run_id DESC LIMIT 1),
                    (SELECT ran_at FROM fact_runs r WHERE r.fact_id = f.fact_id ORDER BY run_id DESC LIMIT 1)
             FROM facts f ORDER BY f.fact_id",
        )
        .ctx(|| "reading facts".into())?;
    let rows = stmt
        .query_map([], |r| {
            Ok(Fact {
                fact_id: r.get(0)?,
                claim: r.get(1)?,
                command: r.get(2)?,
                expect_output: r.get(3)?,
                expect_exit: r.get(4)?,
                author: r.get(5)?,
                created_at: r.get(6)?,
                last_status: r.get(7)?,
                last_run_at: r.get(8)?,
            })
        })
        .ctx(|| "reading facts".into())?;
    rows.collect::<rusqlite::Result<_>>()
        .ctx(|| "reading facts".into())
}

/// Records a fact's run.
pub fn insert_fact_run(
    tx: &Transaction<'_>,
    fact_id: i64,
    status: &str,
    exit_code: Option<i64>,
    output: &str,
    duration_ms: u64,
) -> Result<()> {
    tx.execute(
        "INSERT INTO fact_runs(fact_id, status, exit_code, output, duration_ms) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![fact_id, status, exit_code, output, duration_ms],
    )
    .ctx(|| "recording a fact run".into())?;
    Ok(())
}

/// Records a fact with its original author and time (`loci import`).
pub fn insert_fact_as(tx: &Transaction<'_>, fact: &Fact) -> Result<i64> {
    tx.execute(
        "INSERT INTO facts(claim, command, expect_output, expect_exit, author, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![
            fact.claim,
            fact.command,
            fact.expect_output,
            fact.expect_exit,
            fact.author,
            fact.created_at
        ],
    )
    .ctx(|| "importing a fact".into())?;
    Ok(tx.last_insert_rowid())
}

/// The receipt of an operation id: `(request hash, result JSON)`.
pub fn receipt(conn: &Connection, operation_id: &str) -> Result<Option<(String, String)>> {
    conn.prepare_cached("SELECT request_hash, result FROM operations WHERE operation_id = ?1")
        .ctx(|| "reading a receipt".into())?
        .query_row([operation_id], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()
        .ctx(|| "reading a receipt".into())
}

/// Stores an operation's receipt.
pub fn put_receipt(
    tx: &Transaction<'_>,
    operation_id: &str,
    request_hash: &str,
    result: &str,
) -> Result<()> {
    tx.execute(
        "INSERT INTO operations(operation_id, request_hash, result) VALUES (?1, ?2, ?3)",
        params![operation_id, request_hash, result],
    )
    .ctx(|| "writing a receipt".into())?;
    Ok(())
}
