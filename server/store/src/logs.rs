//! The decision and lesson logs. Each entry is a page of its own (subject `decision:7`,
//! kind `decisions`; `lesson:3`, kind `lessons`) with its own append-only revisions and
//! claims, so a write costs what it adds; a log is a view over its entries, in the order
//! they were added.
//!
//! Stores written before migration 22 kept each log as one page whose every revision held
//! the whole log. [`split_logs`] turns such a page into entries: each of its revisions
//! becomes the revision of the entry it changed (same id, author, session, event, time and
//! summary), with the claims that lie in that entry, moved to their place in it; findings
//! about the log move to the entries that make them.

use std::collections::{BTreeSet, HashMap};

use rusqlite::{Connection, OptionalExtension, Transaction, params};

use crate::memory::{self, Page};
use crate::{Context, Result, StoreError};

/// The logs: (log subject and page kind, entry subject prefix).
pub const LOGS: [(&str, &str); 2] = [("decisions", "decision:"), ("lessons", "lesson:")];

/// The log (`decisions`, `lessons`) whose entries are written with this prefix.
pub fn log_of_entry(subject: &str) -> Option<&'static str> {
    LOGS.iter().find_map(|(log, prefix)| {
        let n = subject.strip_prefix(prefix)?;
        (!n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())).then_some(*log)
    })
}

/// The number of a log entry (`decision:7` is 7).
pub fn entry_number(subject: &str) -> Option<i64> {
    log_of_entry(subject)?;
    subject.rsplit_once(':')?.1.parse().ok()
}

/// The subject prefix of `log`'s entries (`decision:`), if `log` is a log.
pub fn entry_prefix(log: &str) -> Option<&'static str> {
    LOGS.iter().find(|(l, _)| *l == log).map(|(_, p)| *p)
}

/// The heading of a log's view.
pub fn heading(log: &str) -> &'static str {
    if log == "lessons" {
        "Lessons"
    } else {
        "Decisions"
    }
}

/// A new, empty entry of `log`, numbered one past the highest entry.
pub fn new_entry(tx: &Transaction<'_>, log: &str) -> Result<Page> {
    memory::ensure_page(tx, &next_entry(tx, log)?, log)
}

/// The subject of the entry `log` would add next (`decision:8`).
pub fn next_entry(conn: &Connection, log: &str) -> Result<String> {
    let prefix =
        entry_prefix(log).ok_or_else(|| StoreError::Corrupt(format!("`{log}` is not a log")))?;
    Ok(format!("{prefix}{}", highest_number(conn, log)? + 1))
}

/// Whether the whole-log page with uid `uid` was split here before ([`split_logs`] gives
/// its entries the uids `UID-1`, `UID-2`, ...).
pub fn was_split(conn: &Connection, uid: &str) -> Result<bool> {
    // `UID-` < `UID-N` < `UID.` ('.' follows '-').
    conn.prepare_cached(
        "SELECT EXISTS(SELECT 1 FROM pages WHERE uid > ?1 || '-' AND uid < ?1 || '.')",
    )
    .ctx(|| "reading page uids".into())?
    .query_row([uid], |r| r.get(0))
    .ctx(|| format!("reading the entries of page uid {uid}"))
}

/// An entry's number in SQL, as `pages_by_entry_number` (migration 22) indexes it.
const NUMBER: &str = "CAST(substr(subject, instr(subject, ':') + 1) AS INTEGER)";

fn highest_number(conn: &Connection, log: &str) -> Result<i64> {
    conn.prepare_cached(&format!(
        "SELECT ifnull(max({NUMBER}), 0) FROM pages WHERE kind = ?1"
    ))
    .ctx(|| "numbering a log entry".into())?
    .query_row([log], |r| r.get(0))
    .ctx(|| "numbering a log entry".into())
}

/// The current revision of each entry of `log`, in the order the entries were added.
pub fn current_revisions(conn: &Connection, log: &str) -> Result<Vec<memory::Revision>> {
    conn.prepare_cached(&format!(
        "SELECT {} FROM pages p JOIN revisions r ON r.revision_id = p.current_revision_id
          WHERE p.kind = ?1 ORDER BY {}",
        memory::REVISION_COLUMNS,
        NUMBER.replace("subject", "p.subject")
    ))
    .and_then(|mut s| s.query_map([log], memory::revision)?.collect())
    .ctx(|| format!("reading the {log} log"))
}

/// Every revision of every entry of `log`, in the order they were written.
pub fn revisions(conn: &Connection, log: &str) -> Result<Vec<memory::Revision>> {
    conn.prepare_cached(&format!(
        "SELECT {} FROM pages p JOIN revisions r USING (page_id)
          WHERE p.kind = ?1 ORDER BY r.created_at, r.revision_id",
        memory::REVISION_COLUMNS
    ))
    .and_then(|mut s| s.query_map([log], memory::revision)?.collect())
    .ctx(|| format!("reading the history of the {log} log"))
}

/// The log entries whose current revision has a claim about `path` (a file, or a folder
/// written `dir/`): resolved to it, to a symbol in it, to a file under it, or to a folder
/// holding it. Newest first, at most `limit`.
pub fn entries_about(conn: &Connection, paths: &[String], limit: usize) -> Result<Vec<String>> {
    let mut exact: Vec<String> = Vec::new();
    let mut ranges: Vec<(String, String)> = Vec::new();
    for p in paths {
        let (place, mut dir) = match p.strip_suffix('/') {
            Some(d) => {
                // `d/` < anything under `d` < `d0`.
                ranges.push((format!("{d}/"), format!("{d}0")));
                (d, Some(d))
            }
            None => {
                // `f#` < a symbol of `f` < `f$`.
                ranges.push((format!("{p}#"), format!("{p}$")));
                (p.as_str(), p.rsplit_once('/').map(|(d, _)| d))
            }
        };
        exact.push(place.to_string());
        while let Some(d) = dir {
            exact.extend([d.to_string(), format!("{d}/")]);
            dir = d.rsplit_once('/').map(|(parent, _)| parent);
        }
    }
    let mut out: Vec<(i64, String)> = Vec::new();
    let mut add = |rows: Vec<(i64, String)>| {
        for r in rows {
            if !out.contains(&r) {
                out.push(r);
            }
        }
    };
    let cap = limit as i64;
    let json = serde_json::to_string(&exact).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    add(conn
        .prepare_cached(
            "SELECT DISTINCT p.page_id, p.subject FROM claims c
               JOIN pages p ON p.current_revision_id = c.revision_id
              WHERE c.resolved IN (SELECT value FROM json_each(?1))
                AND p.kind IN ('decisions', 'lessons')
              ORDER BY p.page_id DESC LIMIT ?2",
        )
        .and_then(|mut s| {
            s.query_map(params![json, cap], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect()
        })
        .ctx(|| "reading the log entries about a path".into())?);
    for (from, to) in &ranges {
        add(conn
            .prepare_cached(
                "SELECT DISTINCT p.page_id, p.subject FROM claims c
                   JOIN pages p ON p.current_revision_id = c.revision_id
                  WHERE c.resolved > ?1 AND c.resolved < ?2
                    AND p.kind IN ('decisions', 'lessons')
                  ORDER BY p.page_id DESC LIMIT ?3",
            )
            .and_then(|mut s| {
                s.query_map(params![from, to, cap], |r| Ok((r.get(0)?, r.get(1)?)))?
                    .collect()
            })
            .ctx(|| "reading the log entries about a path".into())?);
    }
    out.sort_by_key(|e| std::cmp::Reverse(e.0));
    out.truncate(limit);
    Ok(out.into_iter().map(|(_, s)| s).collect())
}

/// One entry as a whole-log body wrote it: its lines, and the text an entry page holds.
struct Item {
    /// First and one-past-last line of the item in the log body.
    lines: (usize, usize),
    /// The entry's body: the item without its `- ` marker, continuation indent and
    /// trailing ` — AUTHOR`.
    body: String,
    /// Per line of the item: (byte where it starts in the log body, bytes of marker or
    /// indent dropped, byte where it starts in the entry body).
    map: Vec<(usize, usize, usize)>,
}

/// The entries a whole-log body holds, as entry bodies (a case file's memory written as
/// a log).
pub fn entry_texts(body: &str) -> Vec<String> {
    items(body, &BTreeSet::new())
        .into_iter()
        .map(|i| i.body)
        .collect()
}

/// The entries of a whole-log body. An item starts at a `- ` line or any other text at
/// column 0 other than a `#` heading; lines indented by two spaces continue it.
fn items(body: &str, authors: &BTreeSet<String>) -> Vec<Item> {
    let mut starts = Vec::new();
    let mut at = 0;
    for line in body.split_inclusive('\n') {
        starts.push((at, line.trim_end_matches(['\n', '\r'])));
        at += line.len();
    }
    let mut out: Vec<Item> = Vec::new();
    let mut open = false;
    for (n, &(start, line)) in starts.iter().enumerate() {
        let continues = open && line.starts_with("  ");
        if continues {
            let item = out.last_mut().expect("open item");
            item.body.push('\n');
            item.map.push((start, 2, item.body.len()));
            item.body.push_str(&line[2..]);
            item.lines.1 = n + 1;
            continue;
        }
        open = !line.trim().is_empty() && !line.starts_with('#');
        if open {
            let dropped = if line.starts_with("- ") { 2 } else { 0 };
            out.push(Item {
                lines: (n, n + 1),
                body: line[dropped..].to_string(),
                map: vec![(start, dropped, 0)],
            });
        }
    }
    for item in &mut out {
        if let Some((text, by)) = item.body.rsplit_once(" — ")
            && authors.contains(by.trim_end())
        {
            item.body.truncate(text.len());
        }
    }
    out
}

impl Item {
    /// Where a claim at byte `byte` of line `line` of the log body is in the entry body.
    fn place(&self, line: usize, byte: usize) -> Option<(usize, usize)> {
        let (start, dropped, to) = *self.map.get(line.checked_sub(self.lines.0)?)?;
        let at = to + byte.checked_sub(start + dropped)?;
        (at <= self.body.len()).then_some((line - self.lines.0, at))
    }
}

/// Splits every whole-log page (subject `decisions` or `lessons`) into entries, and
/// returns how many revisions it moved. Runs inside the caller's transaction (migration
/// 22; an import of an export written before it); the append-only guard of `revisions` is
/// lifted for the move and put back before returning.
pub fn split_logs(tx: &Transaction<'_>) -> Result<u64> {
    let logs: Vec<Page> = LOGS
        .iter()
        .map(|(log, _)| memory::page_by_subject(tx, log))
        .collect::<Result<Vec<_>>>()?
        .into_iter()
        .flatten()
        .collect();
    if logs.is_empty() {
        return Ok(0);
    }
    tx.execute_batch(
        "DROP TRIGGER revisions_append_only_update;
         DROP TRIGGER revisions_append_only_delete;",
    )
    .ctx(|| "lifting the append-only guard".into())?;
    let mut moved = 0;
    for log in &logs {
        moved += split_log(tx, log)?;
    }
    tx.execute_batch(&format!(
        "{}
         {}
         DELETE FROM revision_marks;
         INSERT INTO revisions_fts(revisions_fts) VALUES ('rebuild');",
        crate::migrate::REVISIONS_APPEND_ONLY_UPDATE,
        crate::migrate::REVISIONS_APPEND_ONLY_DELETE
    ))
    .ctx(|| "restoring the append-only guard".into())?;
    Ok(moved)
}

/// A log revision as [`split_log`] reads it.
struct LogRevision {
    id: i64,
    body: String,
    summary: Option<String>,
}

fn split_log(tx: &Transaction<'_>, log: &Page) -> Result<u64> {
    let revisions: Vec<LogRevision> = tx
        .prepare(
            "SELECT revision_id, body, summary FROM revisions WHERE page_id = ?1 ORDER BY version",
        )
        .and_then(|mut s| {
            s.query_map([log.page_id], |r| {
                Ok(LogRevision {
                    id: r.get(0)?,
                    body: r.get(1)?,
                    summary: r.get(2)?,
                })
            })?
            .collect()
        })
        .ctx(|| format!("reading the {} log", log.subject))?;
    let authors: BTreeSet<String> = tx
        .prepare("SELECT DISTINCT author FROM revisions WHERE page_id = ?1")
        .and_then(|mut s| s.query_map([log.page_id], |r| r.get(0))?.collect())
        .ctx(|| format!("reading the authors of the {} log", log.subject))?;
    let log_uid = memory::page_uid(tx, log.page_id)?;
    // The entries so far, by position: (page, body, versions written).
    let mut slots: Vec<(i64, String, i64)> = Vec::new();
    let mut previous: Vec<String> = Vec::new();
    for rev in &revisions {
        let now = items(&rev.body, &authors);
        let bodies: Vec<String> = now.iter().map(|i| i.body.clone()).collect();
        let mut changed: Vec<usize> = (0..bodies.len().max(previous.len()))
            .filter(|&i| bodies.get(i) != previous.get(i))
            .collect();
        if changed.is_empty() {
            // A revision that changed no entry (a heading, a rollback to the same text)
            // is kept as a version of the last entry.
            changed.push(slots.len().saturating_sub(1));
        }
        let claims = claims_of(tx, rev.id)?;
        for (n, &i) in changed.iter().enumerate() {
            while slots.len() <= i {
                let page = new_entry(tx, &log.subject)?;
                tx.execute(
                    "UPDATE pages SET uid = ?2, pinned = ?3 WHERE page_id = ?1",
                    params![
                        page.page_id,
                        format!("{log_uid}-{}", slots.len() + 1),
                        log.pinned
                    ],
                )
                .ctx(|| "numbering a log entry".into())?;
                slots.push((page.page_id, String::new(), 0));
            }
            let item = now.get(i);
            let body = item.map_or("", |it| it.body.as_str());
            let slot = &mut slots[i];
            slot.1 = body.to_string();
            slot.2 += 1;
            let terms = memory::revision_terms(body, rev.summary.as_deref());
            let id = if n == 0 {
                tx.execute(
                    "UPDATE revisions SET page_id = ?2, version = ?3, body = ?4, terms = ?5
                      WHERE revision_id = ?1",
                    params![rev.id, slot.0, slot.2, body, terms],
                )
                .ctx(|| format!("moving revision {} into its entry", rev.id))?;
                rev.id
            } else {
                // One revision that changed several entries (a rewrite of the whole
                // log) gives each further entry a revision with its provenance.
                tx.execute(
                    "INSERT INTO revisions(page_id, version, body, summary, author, session_id,
                                           event_id, created_at, terms)
                     SELECT ?2, ?3, ?4, summary, author, session_id, event_id, created_at, ?5
                       FROM revisions WHERE revision_id = ?1",
                    params![rev.id, slot.0, slot.2, body, terms],
                )
                .ctx(|| format!("copying revision {} into an entry", rev.id))?;
                tx.last_insert_rowid()
            };
            if let Some(item) = item {
                place_claims(tx, &claims, item, id, n == 0)?;
            }
        }
        // What stayed in the log revision but not in the entry it became.
        tx.execute(
            "DELETE FROM claims WHERE revision_id = ?1 AND claim_id NOT IN
               (SELECT value FROM json_each(?2))",
            params![
                rev.id,
                serde_json::to_string(&kept_claims(&claims, now.get(changed[0])))
                    .map_err(|e| StoreError::Corrupt(e.to_string()))?
            ],
        )
        .ctx(|| format!("dropping the log's claims of revision {}", rev.id))?;
        previous = bodies;
    }
    for (page_id, _, _) in &slots {
        tx.execute(
            "UPDATE pages SET
                current_revision_id = (SELECT revision_id FROM revisions
                                        WHERE page_id = ?1 ORDER BY version DESC LIMIT 1),
                created_at = (SELECT created_at FROM revisions WHERE page_id = ?1 AND version = 1),
                updated_at = (SELECT created_at FROM revisions
                               WHERE page_id = ?1 ORDER BY version DESC LIMIT 1)
              WHERE page_id = ?1",
            [page_id],
        )
        .ctx(|| "publishing a log entry".into())?;
    }
    move_findings(tx, &log.subject)?;
    tx.execute("DELETE FROM stale_marks WHERE subject = ?1", [&log.subject])
        .ctx(|| "dropping the log's stale marks".into())?;
    tx.execute("DELETE FROM pages WHERE page_id = ?1", [log.page_id])
        .ctx(|| format!("removing the whole-log page {}", log.subject))?;
    Ok(revisions.len() as u64)
}

/// A claim row's place: (claim id, line, start byte, end byte).
type ClaimPlace = (i64, usize, usize, usize);

fn claims_of(tx: &Transaction<'_>, revision_id: i64) -> Result<Vec<ClaimPlace>> {
    tx.prepare_cached(
        "SELECT claim_id, line, start_byte, end_byte FROM claims WHERE revision_id = ?1",
    )
    .and_then(|mut s| {
        s.query_map([revision_id], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        })?
        .collect()
    })
    .ctx(|| format!("reading the claims of revision {revision_id}"))
}

fn kept_claims(claims: &[ClaimPlace], item: Option<&Item>) -> Vec<i64> {
    let Some(item) = item else {
        return Vec::new();
    };
    claims
        .iter()
        .filter(|(_, line, start, _)| item.place(*line, *start).is_some())
        .map(|c| c.0)
        .collect()
}

/// The claims of the log revision that lie in `item`, moved (`own`: the revision became
/// this entry's) or copied to `revision_id`, at their place in the entry body.
fn place_claims(
    tx: &Transaction<'_>,
    claims: &[ClaimPlace],
    item: &Item,
    revision_id: i64,
    own: bool,
) -> Result<()> {
    for &(claim_id, line, start, end) in claims {
        let Some((new_line, new_start)) = item.place(line, start) else {
            continue;
        };
        let new_end = new_start + (end - start);
        if own {
            tx.execute(
                "UPDATE claims SET line = ?2, start_byte = ?3, end_byte = ?4 WHERE claim_id = ?1",
                params![claim_id, new_line, new_start, new_end],
            )
            .ctx(|| format!("moving claim {claim_id} into its entry"))?;
        } else {
            copy_row(
                tx,
                "claims",
                claim_id,
                &[
                    ("revision_id", &revision_id),
                    ("line", &new_line),
                    ("start_byte", &new_start),
                    ("end_byte", &new_end),
                ],
            )?;
        }
    }
    Ok(())
}

/// Inserts a copy of row `id` of `table` (whose first column is its integer key) with the
/// columns `overrides` names set to their values; every other column is copied, whatever
/// columns later migrations add.
fn copy_row(
    tx: &Transaction<'_>,
    table: &str,
    id: i64,
    overrides: &[(&str, &dyn rusqlite::ToSql)],
) -> Result<()> {
    let columns: Vec<(String, i64)> = tx
        .prepare(&format!(
            "SELECT name, pk FROM pragma_table_info('{table}')"
        ))
        .and_then(|mut s| s.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect())
        .ctx(|| format!("reading the columns of {table}"))?;
    let key = columns
        .iter()
        .find(|(_, pk)| *pk == 1)
        .map(|(c, _)| c.clone())
        .ok_or_else(|| StoreError::Corrupt(format!("{table} has no key column")))?;
    let mut values: Vec<&dyn rusqlite::ToSql> = vec![&id];
    let (mut names, mut select) = (Vec::new(), Vec::new());
    for (c, pk) in &columns {
        if *pk == 1 {
            continue;
        }
        names.push(c.as_str());
        match overrides.iter().find(|(o, _)| o == c) {
            Some((_, v)) => {
                values.push(*v);
                select.push(format!("?{}", values.len()));
            }
            None => select.push(c.clone()),
        }
    }
    tx.execute(
        &format!(
            "INSERT INTO {table}({}) SELECT {} FROM {table} WHERE {key} = ?1",
            names.join(", "),
            select.join(", ")
        ),
        values.as_slice(),
    )
    .ctx(|| format!("copying row {id} of {table}"))?;
    Ok(())
}

/// Findings about the whole log become findings about each current entry with a claim on
/// their target (a dismissal stays a dismissal); a finding no entry makes any more stays
/// as it was, and lint resolves it if it is open.
fn move_findings(tx: &Transaction<'_>, log: &str) -> Result<()> {
    let findings: Vec<(i64, String, String)> = tx
        .prepare(
            "SELECT contradiction_id, finding_key, target FROM contradictions
              WHERE origin = 'page' AND subject = ?1",
        )
        .and_then(|mut s| {
            s.query_map([log], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
                .collect()
        })
        .ctx(|| "reading the log's findings".into())?;
    if findings.is_empty() {
        return Ok(());
    }
    // Entry subject, current revision and line of each claim target in the entries.
    let mut naming: HashMap<String, Vec<(String, i64, i64)>> = HashMap::new();
    let rows: Vec<(String, i64, String, i64)> = tx
        .prepare(
            "SELECT p.subject, c.revision_id, c.target, c.line
               FROM pages p JOIN claims c ON c.revision_id = p.current_revision_id
              WHERE p.kind = ?1 ORDER BY p.page_id, c.line",
        )
        .and_then(|mut s| {
            s.query_map([log], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
                .collect()
        })
        .ctx(|| "reading the entries' claims".into())?;
    for (subject, rev, target, line) in rows {
        let places = naming.entry(target).or_default();
        if !places.iter().any(|(s, _, _)| *s == subject) {
            places.push((subject, rev, line));
        }
    }
    let old_prefix = format!("page:{log}:");
    for (id, key, target) in findings {
        let Some(places) = naming.get(&target) else {
            continue;
        };
        let rest = key.strip_prefix(&old_prefix).unwrap_or(&key).to_string();
        for (n, (subject, rev, line)) in places.iter().enumerate() {
            let new_key = format!("page:{subject}:{rest}");
            if n == 0 {
                tx.execute(
                    "UPDATE contradictions SET finding_key = ?2, subject = ?3, revision_id = ?4,
                            line = ?5 WHERE contradiction_id = ?1",
                    params![id, new_key, subject, rev, line],
                )
                .ctx(|| format!("moving finding {key} to {subject}"))?;
            } else {
                copy_row(
                    tx,
                    "contradictions",
                    id,
                    &[
                        ("finding_key", &new_key),
                        ("subject", subject),
                        ("revision_id", rev),
                        ("line", line),
                    ],
                )?;
            }
        }
    }
    Ok(())
}

/// Whether `subject` names a log entry that exists.
pub fn entry_exists(conn: &Connection, subject: &str) -> Result<bool> {
    Ok(log_of_entry(subject).is_some()
        && conn
            .prepare_cached("SELECT 1 FROM pages WHERE subject = ?1")
            .ctx(|| "reading a log entry".into())?
            .query_row([subject], |r| r.get::<_, i64>(0))
            .optional()
            .ctx(|| format!("reading {subject}"))?
            .is_some())
}
