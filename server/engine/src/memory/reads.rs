//! Reads of memory: `show`, `history`, `asof`, `topics` and the memory list, and the
//! envelope of every answer that serves memory (its stale and false warnings).

use loci_store::logs;
use loci_store::memory::{self as mem, Page, Revision};
use loci_store::rusqlite::Connection;
use serde::Serialize;

use crate::{EngineError, Envelope, Result, Workspace};

use super::claims::ClaimView;

/// A page with one of its revisions.
#[derive(Clone, Debug, Serialize)]
pub struct Shown {
    /// The page.
    pub page: Page,
    /// The revision shown.
    pub revision: Revision,
    /// Its claims.
    pub claims: Vec<ClaimView>,
    /// Whether this is the page's current revision.
    pub current: bool,
    /// Topic members, for topic pages.
    pub members: Vec<String>,
}

/// A page's revisions, oldest first (bodies omitted).
#[derive(Clone, Debug, Serialize)]
pub struct History {
    /// The page.
    pub page: Page,
    /// Revisions with their triggering events' kinds.
    pub revisions: Vec<HistoryEntry>,
}

/// One line of history.
#[derive(Clone, Debug, Serialize)]
pub struct HistoryEntry {
    /// In the history of a log (`decisions`, `lessons`): the entry this revision is of
    /// (`decision:7`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry: Option<String>,
    /// Version (of the entry, in a log's history).
    pub version: i64,
    /// Author.
    pub author: String,
    /// RFC 3339.
    pub created_at: String,
    /// Change summary.
    pub summary: Option<String>,
    /// Session id.
    pub session_id: Option<i64>,
    /// Kind of the triggering event (`remember`, `rollback`, `decision`, ...).
    pub event: Option<String>,
    /// Body size in bytes.
    pub bytes: usize,
}

/// Memory as it stood at a moment.
#[derive(Clone, Debug, Serialize)]
pub struct AsOf {
    /// The moment asked for, as given.
    pub at: String,
    /// For each page that existed then: subject, version, author, date.
    pub pages: Vec<AsOfPage>,
    /// The revision of the `show` subject current at that moment, if asked.
    pub shown: Option<Revision>,
}

/// One page in an [`AsOf`] answer.
#[derive(Clone, Debug, Serialize)]
pub struct AsOfPage {
    /// Subject (as named today).
    pub subject: String,
    /// Version current at the moment.
    pub version: i64,
    /// Its author.
    pub author: String,
    /// When it was written.
    pub created_at: String,
}

/// A topic and its members.
pub type Topic = (String, Vec<String>);

/// One page of a memory listing ([`Workspace::memory_list`]).
#[derive(Clone, Debug, Serialize)]
pub struct PageEntry {
    /// The subject: a path, `.`, `topic:NAME`, `decision:N`, `lesson:N`.
    pub subject: String,
    /// `file`, `folder`, `root`, `topic`, `decision` or `lesson`.
    pub kind: String,
    /// The current revision's version (0: a topic without a body).
    pub version: i64,
    /// Who wrote the current revision.
    pub author: Option<String>,
    /// When the page last changed (RFC 3339).
    pub updated_at: Option<String>,
    /// The first non-blank line of its body, at most 120 characters.
    pub first_line: String,
    /// Whether it is pinned (never marked stale).
    pub pinned: bool,
    /// Why it is stale (the first reason), when it is.
    pub stale: Option<String>,
    /// Members, for a topic.
    pub members: u64,
}

impl Workspace {
    /// A page's current revision, or version `version`.
    /// A log (`decisions`, `lessons`) is shown as the view of its entries ([`super::logs`]).
    pub fn show(&self, subject: &str, version: Option<i64>) -> Result<Envelope<Shown>> {
        if let Some(log) = super::logs::log_named(subject) {
            if version.is_some() {
                return Err(super::logs::not_a_page(log));
            }
            return self.show_log(log, &self.log_revisions(log)?);
        }
        let page = self.page(subject)?;
        let conn = self.store.conn();
        let revision = match version {
            Some(v) => mem::revision_by_version(conn, page.page_id, v)?.ok_or_else(|| {
                EngineError::NotFound(format!("`{}` has no version {v}", page.subject))
            })?,
            None => match page.current_revision_id {
                Some(id) => mem::revision_by_id(conn, id)?,
                None => None,
            }
            .ok_or_else(|| EngineError::NotFound(format!("`{}` has no revisions", page.subject)))?,
        };
        let claims = mem::claims_of(conn, revision.revision_id)?
            .iter()
            .map(ClaimView::from)
            .collect();
        let members = if page.kind == "topic" {
            mem::topic_members(conn, page.page_id)?
        } else {
            Vec::new()
        };
        let current = page.current_revision_id == Some(revision.revision_id);
        let rev = revision.revision_id;
        self.memory_envelope(
            Shown {
                page,
                revision,
                claims,
                current,
                members,
            },
            &[rev],
            Vec::new(),
        )
    }

    /// Every revision of a page, oldest first; of a log, every revision of its entries.
    pub fn history(&self, subject: &str) -> Result<Envelope<History>> {
        let conn = self.store.conn();
        let (page, all) = match super::logs::log_named(subject) {
            Some(log) => {
                let all = logs::revisions(conn, log)?;
                (super::logs::log_page(log, &all), all)
            }
            None => {
                let page = self.page(subject)?;
                let all = mem::revisions_of(conn, page.page_id)?;
                (page, all)
            }
        };
        let mut revisions = Vec::new();
        for r in all {
            let event = match r.event_id {
                Some(id) => mem::event_by_id(conn, id)?.map(|e| e.kind),
                None => None,
            };
            revisions.push(HistoryEntry {
                entry: logs::log_of_entry(&r.subject).map(|_| r.subject.clone()),
                version: r.version,
                author: r.author,
                created_at: r.created_at,
                summary: r.summary,
                session_id: r.session_id,
                event,
                bytes: r.body.len(),
            });
        }
        self.envelope(History { page, revisions }, Vec::new())
    }

    /// Memory as it stood at `at` (a date `2026-11-01` or a time `2026-11-01T12:00:00Z`),
    /// and optionally the revision of `show` current then.
    pub fn asof(&self, at: &str, show: Option<&str>) -> Result<Envelope<AsOf>> {
        let at_norm = normalize_moment(self.store.conn(), at)?;
        let revisions = mem::revisions_as_of(self.store.conn(), &at_norm)?;
        let shown = match show {
            Some(s) if super::logs::log_named(s).is_some() => {
                let log = super::logs::log_named(s).unwrap_or_default();
                let entries: Vec<Revision> = revisions
                    .iter()
                    .filter(|r| logs::log_of_entry(&r.subject) == Some(log))
                    .cloned()
                    .collect();
                Some(self.show_log(log, &entries)?.result.revision)
            }
            Some(s) => {
                let page = self.page(s)?;
                Some(
                    revisions
                        .iter()
                        .find(|r| r.page_id == page.page_id)
                        .cloned()
                        .ok_or_else(|| {
                            EngineError::NotFound(format!(
                                "`{}` had no memory at {at}",
                                page.subject
                            ))
                        })?,
                )
            }
            None => None,
        };
        let pages = revisions
            .into_iter()
            .map(|r| AsOfPage {
                subject: r.subject,
                version: r.version,
                author: r.author,
                created_at: r.created_at,
            })
            .collect();
        self.envelope(
            AsOf {
                at: at.to_string(),
                pages,
                shown,
            },
            Vec::new(),
        )
    }

    /// Topics and their members: `(topic:NAME, members)`.
    pub fn topics(&self) -> Result<Envelope<Vec<Topic>>> {
        let conn = self.store.conn();
        let mut out = Vec::new();
        for p in mem::pages(conn)?.into_iter().filter(|p| p.kind == "topic") {
            out.push((p.subject.clone(), mem::topic_members(conn, p.page_id)?));
        }
        self.envelope(out, Vec::new())
    }

    /// The memory pages whose subject is `prefix` or lies under it (`src/auth` takes
    /// `src/auth` and `src/auth/…`, not `src/authz`; `topic:` every topic, `decision:`
    /// every decision; empty: every page), of the kinds `kinds` (`file`, `folder`, `root`,
    /// `topic`, `decision`, `lesson`; empty: all), by subject (log entries by number), at
    /// most `limit` (0: all). Each with its current version, author, first line, and
    /// whether it is stale; `limits` counts them.
    ///
    /// Errors: [`EngineError::InvalidArgument`] for an unknown kind.
    pub fn memory_list(
        &self,
        prefix: &str,
        kinds: &[String],
        limit: u32,
    ) -> Result<Envelope<Vec<PageEntry>>> {
        const KINDS: &[&str] = &["file", "folder", "root", "topic", "decision", "lesson"];
        if let Some(bad) = kinds.iter().find(|k| !KINDS.contains(&k.as_str())) {
            return Err(EngineError::InvalidArgument {
                name: "kinds".into(),
                message: format!("`{bad}` is not a kind of page; kinds: {}", KINDS.join(", ")),
            });
        }
        self.store.read(|| {
            let conn = self.store.conn();
            let prefix = prefix.trim().trim_start_matches("./");
            let prefix = if prefix.len() > 1 {
                prefix.trim_end_matches('/')
            } else {
                prefix
            };
            let under = |subject: &str| {
                prefix.is_empty()
                    || subject == prefix
                    || (prefix.ends_with(':') && subject.starts_with(prefix))
                    || (prefix == "." && !subject.contains(':'))
                    || subject
                        .strip_prefix(prefix)
                        .is_some_and(|rest| rest.starts_with('/') || rest.starts_with(':'))
            };
            let kind_of = |p: &mem::Page| {
                match p.kind.as_str() {
                    "decisions" => "decision",
                    "lessons" => "lesson",
                    k => k,
                }
                .to_string()
            };
            let mut pages: Vec<mem::Page> = mem::pages(conn)?
                .into_iter()
                .filter(|p| p.current_revision_id.is_some() || p.kind == "topic")
                .filter(|p| under(&p.subject))
                .filter(|p| kinds.is_empty() || kinds.contains(&kind_of(p)))
                .collect();
            // Log entries in number order: `decision:10` after `decision:9`.
            pages.sort_by_cached_key(|p| match p.subject.split_once(':') {
                Some((log, n)) if n.bytes().all(|b| b.is_ascii_digit()) => (
                    log.to_string(),
                    n.parse::<u64>().unwrap_or(0),
                    String::new(),
                ),
                _ => (p.subject.clone(), 0, String::new()),
            });
            let total = pages.len() as u64;
            if limit > 0 {
                pages.truncate(limit as usize);
            }
            let mut out = Vec::with_capacity(pages.len());
            let mut relies = Vec::new();
            for p in pages {
                let revision = match p.current_revision_id {
                    Some(id) => mem::revision_by_id(conn, id)?,
                    None => None,
                };
                let stale = match &revision {
                    Some(r) if !p.pinned => self
                        .stale_warnings_for_revisions(&[r.revision_id])?
                        .into_iter()
                        .map(|w| format!("{}: {}", w.path, w.reason))
                        .next(),
                    _ => None,
                };
                if p.kind == "file" {
                    relies.push(p.subject.clone());
                }
                let members = if p.kind == "topic" {
                    mem::topic_members(conn, p.page_id)?.len() as u64
                } else {
                    0
                };
                out.push(PageEntry {
                    kind: kind_of(&p),
                    version: revision.as_ref().map_or(0, |r| r.version),
                    author: revision.as_ref().map(|r| r.author.clone()),
                    updated_at: p.updated_at.clone(),
                    first_line: revision
                        .as_ref()
                        .and_then(|r| r.body.lines().map(str::trim).find(|l| !l.is_empty()))
                        .map(|l| l.chars().take(120).collect())
                        .unwrap_or_default(),
                    pinned: p.pinned,
                    stale,
                    members,
                    subject: p.subject,
                });
            }
            let listed = out.len() as u64;
            let mut env = self.envelope(out, relies)?;
            env.limits = crate::envelope::Limits {
                budget: (limit > 0).then_some(u64::from(limit)),
                used: listed,
                truncated: total > listed,
                omitted: total - listed,
            };
            if total == 0 {
                env.capability.notes.push(if prefix.is_empty() {
                    "no memory yet: `remember`, `decide` and `learn` write some".to_string()
                } else {
                    format!("no memory under `{prefix}`")
                });
            }
            Ok(env)
        })
    }

    /// The envelope of an answer that serves the memory of `revisions` (and relies on the
    /// files `relies_on`): the files that memory relies on — its page's file and every
    /// file a claim resolved to — are compared with the disk (a warning per file changed
    /// since the last scan, counted in `freshness.changed_since_scan`), and each
    /// revision's stale marks are added. Every answer that serves memory builds its
    /// envelope here, so `show`, `why`, `search` and a write warn alike.
    pub(crate) fn memory_envelope<T>(
        &self,
        result: T,
        revisions: &[i64],
        relies_on: Vec<String>,
    ) -> Result<Envelope<T>> {
        let marks = self.stale_warnings_for_revisions(revisions)?;
        self.memory_envelope_with(result, revisions, relies_on, marks)
    }

    /// [`Workspace::memory_envelope`] with the stale marks of `revisions` already read
    /// (`context` reads them once for ranking, [`Workspace::cached_staleness`]): the disk
    /// check of the files that memory relies on, the marks, then what lint found false in
    /// it ([`Workspace::false_warnings_for_revisions`]). An answer that serves memory and
    /// leaves out one of the three tells less than `show` about the same text.
    pub(crate) fn memory_envelope_with<T>(
        &self,
        result: T,
        revisions: &[i64],
        mut relies_on: Vec<String>,
        marks: Vec<crate::StaleWarning>,
    ) -> Result<Envelope<T>> {
        let conn = self.store.conn();
        let file_of = |key: &str| key.split('#').next().unwrap_or(key).to_string();
        for &id in revisions {
            // A subject that is not a mapped file (a folder, `decisions`) is not compared.
            relies_on.extend(mem::revision_by_id(conn, id)?.map(|r| r.subject));
            for c in mem::claims_of(conn, id)? {
                relies_on.extend(c.resolved.as_deref().map(file_of));
                relies_on.extend(c.definitions.iter().map(|d| file_of(&d.key)));
            }
        }
        let mut env = self.envelope(result, relies_on)?;
        env.stale_warnings.extend(marks);
        env.stale_warnings
            .extend(self.false_warnings_for_revisions(revisions)?);
        Ok(env)
    }

    /// What lint found false in the given revisions: one warning per open contradiction of
    /// the revision's page (origin `page`), as `` memory `a.py` v2 claim `f()` is false:
    /// TRUTH (did you mean `g`?) (contradiction #7) ``. A page's open contradictions are
    /// about its current revision; a revision that is not current gets those lint recorded
    /// against it. A stale mark says the code changed under a claim; a contradiction says
    /// the claim names what is not there, which a claim that never resolved (written after
    /// a rename, or a near miss) shows only here.
    pub fn false_warnings_for_revisions(
        &self,
        revision_ids: &[i64],
    ) -> Result<Vec<crate::StaleWarning>> {
        let conn = self.store.conn();
        let mut out = Vec::new();
        let mut seen: Vec<i64> = Vec::new();
        for &id in revision_ids {
            if seen.contains(&id) {
                continue;
            }
            seen.push(id);
            let Some(rev) = mem::revision_by_id(conn, id)? else {
                continue;
            };
            let current = mem::page_by_id(conn, rev.page_id)?
                .is_some_and(|p| p.current_revision_id == Some(id));
            for c in loci_store::audit::open_contradictions_of(conn, "page", &rev.subject)? {
                if !current && c.revision_id != Some(id) {
                    continue;
                }
                out.push(crate::StaleWarning {
                    path: rev.subject.clone(),
                    reason: false_reason(&rev.subject, rev.version, &c),
                });
            }
        }
        Ok(out)
    }

    /// Stale warnings for the given revisions: claims whose target changed or vanished
    /// since they were snapshotted, and file pages whose file changed.
    pub fn stale_warnings_for_revisions(
        &self,
        revision_ids: &[i64],
    ) -> Result<Vec<crate::StaleWarning>> {
        let mut out = Vec::new();
        for &id in revision_ids {
            for s in crate::audit::audit::revision_staleness(self.store.conn(), id)? {
                out.push(crate::StaleWarning {
                    path: s.subject.clone(),
                    reason: s.describe(),
                });
            }
        }
        Ok(out)
    }
}

/// An open contradiction of memory in words, as the language server says a claim is false
/// ([`crate::audit::live`]): `` memory `a.py` v2 claim `f()` is false: TRUTH (did you mean `g`?)
/// (contradiction #7) ``; the id is what `loci resolve` takes.
pub(crate) fn false_reason(
    subject: &str,
    version: i64,
    c: &loci_store::audit::Contradiction,
) -> String {
    let mut reason = format!(
        "memory `{subject}` v{version} claim `{}` is false: {}",
        c.claim,
        c.truth.as_deref().unwrap_or(&c.kind)
    );
    if let Some(s) = &c.suggestion {
        reason.push_str(&format!(" (did you mean `{s}`?)"));
    }
    reason.push_str(&format!(" (contradiction #{})", c.contradiction_id));
    reason
}

/// Turns `2026-11-01` into the end of that day and validates the moment with SQLite.
fn normalize_moment(conn: &Connection, at: &str) -> Result<String> {
    let at = at.trim();
    let candidate = if at.len() == 10 {
        format!("{at}T23:59:59.999Z")
    } else {
        at.to_string()
    };
    // SQLite's date functions roll an impossible day over (`2026-02-30` is March 2), so a
    // date is valid only when its calendar day survives the round trip.
    let day = loci_store::calendar_day(conn, &candidate)?;
    if day.is_none_or(|d| !candidate.starts_with(&d)) {
        return Err(EngineError::InvalidArgument {
            name: "date".into(),
            message: format!("`{at}` is not a date (use 2026-11-01 or 2026-11-01T12:00:00Z)"),
        });
    }
    Ok(candidate)
}
