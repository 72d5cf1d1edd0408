//! `sync`: git history (or, without git, snapshots of the map) into the event log, so
//! `why` can name the commit behind a memory and renamed files keep their pages.
//!
//! With git: commits since the last synced one (first run: the newest
//! `[sync] max_commits`, default 200) are recorded oldest first, one `commit` event per touched file
//! (idempotent on (hash, path)), and a rename moves the page of the old path to the new
//! one (a `rename` event records it). Without git: the drift the scans observed since the
//! last snapshot becomes `snapshot` events under a monotonic ref `snapshot:N`, and renames
//! the scans detected move pages the same way. Unborn and detached HEADs and shallow
//! clones answer with a note, not an error.

use loci_store::audit as au;
use loci_store::memory::{self as mem, CommitRow};
use loci_store::set_meta;
use serde::Serialize;

use super::git::{self, ChangeKind, RepoState};
use crate::{EngineError, Envelope, Result, Workspace};

/// What a sync did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct SyncReport {
    /// `git` or `snapshot`.
    pub mode: &'static str,
    /// The repository state (`branch main at abc…`, `detached at …`, `no commits yet`,
    /// `not a git repository`).
    pub state: String,
    /// Commits recorded (new or already known), oldest first: short hash and summary.
    pub commits: Vec<(String, String)>,
    /// Events added (repeats of known events are not counted).
    pub events_added: u64,
    /// Pages moved by renames: (from, to); those the refresh before it moved first.
    pub pages_moved: Vec<(String, String)>,
    /// Anything the caller should know (history rewritten, shallow clone, truncation).
    pub notes: Vec<String>,
    /// The pages behind the code once these commits are recorded: the synthesis plan's
    /// stale pages and roll-ups ([`Workspace::pages_behind`]), what `loci synthesize
    /// --pending` would write.
    pub pages_behind: Vec<crate::memory::synthesis::PlanItem>,
}

/// The `meta` key holding the commit `HEAD` was at when the last sync ran (full hex; empty
/// when the workspace has no commits or no git): a language server that sees `HEAD` move
/// to this commit knows that another process (a git hook) synced it already.
pub const SYNCED_HEAD_META: &str = "synced_head";

/// Where a sync is, for a progress report ([`Workspace::sync_with`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncStep {
    /// Refreshing the map (an incremental scan).
    Scanning,
    /// Recording `commits` commits into the event log.
    Recording {
        /// Commits read since the last sync.
        commits: usize,
    },
    /// Bringing the stale marks up to date (an incremental lint) and listing the pages
    /// behind the code.
    Checking,
}

impl Workspace {
    /// Refreshes the map (an incremental scan), then records history since the last
    /// sync, reading at most `limit` commits (default `[sync] max_commits`); see the
    /// module docs.
    pub fn sync(&mut self, limit: Option<usize>) -> Result<Envelope<SyncReport>> {
        self.sync_with(limit, &|_| {})
    }

    /// [`Workspace::sync`], saying at each step where it is. At the end it stores the
    /// commit `HEAD` was at ([`SYNCED_HEAD_META`]) and the count of pages behind the code
    /// (`synthesis::PAGES_BEHIND_META`).
    pub fn sync_with(
        &mut self,
        limit: Option<usize>,
        progress: &dyn Fn(SyncStep),
    ) -> Result<Envelope<SyncReport>> {
        // The map first (an incremental scan): page moves and the claims' stale checks
        // must see the tree the commits produced, not the one of the last scan.
        progress(SyncStep::Scanning);
        let scanned = self.scan(&|_| {})?.result;
        let limit = limit.unwrap_or(self.config.sync.max_commits).max(1);
        let state =
            git::repo_state(&self.root).map_err(|e| EngineError::Internal(e.to_string()))?;
        let head = match &state {
            RepoState::Branch { head, .. } | RepoState::Detached { head } => head.clone(),
            RepoState::NotARepository | RepoState::Unborn { .. } => String::new(),
        };
        let mut report = match state {
            RepoState::NotARepository => self.sync_snapshots()?,
            RepoState::Unborn { branch } => SyncReport {
                mode: "git",
                state: format!(
                    "no commits yet{}",
                    branch.map(|b| format!(" on {b}")).unwrap_or_default()
                ),
                ..Default::default()
            },
            RepoState::Branch { ref name, ref head } => {
                self.sync_git(format!("branch {name} at {}", short(head)), limit, progress)?
            }
            RepoState::Detached { ref head } => {
                self.sync_git(format!("detached HEAD at {}", short(head)), limit, progress)?
            }
        };
        // Pages the refresh moved (renames it saw), before those history moved.
        let mut moved: Vec<(String, String)> = scanned
            .pages_moved
            .into_iter()
            .map(|r| (r.from, r.to))
            .collect();
        moved.append(&mut report.pages_moved);
        report.pages_moved = moved;
        // What the commits put behind the code. Staleness is the lint's marks, brought up
        // to date with the map refreshed above (a lint costs what changed since the last).
        progress(SyncStep::Checking);
        self.lint()?;
        report.pages_behind = self.pages_behind()?;
        self.record_pages_behind(report.pages_behind.len() as u64)?;
        self.store
            .write(|tx| set_meta(tx, SYNCED_HEAD_META, &head))?;
        self.envelope(report, Vec::new())
    }

    fn sync_git(
        &mut self,
        state: String,
        limit: usize,
        progress: &dyn Fn(SyncStep),
    ) -> Result<SyncReport> {
        let since = self.store.meta("last_synced_commit")?;
        let history = git::history(&self.root, since.as_deref(), limit)
            .map_err(|e| EngineError::Internal(e.to_string()))?;
        progress(SyncStep::Recording {
            commits: history.commits.len(),
        });
        let mut report = SyncReport {
            mode: "git",
            state,
            ..Default::default()
        };
        if history.since_missing {
            report.notes.push(format!("the last synced commit {} is gone (history rewritten); re-read the last {limit} commits", since.as_deref().map(short).unwrap_or("")));
        }
        if history.shallow {
            report
                .notes
                .push("shallow clone: history stops at the shallow boundary".into());
        }
        if history.truncated {
            report
                .notes
                .push(format!("only the newest {limit} commits were read"));
        }
        for commit in &history.commits {
            let row = CommitRow {
                hash: commit.hash.clone(),
                message: commit.message.clone(),
                author: commit.author.clone(),
                committed_at: commit.time.clone(),
                files: commit.changes.iter().map(|c| c.path.clone()).collect(),
            };
            let (added, moved) = self.store.write(|tx| {
                mem::put_commit(tx, &row)?;
                let mut added = 0u64;
                let mut moved = Vec::new();
                for change in &commit.changes {
                    let (kind, from) = match &change.kind {
                        ChangeKind::Added => ("added", None),
                        ChangeKind::Modified => ("modified", None),
                        ChangeKind::Deleted => ("deleted", None),
                        ChangeKind::Renamed { from } => ("renamed", Some(from.as_str())),
                    };
                    let payload = serde_json::json!({"change": kind, "from": from, "summary": commit.summary}).to_string();
                    let (_, inserted) = mem::insert_event(tx, "commit", &commit.hash, &change.path, Some(&payload), None)?;
                    added += inserted as u64;
                    if let Some(from) = from
                        && move_page(tx, from, &change.path, &format!("rename:{}", commit.hash))? {
                            moved.push((from.to_string(), change.path.clone()));
                            added += 1;
                        }
                }
                set_meta(tx, "last_synced_commit", &commit.hash)?;
                Ok((added, moved))
            })?;
            report.events_added += added;
            report.pages_moved.extend(moved);
            report
                .commits
                .push((short(&commit.hash).to_string(), commit.summary.clone()));
        }
        Ok(report)
    }

    fn sync_snapshots(&mut self) -> Result<SyncReport> {
        let mut report = SyncReport {
            mode: "snapshot",
            state: "not a git repository".into(),
            ..Default::default()
        };
        let since: i64 = self
            .store
            .meta("last_snapshot_scan")?
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        let drift = au::drift_since(self.store.conn(), since)?;
        let Some(last) = drift.last().map(|d| d.scan_id) else {
            report
                .notes
                .push("nothing changed since the last snapshot".into());
            return Ok(report);
        };
        let seq: i64 = self
            .store
            .meta("snapshot_seq")?
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
            + 1;
        let source_ref = format!("snapshot:{seq}");
        let (added, moved) = self.store.write(|tx| {
            let mut added = 0u64;
            let mut moved = Vec::new();
            for d in &drift {
                let payload =
                    serde_json::json!({"change": d.kind, "detail": d.detail, "scan": d.scan_id})
                        .to_string();
                let (_, inserted) =
                    mem::insert_event(tx, "snapshot", &source_ref, &d.path, Some(&payload), None)?;
                added += inserted as u64;
                if d.kind == "rename"
                    && let Some(from) = &d.detail
                    && move_page(tx, from, &d.path, &format!("rename:{source_ref}"))?
                {
                    moved.push((from.clone(), d.path.clone()));
                    added += 1;
                }
            }
            set_meta(tx, "snapshot_seq", &seq.to_string())?;
            set_meta(tx, "last_snapshot_scan", &last.to_string())?;
            Ok((added, moved))
        })?;
        report.events_added = added;
        report.pages_moved = moved;
        report
            .commits
            .push((source_ref, format!("{} file changes", drift.len())));
        Ok(report)
    }
}

/// Follows the rename of `from` to `to`: claims resolved to the old path (or a symbol in
/// it) are re-pointed to the new one, so staleness follows the file instead of reporting
/// it deleted, whether or not the path had a page; and the page of `from` moves to `to`
/// (when `from` has a page and `to` has none), with a `rename` event. Returns whether the
/// page moved. Used by `sync` and by a scan that saw the rename (see
/// [`super::scan::ScanReport::pages_moved`]).
pub(crate) fn move_page(
    tx: &loci_store::rusqlite::Transaction<'_>,
    from: &str,
    to: &str,
    source_ref: &str,
) -> loci_store::Result<bool> {
    mem::repoint_claims(tx, from, to)?;
    // A doc's findings are about the file: they follow it.
    au::move_findings(tx, "doc", from, to)?;
    let Some(page) = mem::page_by_subject(tx, from)? else {
        return Ok(false);
    };
    if mem::page_by_subject(tx, to)?.is_some() {
        return Ok(false);
    }
    mem::move_page(tx, page.page_id, to)?;
    au::move_findings(tx, "page", from, to)?;
    let payload = serde_json::json!({"from": from, "to": to}).to_string();
    mem::insert_event(tx, "rename", source_ref, to, Some(&payload), None)?;
    Ok(true)
}

fn short(hash: &str) -> &str {
    &hash[..hash.len().min(12)]
}
