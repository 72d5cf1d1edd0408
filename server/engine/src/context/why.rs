//! `why`: the provenance chain behind a piece of memory — which revision says it, who
//! wrote it, in which session, triggered by which event, against which commit.

use loci_store::map;
use loci_store::memory::{self as mem, CommitRow, Event, Revision, Session};
use serde::Serialize;

use crate::memory::claims::ClaimView;
use crate::{EngineError, Envelope, Result, Workspace};

/// The answer to `why`.
#[derive(Clone, Debug, Serialize)]
pub struct Why {
    /// What was asked.
    pub query: String,
    /// How the revision was found: `path`, `symbol` (a claim about a symbol at that line),
    /// `folder` (a claim about a folder holding that path, or that folder), or `text`
    /// (full-text search).
    pub matched_by: String,
    /// The page's subject.
    pub subject: String,
    /// The revision that says it (for text, the first revision that said it; for an
    /// entry of the decision or lesson log, the revision that added that entry).
    pub revision: Revision,
    /// For a decision or lesson matched in its log: that entry's text, as the log holds it
    /// (its author follows the dash).
    pub entry: Option<String>,
    /// The claims of that revision that matched the query.
    pub claims: Vec<ClaimView>,
    /// The session it was written in.
    pub session: Option<Session>,
    /// The chain: the triggering event, then renames of the subject, oldest first.
    pub events: Vec<Event>,
    /// The latest commit touching the subject at or before the revision, if synced.
    pub commit: Option<CommitRow>,
    /// Why there is no `commit`, and what is known instead: git history not read yet
    /// (`loci sync`), the session's HEAD when it began, or no synced commit touching the
    /// subject before the revision. `None` with a commit, or outside a git repository.
    pub commit_note: Option<String>,
    /// Other revisions that also matched (subject and version), best first.
    pub others: Vec<(String, i64)>,
}

/// A revision in brief, for a hover: its text and the code it was written against.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RevisionBrief {
    /// The revision's body, as written.
    pub body: String,
    /// The newest synced commit touching the subject at or before the revision (full
    /// hex id), as `why` finds it.
    pub commit: Option<String>,
    /// With no synced commit: the checkout's HEAD when the revision was written (recorded
    /// in its event), else the HEAD of its session when the session began (full hex id).
    pub head: Option<String>,
}

impl Workspace {
    /// The newest synced commit touching any of `subjects` committed at or before
    /// `created_at` (RFC 3339).
    fn commit_before(&self, subjects: &[String], created_at: &str) -> Result<Option<CommitRow>> {
        let conn = self.store.conn();
        let mut commit: Option<CommitRow> = None;
        for subject in subjects {
            for e in mem::events_for_subject(conn, subject, &["commit"], i64::MAX)? {
                let Some(c) = mem::commit(conn, &e.source_ref)? else {
                    continue;
                };
                let before = c.committed_at.as_str() <= created_at;
                if before
                    && commit
                        .as_ref()
                        .is_none_or(|best| c.committed_at > best.committed_at)
                {
                    commit = Some(c);
                }
            }
        }
        Ok(commit)
    }

    /// The text of revision `revision_id` and the commit it was written against (see
    /// [`RevisionBrief`]); `None` when there is no such revision. What a hover shows
    /// besides author, version and date.
    ///
    /// Errors: reading the store.
    pub fn revision_brief(&self, revision_id: i64) -> Result<Option<RevisionBrief>> {
        let conn = self.store.conn();
        let Some(revision) = mem::revision_by_id(conn, revision_id)? else {
            return Ok(None);
        };
        let commit = self
            .commit_before(
                std::slice::from_ref(&revision.subject),
                &revision.created_at,
            )?
            .map(|c| c.hash);
        let mut head = None;
        if commit.is_none() {
            if let Some(id) = revision.event_id {
                head = mem::event_by_id(conn, id)?
                    .and_then(|e| e.payload)
                    .and_then(|p| serde_json::from_str::<serde_json::Value>(&p).ok())
                    .and_then(|v| v["head"].as_str().map(str::to_string));
            }
            if head.is_none()
                && let Some(id) = revision.session_id
            {
                head = mem::session_by_id(conn, id)?.and_then(|s| s.head);
            }
        }
        Ok(Some(RevisionBrief {
            body: revision.body,
            commit,
            head,
        }))
    }
}

impl Workspace {
    /// What `why` says when no synced commit is found for a revision of `subject`
    /// written in `session` (see [`Why::commit_note`]).
    fn commit_note(&self, subject: &str, session: Option<&Session>) -> Result<Option<String>> {
        if !crate::map::walk::in_git_repository(&self.root) {
            return Ok(None);
        }
        let synced = loci_store::memory::any_commit_event(self.store.conn())?;
        let head = session.and_then(|s| {
            s.head.as_deref().map(|h| {
                let branch = s
                    .branch
                    .as_deref()
                    .map(|b| format!(" on {b}"))
                    .unwrap_or_default();
                format!(
                    "; its session began at HEAD {}{branch}",
                    &h[..h.len().min(12)]
                )
            })
        });
        Ok(Some(if synced {
            format!(
                "no synced commit touches `{subject}` at or before this revision (it was \
                 written against uncommitted code, or history since the last `loci sync`){}",
                head.unwrap_or_default()
            )
        } else {
            format!(
                "git history is not read yet: `loci sync` reads it{}",
                head.unwrap_or_default()
            )
        }))
    }

    /// Finds the best revision for `target` — `PATH[:LINE]` (claims about that file or the
    /// symbol at that line, or the file's own page) or any text (FTS5 over bodies) — and
    /// returns its provenance chain.
    ///
    /// Errors: [`EngineError::InvalidArgument`] (`target`) for an empty target, line 0
    /// (lines are one-based), a line past the end of a mapped file (the message names the
    /// file and its line count; every door calls this, so the CLI exits 2 and the LSP
    /// and MCP answer an error), or a path leaving the workspace;
    /// [`EngineError::NotFound`] when nothing explains it.
    pub fn why(&self, target: &str) -> Result<Envelope<Why>> {
        self.store.read(|| self.why_in_snapshot(target))
    }

    /// The line count of the mapped file `path` when `line` (one-based) is past its end,
    /// as [`crate::map::scan::count_lines`] counts: past the map's count, and past the file's
    /// on disk (it may have grown since the scan; a symbolic link is not followed). `None`
    /// for a line within the file, or a path the map holds no file at (a folder, a page
    /// about a deleted file).
    fn past_the_end(&self, path: &str, line: u32) -> Result<Option<u64>> {
        let mapped = loci_store::map::file_lines(self.store.conn(), path)?;
        let Some(mapped) = mapped else {
            return Ok(None);
        };
        let mut lines = mapped.max(0) as u64;
        if u64::from(line) > lines {
            let abs = self.root.join(path);
            if abs.symlink_metadata().is_ok_and(|m| m.is_file())
                && let Ok(text) = std::fs::read_to_string(&abs)
            {
                lines = lines.max(crate::map::scan::count_lines(&text).max(0) as u64);
            }
        }
        // An empty file still has the line an editor shows its cursor on.
        Ok((u64::from(line) > lines.max(1)).then_some(lines))
    }

    fn why_in_snapshot(&self, target: &str) -> Result<Envelope<Why>> {
        let q = target.trim();
        if q.is_empty() {
            return Err(EngineError::InvalidArgument {
                name: "target".into(),
                message: "must not be empty".into(),
            });
        }
        let conn = self.store.conn();
        let (path, line) = self.why_target(q)?;
        let path = path.as_str();
        let (candidates, is_subject) = self.why_candidates(q, path, line)?;
        let Some((rev_id, matched_by, claims)) = candidates.first().cloned() else {
            // A target written as a path (`nofile.rs:3`) that names no file, folder or
            // page says so: "no memory explains" suggested the file was there.
            let path_like = line.is_some() || path.contains('/');
            if path_like && !is_subject && !loci_store::search::names_anything(conn, path)? {
                return Err(EngineError::NotFound(format!(
                    "no file, folder or memory named `{path}` (`{q}`)"
                )));
            }
            return Err(EngineError::NotFound(format!("no memory explains `{q}`")));
        };
        let revision = mem::revision_by_id(conn, rev_id)?
            .ok_or_else(|| EngineError::Internal(format!("revision {rev_id} vanished")))?;
        // A decision or lesson is a page of its own: what matched is that entry.
        let entry =
            loci_store::logs::log_of_entry(&revision.subject).map(|_| revision.body.clone());
        let session = match revision.session_id {
            Some(id) => mem::session_by_id(conn, id)?,
            None => None,
        };
        let mut events = Vec::new();
        if let Some(id) = revision.event_id {
            events.extend(mem::event_by_id(conn, id)?);
        }
        let (renames, subjects) = self.renames_of(&revision.subject)?;
        events.extend(renames);
        // The code the memory was written against: the newest commit touching the file
        // (under any of its names) committed at or before the revision.
        let commit = self.commit_before(&subjects, &revision.created_at)?;
        let commit_note = match &commit {
            Some(_) => None,
            None => self.commit_note(&revision.subject, session.as_ref())?,
        };
        let mut others = Vec::new();
        // Every revision the answer names is memory it serves: the "also" entries are
        // checked as the matched one is (their stale marks and what lint found false in
        // them are warnings too, never listed without a word).
        let mut served = vec![rev_id];
        for (r, _, _) in candidates.iter().skip(1).take(10) {
            if let Some(rev) = mem::revision_by_id(conn, *r)? {
                others.push((rev.subject, rev.version));
                served.push(*r);
            }
        }
        self.memory_envelope(
            Why {
                query: q.to_string(),
                matched_by,
                subject: revision.subject.clone(),
                revision,
                entry,
                claims,
                session,
                events,
                commit,
                commit_note,
                others,
            },
            &served,
            Vec::new(),
        )
    }

    /// The file (or page, or folder) and one-based line `q` asks about: `path:LINE`, or
    /// `path:LINE:COLUMN` as compilers and editors print it; a path leaving the workspace,
    /// a line that is not a number, 0, or past the end of the file is refused.
    fn why_target(&self, q: &str) -> Result<(String, Option<u32>)> {
        let conn = self.store.conn();
        // `path:LINE`, or `path:LINE:COLUMN` as compilers and editors print it (the column
        // is not needed: memory is found by line).
        let is_number = |t: &str| {
            let digits = t.strip_prefix('-').unwrap_or(t);
            !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
        };
        // A page's own subject is asked as it is: `decision:1` and `lesson:3` are entries,
        // not line 1 of a file `decision` ("no file, folder or memory named `decision`").
        let entry_page =
            loci_store::logs::log_of_entry(q).is_some() && mem::page_by_subject(conn, q)?.is_some();
        let located = match q.rsplit_once(':') {
            _ if entry_page => None,
            Some((rest, col)) if is_number(col) => match rest.rsplit_once(':') {
                Some((p, l)) if is_number(l) => Some((p, l)),
                _ => Some((rest, col)),
            },
            _ => None,
        };
        let (path, line) = match located {
            Some((p, l)) => match l.parse::<u32>() {
                Ok(n) => (p, Some(n)),
                Err(_) => {
                    return Err(EngineError::InvalidArgument {
                        name: "target".into(),
                        message: format!(
                            "`{q}`: `{l}` is not a line number (lines are numbered from 1)"
                        ),
                    });
                }
            },
            None => (q, None),
        };
        // A target that reads as a path leaving the workspace is refused, not searched.
        let contained;
        let path = if path.starts_with('/') || path.starts_with("../") || path == ".." {
            contained = self.contain("target", path)?;
            contained.as_str()
        } else {
            path.trim_start_matches("./").trim_end_matches('/')
        };
        // Lines are one-based, as editors show them, and within the file.
        if line == Some(0) {
            return Err(EngineError::InvalidArgument {
                name: "target".into(),
                message: format!("`{q}`: lines are numbered from 1"),
            });
        }
        if let Some(line) = line
            && let Some(lines) = self.past_the_end(path, line)?
        {
            return Err(EngineError::InvalidArgument {
                name: "target".into(),
                message: format!(
                    "`{q}`: line {line} is past the end of `{path}`, which has {}",
                    crate::words::count(lines, "line")
                ),
            });
        }
        Ok((path.to_string(), line))
    }

    /// The revisions that explain `path` (at `line`), best first, each with what matched
    /// (`symbol`, `path`, `folder`, `text`) and its claims; and whether `path` is a page's
    /// subject or a mapped file.
    #[allow(clippy::type_complexity)]
    fn why_candidates(
        &self,
        q: &str,
        path: &str,
        line: Option<u32>,
    ) -> Result<(Vec<(i64, String, Vec<ClaimView>)>, bool)> {
        let conn = self.store.conn();
        let mut candidates: Vec<(i64, String, Vec<ClaimView>)> = Vec::new(); // (revision, matched_by, claims)
        let is_subject = mem::page_by_subject(conn, path)?.is_some()
            || loci_store::map::file_exists(conn, path)?;
        if is_subject {
            // Symbols at the line (innermost first), then the file itself.
            let mut keys: Vec<String> = Vec::new();
            if let Some(line) = line {
                let zero = line.saturating_sub(1);
                let mut syms: Vec<_> = map::symbols_in_file(conn, path)?
                    .into_iter()
                    .filter(|s| s.line <= zero && zero <= s.end_line)
                    .collect();
                syms.sort_by_key(|s| s.end_line - s.line);
                keys.extend(syms.into_iter().map(|s| s.key));
            }
            for key in &keys {
                push_claims(
                    &mut candidates,
                    mem::live_claims_resolved_to(conn, key)?,
                    "symbol",
                );
            }
            if line.is_none() {
                let all: Vec<String> = map::symbols_in_file(conn, path)?
                    .into_iter()
                    .map(|s| s.key)
                    .collect();
                for key in &all {
                    push_claims(
                        &mut candidates,
                        mem::live_claims_resolved_to(conn, key)?,
                        "symbol",
                    );
                }
            }
            if let Some(page) = mem::page_by_subject(conn, path)?
                && let Some(rev) = page.current_revision_id
            {
                // The file's own page: first for a bare path, after symbol matches for a line.
                let claims = match candidates.iter().position(|c| c.0 == rev) {
                    Some(i) => candidates.remove(i).2,
                    None => Vec::new(),
                };
                let at = if line.is_some() { candidates.len() } else { 0 };
                candidates.insert(at, (rev, "path".into(), claims));
            }
            push_claims(
                &mut candidates,
                mem::live_claims_resolved_to(conn, path)?,
                "path",
            );
        }
        // Then the memory about the folders holding it, nearest first (a decision whose
        // subject is `logging` is about `logging/handlers.py`), or about the folder asked.
        let is_folder = !is_subject
            && line.is_none()
            && !path.is_empty()
            && loci_store::map::folder_has_files(conn, path)?;
        let mut folder = if is_subject {
            path.rsplit_once('/').map(|(d, _)| d)
        } else if is_folder {
            Some(path)
        } else {
            None
        };
        while let Some(dir) = folder {
            push_claims(
                &mut candidates,
                mem::live_claims_resolved_to(conn, dir)?,
                "folder",
            );
            folder = dir.rsplit_once('/').map(|(d, _)| d);
        }
        // A symbol as loci prints it (`email/parser.py#Parser.parse@method`) or a qualified
        // name (`Parser.parse`, `Parser::parse()`): the memory whose claims resolved to it.
        let symbol = q.trim_end_matches("()").replace("::", ".");
        if candidates.is_empty() && !is_subject && (symbol.contains('#') || symbol.contains('.')) {
            // The definitions a claim naming it would resolve to (`RegexBuilder.new` is
            // `string.RegexBuilder.new` and `bytes.RegexBuilder.new`).
            for s in crate::memory::claims::symbol_candidates(conn, &symbol)?
                .into_iter()
                .take(20)
            {
                push_claims(
                    &mut candidates,
                    mem::live_claims_resolved_to(conn, &s.key)?,
                    "symbol",
                );
            }
        }
        if candidates.is_empty()
            && let Some(fts) = super::search::fts_query(q)
        {
            // The first revision of each page that said it is the one that introduced it.
            let hits = mem::search_revisions(conn, &fts, false, 200)?;
            let mut best: Vec<(i64, i64)> = Vec::new(); // (page, revision)
            for h in &hits {
                let Some(rev) = mem::revision_by_id(conn, h.revision_id)? else {
                    continue;
                };
                match best.iter_mut().find(|(p, _)| *p == rev.page_id) {
                    Some(entry) => entry.1 = entry.1.min(rev.revision_id),
                    None => best.push((rev.page_id, rev.revision_id)),
                }
            }
            candidates.extend(
                best.into_iter()
                    .map(|(_, r)| (r, "text".to_string(), Vec::new())),
            );
        }
        Ok((candidates, is_subject))
    }

    /// The events renaming `subject` (recorded by sync, oldest first, the whole chain) and
    /// every name it had, `subject` first.
    fn renames_of(&self, subject: &str) -> Result<(Vec<Event>, Vec<String>)> {
        let conn = self.store.conn();
        // The page's subjects over time: renames recorded by sync name the old paths. Every
        // rename of the chain is shown (only the last one was), oldest first.
        let mut renames = Vec::new();
        let mut subjects = vec![subject.to_string()];
        let mut frontier = subject.to_string();
        for _ in 0..32 {
            let here = mem::events_for_subject(conn, &frontier, &["rename"], i64::MAX)?;
            let from = here.iter().rev().find_map(|e| {
                let v: serde_json::Value = serde_json::from_str(e.payload.as_deref()?).ok()?;
                v["from"].as_str().map(str::to_string)
            });
            renames.extend(here);
            match from {
                Some(f) if !subjects.contains(&f) => {
                    subjects.push(f.clone());
                    frontier = f;
                }
                _ => break,
            }
        }
        renames.sort_by_key(|e| e.event_id);
        renames.dedup_by_key(|e| e.event_id);
        Ok((renames, subjects))
    }
}

fn push_claims(
    candidates: &mut Vec<(i64, String, Vec<ClaimView>)>,
    claims: Vec<mem::ClaimRow>,
    how: &str,
) {
    for c in claims.iter().rev() {
        let view = ClaimView::from(c);
        match candidates.iter_mut().find(|x| x.0 == c.revision_id) {
            Some(entry) => {
                // A claim written twice in the body is one claim here (its first mention).
                if !entry
                    .2
                    .iter()
                    .any(|v| v.kind == view.kind && v.target == view.target)
                {
                    entry.2.push(view)
                }
            }
            None => candidates.push((c.revision_id, how.to_string(), vec![view])),
        }
    }
}
