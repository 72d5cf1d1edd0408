//! Typed queries over authored memory: pages, revisions, claims, events, sessions,
//! topics, facts and operation receipts.
//!
//! Revisions are append-only (the database refuses UPDATE and DELETE); inserting one
//! publishes it (a trigger advances the page's current revision). Versions are gapless
//! per page because they are computed inside the same `BEGIN IMMEDIATE` transaction
//! that inserts the row.

use rusqlite::{Connection, OptionalExtension, Row, Transaction, params};
use serde::{Deserialize, Serialize};

use crate::{Context, Result, StoreError, search};

/// A page: one subject's memory.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Page {
    /// Identity (kept when the subject is renamed).
    pub page_id: i64,
    /// `src/auth/login.py`, `src/auth`, `.`, `topic:billing`, `decisions`, `lessons`.
    pub subject: String,
    /// `file`, `folder`, `root`, `topic`, `decisions`, `lessons`.
    pub kind: String,
    /// Pinned pages are never auto-staled.
    pub pinned: bool,
    /// The published revision.
    pub current_revision_id: Option<i64>,
    /// RFC 3339.
    pub created_at: String,
    /// RFC 3339 of the last revision.
    pub updated_at: Option<String>,
}

fn page(r: &Row<'_>) -> rusqlite::Result<Page> {
    Ok(Page {
        page_id: r.get(0)?,
        subject: r.get(1)?,
        kind: r.get(2)?,
        pinned: r.get(3)?,
        current_revision_id: r.get(4)?,
        created_at: r.get(5)?,
        updated_at: r.get(6)?,
    })
}

const PAGE_COLUMNS: &str =
    "page_id, subject, kind, pinned, current_revision_id, created_at, updated_at";

/// The page for `subject`.
pub fn page_by_subject(conn: &Connection, subject: &str) -> Result<Option<Page>> {
    conn.prepare_cached(&format!(
        "SELECT {PAGE_COLUMNS} FROM pages WHERE subject = ?1"
    ))
    .ctx(|| "reading a page".into())?
    .query_row([subject], page)
    .optional()
    .ctx(|| format!("reading page {subject}"))
}

/// The page with this id.
pub fn page_by_id(conn: &Connection, page_id: i64) -> Result<Option<Page>> {
    conn.prepare_cached(&format!(
        "SELECT {PAGE_COLUMNS} FROM pages WHERE page_id = ?1"
    ))
    .ctx(|| "reading a page".into())?
    .query_row([page_id], page)
    .optional()
    .ctx(|| format!("reading page {page_id}"))
}

/// Every page, by subject.
pub fn pages(conn: &Connection) -> Result<Vec<Page>> {
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {PAGE_COLUMNS} FROM pages ORDER BY subject"
        ))
        .ctx(|| "reading pages".into())?;
    let rows = stmt.query_map([], page).ctx(|| "reading pages".into())?;
    rows.collect::<rusqlite::Result<_>>()
        .ctx(|| "reading pages".into())
}

/// The pages whose subject is one of `subjects` or lies under one of the folders `under`
/// (repo-relative, no trailing `/`; the folder itself is not included unless named in
/// `subjects`), and every topic page; by subject. What a question can reach without
/// reading every page ([`pages`]): each `under` folder is a range of the `subject` index.
pub fn pages_near(conn: &Connection, subjects: &[&str], under: &[&str]) -> Result<Vec<Page>> {
    let json =
        |v: &[&str]| serde_json::to_string(v).map_err(|e| StoreError::Corrupt(e.to_string()));
    let (subjects, under) = (json(subjects)?, json(under)?);
    let cols = PAGE_COLUMNS
        .split(", ")
        .map(|c| format!("p.{c}"))
        .collect::<Vec<_>>()
        .join(", ");
    // `f/` < a subject under `f` < `f0` ('0' follows '/').
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {cols} FROM pages p
              WHERE p.subject IN (SELECT value FROM json_each(?1)) OR p.kind = 'topic'
             UNION
             SELECT {cols} FROM json_each(?2) j
               JOIN pages p ON p.subject > j.value || '/' AND p.subject < j.value || '0'
             ORDER BY 2"
        ))
        .ctx(|| "reading pages".into())?;
    let rows = stmt
        .query_map([subjects, under], page)
        .ctx(|| "reading pages".into())?;
    rows.collect::<rusqlite::Result<_>>()
        .ctx(|| "reading pages".into())
}

/// The page for `subject`, created with `kind` if missing.
pub fn ensure_page(tx: &Transaction<'_>, subject: &str, kind: &str) -> Result<Page> {
    tx.prepare_cached(
        "INSERT INTO pages(subject, kind) VALUES (?1, ?2) ON CONFLICT(subject) DO NOTHING",
    )
    .ctx(|| "creating a page".into())?
    .execute([subject, kind])
    .ctx(|| format!("creating page {subject}"))?;
    page_by_subject(tx, subject)?
        .ok_or_else(|| StoreError::Corrupt(format!("page {subject} vanished after insert")))
}

/// Sets or clears a page's pin.
pub fn set_pinned(tx: &Transaction<'_>, page_id: i64, pinned: bool) -> Result<()> {
    tx.execute(
        "UPDATE pages SET pinned = ?2 WHERE page_id = ?1",
        params![page_id, pinned],
    )
    .ctx(|| "pinning a page".into())?;
    Ok(())
}

/// Moves a page to a new subject (a rename); fails if the new subject has a page already.
pub fn move_page(tx: &Transaction<'_>, page_id: i64, to_subject: &str) -> Result<()> {
    tx.execute(
        "UPDATE pages SET subject = ?2 WHERE page_id = ?1",
        params![page_id, to_subject],
    )
    .ctx(|| format!("moving a page to {to_subject}"))?;
    Ok(())
}

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
    /// string holding JSON (`why --json` had printed them so); text that is not JSON
    /// stays a string.
    #[serde(serialize_with = "json_text")]
    pub payload: Option<String>,
    /// The session, if any.
    pub session_id: Option<i64>,
    /// RFC 3339.
    pub created_at: String,
}

/// Serializes stored JSON text as the JSON value it holds (a string when it holds none).
fn json_text<S: serde::Serializer>(text: &Option<String>, s: S) -> Result<S::Ok, S::Error> {
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

fn event(r: &Row<'_>) -> rusqlite::Result<Event> {
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

const EVENT_COLUMNS: &str = "event_id, kind, source_ref, subject, payload, session_id, created_at";

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

/// A claim as stored.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClaimRow {
    /// Row id (0 before insert).
    pub claim_id: i64,
    /// The revision whose body holds it.
    pub revision_id: i64,
    /// `path`, `symbol`, `version`.
    pub kind: String,
    /// As written.
    pub text: String,
    /// Normalized target.
    pub target: String,
    /// For version claims.
    pub version: Option<String>,
    /// Byte span in the body.
    pub start_byte: u32,
    /// End of the span.
    pub end_byte: u32,
    /// Zero-based line in the body.
    pub line: u32,
    /// What it resolved to (a path or symbol key), if anything.
    pub resolved: Option<String>,
    /// Fingerprint of the resolved target when snapshotted.
    pub snapshot: Option<String>,
    /// Signature fingerprint, for symbols.
    pub signature_snapshot: Option<String>,
    /// When the snapshot was taken (RFC 3339).
    pub snapshot_at: String,
    /// For a symbol claim naming several definitions: each of them when snapshotted, by
    /// key (empty otherwise; then `resolved` and `snapshot` hold the one target).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub definitions: Vec<ClaimDefinition>,
    /// True for an imported claim that resolved in the checkout it was exported from but
    /// names nothing here: lint holds it to account as a claim that resolved once. When the
    /// export carried its snapshot, `resolved`, `snapshot` and `definitions` hold the one
    /// taken there.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub resolved_elsewhere: bool,
}

/// One definition in the snapshot of a symbol claim that names several
/// (`claims.definitions`, migration 0013).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ClaimDefinition {
    /// The symbol key (`src/lib.rs#bytes.RegexBuilder.new@method`).
    pub key: String,
    /// Its body fingerprint when snapshotted.
    pub body: String,
    /// Its signature fingerprint when snapshotted.
    pub signature: String,
}

/// `claims.definitions` as stored: NULL for none, else a JSON array.
fn definitions_json(definitions: &[ClaimDefinition]) -> Result<Option<String>> {
    if definitions.is_empty() {
        return Ok(None);
    }
    serde_json::to_string(definitions)
        .map(Some)
        .map_err(|e| StoreError::Corrupt(format!("encoding claim definitions: {e}")))
}

fn claim_row(r: &Row<'_>) -> rusqlite::Result<ClaimRow> {
    let definitions: Option<String> = r.get(13)?;
    let definitions = match definitions {
        None => Vec::new(),
        Some(json) => serde_json::from_str(&json).map_err(|e| {
            rusqlite::Error::FromSqlConversionFailure(13, rusqlite::types::Type::Text, Box::new(e))
        })?,
    };
    Ok(ClaimRow {
        claim_id: r.get(0)?,
        revision_id: r.get(1)?,
        kind: r.get(2)?,
        text: r.get(3)?,
        target: r.get(4)?,
        version: r.get(5)?,
        start_byte: r.get(6)?,
        end_byte: r.get(7)?,
        line: r.get(8)?,
        resolved: r.get(9)?,
        snapshot: r.get(10)?,
        signature_snapshot: r.get(11)?,
        snapshot_at: r.get(12)?,
        definitions,
        resolved_elsewhere: r.get(14)?,
    })
}

const CLAIM_COLUMNS: &str = "claim_id, revision_id, kind, text, target, version, start_byte,
    end_byte, line, resolved, snapshot, signature_snapshot, snapshot_at, definitions,
    resolved_elsewhere";

/// Inserts a revision's claims.
pub fn insert_claims(tx: &Transaction<'_>, revision_id: i64, claims: &[ClaimRow]) -> Result<()> {
    let mut stmt = tx
        .prepare_cached(
            "INSERT INTO claims(revision_id, kind, text, target, version, start_byte, end_byte,
                line, resolved, snapshot, signature_snapshot, definitions, resolved_elsewhere)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
        )
        .ctx(|| "writing claims".into())?;
    for c in claims {
        let definitions = definitions_json(&c.definitions)?;
        stmt.execute(params![
            revision_id,
            c.kind,
            c.text,
            c.target,
            c.version,
            c.start_byte,
            c.end_byte,
            c.line,
            c.resolved,
            c.snapshot,
            c.signature_snapshot,
            definitions,
            c.resolved_elsewhere
        ])
        .ctx(|| format!("writing claim {}", c.text))?;
    }
    Ok(())
}

/// A revision's claims, in body order.
pub fn claims_of(conn: &Connection, revision_id: i64) -> Result<Vec<ClaimRow>> {
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {CLAIM_COLUMNS} FROM claims WHERE revision_id = ?1 ORDER BY start_byte, claim_id"
        ))
        .ctx(|| "reading claims".into())?;
    let rows = stmt
        .query_map([revision_id], claim_row)
        .ctx(|| "reading claims".into())?;
    rows.collect::<rusqlite::Result<_>>()
        .ctx(|| "reading claims".into())
}

/// The claims of these revisions (each list as [`claims_of`] gives it), by revision id, in
/// one statement; revisions without claims are absent.
pub fn claims_of_revisions(
    conn: &Connection,
    revision_ids: &[i64],
) -> Result<std::collections::HashMap<i64, Vec<ClaimRow>>> {
    let mut out: std::collections::HashMap<i64, Vec<ClaimRow>> = Default::default();
    if revision_ids.is_empty() {
        return Ok(out);
    }
    let json =
        serde_json::to_string(revision_ids).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {CLAIM_COLUMNS} FROM claims WHERE revision_id IN (SELECT value FROM json_each(?1))
             ORDER BY revision_id, start_byte, claim_id"
        ))
        .ctx(|| "reading claims".into())?;
    let rows = stmt
        .query_map([json], claim_row)
        .ctx(|| "reading claims".into())?;
    for row in rows {
        let c = row.ctx(|| "reading claims".into())?;
        out.entry(c.revision_id).or_default().push(c);
    }
    Ok(out)
}

/// Claims of current revisions (live memory), by revision then span.
pub fn live_claims(conn: &Connection) -> Result<Vec<ClaimRow>> {
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {} FROM claims c JOIN pages p ON p.current_revision_id = c.revision_id
             ORDER BY c.revision_id, c.start_byte, c.claim_id",
            CLAIM_COLUMNS
                .split(',')
                .map(|c| format!("c.{}", c.trim()))
                .collect::<Vec<_>>()
                .join(", ")
        ))
        .ctx(|| "reading live claims".into())?;
    let rows = stmt
        .query_map([], claim_row)
        .ctx(|| "reading live claims".into())?;
    rows.collect::<rusqlite::Result<_>>()
        .ctx(|| "reading live claims".into())
}

/// Live claims whose resolved target is `target` (a path or symbol key), or whose set of
/// definitions holds the key `target`.
pub fn live_claims_resolved_to(conn: &Connection, target: &str) -> Result<Vec<ClaimRow>> {
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {} FROM claims c JOIN pages p ON p.current_revision_id = c.revision_id
             WHERE c.claim_id IN (
                 SELECT claim_id FROM claims WHERE resolved = ?1
                 UNION ALL
                 SELECT d.claim_id FROM claims d, json_each(d.definitions) j
                 WHERE d.definitions IS NOT NULL AND j.value ->> 'key' = ?1)
             ORDER BY c.revision_id, c.start_byte",
            CLAIM_COLUMNS
                .split(',')
                .map(|c| format!("c.{}", c.trim()))
                .collect::<Vec<_>>()
                .join(", ")
        ))
        .ctx(|| "reading claims".into())?;
    let rows = stmt
        .query_map([target], claim_row)
        .ctx(|| "reading claims".into())?;
    rows.collect::<rusqlite::Result<_>>()
        .ctx(|| "reading claims".into())
}

/// Takes a new snapshot for a claim (`confirm`): what `fresh` (the claim resolved again)
/// resolves to now, its fingerprints and definitions. `resolved_elsewhere` is kept: the
/// claim still held where it was exported from.
pub fn update_claim_snapshot(tx: &Transaction<'_>, claim_id: i64, fresh: &ClaimRow) -> Result<()> {
    let definitions = definitions_json(&fresh.definitions)?;
    tx.prepare_cached(
        "UPDATE claims SET resolved = ?2, snapshot = ?3, signature_snapshot = ?4,
            definitions = ?5, snapshot_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
         WHERE claim_id = ?1",
    )
    .ctx(|| "updating a claim snapshot".into())?
    .execute(params![
        claim_id,
        fresh.resolved,
        fresh.snapshot,
        fresh.signature_snapshot,
        definitions
    ])
    .ctx(|| "updating a claim snapshot".into())?;
    Ok(())
}

/// A file page's subject as a revision's snapshot saw it (`page_snapshots`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageSnapshot {
    /// The file's semantic fingerprint (or content hash) in the map; `None` when the map
    /// did not hold it.
    pub fingerprint: Option<String>,
    /// True when the file was neither in the map nor in the working tree (migration 0013).
    pub subject_missing: bool,
    /// When it was taken (RFC 3339).
    pub snapshot_at: String,
}

/// Records (or replaces) the page-subject snapshot for a revision: the file's fingerprint,
/// and whether the file was missing altogether.
pub fn put_page_snapshot(
    tx: &Transaction<'_>,
    revision_id: i64,
    fingerprint: Option<&str>,
    subject_missing: bool,
) -> Result<()> {
    tx.prepare_cached(
        "INSERT INTO page_snapshots(revision_id, fingerprint, subject_missing) VALUES (?1, ?2, ?3)
         ON CONFLICT(revision_id) DO UPDATE SET fingerprint = excluded.fingerprint,
            subject_missing = excluded.subject_missing,
            snapshot_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')",
    )
    .ctx(|| "writing a page snapshot".into())?
    .execute(params![revision_id, fingerprint, subject_missing])
    .ctx(|| "writing a page snapshot".into())?;
    Ok(())
}

fn page_snapshot_row(r: &Row<'_>) -> rusqlite::Result<PageSnapshot> {
    Ok(PageSnapshot {
        fingerprint: r.get(0)?,
        subject_missing: r.get(1)?,
        snapshot_at: r.get(2)?,
    })
}

/// The page-subject snapshot of a revision, if it has one.
pub fn page_snapshot(conn: &Connection, revision_id: i64) -> Result<Option<PageSnapshot>> {
    conn.prepare_cached(
        "SELECT fingerprint, subject_missing, snapshot_at FROM page_snapshots
         WHERE revision_id = ?1",
    )
    .ctx(|| "reading a page snapshot".into())?
    .query_row([revision_id], page_snapshot_row)
    .optional()
    .ctx(|| "reading a page snapshot".into())
}

/// The page snapshots of these revisions, as [`page_snapshot`] reads each, by revision
/// id, in one statement; revisions without one are absent.
pub fn page_snapshots(
    conn: &Connection,
    revision_ids: &[i64],
) -> Result<std::collections::HashMap<i64, PageSnapshot>> {
    if revision_ids.is_empty() {
        return Ok(Default::default());
    }
    let json =
        serde_json::to_string(revision_ids).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    let mut stmt = conn
        .prepare_cached(
            "SELECT revision_id, fingerprint, subject_missing, snapshot_at FROM page_snapshots
             WHERE revision_id IN (SELECT value FROM json_each(?1))",
        )
        .ctx(|| "reading page snapshots".into())?;
    let rows = stmt
        .query_map([json], |r| {
            Ok((
                r.get(0)?,
                PageSnapshot {
                    fingerprint: r.get(1)?,
                    subject_missing: r.get(2)?,
                    snapshot_at: r.get(3)?,
                },
            ))
        })
        .ctx(|| "reading page snapshots".into())?;
    rows.collect::<rusqlite::Result<_>>()
        .ctx(|| "reading page snapshots".into())
}

/// Every path and symbol key that a snapshot of memory names: what a claim resolved to
/// (with a snapshot), each key of a claim tracked as a set of definitions, and the subject
/// of each file page with a page snapshot holding a fingerprint. A scan carries forward
/// only the snapshots of these ([`carry_snapshots_forward`]).
///
/// Errors: [`StoreError::Sqlite`] when memory cannot be read.
pub fn snapshotted_targets(conn: &Connection) -> Result<std::collections::HashSet<String>> {
    let ctx = || "reading what memory snapshots".to_string();
    let mut stmt = conn
        .prepare_cached(
            "SELECT resolved FROM claims
              WHERE resolved IS NOT NULL AND (snapshot IS NOT NULL OR signature_snapshot IS NOT NULL)
             UNION
             SELECT j.value ->> 'key' FROM claims c, json_each(c.definitions) j
              WHERE c.definitions IS NOT NULL
             UNION
             SELECT p.subject FROM pages p
              WHERE p.kind = 'file'
                AND EXISTS (SELECT 1 FROM revisions r JOIN page_snapshots s USING (revision_id)
                             WHERE r.page_id = p.page_id AND s.fingerprint IS NOT NULL)",
        )
        .ctx(ctx)?;
    let rows = stmt.query_map([], |r| r.get(0)).ctx(ctx)?;
    rows.collect::<rusqlite::Result<_>>().ctx(ctx)
}

/// The fingerprints of a file or symbol before and after it was analysed again with the
/// same content by another analysis version (`loci_core::ANALYSIS_VERSION`): the same code
/// described by the new fingerprint rules.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FingerprintChange {
    /// A file's path, or a symbol's key.
    pub target: String,
    /// A file's `ifnull(fingerprint, content_hash)` (what a path claim and a file page
    /// snapshot), or a symbol's body fingerprint, before.
    pub old: String,
    /// The same, after.
    pub new: String,
    /// A symbol's signature fingerprint before and after; `None` for a file.
    pub signature: Option<(String, String)>,
}

/// Carries memory's snapshots across a change of fingerprint rules for code that did not
/// change: each snapshot that equals a target's old fingerprint takes its new one, in
/// every revision (a claim's `snapshot` and `signature_snapshot` where it resolved to the
/// target, the entry of the target's key in a claim tracked as a set, a file page's
/// `page_snapshots.fingerprint` for the target's path), and `snapshot_at` is kept. A
/// snapshot that differs from the old fingerprint was already stale and stays as it is.
/// The updates delete the `revision_marks` rows of the revisions they touch (their
/// triggers, `0015_revision_marks.sql`). Returns how many rows changed.
///
/// Errors: [`StoreError::Sqlite`] when memory cannot be read or written,
/// [`StoreError::Corrupt`] when a claim's definitions are not the JSON they should be.
pub fn carry_snapshots_forward(tx: &Transaction<'_>, changes: &[FingerprintChange]) -> Result<u64> {
    if changes.is_empty() {
        return Ok(0);
    }
    let ctx = || "carrying memory's snapshots to new fingerprints".to_string();
    let json = serde_json::to_string(changes).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    const CHANGES: &str = "SELECT value ->> 'target' AS target, value ->> 'old' AS old,
            value ->> 'new' AS new, value ->> '$.signature[0]' AS old_signature,
            value ->> '$.signature[1]' AS new_signature
       FROM json_each(?1)";
    let mut n = tx
        .prepare_cached(&format!(
            "UPDATE claims
                SET snapshot = CASE WHEN claims.snapshot = ch.old THEN ch.new
                                    ELSE claims.snapshot END,
                    signature_snapshot = CASE WHEN claims.signature_snapshot = ch.old_signature
                                              THEN ch.new_signature
                                              ELSE claims.signature_snapshot END
               FROM ({CHANGES}) AS ch
              WHERE claims.resolved = ch.target
                AND ((claims.snapshot = ch.old AND ch.new <> ch.old)
                     OR (claims.signature_snapshot = ch.old_signature
                         AND ch.new_signature <> ch.old_signature))"
        ))
        .ctx(ctx)?
        .execute([&json])
        .ctx(ctx)?;
    n += tx
        .prepare_cached(&format!(
            "UPDATE page_snapshots SET fingerprint = ch.new
               FROM ({CHANGES}) AS ch
               JOIN pages p ON p.subject = ch.target AND p.kind = 'file'
               JOIN revisions r ON r.page_id = p.page_id
              WHERE ch.old_signature IS NULL AND page_snapshots.revision_id = r.revision_id
                AND page_snapshots.fingerprint = ch.old AND ch.new <> ch.old"
        ))
        .ctx(ctx)?
        .execute([&json])
        .ctx(ctx)?;
    // Claims tracked as sets: few, and their JSON is rewritten here, entry by entry.
    let sets: Vec<(i64, String)> = tx
        .prepare_cached(&format!(
            "SELECT c.claim_id, c.definitions FROM claims c
              WHERE c.definitions IS NOT NULL
                AND EXISTS (SELECT 1 FROM json_each(c.definitions) d
                             WHERE d.value ->> 'key' IN (SELECT target FROM ({CHANGES})
                                                          WHERE old_signature IS NOT NULL))"
        ))
        .ctx(ctx)?
        .query_map([&json], |r| Ok((r.get(0)?, r.get(1)?)))
        .ctx(ctx)?
        .collect::<rusqlite::Result<_>>()
        .ctx(ctx)?;
    if sets.is_empty() {
        return Ok(n as u64);
    }
    let by_key: std::collections::HashMap<&str, &FingerprintChange> = changes
        .iter()
        .filter(|c| c.signature.is_some())
        .map(|c| (c.target.as_str(), c))
        .collect();
    let mut update = tx
        .prepare_cached("UPDATE claims SET definitions = ?2 WHERE claim_id = ?1")
        .ctx(ctx)?;
    for (claim_id, stored) in sets {
        let mut definitions: Vec<ClaimDefinition> = serde_json::from_str(&stored)
            .map_err(|e| StoreError::Corrupt(format!("definitions of claim {claim_id}: {e}")))?;
        let mut changed = false;
        for d in &mut definitions {
            let Some(c) = by_key.get(d.key.as_str()) else {
                continue;
            };
            if d.body == c.old && c.new != c.old {
                d.body.clone_from(&c.new);
                changed = true;
            }
            if let Some((old, new)) = &c.signature
                && &d.signature == old
                && new != old
            {
                d.signature.clone_from(new);
                changed = true;
            }
        }
        if changed {
            n += update
                .execute(params![claim_id, definitions_json(&definitions)?])
                .ctx(ctx)?;
        }
    }
    Ok(n as u64)
}

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
    /// row (`loci_engine::memory::SessionView::digest`); it had been a JSON string inside
    /// the JSON answer.
    #[serde(skip_serializing)]
    pub digest: Option<String>,
}

fn session(r: &Row<'_>) -> rusqlite::Result<Session> {
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

const SESSION_COLUMNS: &str = "session_id, task, author, started_at, ended_at, summary,
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

/// A page's stable identity across databases (a 32-hex-digit uid, migration 0006).
pub fn page_uid(conn: &Connection, page_id: i64) -> Result<String> {
    conn.prepare_cached("SELECT uid FROM pages WHERE page_id = ?1")
        .ctx(|| "reading a page uid".into())?
        .query_row([page_id], |r| r.get(0))
        .ctx(|| format!("reading the uid of page {page_id}"))
}

/// The page with this uid.
pub fn page_by_uid(conn: &Connection, uid: &str) -> Result<Option<Page>> {
    conn.prepare_cached(&format!("SELECT {PAGE_COLUMNS} FROM pages WHERE uid = ?1"))
        .ctx(|| "reading a page".into())?
        .query_row([uid], page)
        .optional()
        .ctx(|| format!("reading page uid {uid}"))
}

/// Inserts a page as another database had it (`loci import`): its uid, subject, kind,
/// pin and creation time. Fails on a subject or uid that is taken.
pub fn insert_page_as(
    tx: &Transaction<'_>,
    uid: &str,
    subject: &str,
    kind: &str,
    pinned: bool,
    created_at: &str,
) -> Result<Page> {
    tx.execute(
        "INSERT INTO pages(uid, subject, kind, pinned, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![uid, subject, kind, pinned, created_at],
    )
    .ctx(|| format!("importing page {subject}"))?;
    page_by_uid(tx, uid)?
        .ok_or_else(|| StoreError::Corrupt(format!("page {subject} vanished after insert")))
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

/// The current revisions (by page subject) without stored marks usable now: made from the
/// map of scan `scan_id` (see [`marks_scan`]) by the rules of version `rules`.
///
/// Errors: [`StoreError::Sqlite`] when they cannot be read.
pub fn unmarked_current_revisions(
    conn: &Connection,
    scan_id: i64,
    rules: u32,
) -> Result<Vec<Revision>> {
    // The ids first, from the index of current revisions alone: every lint and scan asks,
    // and the answer is almost always none.
    let ids: Vec<i64> = conn
        .prepare_cached(
            "SELECT p.current_revision_id FROM pages p
              WHERE p.current_revision_id IS NOT NULL
                AND NOT EXISTS (SELECT 1 FROM revision_marks m
                                 WHERE m.revision_id = p.current_revision_id
                                   AND m.scan_id = ?1 AND m.rules = ?2)",
        )
        .and_then(|mut s| {
            s.query_map(params![scan_id, rules], |r| r.get(0))?
                .collect::<rusqlite::Result<_>>()
        })
        .ctx(|| "reading current revisions".into())?;
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let json = serde_json::to_string(&ids).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {REVISION_COLUMNS} FROM pages p JOIN revisions r ON r.revision_id = p.current_revision_id
              WHERE r.revision_id IN (SELECT value FROM json_each(?1))
              ORDER BY p.subject"
        ))
        .ctx(|| "reading current revisions".into())?;
    let rows = stmt
        .query_map([json], revision)
        .ctx(|| "reading current revisions".into())?;
    rows.collect::<rusqlite::Result<_>>()
        .ctx(|| "reading current revisions".into())
}

/// The scan whose map stored revision marks must come from to be used: the last scan,
/// when it finished (`None` while one runs, after one was killed, and before the first).
/// See `0015_revision_marks.sql`.
///
/// Errors: [`StoreError::Sqlite`] when the scans cannot be read.
pub fn marks_scan(conn: &Connection) -> Result<Option<i64>> {
    conn.prepare_cached(
        "SELECT scan_id FROM scans
          WHERE scan_id = (SELECT max(scan_id) FROM scans) AND status = 'finished'",
    )
    .and_then(|mut s| s.query_row([], |r| r.get(0)).optional())
    .ctx(|| "reading the last scan".into())
}

/// The stored marks (JSON) of those of `revision_ids` that have a row usable now: made
/// from the map of [`marks_scan`] by the rules of version `rules`. By revision id.
///
/// Errors: [`StoreError::Sqlite`] when they cannot be read.
pub fn stored_marks(
    conn: &Connection,
    revision_ids: &[i64],
    rules: u32,
) -> Result<std::collections::HashMap<i64, String>> {
    if revision_ids.is_empty() {
        return Ok(Default::default());
    }
    let json =
        serde_json::to_string(revision_ids).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    let mut stmt = conn
        .prepare_cached(
            "SELECT m.revision_id, m.marks FROM revision_marks m
              WHERE m.revision_id IN (SELECT value FROM json_each(?1)) AND m.rules = ?2
                AND m.scan_id = (SELECT scan_id FROM scans
                                  WHERE scan_id = (SELECT max(scan_id) FROM scans)
                                    AND status = 'finished')",
        )
        .ctx(|| "reading stored marks".into())?;
    let rows = stmt
        .query_map(params![json, rules], |r| Ok((r.get(0)?, r.get(1)?)))
        .ctx(|| "reading stored marks".into())?;
    rows.collect::<rusqlite::Result<_>>()
        .ctx(|| "reading stored marks".into())
}

/// The stored marks (JSON) of the current revisions that have something stale, among
/// the rows usable now (see [`stored_marks`]). By revision id; read through the index of
/// stale rows (migration 0024), so it costs what is stale, not what memory holds.
///
/// Errors: [`StoreError::Sqlite`] when they cannot be read.
pub fn stale_current_marks(
    conn: &Connection,
    rules: u32,
) -> Result<std::collections::HashMap<i64, String>> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT m.revision_id, m.marks FROM revision_marks m
               JOIN pages p ON p.current_revision_id = m.revision_id
              WHERE m.marks <> '[]' AND m.rules = ?1
                AND m.scan_id = (SELECT scan_id FROM scans
                                  WHERE scan_id = (SELECT max(scan_id) FROM scans)
                                    AND status = 'finished')",
        )
        .ctx(|| "reading stored marks".into())?;
    let rows = stmt
        .query_map([rules], |r| Ok((r.get(0)?, r.get(1)?)))
        .ctx(|| "reading stored marks".into())?;
    rows.collect::<rusqlite::Result<_>>()
        .ctx(|| "reading stored marks".into())
}

/// Makes the stored marks of scan `from` those of scan `to` (see [`stored_marks`]), but
/// for the revisions `except`: what scan `to` changed cannot have moved the others. The
/// marks made by other rules than `rules` are left as they are (unusable).
///
/// Errors: [`StoreError::Sqlite`] when they cannot be written.
pub fn carry_marks(tx: &Connection, from: i64, to: i64, rules: u32, except: &[i64]) -> Result<()> {
    let json = serde_json::to_string(except).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    tx.execute(
        "UPDATE revision_marks SET scan_id = ?2
          WHERE scan_id = ?1 AND rules = ?3
            AND revision_id NOT IN (SELECT value FROM json_each(?4))",
        params![from, to, rules, json],
    )
    .ctx(|| "carrying stored marks".into())?;
    Ok(())
}

/// The scan before scan `scan_id`, if it finished: the one whose map stored marks were
/// made from until `scan_id` ran.
///
/// Errors: [`StoreError::Sqlite`] when the scans cannot be read.
pub fn finished_scan_before(conn: &Connection, scan_id: i64) -> Result<Option<i64>> {
    conn.prepare_cached(
        "SELECT scan_id FROM scans WHERE scan_id = (SELECT max(scan_id) FROM scans WHERE scan_id < ?1)
            AND status = 'finished'",
    )
    .and_then(|mut s| s.query_row([scan_id], |r| r.get(0)).optional())
    .ctx(|| "reading the previous scan".into())
}

/// Stores the marks (JSON, by revision id) of revisions, made from the map of scan
/// `scan_id` by the rules of version `rules`; with `prune`, the rows no longer usable (of
/// another scan or rules) go first.
///
/// Errors: [`StoreError::Sqlite`] when they cannot be written.
pub fn store_marks(
    tx: &Connection,
    scan_id: i64,
    rules: u32,
    marks: &[(i64, String)],
    prune: bool,
) -> Result<()> {
    if prune {
        tx.execute(
            "DELETE FROM revision_marks WHERE scan_id <> ?1 OR rules <> ?2",
            params![scan_id, rules],
        )
        .ctx(|| "clearing stored marks".into())?;
    }
    let mut stmt = tx
        .prepare_cached(
            "INSERT OR REPLACE INTO revision_marks(revision_id, scan_id, rules, marks)
             VALUES (?1, ?2, ?3, ?4)",
        )
        .ctx(|| "storing marks".into())?;
    for (id, json) in marks {
        stmt.execute(params![id, scan_id, rules, json])
            .ctx(|| format!("storing the marks of revision {id}"))?;
    }
    Ok(())
}
