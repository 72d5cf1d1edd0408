//! Claims: what a revision says about the code (with the definitions it resolved to),
//! and the live claims the audit checks.

use super::*;

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
pub(super) fn definitions_json(definitions: &[ClaimDefinition]) -> Result<Option<String>> {
    if definitions.is_empty() {
        return Ok(None);
    }
    serde_json::to_string(definitions)
        .map(Some)
        .map_err(|e| StoreError::Corrupt(format!("encoding claim definitions: {e}")))
}

pub(super) fn claim_row(r: &Row<'_>) -> rusqlite::Result<ClaimRow> {
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

pub(super) const CLAIM_COLUMNS: &str =
    "claim_id, revision_id, kind, text, target, version, start_byte,
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

/// Re-points the claims resolved to path `from` (or a symbol in it, `from#…`) to `to`, and
/// the keys of the claims tracked as a set of definitions in it (the set kept ordered by
/// key, as the engine's `memory::definitions_of` writes it).
///
/// Errors: [`StoreError::Sqlite`] when the claims cannot be written.
pub fn repoint_claims(tx: &Transaction<'_>, from: &str, to: &str) -> Result<()> {
    tx.execute(
        "UPDATE claims SET resolved = ?2 || substr(resolved, length(?1) + 1)
         WHERE resolved = ?1 OR substr(resolved, 1, length(?1) + 1) = ?1 || '#'",
        [from, to],
    )
    .ctx(|| "re-pointing claims".into())?;
    tx.execute(
        "UPDATE claims SET definitions = (
             SELECT json_group_array(json(v)) FROM (
                 SELECT json_set(j.value, '$.key',
                     CASE WHEN substr(j.value ->> 'key', 1, length(?1) + 1) = ?1 || '#'
                          THEN ?2 || substr(j.value ->> 'key', length(?1) + 1)
                          ELSE j.value ->> 'key' END) AS v
                 FROM json_each(claims.definitions) j ORDER BY v ->> 'key'))
         WHERE definitions IS NOT NULL AND EXISTS (
             SELECT 1 FROM json_each(claims.definitions) j
             WHERE substr(j.value ->> 'key', 1, length(?1) + 1) = ?1 || '#')",
        [from, to],
    )
    .ctx(|| "re-pointing claims".into())?;
    Ok(())
}

/// A live claim about a symbol: a page's current revision mentions it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SymbolMention {
    /// The symbol key the claim resolved to.
    pub key: String,
    /// The page's subject.
    pub subject: String,
    /// The revision (the page's current one).
    pub revision_id: i64,
    /// Its version.
    pub version: i64,
    /// Who wrote it.
    pub author: String,
    /// When (RFC 3339).
    pub created_at: String,
    /// The claim.
    pub claim_id: i64,
    /// The claim as written (`` `login()` ``).
    pub claim_text: String,
    /// Body fingerprint of the symbol when the claim was snapshotted.
    pub snapshot: Option<String>,
    /// Signature fingerprint then.
    pub signature_snapshot: Option<String>,
    /// Why the claim is stale against the map, in words, if it is: `None` as
    /// [`symbol_mentions`] reads it (the engine's audit says).
    pub stale: Option<String>,
}

/// Every live claim (in a page's current revision) about a symbol of `path`, by key, then
/// revision, then claim: a claim tracked as a set of definitions once per definition of
/// the set in `path`, with that definition's snapshots. `stale` is `None`.
///
/// Errors: [`StoreError::Sqlite`] when memory cannot be read.
pub fn symbol_mentions(conn: &Connection, path: &str) -> Result<Vec<SymbolMention>> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT c.resolved, p.subject, r.revision_id, r.version, r.author, r.created_at,
                c.claim_id, c.text, c.snapshot, c.signature_snapshot
             FROM claims c
             JOIN pages p ON p.current_revision_id = c.revision_id
             JOIN revisions r ON r.revision_id = c.revision_id
             WHERE c.kind = 'symbol' AND c.resolved >= ?1 AND c.resolved < ?2
             UNION ALL
             SELECT j.value ->> 'key', p.subject, r.revision_id, r.version, r.author,
                r.created_at, c.claim_id, c.text, j.value ->> 'body', j.value ->> 'signature'
             FROM claims c, json_each(c.definitions) j
             JOIN pages p ON p.current_revision_id = c.revision_id
             JOIN revisions r ON r.revision_id = c.revision_id
             WHERE c.definitions IS NOT NULL
                AND j.value ->> 'key' >= ?1 AND j.value ->> 'key' < ?2
             ORDER BY 1, 3, 7",
        )
        .map_err(|e| StoreError::sqlite("reading memory about symbols", e))?;
    // Keys are `path#...`: the range [`path#`, `path$`) holds exactly this file's keys.
    let rows = stmt
        .query_map([format!("{path}#"), format!("{path}$")], |r| {
            Ok(SymbolMention {
                key: r.get(0)?,
                subject: r.get(1)?,
                revision_id: r.get(2)?,
                version: r.get(3)?,
                author: r.get(4)?,
                created_at: r.get(5)?,
                claim_id: r.get(6)?,
                claim_text: r.get(7)?,
                snapshot: r.get(8)?,
                signature_snapshot: r.get(9)?,
                stale: None,
            })
        })
        .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
        .map_err(|e| StoreError::sqlite(format!("reading memory about {path}"), e))?;
    Ok(rows)
}

/// `(revision id, kind, target)` of the path and symbol claims of current revisions that
/// track nothing: not resolved, no set of definitions, not resolved where they were
/// exported from. In the order SQLite reads them.
///
/// Errors: [`StoreError::Sqlite`] when memory cannot be read.
pub fn untracked_current_claims(conn: &Connection) -> Result<Vec<(i64, String, String)>> {
    conn.prepare_cached(
        "SELECT c.revision_id, c.kind, c.target FROM claims c
           JOIN pages p ON p.current_revision_id = c.revision_id
          WHERE c.kind IN ('path', 'symbol') AND c.resolved IS NULL
            AND c.definitions IS NULL AND NOT c.resolved_elsewhere",
    )
    .and_then(|mut st| {
        st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
            .collect()
    })
    .ctx(|| "reading untracked claims".into())
}
