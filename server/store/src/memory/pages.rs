//! Pages: reading them by subject, id and uid, creating, pinning and moving them.

use super::*;

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

pub(super) fn page(r: &Row<'_>) -> rusqlite::Result<Page> {
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

pub(super) const PAGE_COLUMNS: &str =
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

/// Whether a page's subject is `subject` or a path under the folder `subject` (no
/// trailing `/`): `subject/` < a subject under it < `subject0`, a range of the UNIQUE
/// index on `pages.subject`.
///
/// Errors: [`StoreError::Sqlite`] when the pages cannot be read.
pub fn pages_at_or_under(conn: &Connection, subject: &str) -> Result<bool> {
    conn.prepare_cached(
        "SELECT EXISTS(SELECT 1 FROM pages
                       WHERE subject = ?1 OR (subject > ?1 || '/' AND subject < ?1 || '0'))",
    )
    .and_then(|mut st| st.query_row([subject], |r| r.get(0)))
    .ctx(|| "looking up a path".into())
}
