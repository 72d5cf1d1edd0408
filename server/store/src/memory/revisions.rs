//! Revisions: reading a page's versions (by id, version, session, date), inserting one
//! (which publishes it), and the full-text search over their bodies.

use super::*;

/// One revision of a page.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Revision {
    /// Row id (global, increasing).
    pub revision_id: i64,
    /// Its page.
    pub page_id: i64,
    /// The page's subject now (it may have been renamed since).
    pub subject: String,
    /// 1, 2, 3, ... per page, gapless.
    pub version: i64,
    /// Markdown.
    pub body: String,
    /// What changed, in a line.
    pub summary: Option<String>,
    /// `human:NAME`, `agent:NAME`, or a model name.
    pub author: String,
    /// The session it was written in.
    pub session_id: Option<i64>,
    /// The event that triggered it.
    pub event_id: Option<i64>,
    /// RFC 3339.
    pub created_at: String,
}

pub(crate) const REVISION_COLUMNS: &str =
    "r.revision_id, r.page_id, p.subject, r.version, r.body, r.summary,
    r.author, r.session_id, r.event_id, r.created_at";

pub(crate) fn revision(r: &Row<'_>) -> rusqlite::Result<Revision> {
    Ok(Revision {
        revision_id: r.get(0)?,
        page_id: r.get(1)?,
        subject: r.get(2)?,
        version: r.get(3)?,
        body: r.get(4)?,
        summary: r.get(5)?,
        author: r.get(6)?,
        session_id: r.get(7)?,
        event_id: r.get(8)?,
        created_at: r.get(9)?,
    })
}

/// The id of the newest revision, 0 when memory holds none.
///
/// Errors: [`StoreError::Sqlite`] when memory cannot be read.
pub fn last_revision_id(conn: &Connection) -> Result<i64> {
    conn.prepare_cached("SELECT ifnull(max(revision_id), 0) FROM revisions")
        .and_then(|mut st| st.query_row([], |r| r.get(0)))
        .ctx(|| "reading the last revision".into())
}

/// The version of revision `revision_id`, and the text of claim `claim_id` (`None` when
/// there is no such claim, or none is given).
///
/// Errors: [`StoreError::Sqlite`] when the revision is not in memory or cannot be read.
pub fn revision_version_and_claim(
    conn: &Connection,
    revision_id: i64,
    claim_id: Option<i64>,
) -> Result<(i64, Option<String>)> {
    conn.prepare_cached(
        "SELECT r.version, (SELECT text FROM claims WHERE claim_id = ?2)
         FROM revisions r WHERE r.revision_id = ?1",
    )
    .and_then(|mut st| {
        st.query_row(params![revision_id, claim_id], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
    })
    .ctx(|| format!("reading revision {revision_id}"))
}

/// A revision by id.
pub fn revision_by_id(conn: &Connection, revision_id: i64) -> Result<Option<Revision>> {
    conn.prepare_cached(&format!(
        "SELECT {REVISION_COLUMNS} FROM revisions r JOIN pages p USING (page_id) WHERE r.revision_id = ?1"
    ))
    .ctx(|| "reading a revision".into())?
    .query_row([revision_id], revision)
    .optional()
    .ctx(|| format!("reading revision {revision_id}"))
}

/// Version `version` of a page.
pub fn revision_by_version(
    conn: &Connection,
    page_id: i64,
    version: i64,
) -> Result<Option<Revision>> {
    conn.prepare_cached(&format!(
        "SELECT {REVISION_COLUMNS} FROM revisions r JOIN pages p USING (page_id)
         WHERE r.page_id = ?1 AND r.version = ?2"
    ))
    .ctx(|| "reading a revision".into())?
    .query_row([page_id, version], revision)
    .optional()
    .ctx(|| format!("reading version {version} of page {page_id}"))
}

/// Every revision of a page, oldest first.
pub fn revisions_of(conn: &Connection, page_id: i64) -> Result<Vec<Revision>> {
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {REVISION_COLUMNS} FROM revisions r JOIN pages p USING (page_id)
             WHERE r.page_id = ?1 ORDER BY r.version"
        ))
        .ctx(|| "reading history".into())?;
    let rows = stmt
        .query_map([page_id], revision)
        .ctx(|| "reading history".into())?;
    rows.collect::<rusqlite::Result<_>>()
        .ctx(|| "reading history".into())
}

/// Revisions written in a session, by id.
pub fn revisions_in_session(conn: &Connection, session_id: i64) -> Result<Vec<Revision>> {
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {REVISION_COLUMNS} FROM revisions r JOIN pages p USING (page_id)
             WHERE r.session_id = ?1 ORDER BY r.revision_id"
        ))
        .ctx(|| "reading a session's revisions".into())?;
    let rows = stmt
        .query_map([session_id], revision)
        .ctx(|| "reading a session's revisions".into())?;
    rows.collect::<rusqlite::Result<_>>()
        .ctx(|| "reading a session's revisions".into())
}

/// For each page, the newest revision created at or before `at` (RFC 3339 or any
/// SQLite date string), by subject.
pub fn revisions_as_of(conn: &Connection, at: &str) -> Result<Vec<Revision>> {
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {REVISION_COLUMNS} FROM revisions r JOIN pages p USING (page_id)
             WHERE r.revision_id = (SELECT max(r2.revision_id) FROM revisions r2
                                     WHERE r2.page_id = r.page_id AND julianday(r2.created_at) <= julianday(?1))
             ORDER BY p.subject"
        ))
        .ctx(|| "reading memory as of a date".into())?;
    let rows = stmt
        .query_map([at], revision)
        .ctx(|| "reading memory as of a date".into())?;
    rows.collect::<rusqlite::Result<_>>()
        .ctx(|| "reading memory as of a date".into())
}

/// What a new revision carries.
#[derive(Clone, Debug)]
pub struct NewRevision<'a> {
    /// The page.
    pub page_id: i64,
    /// Markdown.
    pub body: &'a str,
    /// One-line change summary.
    pub summary: Option<&'a str>,
    /// Who wrote it.
    pub author: &'a str,
    /// The session, if any.
    pub session_id: Option<i64>,
    /// The triggering event.
    pub event_id: Option<i64>,
}

/// The identifier-aware terms of a revision's body and summary, its `terms` column
/// ([`search::text_terms`]; migration 17).
pub fn revision_terms(body: &str, summary: Option<&str>) -> String {
    let body = search::text_terms(body);
    match summary.map(search::text_terms) {
        Some(s) if !s.is_empty() && !body.is_empty() => format!("{body} {s}"),
        Some(s) if !s.is_empty() => s,
        _ => body,
    }
}

/// Appends a revision (version = current + 1) and so publishes it.
pub fn insert_revision(tx: &Transaction<'_>, new: &NewRevision<'_>) -> Result<Revision> {
    tx.prepare_cached(
        "INSERT INTO revisions(page_id, version, body, summary, author, session_id, event_id, terms)
         VALUES (?1, (SELECT ifnull(max(version), 0) + 1 FROM revisions WHERE page_id = ?1),
                 ?2, ?3, ?4, ?5, ?6, ?7)",
    )
    .ctx(|| "writing a revision".into())?
    .execute(params![
        new.page_id,
        new.body,
        new.summary,
        new.author,
        new.session_id,
        new.event_id,
        revision_terms(new.body, new.summary)
    ])
    .ctx(|| "writing a revision".into())?;
    let id = tx.last_insert_rowid();
    revision_by_id(tx, id)?
        .ok_or_else(|| StoreError::Corrupt(format!("revision {id} vanished after insert")))
}

/// Appends a revision with a given version and creation time (`loci import`); like
/// [`insert_revision`] it publishes the revision. Fails if the version is taken.
pub fn insert_revision_as(
    tx: &Transaction<'_>,
    new: &NewRevision<'_>,
    version: i64,
    created_at: &str,
) -> Result<Revision> {
    tx.prepare_cached(
        "INSERT INTO revisions(page_id, version, body, summary, author, session_id, event_id, created_at, terms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    )
    .ctx(|| "importing a revision".into())?
    .execute(params![
        new.page_id,
        version,
        new.body,
        new.summary,
        new.author,
        new.session_id,
        new.event_id,
        created_at,
        revision_terms(new.body, new.summary)
    ])
    .ctx(|| format!("importing version {version} of page {}", new.page_id))?;
    let id = tx.last_insert_rowid();
    revision_by_id(tx, id)?
        .ok_or_else(|| StoreError::Corrupt(format!("revision {id} vanished after insert")))
}

/// A full-text hit over revision bodies.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TextHit {
    /// The revision.
    pub revision_id: i64,
    /// BM25 rank from FTS5 (lower is better; negative).
    pub rank: f64,
    /// A snippet with the match in `[`…`]`.
    pub snippet: String,
}

/// The best `?2` full-text hits of the MATCH query `?1` that are a page's current
/// revision, as `(id, rank)`: the first step of [`search_revisions`] and
/// [`search_current_revisions`]. The join reads `pages` through
/// `pages_by_current_revision` (migration 8); without it each hit scanned every page.
pub const CURRENT_HITS: &str = "SELECT f.rowid AS id, f.rank AS rank FROM revisions_fts f
     JOIN pages p ON p.current_revision_id = f.rowid
     WHERE revisions_fts MATCH ?1 ORDER BY f.rank LIMIT ?2";

/// Runs an FTS5 MATCH query (already made safe by the caller) over revision bodies;
/// `current_only` restricts to published (current) revisions.
pub fn search_revisions(
    conn: &Connection,
    fts_query: &str,
    current_only: bool,
    limit: u32,
) -> Result<Vec<TextHit>> {
    let sql = if current_only {
        // The best rows first, then snippets for those only (a snippet costs a re-read
        // and re-tokenization of the body).
        format!(
            "WITH hits AS MATERIALIZED ({CURRENT_HITS})
             SELECT hits.id, hits.rank,
                    CASE WHEN length(r.body) <= ?3 THEN snippet(revisions_fts, 0, '[', ']', '…', 12) END,
                    CASE WHEN length(r.body) > ?3 THEN r.body END
             FROM hits JOIN revisions_fts ON revisions_fts.rowid = hits.id
             JOIN revisions r ON r.revision_id = hits.id
             WHERE revisions_fts MATCH ?1 ORDER BY hits.rank, hits.id"
        )
    } else {
        "SELECT f.rowid, f.rank,
                CASE WHEN length(r.body) <= ?3 THEN snippet(revisions_fts, 0, '[', ']', '…', 12) END,
                CASE WHEN length(r.body) > ?3 THEN r.body END
         FROM revisions_fts f JOIN revisions r ON r.revision_id = f.rowid
         WHERE revisions_fts MATCH ?1 ORDER BY f.rank LIMIT ?2"
            .to_string()
    };
    let mut stmt = conn
        .prepare_cached(&sql)
        .ctx(|| "searching memory".into())?;
    let rows = stmt
        .query_map(params![fts_query, limit, search::FTS_SNIPPET_CHARS], |r| {
            // A long body comes back whole for the one-pass snippet.
            let body: Option<String> = r.get(3)?;
            Ok(TextHit {
                revision_id: r.get(0)?,
                rank: r.get(1)?,
                snippet: search::snippet_or_scan(
                    r.get(2)?,
                    body.as_deref().unwrap_or_default(),
                    fts_query,
                ),
            })
        })
        .ctx(|| format!("searching memory for {fts_query}"))?;
    rows.collect::<rusqlite::Result<_>>()
        .ctx(|| format!("searching memory for {fts_query}"))
}

/// The current revisions matching an FTS5 MATCH query (already made safe by the caller),
/// best first, each with its FTS5 BM25 rank (lower is better; negative): the rows and
/// order of [`search_revisions`] with `current_only`, read in one statement and without
/// snippets (what `context` weighs: it needs the bodies, not the snippets).
pub fn search_current_revisions(
    conn: &Connection,
    fts_query: &str,
    limit: u32,
) -> Result<Vec<(Revision, f64)>> {
    let mut stmt = conn
        .prepare_cached(&format!(
            "WITH hits AS MATERIALIZED ({CURRENT_HITS})
             SELECT {REVISION_COLUMNS}, hits.rank
             FROM hits JOIN revisions r ON r.revision_id = hits.id JOIN pages p USING (page_id)
             ORDER BY hits.rank, hits.id"
        ))
        .ctx(|| "searching memory".into())?;
    let rows = stmt
        .query_map(params![fts_query, limit], |r| {
            Ok((revision(r)?, r.get(10)?))
        })
        .ctx(|| format!("searching memory for {fts_query}"))?;
    rows.collect::<rusqlite::Result<_>>()
        .ctx(|| format!("searching memory for {fts_query}"))
}

/// The version the next revision of page `page_id` takes: one past its newest, 1 for a
/// page without revisions.
///
/// Errors: [`StoreError::Sqlite`] when the revisions cannot be read.
pub fn next_version(conn: &Connection, page_id: i64) -> Result<i64> {
    conn.prepare_cached("SELECT ifnull(max(version), 0) + 1 FROM revisions WHERE page_id = ?1")
        .ctx(|| "reading a page's version".into())?
        .query_row([page_id], |r| r.get(0))
        .ctx(|| "reading a page's version".into())
}
