//! `lint`, `check`, `resolve` and `drift`: memory and the repository's own docs checked
//! against the map and the manifests (design.md "Audit").
//!
//! Static checks, deterministic and free:
//! - `missing_path` (high): a path claim that names nothing in the map or on disk, with
//!   a suggestion (where git says it was renamed to, or the only file of that name) —
//!   when it is evidently a path here: it once resolved, has a file extension, or starts
//!   with a directory that exists;
//! - `missing_symbol` (medium): a symbol claim that resolved when it was written and no
//!   longer does, or one that never resolved but is a near miss of a real name (for
//!   `Type.member`, of a member of what `Type` names) and not a name the page's own code
//!   refers to, or a call in bare form (`_checknetloc()`) that a page about code of the
//!   map names, that the map defines nowhere and that code never makes, unless its clause
//!   says it is absent ([`Ctx::unknown_call`]) — precision over completeness: a function
//!   of the language (`print()`), a name the code there calls, or a settings key
//!   (`scan.max_files`) is not reported. Its suggestion is a renamed definition found by the claim's
//!   snapshot, by body, then by signature ([`super::renamed`]), else the most similar
//!   name; the truth says which evidence it rests on (`` `_validate_netloc` in
//!   urllib/parse.py has the same body ``, `` `total` has a similar name ``);
//! - `version_mismatch` (medium): `name@1.2.3` where every manifest declaring `name`
//!   disagrees.
//!
//! A finding's identity is origin, subject, kind and target (never a line). Identical
//! open findings are one row; a finding that stops failing is auto-resolved and may
//! recur (a regression); a human dismissal suppresses it for good. Lines in docs that
//! contain `loci: ignore` (e.g. in an HTML comment) are skipped, and a doc containing
//! `loci: ignore-file` is skipped entirely.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use loci_core::claims::{ClaimKind, extract_claims};
use loci_store::Context;
use loci_store::audit::{self as au, NewFinding, Recorded, StaleMark};
use loci_store::memory as mem;
use serde::Serialize;

use super::audit::Staleness;
use super::renamed::{Snapshot, renamed_definition};
use crate::map::manifests;
use crate::memory::memory::{SymbolResolution, resolve_path, resolve_symbol};
use crate::{EngineError, Envelope, Result, Workspace};

/// The result of a lint run.
#[derive(Clone, Debug, Serialize)]
pub struct LintReport {
    /// Open contradictions after this run, by subject and line.
    pub contradictions: Vec<au::Contradiction>,
    /// Stale marks of live memory.
    pub stale: Vec<Staleness>,
    /// Pages with at least one stale mark.
    pub stale_pages: Vec<String>,
    /// Findings opened by this run.
    pub opened: u64,
    /// Findings that recurred after an auto-resolve.
    pub recurred: u64,
    /// Findings auto-resolved by this run.
    pub resolved: u64,
    /// Findings suppressed by a human dismissal.
    pub suppressed: u64,
    /// Claims checked (memory and docs).
    pub claims_checked: u64,
    /// Which memory was checked: `all`, or `changed` (the revisions written since the last
    /// lint and those naming what the map changed since; the others' verdicts cannot have
    /// moved).
    pub memory_checked: &'static str,
    /// Documents checked.
    pub docs_checked: Vec<String>,
}

/// The CI gate's verdict.
#[derive(Clone, Debug, Serialize)]
pub struct CheckReport {
    /// The lint run behind it.
    pub lint: LintReport,
    /// Whether the thresholds were kept.
    pub passed: bool,
    /// Threshold on open contradictions.
    pub max_contradictions: u64,
    /// Threshold on stale pages.
    pub max_stale_pages: u64,
}

/// Drift since a scan revision, and what it did to the knowledge.
#[derive(Clone, Debug, Serialize)]
pub struct DriftReport {
    /// Entries with a scan revision after this one.
    pub since: i64,
    /// File changes, oldest first.
    pub files: Vec<au::DriftRow>,
    /// Memory that became stale or false (or stopped being so), oldest first.
    pub knowledge: Vec<au::KnowledgeChange>,
}

struct Ctx<'a> {
    ws: &'a Workspace,
    /// What the manifests declare, read when a version claim is first checked: reading
    /// every manifest of a large repository for a lint without version claims had been
    /// work in proportion to the repository at every rescan.
    declared: Option<Vec<manifests::Declared>>,
    /// [`Ctx::closest_name`]'s answers in this run, by name.
    closest: HashMap<String, Option<(String, f64)>>,
    /// [`Ctx::members_of`]'s answers in this run, by scope.
    members: HashMap<String, Vec<String>>,
    file_names: Option<HashMap<String, Vec<String>>>,
    /// Revision bodies read by [`Ctx::unknown_call`] in this run, by revision id.
    bodies: HashMap<i64, String>,
    /// [`Ctx::scope`]'s answers in this run, by revision id.
    scopes: HashMap<i64, Vec<String>>,
}

impl Workspace {
    /// Checks every live memory claim and the docs' claims, updates contradictions and
    /// stale marks, and records what changed in the knowledge at the current scan revision.
    pub fn lint(&mut self) -> Result<Envelope<LintReport>> {
        self.refuse_unscanned_map()?;
        let lock = self.store.lock("a lint")?;
        let report = self.run_lint()?;
        drop(lock);
        // What answers say about pages behind the code is the count of the last lint.
        let behind = self.count_pages_behind()?;
        self.record_pages_behind(behind)?;
        let mut env = self.envelope(report, Vec::new())?;
        env.stale_warnings = env
            .result
            .stale
            .iter()
            .map(|s| crate::StaleWarning {
                path: s.subject.clone(),
                reason: s.describe(),
            })
            .collect();
        Ok(env)
    }

    /// Lints and records the findings. The caller holds the store lock (concurrent lints
    /// would each record the same changes from the same old state).
    ///
    /// Reads without the memory map ([`loci_store::Store::set_memory_map`]): a lint reads
    /// a large share of the map's pages (the docs' paths, the names claims are compared
    /// with), and through the map each page it touched counted in its resident set: 560
    /// MiB for `loci lint` on a 50,000-file map whose no-op rescan peaks at 88 MiB (issue
    /// 37). The page cache (16 MiB) bounds it instead.
    pub(crate) fn run_lint(&mut self) -> Result<LintReport> {
        self.store.set_memory_map(false)?;
        let report = self.lint_and_record();
        self.store.set_memory_map(true)?;
        report
    }

    /// [`Workspace::run_lint`]'s work.
    fn lint_and_record(&mut self) -> Result<LintReport> {
        let conn = self.store.conn();
        let scan_id: i64 = conn
            .query_row(
                "SELECT ifnull(max(scan_id), 0) FROM scans WHERE status = 'finished'",
                [],
                |r| r.get(0),
            )
            .ctx(|| "reading the scan revision".into())?;
        // The markdown files only: lint reads docs, and every path of a large map is
        // work in proportion to the repository at every rescan.
        let paths: Vec<String> = {
            let mut stmt = conn
                .prepare(
                    "SELECT path FROM files WHERE path LIKE '%.md' OR path LIKE '%.markdown'
                     ORDER BY path",
                )
                .ctx(|| "reading paths".into())?;
            stmt.query_map([], |r| r.get(0))
                .ctx(|| "reading paths".into())?
                .collect::<std::result::Result<_, _>>()
                .ctx(|| "reading paths".into())?
        };
        let mut ctx = Ctx {
            ws: self,
            declared: None,
            closest: HashMap::new(),
            members: HashMap::new(),
            file_names: None,
            bodies: HashMap::new(),
            scopes: HashMap::new(),
        };
        let mut findings: Vec<NewFinding> = Vec::new();
        let mut claims_checked = 0u64;

        // Memory: the claims of every current revision, or of those whose verdict what
        // changed since the last lint can move ([`MemoryToCheck`]).
        let last_revision: i64 = conn
            .query_row(
                "SELECT ifnull(max(revision_id), 0) FROM revisions",
                [],
                |r| r.get(0),
            )
            .ctx(|| "reading the last revision".into())?;
        let to_check = MemoryToCheck::read(conn)?;
        let revisions: Vec<(i64, String)> = match &to_check {
            MemoryToCheck::Everything => mem::pages(conn)?
                .into_iter()
                .filter_map(|p| Some((p.current_revision_id?, p.subject)))
                .collect(),
            MemoryToCheck::Changed {
                changes,
                after,
                names,
                subjects,
            } => {
                let mut all_names = changes.names();
                all_names.extend(names.iter().map(String::as_str));
                let mut all_subjects = changes.subjects();
                all_subjects.extend(subjects.iter().map(String::as_str));
                au::revisions_to_check(conn, &all_names, &all_subjects, *after, changes.manifests)?
            }
        };
        let ids: Vec<i64> = revisions.iter().map(|(id, _)| *id).collect();
        let mut claims_of = mem::claims_of_revisions(conn, &ids)?;
        for (id, subject) in &revisions {
            let claims = claims_of.remove(id).unwrap_or_default();
            for claim in &claims {
                claims_checked += 1;
                findings.extend(ctx.check(&page_check(subject, claim, &claims))?.0);
            }
        }

        // The repository's own documentation.
        let mut doc_resolved: Vec<(String, &'static str, String, String)> = Vec::new();
        let globs = build_globs(&self.config.lint.docs)?;
        let mut docs_checked = Vec::new();
        for path in paths.iter().filter(|p| {
            (p.ends_with(".md") || p.ends_with(".markdown")) && globs.is_match(p.as_str())
        }) {
            let Some(text) = self.read_served(path) else {
                continue;
            };
            if text
                .lines()
                .any(|l| l.trim() == "<!-- loci: ignore-file -->")
            {
                continue;
            }
            docs_checked.push(path.clone());
            let lines: Vec<&str> = text.split('\n').collect();
            let doc_dir = path.rsplit_once('/').map(|(d, _)| d).unwrap_or("");
            for c in extract_claims(&text) {
                if lines
                    .get(c.line as usize)
                    .is_some_and(|l| l.contains("loci: ignore"))
                {
                    continue;
                }
                claims_checked += 1;
                let was_resolved =
                    au::doc_claim_resolved_before(conn, path, c.kind.as_str(), &c.target)?;
                let check = Check {
                    origin: "doc",
                    subject: path,
                    doc_dir: Some(doc_dir),
                    kind: Some(c.kind),
                    text: &c.text,
                    target: &c.target,
                    version: c.version.as_deref(),
                    was_resolved,
                    line: c.line,
                    column: c.column,
                    end_column: c.column + (c.end - c.start),
                    revision_id: None,
                    snapshots: Vec::new(),
                    snapshot_at: None,
                    page_claims: &[],
                    span: (0, 0),
                };
                let (finding, resolved) = ctx.check(&check)?;
                findings.extend(finding);
                if let (Some(resolved), false) = (resolved, was_resolved) {
                    doc_resolved.push((path.clone(), c.kind.as_str(), c.target.clone(), resolved));
                }
            }
        }
        drop(ctx);

        // Staleness of every current revision: the marks the last scan (or the write of a
        // revision since) stored for the map as it is, the others made now.
        let stale = super::audit::current_staleness(conn)?;
        let marks: Vec<StaleMark> = stale
            .iter()
            .map(|s| StaleMark {
                mark_key: format!(
                    "{}:{}",
                    s.revision_id,
                    s.claim_id
                        .map(|c| c.to_string())
                        .unwrap_or_else(|| "page".into())
                ),
                subject: s.subject.clone(),
                revision_id: s.revision_id,
                claim_id: s.claim_id,
                reason: serde_json::to_string(&s.reason).unwrap_or_default(),
            })
            .collect();
        let old_marks = au::stale_marks(conn)?;

        let stale_ref = &stale;
        let scope = match &to_check {
            MemoryToCheck::Everything => Scope::Everything,
            MemoryToCheck::Changed { .. } => Scope::Pages {
                docs: true,
                subjects: revisions.iter().map(|(_, s)| s.as_str()).collect(),
            },
        };
        // (opened, recurred, resolved, suppressed)
        let counts = self.store.write(|tx| {
            let c = record_findings(tx, &findings, scan_id, &scope)?;
            au::clear_map_changes(tx, false)?;
            loci_store::set_meta(tx, LINTED_REVISION, &last_revision.to_string())?;
            let old: BTreeMap<&str, &StaleMark> =
                old_marks.iter().map(|m| (m.mark_key.as_str(), m)).collect();
            let new: BTreeMap<&str, &StaleMark> =
                marks.iter().map(|m| (m.mark_key.as_str(), m)).collect();
            for (key, m) in &new {
                if !old.contains_key(key) {
                    let s = stale_ref
                        .iter()
                        .find(|s| s.revision_id == m.revision_id && s.claim_id == m.claim_id);
                    au::insert_knowledge_change(
                        tx,
                        scan_id,
                        "became_stale",
                        &m.subject,
                        &s.map(|s| s.describe()).unwrap_or_default(),
                    )?;
                }
            }
            for (key, m) in &old {
                if !new.contains_key(key) {
                    au::insert_knowledge_change(
                        tx,
                        scan_id,
                        "no_longer_stale",
                        &m.subject,
                        &current_again(tx, m)?,
                    )?;
                }
            }
            au::replace_stale_marks(tx, &marks, scan_id)?;
            for (doc, kind, target, resolved) in &doc_resolved {
                au::remember_doc_claim(tx, doc, kind, target, resolved, scan_id)?;
            }
            Ok(c)
        })?;
        let mut stale_pages: Vec<String> = stale.iter().map(|s| s.subject.clone()).collect();
        stale_pages.sort();
        stale_pages.dedup();
        Ok(LintReport {
            contradictions: au::contradictions(self.store.conn(), Some("open"))?,
            stale,
            stale_pages,
            opened: counts.0,
            recurred: counts.1,
            resolved: counts.2,
            suppressed: counts.3,
            claims_checked,
            memory_checked: match to_check {
                MemoryToCheck::Everything => "all",
                MemoryToCheck::Changed { .. } => "changed",
            },
            docs_checked,
        })
    }

    /// Lints, then compares with the `[check]` thresholds.
    ///
    /// Errors with [`EngineError::NotFound`] when no scan has finished on this database:
    /// a gate over an empty map (a fresh clone, a mistyped `--db`) would pass vacuously.
    pub fn check(&mut self) -> Result<Envelope<CheckReport>> {
        self.refuse_unscanned_map()?;
        let lock = self.store.lock("a check")?;
        let lint = self.run_lint()?;
        drop(lock);
        let max_contradictions = self.config.check.max_contradictions;
        let max_stale_pages = self.config.check.max_stale_pages;
        let passed = lint.contradictions.len() as u64 <= max_contradictions
            && lint.stale_pages.len() as u64 <= max_stale_pages;
        self.envelope(
            CheckReport {
                lint,
                passed,
                max_contradictions,
                max_stale_pages,
            },
            Vec::new(),
        )
    }

    /// Whether a scan has finished on this database: the map is whole, if perhaps stale.
    pub fn map_is_built(&self) -> Result<bool> {
        Ok(self
            .store
            .conn()
            .query_row(
                "SELECT EXISTS(SELECT 1 FROM scans WHERE status = 'finished')",
                [],
                |r| r.get(0),
            )
            .map_err(|e| loci_store::StoreError::sqlite("reading the last scan", e))?)
    }

    /// [`EngineError::Unscanned`] when no scan has finished on this database: checked
    /// against an empty map, every claim would be a contradiction (`lint` had reported
    /// nothing and exited 0 in an unscanned folder, and would have flagged every path a
    /// page names).
    fn refuse_unscanned_map(&self) -> Result<()> {
        if self.map_is_built()? {
            return Ok(());
        }
        Err(EngineError::Unscanned(
            "the map is empty: no scan has finished on this database, so there is nothing \
             to check memory against; run `loci scan` first"
                .into(),
        ))
    }

    /// A human dismissal: the contradiction is closed and that claim is never reported again.
    pub fn resolve(
        &mut self,
        id: i64,
        notes: Option<&str>,
        session: Option<i64>,
    ) -> Result<Envelope<au::Contradiction>> {
        if let Some(notes) = notes {
            self.accept_text("notes", notes)?;
        }
        let Some(c) = au::contradiction_by_id(self.store.conn(), id)? else {
            return Err(EngineError::NotFound(format!(
                "no contradiction {id}; `loci lint` lists them"
            )));
        };
        // A finding the code no longer contradicts was closed by lint: dismissing it would
        // record a human decision about nothing (and suppress it if it ever recurred), so
        // it is refused and nothing is written, as for one dismissed already.
        if c.status == "resolved" {
            return Err(EngineError::InvalidArgument {
                name: "id".into(),
                message: format!(
                    "contradiction {id} ({} `{}` in {}) was resolved already by lint: the \
                     code no longer contradicts it; nothing changed (lint reports it again \
                     if it recurs)",
                    c.kind, c.claim, c.subject
                ),
            });
        }
        if c.status == "dismissed" {
            return Err(EngineError::InvalidArgument {
                name: "id".into(),
                message: format!(
                    "contradiction {id} ({} `{}` in {}) was dismissed already{}; nothing changed",
                    c.kind,
                    c.claim,
                    c.subject,
                    c.resolved_at
                        .as_deref()
                        .map(|at| format!(" at {at}"))
                        .unwrap_or_default()
                ),
            });
        }
        let share = self.team_share();
        let author = crate::memory::memory::default_author_in(Some(self.root.as_path()));
        self.store.write(|tx| {
            au::close(tx, id, true, notes, None)?;
            let payload = serde_json::json!({"contradiction_id": id, "notes": notes}).to_string();
            mem::insert_event(
                tx,
                "resolve",
                &format!("resolve:{id}"),
                &c.subject,
                Some(&payload),
                session,
            )?;
            // Team memory: the dismissal is shared under the finding's key, the same in
            // every checkout, so the same finding is silenced there (crate::memory::team::LocalShare).
            if let Some(share) = &share
                && let Some(closed) = au::contradiction_by_id(tx, id)?
            {
                let shared = crate::memory::portability::ExportedDismissal::from(closed);
                share.queue(tx, "dismissal", "resolve", &c.subject, &author, &shared)?;
            }
            Ok(())
        })?;
        self.team_push_shared();
        let c = au::contradiction_by_id(self.store.conn(), id)?
            .ok_or_else(|| EngineError::Internal("contradiction vanished".into()))?;
        self.envelope(c, Vec::new())
    }

    /// The drift ledger after scan revision `since` (default: the one before the last),
    /// with the knowledge changes of those scans.
    ///
    /// Errors: [`EngineError::InvalidArgument`] (`since`) for a negative revision or one
    /// past the last finished scan, naming the last one (an empty report there would read
    /// as "nothing changed").
    pub fn drift(&self, since: Option<i64>) -> Result<Envelope<DriftReport>> {
        let conn = self.store.conn();
        let last: i64 = conn
            .query_row(
                "SELECT ifnull(max(scan_id), 0) FROM scans WHERE status = 'finished'",
                [],
                |r| r.get(0),
            )
            .ctx(|| "reading the scan revision".into())?;
        let since = match since {
            Some(s) if s < 0 || s > last => {
                return Err(EngineError::InvalidArgument {
                    name: "since".into(),
                    message: match last {
                        0 => format!("there is no scan {s}: no scan has finished yet"),
                        _ => format!(
                            "there is no scan {s}: scans are numbered 0 (before the first) to {last} (the last)"
                        ),
                    },
                });
            }
            Some(s) => s,
            None => (last - 1).max(0),
        };
        let files = au::drift_since(conn, since)?;
        let knowledge = au::knowledge_changes_since(conn, since)?;
        self.envelope(
            DriftReport {
                since,
                files,
                knowledge,
            },
            Vec::new(),
        )
    }
}

/// The code a memory page is about, as paths of the map: its subject when that is a file
/// or folder of the map, else (a decision, a lesson, a topic) the paths of the map its
/// claims name (an entry written with a subject says "(about `PATH`)"). Empty for a page
/// about nothing in the map.
fn page_scope(
    conn: &loci_store::rusqlite::Connection,
    subject: &str,
    claims: &[mem::ClaimRow],
) -> Result<Vec<String>> {
    if resolve_path(conn, subject)?.is_some() {
        return Ok(vec![subject.to_string()]);
    }
    let mut scope = Vec::new();
    for c in claims.iter().filter(|c| c.kind == ClaimKind::Path.as_str()) {
        if !scope.contains(&c.target) && resolve_path(conn, &c.target)?.is_some() {
            scope.push(c.target.clone());
        }
    }
    Ok(scope)
}

/// The check of a memory page's claim, as lint makes it; `claims` are its revision's.
fn page_check<'a>(
    subject: &'a str,
    claim: &'a mem::ClaimRow,
    claims: &'a [mem::ClaimRow],
) -> Check<'a> {
    Check {
        origin: "page",
        subject,
        doc_dir: None,
        kind: ClaimKind::parse(&claim.kind),
        text: &claim.text,
        target: &claim.target,
        version: claim.version.as_deref(),
        // It named something when it was written: one target, a set of definitions, or
        // (imported) a target where it was exported from.
        was_resolved: claim.resolved.is_some()
            || !claim.definitions.is_empty()
            || claim.resolved_elsewhere,
        line: claim.line,
        column: 0,
        end_column: 0,
        revision_id: Some(claim.revision_id),
        snapshots: claim_snapshots(claim),
        snapshot_at: Some(&claim.snapshot_at),
        page_claims: claims,
        span: (claim.start_byte, claim.end_byte),
    }
}

/// What a symbol claim named when it was written: each definition of a claim that named
/// several, else its one resolved target (empty for other claims, and for one that never
/// resolved).
fn claim_snapshots(claim: &mem::ClaimRow) -> Vec<Snapshot<'_>> {
    if claim.kind != ClaimKind::Symbol.as_str() {
        return Vec::new();
    }
    if !claim.definitions.is_empty() {
        return claim
            .definitions
            .iter()
            .map(|d| Snapshot {
                key: &d.key,
                body: &d.body,
                signature: Some(&d.signature),
            })
            .collect();
    }
    match (&claim.resolved, &claim.snapshot) {
        (Some(key), Some(body)) => vec![Snapshot {
            key,
            body,
            signature: claim.signature_snapshot.as_deref(),
        }],
        _ => Vec::new(),
    }
}

/// `meta` key: the last revision id when lint last ran. Revisions after it are checked by
/// the next lint whatever the map did.
const LINTED_REVISION: &str = "linted_revision";

/// The memory a lint checks. After a lint, only the revisions written since and those
/// that what the map changed since can concern ([`super::audit::MapChanges`]) can get
/// another verdict: those naming a changed name or under a changed path, and three kinds
/// of claims whose verdict rests on more than their own name ([`MemoryToCheck::read`]).
enum MemoryToCheck {
    /// Every current revision: the first lint, a store that lost track, a large rescan.
    Everything,
    /// The current revisions written after revision `after`, those `changes` concerns,
    /// and those holding a claim named one of `names` or whose subject is one of
    /// `subjects`.
    Changed {
        changes: super::audit::MapChanges,
        after: i64,
        names: Vec<String>,
        subjects: Vec<String>,
    },
}

impl MemoryToCheck {
    fn read(conn: &loci_store::rusqlite::Connection) -> Result<Self> {
        let after: Option<i64> = conn
            .query_row(
                "SELECT value FROM meta WHERE key = ?1",
                [LINTED_REVISION],
                |r| r.get::<_, String>(0),
            )
            .ok()
            .and_then(|v| v.parse().ok());
        let (Some(after), Some(changes)) = (after, super::audit::map_changes(conn)?) else {
            return Ok(Self::Everything);
        };
        // An open contradiction of a page without a current revision (its page moved or
        // went) belongs to no revision a lint of what changed checks: check everything.
        let mut subjects = Vec::new();
        for c in au::contradictions(conn, Some("open"))? {
            if c.origin != "page" {
                continue;
            }
            if mem::page_by_subject(conn, &c.subject)?
                .and_then(|p| p.current_revision_id)
                .is_none()
            {
                return Ok(Self::Everything);
            }
            // A failing claim's truth and suggestion (a renamed definition, found by its
            // body; the closest name; the only file of that name) rest on the whole map:
            // when the map changed, the pages of open contradictions are checked again.
            if !changes.is_empty() {
                subjects.push(c.subject);
            }
        }
        subjects.sort();
        subjects.dedup();
        // A path claim outside the map is true or false by the disk, which changes without
        // the map (a git-ignored file appearing or going): checked again every time.
        let mut names: Vec<String> = au::unmapped_path_targets(conn)?
            .iter()
            .map(|t| t.rsplit('/').next().unwrap_or(t).to_string())
            .collect();
        // A claim that never named anything is reported once it is a near miss of a name
        // the map gained, or a call on a type it gained: the names it is near.
        if !changes.is_empty() {
            names.extend(near_miss_names(
                &au::never_resolved_symbol_targets(conn)?,
                &changes.names(),
            ));
        }
        names.sort();
        names.dedup();
        Ok(Self::Changed {
            changes,
            after,
            names,
            subjects,
        })
    }
}

/// The names (last segments) of those of `targets` — symbol claims that never named
/// anything — whose verdict a change of the map's names `changed` can move: a near miss
/// of a changed name by any of the scores [`Ctx::closest_name`] and
/// [`Ctx::closest_member`] use (Jaro-Winkler ≥ 0.88, one word apart, one edit), or a
/// member whose qualifier's last segment is a changed name (`User.delete()` once `User`
/// is a type). A superset of those whose verdict moves: checking one more claim again
/// changes nothing.
fn near_miss_names(targets: &[String], changed: &[&str]) -> Vec<String> {
    let changed: Vec<(&str, usize, Vec<String>)> = changed
        .iter()
        .map(|n| {
            (
                *n,
                n.chars().count(),
                crate::context::search::identifier_words(n),
            )
        })
        .collect();
    let qualifiers: HashSet<&str> = changed.iter().map(|(n, _, _)| *n).collect();
    let mut out = Vec::new();
    for target in targets {
        let (qualifier, last) = match target.rsplit_once('.') {
            Some((q, last)) => (Some(q), last),
            None => (None, target.as_str()),
        };
        if qualifier.is_some_and(|q| qualifiers.contains(q.rsplit('.').next().unwrap_or(q))) {
            out.push(last.to_string());
            continue;
        }
        let len = last.chars().count();
        let words = crate::context::search::identifier_words(last);
        let near = changed.iter().any(|(n, n_len, n_words)| {
            let (short, long) = (len.min(*n_len), len.max(*n_len));
            // Jaro-Winkler ≥ 0.88 needs a Jaro similarity ≥ 0.8, hence lengths within
            // a ratio of 0.4.
            (short * 5 >= long * 2 && strsim::jaro_winkler(last, n) >= 0.88)
                || (len >= 3 && long - short <= 1 && strsim::damerau_levenshtein(last, n) == 1)
                || words_one_apart(&words, n_words)
        });
        if near {
            out.push(last.to_string());
        }
    }
    out
}

/// The contradictions a recording of findings may resolve ([`record_findings`]).
pub(crate) enum Scope<'a> {
    /// Every contradiction: lint checked everything.
    Everything,
    /// Those of the documents (with `docs`) and of the memory pages `subjects`: the pages
    /// a lint of what changed checked, or the page of a memory write.
    Pages {
        docs: bool,
        subjects: HashSet<&'a str>,
    },
}

impl Scope<'_> {
    fn holds(&self, c: &au::Contradiction) -> bool {
        match self {
            Scope::Everything => true,
            Scope::Pages { docs, subjects } => match c.origin.as_str() {
                "doc" => *docs,
                _ => subjects.contains(c.subject.as_str()),
            },
        }
    }
}

/// Records lint's findings at scan revision `scan_id`, as `loci lint` does: each failing
/// check opens, refreshes, reopens (a regression) or is suppressed by a human dismissal
/// (identical findings are one), and every open contradiction in `scope` whose check no
/// longer fails is auto-resolved, each change with its knowledge-change row. A memory
/// write records what its page's claims fail at once, so `context` warns about it before
/// anyone runs `loci lint`. Returns (opened, recurred, resolved, suppressed).
pub(crate) fn record_findings(
    tx: &loci_store::rusqlite::Transaction<'_>,
    findings: &[NewFinding],
    scan_id: i64,
    scope: &Scope<'_>,
) -> loci_store::Result<(u64, u64, u64, u64)> {
    let mut c = (0u64, 0u64, 0u64, 0u64);
    let mut failing = BTreeSet::new();
    for f in findings {
        if !failing.insert(f.finding_key.clone()) {
            continue; // identical findings are one
        }
        let (_, recorded) = au::record_finding(tx, f, scan_id)?;
        let detail = describe(f);
        match recorded {
            Recorded::Opened => {
                c.0 += 1;
                au::insert_knowledge_change(tx, scan_id, "became_false", &f.subject, &detail)?;
            }
            Recorded::Recurred => {
                c.1 += 1;
                au::insert_knowledge_change(tx, scan_id, "recurred", &f.subject, &detail)?;
            }
            Recorded::Suppressed => c.3 += 1,
            Recorded::StillOpen => {}
        }
    }
    for open in au::contradictions(tx, Some("open"))? {
        if !scope.holds(&open) {
            continue;
        }
        if !failing.contains(&open.finding_key) {
            au::close(tx, open.contradiction_id, false, None, Some(scan_id))?;
            c.2 += 1;
            au::insert_knowledge_change(
                tx,
                scan_id,
                "no_longer_false",
                &open.subject,
                &format!("{} `{}` holds again", open.kind, open.claim),
            )?;
        }
    }
    Ok(c)
}

impl Workspace {
    /// What `loci lint` would report about the claims of the revision `revision_id`, by
    /// claim id, without recording anything: findings a human dismissed are left out.
    ///
    /// Errors: reading the store, or an unknown revision ([`EngineError::NotFound`]).
    pub fn check_revision(
        &self,
        revision_id: i64,
    ) -> Result<HashMap<i64, crate::memory::memory::ClaimFinding>> {
        let (_, findings) = self.revision_findings(revision_id)?;
        Ok(self.claim_findings(findings)?)
    }

    /// What a memory write's claims fail, recorded as `loci lint` records it
    /// ([`record_findings`] for the page of `revision_id`, when that revision is still the
    /// page's current one) and returned by claim id as [`Workspace::check_revision`] gives
    /// it. A claim the write already knows is false had been served by `context` first and
    /// without a warning until someone ran `loci lint`; now the open contradiction (its
    /// −40 and banner) exists as soon as the write does, and a revision that corrects the
    /// page resolves the contradictions of the one it replaces.
    pub(crate) fn record_revision_findings(
        &mut self,
        revision_id: i64,
    ) -> Result<HashMap<i64, crate::memory::memory::ClaimFinding>> {
        let (subject, findings) = self.revision_findings(revision_id)?;
        let conn = self.store.conn();
        // Before the first scan nothing is checked (lint refuses to run), so nothing is
        // recorded or resolved either.
        if self.map_is_built()? {
            let current = mem::page_by_subject(conn, &subject)?
                .is_some_and(|p| p.current_revision_id == Some(revision_id));
            let open_here = au::contradictions(conn, Some("open"))?
                .iter()
                .any(|x| x.origin == "page" && x.subject == subject);
            if current && (!findings.is_empty() || open_here) {
                let scan_id: i64 = conn
                    .query_row(
                        "SELECT ifnull(max(scan_id), 0) FROM scans WHERE status = 'finished'",
                        [],
                        |r| r.get(0),
                    )
                    .ctx(|| "reading the scan revision".into())?;
                let only: Vec<NewFinding> = findings.iter().map(|(_, f)| f.clone()).collect();
                self.store.write(|tx| {
                    // Still current inside the transaction: another writer may have
                    // published a newer revision since.
                    let still = mem::page_by_subject(tx, &subject)?
                        .is_some_and(|p| p.current_revision_id == Some(revision_id));
                    if still {
                        let scope = Scope::Pages {
                            docs: false,
                            subjects: HashSet::from([subject.as_str()]),
                        };
                        record_findings(tx, &only, scan_id, &scope)?;
                    }
                    Ok(())
                })?;
            }
        }
        Ok(self.claim_findings(findings)?)
    }

    /// Lint's findings about the claims of the revision `revision_id`, by claim id, with
    /// the revision's subject; dismissed ones included (recording suppresses them).
    fn revision_findings(&self, revision_id: i64) -> Result<(String, Vec<(i64, NewFinding)>)> {
        let conn = self.store.conn();
        let rev = mem::revision_by_id(conn, revision_id)?
            .ok_or_else(|| EngineError::NotFound(format!("no revision {revision_id}")))?;
        let claims = mem::claims_of(conn, revision_id)?;
        let mut out = Vec::new();
        // Before the first scan every path would be "missing" (lint refuses to run then).
        if claims.is_empty() || !self.map_is_built()? {
            return Ok((rev.subject, out));
        }
        // The manifests are read only if a version claim needs them (reading them and
        // every path had been 3 ms of a 14 ms write on the stdlib).
        let mut ctx = Ctx {
            ws: self,
            declared: None,
            closest: HashMap::new(),
            members: HashMap::new(),
            file_names: None,
            bodies: HashMap::new(),
            scopes: HashMap::new(),
        };
        for claim in &claims {
            if let (Some(f), _) = ctx.check(&page_check(&rev.subject, claim, &claims))? {
                out.push((claim.claim_id, f));
            }
        }
        Ok((rev.subject, out))
    }

    /// `findings` as a write's claims show them, by claim id, without those a human
    /// dismissed.
    fn claim_findings(
        &self,
        findings: Vec<(i64, NewFinding)>,
    ) -> loci_store::Result<HashMap<i64, crate::memory::memory::ClaimFinding>> {
        if findings.is_empty() {
            return Ok(HashMap::new());
        }
        let stored = au::contradictions(self.store.conn(), Some("dismissed"))?;
        Ok(findings
            .into_iter()
            .filter(|(_, f)| !stored.iter().any(|x| x.finding_key == f.finding_key))
            .map(|(claim_id, f)| {
                (
                    claim_id,
                    crate::memory::memory::ClaimFinding {
                        kind: f.kind.to_string(),
                        severity: f.severity.to_string(),
                        truth: f.truth,
                        suggestion: f.suggestion,
                    },
                )
            })
            .collect())
    }
}

/// A finding in a markdown buffer, for live diagnostics.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TextFinding {
    /// Byte range `[start, end)` of the claim in the text.
    pub span: (u32, u32),
    /// The finding (kind, severity, truth, suggestion, identity).
    pub finding: NewFinding,
    /// The stored contradiction with the same identity, if lint recorded one (for
    /// "dismiss").
    pub contradiction_id: Option<i64>,
}

impl Workspace {
    /// Checks the claims of a markdown text (an editor buffer, saved or not) as lint would
    /// check the doc at `path`, without writing anything. Findings a human dismissed are
    /// left out; docs outside the `[lint] docs` globs give nothing.
    pub fn check_markdown(&self, path: &str, text: &str) -> Result<Vec<TextFinding>> {
        let globs = build_globs(&self.config.lint.docs)?;
        if !globs.is_match(path)
            || text
                .lines()
                .any(|l| l.trim() == "<!-- loci: ignore-file -->")
        {
            return Ok(Vec::new());
        }
        let conn = self.store.conn();
        let mut ctx = Ctx {
            ws: self,
            declared: None,
            closest: HashMap::new(),
            members: HashMap::new(),
            file_names: None,
            bodies: HashMap::new(),
            scopes: HashMap::new(),
        };
        let lines: Vec<&str> = text.split('\n').collect();
        let doc_dir = path.rsplit_once('/').map(|(d, _)| d).unwrap_or("");
        let stored = au::contradictions(conn, None)?;
        let mut out = Vec::new();
        for c in extract_claims(text) {
            if lines
                .get(c.line as usize)
                .is_some_and(|l| l.contains("<!-- loci: ignore -->"))
            {
                continue;
            }
            let was_resolved =
                au::doc_claim_resolved_before(conn, path, c.kind.as_str(), &c.target)?;
            let check = Check {
                origin: "doc",
                subject: path,
                doc_dir: Some(doc_dir),
                kind: Some(c.kind),
                text: &c.text,
                target: &c.target,
                version: c.version.as_deref(),
                was_resolved,
                line: c.line,
                column: c.column,
                end_column: c.column + (c.end - c.start),
                revision_id: None,
                snapshots: Vec::new(),
                snapshot_at: None,
                page_claims: &[],
                span: (0, 0),
            };
            let (Some(finding), _) = ctx.check(&check)? else {
                continue;
            };
            let existing = stored.iter().find(|x| x.finding_key == finding.finding_key);
            if existing.is_some_and(|x| x.status == "dismissed") {
                continue;
            }
            out.push(TextFinding {
                span: (c.start, c.end),
                contradiction_id: existing.map(|x| x.contradiction_id),
                finding,
            });
        }
        Ok(out)
    }
}

impl Workspace {
    /// The truth about one claim, as markdown for a hover: where a path or symbol is
    /// defined (with its signature and doc), what the manifests declare for a version, or
    /// "not found" with the nearest match.
    pub fn explain_claim(&self, claim: &loci_core::claims::Claim) -> Result<String> {
        let conn = self.store.conn();
        Ok(match claim.kind {
            ClaimKind::Path => match resolve_path(conn, &claim.target)? {
                Some((path, Some(_))) => {
                    let (lines, language): (i64, Option<String>) = conn
                        .query_row(
                            "SELECT lines, language FROM files WHERE path = ?1",
                            [&path],
                            |r| Ok((r.get(0)?, r.get(1)?)),
                        )
                        .ctx(|| "reading a file".into())?;
                    format!(
                        "`{path}` — {} file, {}",
                        language.unwrap_or_else(|| "a".into()),
                        crate::words::count(lines, "line")
                    )
                }
                Some((path, None)) => {
                    let n: i64 = conn
                        .query_row("SELECT count(*) FROM files WHERE path > ?1 || '/' AND path < ?1 || '0'", [&path], |r| r.get(0))
                        .ctx(|| "counting a folder".into())?;
                    format!(
                        "`{path}/` — folder, {} in the map",
                        crate::words::count(n, "file")
                    )
                }
                None if self.root.join(&claim.target).exists() => format!(
                    "`{}` exists but is not in the map (ignored or skipped)",
                    claim.target
                ),
                None => {
                    let mut ctx = Ctx {
                        ws: self,
                        declared: None,
                        closest: HashMap::new(),
                        members: HashMap::new(),
                        file_names: None,
                        bodies: HashMap::new(),
                        scopes: HashMap::new(),
                    };
                    match ctx.path_suggestion(&claim.target)? {
                        Some(s) => {
                            format!("`{}` **not found** — did you mean `{s}`?", claim.target)
                        }
                        None => format!("`{}` **not found** in the workspace", claim.target),
                    }
                }
            },
            ClaimKind::Symbol => match resolve_symbol(conn, &claim.target, None)? {
                SymbolResolution::Unique(s) => {
                    let doc = s
                        .doc
                        .as_deref()
                        .map(|d| format!("\n\n{}", crate::memory::memory::first_chars(d, 300)))
                        .unwrap_or_default();
                    format!(
                        "{} `{}` at `{}:{}`\n```\n{}\n```{doc}",
                        s.kind,
                        s.qualified_name,
                        s.path,
                        s.line + 1,
                        s.signature
                    )
                }
                SymbolResolution::Ambiguous(_) => {
                    let last = claim.target.rsplit('.').next().unwrap_or(&claim.target);
                    let hits = loci_store::map::find_symbols(conn, last, 6)?;
                    let list: Vec<String> = hits
                        .iter()
                        .take(5)
                        .map(|h| {
                            format!(
                                "- {} `{}` at `{}:{}`",
                                h.kind,
                                h.qualified_name,
                                h.path,
                                h.line + 1
                            )
                        })
                        .collect();
                    format!("`{}` is ambiguous:\n{}", claim.target, list.join("\n"))
                }
                SymbolResolution::Missing => {
                    let mut ctx = Ctx {
                        ws: self,
                        declared: None,
                        closest: HashMap::new(),
                        members: HashMap::new(),
                        file_names: None,
                        bodies: HashMap::new(),
                        scopes: HashMap::new(),
                    };
                    let last = claim.target.rsplit('.').next().unwrap_or(&claim.target);
                    match ctx.closest_name(last)? {
                        Some((n, _)) => format!(
                            "`{}` **not found** in the map — nearest: `{n}`",
                            claim.target
                        ),
                        None => format!("`{}` **not found** in the map", claim.target),
                    }
                }
            },
            ClaimKind::Version => {
                let paths: Vec<String> = {
                    let mut stmt = conn
                        .prepare_cached("SELECT path FROM files")
                        .ctx(|| "reading paths".into())?;
                    stmt.query_map([], |r| r.get(0))
                        .ctx(|| "reading paths".into())?
                        .collect::<std::result::Result<_, _>>()
                        .ctx(|| "reading paths".into())?
                };
                let name = manifests::normalize_name(&claim.target);
                let declared: Vec<String> = manifests::load(&self.root, &paths)
                    .into_iter()
                    .filter(|d| manifests::normalize_name(&d.name) == name)
                    .map(|d| format!("- `{}` {} in `{}`", d.name, d.spec, d.manifest))
                    .collect();
                if declared.is_empty() {
                    format!("`{}` is not declared in any manifest", claim.target)
                } else {
                    format!(
                        "`{}` is declared as:\n{}",
                        claim.target,
                        declared.join("\n")
                    )
                }
            }
        })
    }
}

struct Check<'a> {
    origin: &'static str,
    subject: &'a str,
    doc_dir: Option<&'a str>,
    kind: Option<ClaimKind>,
    text: &'a str,
    target: &'a str,
    version: Option<&'a str>,
    was_resolved: bool,
    line: u32,
    column: u32,
    end_column: u32,
    revision_id: Option<i64>,
    /// What a memory claim named when it was written (its definitions' keys and
    /// fingerprints): a renamed definition is found by these first ([`super::renamed`]).
    snapshots: Vec<Snapshot<'a>>,
    /// When they were taken (RFC 3339).
    snapshot_at: Option<&'a str>,
    /// The claims of a memory claim's revision, whose paths say what code an entry is
    /// about ([`page_scope`]; empty for a doc).
    page_claims: &'a [mem::ClaimRow],
    /// The claim's byte range in its revision's body (memory only).
    span: (u32, u32),
}

impl Ctx<'_> {
    /// The finding for a claim, if it fails, and what it resolves to now, if anything.
    fn check(&mut self, c: &Check<'_>) -> Result<(Option<NewFinding>, Option<String>)> {
        let conn = self.ws.store.conn();
        let finding = |kind: &'static str,
                       severity: &'static str,
                       truth: Option<String>,
                       suggestion: Option<String>| NewFinding {
            finding_key: format!(
                "{}:{}:{}:{}{}",
                c.origin,
                c.subject,
                kind,
                c.target,
                c.version.map(|v| format!("@{v}")).unwrap_or_default()
            ),
            origin: c.origin,
            subject: c.subject.to_string(),
            revision_id: c.revision_id,
            kind,
            severity,
            claim: c.text.to_string(),
            target: c.target.to_string(),
            truth,
            suggestion,
            line: c.line,
            column: c.column,
            end_column: c.end_column,
        };
        match c.kind {
            Some(ClaimKind::Path) => {
                // Paths inside directories the walk never maps (`.git`, `.loci`, ...)
                // cannot be checked against the map: not a finding either way.
                let first = c.target.split('/').next().unwrap_or("");
                if crate::map::walk::ALWAYS_SKIPPED_DIRS.contains(&first) {
                    return Ok((None, None));
                }
                if resolve_path(conn, c.target)?.is_some() || self.ws.root.join(c.target).exists() {
                    return Ok((None, Some(c.target.to_string())));
                }
                if let Some(dir) = c.doc_dir {
                    let relative = if dir.is_empty() {
                        c.target.to_string()
                    } else {
                        format!("{dir}/{}", c.target)
                    };
                    if self.ws.root.join(&relative).exists() {
                        return Ok((None, Some(relative)));
                    }
                }
                // Without a file extension or a first segment that exists here, a
                // slash-separated token is not evidently a path of this repository
                // (`workspace/executeCommand`, `owner/repo`): no finding.
                let first = c.target.split('/').next().unwrap_or("");
                let has_extension = c.target.rsplit('/').next().is_some_and(|name| {
                    name.rsplit_once('.')
                        .is_some_and(|(stem, ext)| !stem.is_empty() && !ext.is_empty())
                });
                if !c.was_resolved && !has_extension && !self.ws.root.join(first).exists() {
                    return Ok((None, None));
                }
                // A bare file name (`go.mod`) names "that file" wherever it is: fine if
                // one exists anywhere.
                if !c.target.contains('/') {
                    self.load_file_names()?;
                    if self
                        .file_names
                        .as_ref()
                        .is_some_and(|m| m.contains_key(c.target))
                    {
                        return Ok((None, Some(c.target.to_string())));
                    }
                }
                let suggestion = self.path_suggestion(c.target)?;
                Ok((
                    Some(finding(
                        "missing_path",
                        "high",
                        Some(format!("`{}` does not exist", c.target)),
                        suggestion,
                    )),
                    None,
                ))
            }
            Some(ClaimKind::Symbol) => {
                match resolve_symbol(conn, c.target, (c.origin == "page").then_some(c.subject))? {
                    SymbolResolution::Unique(s) => Ok((None, Some(s.key))),
                    SymbolResolution::Ambiguous(_) => Ok((None, Some(c.target.to_string()))),
                    SymbolResolution::Missing => {
                        let last = c.target.rsplit('.').next().unwrap_or(c.target);
                        let qualifier = c
                            .target
                            .contains('.')
                            .then(|| &c.target[..c.target.len() - last.len() - 1]);
                        // A renamed definition, found by what it kept (its body, its
                        // signature) before any name is compared.
                        let sep = if c.text.contains("::") { "::" } else { "." };
                        if let Some(r) = renamed_definition(
                            conn,
                            &self.ws.root,
                            &self.ws.config.scan.analyze_options(),
                            &c.snapshots,
                            c.snapshot_at,
                        )? {
                            let suggestion = match qualifier {
                                // A top-level definition is qualified by its module: the one
                                // it is in now (`email.addr.formataddr` once `email/utils.py`
                                // became `email/addr.py`, not the claim's own name again).
                                Some(q) if !r.qualified_name.contains('.') => {
                                    let q = module_qualifier(q, &r.path);
                                    format!("{}{sep}{}", q.replace('.', sep), r.name)
                                }
                                Some(_) => r.qualified_name.replace('.', sep),
                                None => r.name.clone(),
                            };
                            return Ok((
                                Some(finding(
                                    "missing_symbol",
                                    "medium",
                                    Some(format!(
                                        "no symbol `{}` in the map; `{}` in {} has {}",
                                        c.target,
                                        r.qualified_name,
                                        r.path,
                                        r.evidence.words()
                                    )),
                                    Some(suggestion),
                                )),
                                None,
                            ));
                        }
                        let near = match qualifier {
                            // `Type.member` / `module.func`: a near miss among the members
                            // of what the qualifier names (a settings key such as
                            // `scan.max_files` has none, and is no claim about code).
                            Some(q) => self.closest_member(conn, q, last)?,
                            None => self.closest_name(last)?,
                        };
                        // A name that never resolved and that the page's own code refers to
                        // (`len()` on a page about a file calling it, beside `le`;
                        // `os.rename()` beside `os.renames`; `TCPServer.serve_forever()`,
                        // inherited) is that code's use of something outside the map or
                        // beyond the map's reach, not a near miss nor a missing member.
                        let used_here = !c.was_resolved && self.used_in_scope(c, last)?;
                        let near_miss =
                            near.as_ref().is_some_and(|(_, score)| *score >= 0.88) && !used_here;
                        // `User.delete()` — a call on a type the map has — is a claim
                        // about that type's members even when no member is close.
                        let member_call = match qualifier {
                            Some(q)
                                if c.text.ends_with(')')
                                    && !provided_by_the_language(last)
                                    && !used_here =>
                            {
                                names_a_type(conn, q)?
                            }
                            _ => false,
                        };
                        // `_checknetloc()` on a page about urllib/parse.py, once it became
                        // `_validate_netloc`: a call the page's code neither defines nor
                        // makes, and the map defines nowhere ([`Ctx::unknown_call`]).
                        let unknown_call = !(c.was_resolved || near_miss || member_call)
                            && qualifier.is_none()
                            && self.unknown_call(c, last)?;
                        if !(c.was_resolved || near_miss || member_call || unknown_call) {
                            return Ok((None, None));
                        }
                        // In the claim's own form: `Header.encode` for `Header.encod()`,
                        // `Span::new` for `Span::nwe()` (the bare member had been given).
                        // A name that is not near any (an unknown call) suggests nothing.
                        let suggestion =
                            near.filter(|_| !unknown_call)
                                .map(|(n, _)| match qualifier {
                                    Some(q) => format!("{}{sep}{n}", q.replace('.', sep)),
                                    None => n,
                                });
                        let truth = match &suggestion {
                            Some(s) => {
                                format!(
                                    "no symbol `{}` in the map; `{s}` has a similar name",
                                    c.target
                                )
                            }
                            None if unknown_call => format!(
                                "no symbol `{}` in the map, and {} neither defines nor calls it",
                                c.target,
                                self.scope(c)?.join(", ")
                            ),
                            None => format!("no symbol `{}` in the map", c.target),
                        };
                        Ok((
                            Some(finding("missing_symbol", "medium", Some(truth), suggestion)),
                            None,
                        ))
                    }
                }
            }
            Some(ClaimKind::Version) => {
                let Some(version) = c.version else {
                    return Ok((None, None));
                };
                let name = manifests::normalize_name(c.target);
                let declared: Vec<&manifests::Declared> = self
                    .declared()?
                    .iter()
                    .filter(|d| manifests::normalize_name(&d.name) == name)
                    .collect();
                if declared.is_empty()
                    || declared.iter().any(|d| manifests::agrees(version, &d.spec))
                {
                    return Ok((None, None));
                }
                let truth = declared
                    .iter()
                    .map(|d| format!("{} {} in {}", d.name, d.spec, d.manifest))
                    .collect::<Vec<_>>()
                    .join("; ");
                Ok((
                    Some(finding(
                        "version_mismatch",
                        "medium",
                        Some(format!("declared: {truth}")),
                        None,
                    )),
                    None,
                ))
            }
            None => Ok((None, None)),
        }
    }

    /// Whether the memory claim `c`, a call of `name` in the form `name()` that resolves
    /// nowhere in the map, names code the page's own code lacks: its page is about paths
    /// of the map ([`page_scope`]), no file there refers to `name` (a builtin such as
    /// `len()`, a function imported from a dependency: the code there calls them), it is
    /// not a member every type has nor a function of a language ([`LANGUAGE_FUNCTIONS`]:
    /// `print()` names the builtin, called or not), and the clause around it does not say it is absent
    /// (`` `encode_fast()` never existed here ``, "was removed", "is not here":
    /// [`negated_clause`]). Such a claim was silent (docs/audit.md, "A call that never
    /// resolved", has the measurement behind the rule).
    fn unknown_call(&mut self, c: &Check<'_>, name: &str) -> Result<bool> {
        let Some(revision_id) = c.revision_id else {
            return Ok(false);
        };
        if c.origin != "page"
            || !c.text.ends_with(')')
            || provided_by_the_language(name)
            || LANGUAGE_FUNCTIONS.contains(&name)
        {
            return Ok(false);
        }
        if self.scope(c)?.is_empty() || self.used_in_scope(c, name)? {
            return Ok(false);
        }
        let conn = self.ws.store.conn();
        let body = match self.bodies.entry(revision_id) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => e.insert(
                mem::revision_by_id(conn, revision_id)?
                    .map(|r| r.body)
                    .unwrap_or_default(),
            ),
        };
        Ok(!negated_clause(body, c.span.0 as usize, c.span.1 as usize))
    }

    /// Whether a file of the code a memory claim's page is about ([`page_scope`]) refers
    /// to `name` (a call, a use, an import).
    fn used_in_scope(&mut self, c: &Check<'_>, name: &str) -> Result<bool> {
        if c.origin != "page" {
            return Ok(false);
        }
        for path in self.scope(c)? {
            if loci_store::map::referenced_in(self.ws.store.conn(), name, &path)? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// [`page_scope`] of a memory claim's page, made once per revision in a run (only a
    /// name that resolves nowhere asks for it).
    fn scope(&mut self, c: &Check<'_>) -> Result<Vec<String>> {
        let Some(revision_id) = c.revision_id else {
            return Ok(Vec::new());
        };
        if let Some(scope) = self.scopes.get(&revision_id) {
            return Ok(scope.clone());
        }
        let scope = page_scope(self.ws.store.conn(), c.subject, c.page_claims)?;
        self.scopes.insert(revision_id, scope.clone());
        Ok(scope)
    }

    /// Where a missing path went: the renames the scans saw (the drift ledger, followed
    /// to a path in the map; for a folder, where its files went), else git's rename
    /// history, else the only file of that name.
    fn path_suggestion(&mut self, target: &str) -> Result<Option<String>> {
        if let Some(to) = scanned_rename(self.ws.store.conn(), target)? {
            return Ok(Some(to));
        }
        if let Some(to) = scanned_folder_rename(self.ws.store.conn(), target)? {
            return Ok(Some(to));
        }
        if let Some(to) = crate::memory::memory::renamed_to(&self.ws.root, target) {
            return Ok(Some(to));
        }
        self.load_file_names()?;
        let name = target
            .trim_end_matches('/')
            .rsplit('/')
            .next()
            .unwrap_or(target);
        let Some(names) = self.file_names.as_ref() else {
            return Ok(None);
        };
        if let Some(v) = names.get(name) {
            return Ok((v.len() == 1).then(|| v[0].clone()));
        }
        // A typo of a file beside it (`app/modles.py` for `app/models.py`): the one mapped
        // file in the same folder nearest within two edits (Damerau–Levenshtein: a swap of
        // two letters is one) and a third of the name.
        let dir = target
            .trim_end_matches('/')
            .rsplit_once('/')
            .map_or("", |(d, _)| d);
        let most = (name.chars().count() / 3).min(2);
        // The folder first, then the distance: the distance to every file name of a
        // 50,000-file map, for each missing path, had been a fifth of a lint (issue 37).
        let mut near: Vec<(usize, &String)> = names
            .iter()
            .flat_map(|(n, paths)| {
                paths
                    .iter()
                    .filter(|p| p.rsplit_once('/').map_or("", |(pd, _)| pd) == dir)
                    .map(move |p| (n, p))
            })
            .filter_map(|(n, p)| {
                let d = strsim::damerau_levenshtein(name, n);
                (d <= most).then_some((d, p))
            })
            .collect();
        near.sort();
        Ok(match near.as_slice() {
            [(d, p), rest @ ..] if rest.first().is_none_or(|(e, _)| e > d) => Some((*p).clone()),
            _ => None,
        })
    }

    /// The member of `qualifier` (a type or module: its last segment names a symbol or a
    /// source file's stem) most similar to `name`, with its score.
    fn closest_member(
        &mut self,
        conn: &loci_store::rusqlite::Connection,
        qualifier: &str,
        name: &str,
    ) -> Result<Option<(String, f64)>> {
        let scope = qualifier.rsplit('.').next().unwrap_or(qualifier);
        if !self.members.contains_key(scope) {
            let members = self.members_of(conn, scope)?;
            self.members.insert(scope.to_string(), members);
        }
        let members = self
            .members
            .get(scope)
            .map(Vec::as_slice)
            .unwrap_or_default();
        let mut best: Option<(String, f64)> = None;
        for n in members {
            let score = member_similarity(name, n);
            if best
                .as_ref()
                .is_none_or(|(b, s)| score > *s || (score == *s && n < b))
            {
                best = Some((n.clone(), score));
            }
        }
        Ok(best.filter(|(_, s)| *s >= 0.7))
    }

    /// The distinct names of the members of `scope`: of each symbol named `scope` (the
    /// first 50), the symbols its qualified name qualifies, and every symbol of the source
    /// files whose stem is `scope`. Names only, read once per scope in a lint
    /// ([`Ctx::members`]): whole rows for every file of a common stem (`lib`, `utils`),
    /// again for each claim, had been most of a lint of a 50,000-file map (issue 37).
    fn members_of(
        &mut self,
        conn: &loci_store::rusqlite::Connection,
        scope: &str,
    ) -> Result<Vec<String>> {
        let mut members: BTreeSet<String> = BTreeSet::new();
        for s in loci_store::map::find_symbols(conn, scope, 50)? {
            members.extend(loci_store::map::symbol_names_in_file(
                conn,
                &s.path,
                &format!("{}.", s.qualified_name),
            )?);
        }
        self.load_file_names()?;
        let files: Vec<String> = self
            .file_names
            .iter()
            .flatten()
            .filter(|(n, _)| {
                n.split('.').next() == Some(scope) && loci_core::Language::from_path(n).is_some()
            })
            .flat_map(|(_, paths)| paths.clone())
            .collect();
        for f in files {
            members.extend(loci_store::map::symbol_names_in_file(conn, &f, "")?);
        }
        Ok(members.into_iter().collect())
    }

    /// What the manifests declare, read on first use.
    fn declared(&mut self) -> Result<&[manifests::Declared]> {
        if self.declared.is_none() {
            let paths: Vec<String> = self
                .ws
                .store
                .conn()
                .prepare_cached("SELECT path FROM files")
                .and_then(|mut st| st.query_map([], |r| r.get(0))?.collect())
                .ctx(|| "reading paths".into())?;
            self.declared = Some(manifests::load(&self.ws.root, &paths));
        }
        Ok(self.declared.as_deref().unwrap_or_default())
    }

    fn load_file_names(&mut self) -> Result<()> {
        if self.file_names.is_some() {
            return Ok(());
        }
        let conn = self.ws.store.conn();
        let mut stmt = conn
            .prepare("SELECT path FROM files")
            .ctx(|| "reading paths".into())?;
        let paths: Vec<String> = stmt
            .query_map([], |r| r.get(0))
            .ctx(|| "reading paths".into())?
            .collect::<std::result::Result<_, _>>()
            .ctx(|| "reading paths".into())?;
        let mut by_name: HashMap<String, Vec<String>> = HashMap::new();
        for p in paths {
            let name = p.rsplit('/').next().unwrap_or(&p).to_string();
            by_name.entry(name).or_default().push(p);
        }
        self.file_names = Some(by_name);
        Ok(())
    }

    /// The symbol name most similar to `name` (Jaro-Winkler, or 0.9 for one word
    /// apart), with its score, among the candidates [`name_candidates`] reads through
    /// indexes; remembered for the run (a name is often claimed on many pages).
    fn closest_name(&mut self, name: &str) -> Result<Option<(String, f64)>> {
        if let Some(known) = self.closest.get(name) {
            return Ok(known.clone());
        }
        let mut best: Option<(String, f64)> = None;
        for n in name_candidates(self.ws.store.conn(), name)? {
            // One extra word around the same words (`legacy_total` / `total`) is as good
            // as a near miss; one edit is not, among every name of the map (`get()` for
            // a `set`).
            let contained = one_word_apart(name, &n);
            let score = strsim::jaro_winkler(name, &n).max(if contained { 0.9 } else { 0.0 });
            if best
                .as_ref()
                .is_none_or(|(b, s)| score > *s || (score == *s && n < *b))
            {
                best = Some((n, score));
            }
        }
        let best = best.filter(|(_, s)| *s >= 0.7);
        self.closest.insert(name.to_string(), best.clone());
        Ok(best)
    }
}

/// How many distinct names one candidate query reads at most.
const CANDIDATES_PER_QUERY: u32 = 2048;

/// The names a suggestion for `name` is chosen among, each read through an index, so the
/// cost is bounded by [`CANDIDATES_PER_QUERY`] per query and not by the size of the map
/// (every distinct name of 1.09 M symbols had been compared with every failing claim:
/// 40 s per lint, issue 37):
/// - the same folded name (`_split_netloc` for `_splitnetloc`, `HTTPServer` for
///   `HttpServer`; folded as [`loci_store::map::fold_name`]);
/// - the folded names sharing its first characters: the shortest prefix (0 to 4
///   characters, Jaro-Winkler's prefix) whose names fit in one query, else the
///   4-character one cut at the limit (a misspelling after the fourth character, or at
///   any place when few names share the first: `encod` / `encode`);
/// - the same with one slip in the first four characters (two neighbours swapped, one
///   dropped: `gettatr` / `getattr`), each range cut at a quarter of the limit;
/// - one word apart: its words less the first or the last (`total` for `legacy_total`),
///   and names holding its words with one more (`legacy_total`, `total_items` for
///   `total`, by the identifier terms of the full-text index).
///
/// What it misses: in a large map, a wrong or missing letter in the first four
/// characters of a name whose first characters many names share (`rypo` for `typo`).
fn name_candidates(conn: &loci_store::rusqlite::Connection, name: &str) -> Result<Vec<String>> {
    use loci_store::map::{fold_name, names_folded_as, names_folded_with_prefix, names_with_words};
    let folded = fold_name(name);
    let mut out: Vec<String> = names_folded_as(conn, &folded, CANDIDATES_PER_QUERY)?;
    let chars: Vec<char> = folded.chars().collect();
    // Prefix 0 is every name: a map of few names offers them all, as before the index.
    for k in 0..=chars.len().min(4) {
        let prefix: String = chars[..k].iter().collect();
        let names = names_folded_with_prefix(conn, &prefix, CANDIDATES_PER_QUERY + 1)?;
        let fits = names.len() <= CANDIDATES_PER_QUERY as usize;
        if fits || k == chars.len().min(4) {
            out.extend(names);
            break;
        }
    }
    // A slip within the first four characters, where the ranges above look no further
    // when many names share the first ones (`__gettatr__` folds to `gettatr`, whose
    // `getattr` is not under `gett`): the prefix with two neighbours swapped or one
    // character dropped, each a smaller range.
    let head: Vec<char> = chars.iter().take(4).copied().collect();
    let mut slips: Vec<String> = Vec::new();
    for i in 0..head.len() {
        if i + 1 < head.len() {
            let mut swapped = head.clone();
            swapped.swap(i, i + 1);
            slips.push(swapped.into_iter().collect());
        }
        if head.len() > 2 {
            let mut dropped = head.clone();
            dropped.remove(i);
            slips.push(dropped.into_iter().collect());
        }
    }
    slips.sort();
    slips.dedup();
    for prefix in slips.iter().filter(|p| p.chars().ne(head.iter().copied())) {
        out.extend(names_folded_with_prefix(
            conn,
            prefix,
            CANDIDATES_PER_QUERY / 4,
        )?);
    }
    let words = crate::context::search::identifier_words(name);
    if words.len() > 1 {
        for fewer in [&words[1..], &words[..words.len() - 1]] {
            out.extend(names_folded_as(
                conn,
                &fewer.concat(),
                CANDIDATES_PER_QUERY,
            )?);
        }
    }
    out.extend(names_with_words(conn, &words, CANDIDATES_PER_QUERY)?);
    out.sort();
    out.dedup();
    Ok(out)
}

/// How alike a member written in a claim is to a member of the type or module it names,
/// 0 to 1: Jaro-Winkler, raised to 0.9 for one extra word around the same words
/// (`legacy_total` / `total`) and for one edit of a name of three or more characters
/// (Damerau–Levenshtein: `Span::nwe` / `new`, whose Jaro-Winkler is 0.56, the match
/// window of a short name being one char).
fn member_similarity(name: &str, candidate: &str) -> f64 {
    let near = one_word_apart(name, candidate)
        || (name.chars().count() >= 3 && strsim::damerau_levenshtein(name, candidate) == 1);
    strsim::jaro_winkler(name, candidate).max(if near { 0.9 } else { 0.0 })
}

/// True when the identifier words of one are those of the other plus one word at either
/// end (`legacy_total` / `total`, `parse_config` / `parse_config_file`).
fn one_word_apart(a: &str, b: &str) -> bool {
    words_one_apart(
        &crate::context::search::identifier_words(a),
        &crate::context::search::identifier_words(b),
    )
}

/// [`one_word_apart`] of two names' identifier words.
fn words_one_apart(wa: &[String], wb: &[String]) -> bool {
    let (short, long) = if wa.len() <= wb.len() {
        (wa, wb)
    } else {
        (wb, wa)
    };
    !short.is_empty()
        && long.len() == short.len() + 1
        && (long[1..] == short[..] || long[..short.len()] == short[..])
        && short.concat().len() >= 4
}

fn build_globs(globs: &[String]) -> Result<globset::GlobSet> {
    let mut b = globset::GlobSetBuilder::new();
    for g in globs {
        let glob = globset::GlobBuilder::new(g)
            .literal_separator(true)
            .build()
            .map_err(|e| EngineError::Config {
                path: ".loci/config.toml".into(),
                message: format!("[lint] docs: bad glob `{g}`: {e}"),
            })?;
        b.add(glob);
    }
    b.build().map_err(|e| EngineError::Internal(e.to_string()))
}

/// The module qualifier `q` (dotted) of a top-level definition now in `path`: `q` when its
/// last segment still names the file or a folder holding it, else `q` with that segment
/// replaced by the file's module name (its stem, or its folder's name for an index file
/// such as `__init__.py` or `mod.rs`).
fn module_qualifier(q: &str, path: &str) -> String {
    let last = q.rsplit('.').next().unwrap_or(q);
    if path
        .split('/')
        .any(|part| part.split('.').next() == Some(last))
    {
        return q.to_string();
    }
    let mut parts = path.rsplit('/');
    let file = parts.next().unwrap_or(path);
    let stem = file.split('.').next().unwrap_or(file);
    let module = match stem {
        "__init__" | "mod" | "lib" | "index" => parts.next().unwrap_or(stem),
        _ => stem,
    };
    match q.rsplit_once('.') {
        Some((outer, _)) => format!("{outer}.{module}"),
        None => module.to_string(),
    }
}

/// Whether the clause of `body` around the bytes `start..end` (from the last sentence or
/// clause break before them — a line break, `. `, `; `, `! `, `? ` — to the first after)
/// says that what it names is absent: a word of [`NEGATIONS`] or one ending in `n't`,
/// outside backticks (`` `not_found()` `` negates nothing).
fn negated_clause(body: &str, start: usize, end: usize) -> bool {
    let start = start.min(body.len());
    let end = end.clamp(start, body.len());
    let (Some(before), Some(after)) = (body.get(..start), body.get(end..)) else {
        return false;
    };
    const BREAKS: &[&str] = &["\n", ". ", "; ", "! ", "? "];
    let from = BREAKS
        .iter()
        .filter_map(|b| before.rfind(b).map(|i| i + b.len()))
        .max()
        .unwrap_or(0);
    let to = BREAKS
        .iter()
        .filter_map(|b| after.find(b))
        .min()
        .unwrap_or(after.len());
    let clause = format!("{} {}", &before[from..], &after[..to]);
    // Backticked spans are names, not words of the sentence.
    let words: String = clause
        .split('`')
        .enumerate()
        .filter(|(i, _)| i % 2 == 0)
        .map(|(_, part)| part)
        .collect::<Vec<_>>()
        .join(" ");
    words
        .to_lowercase()
        .split(|ch: char| !(ch.is_alphanumeric() || ch == '\''))
        .any(|w| NEGATIONS.contains(&w) || w.ends_with("n't"))
}

/// Words that say what a clause names is absent or was: "never existed", "was removed",
/// "is not here", "renamed to", "instead of".
const NEGATIONS: &[&str] = &[
    "never",
    "not",
    "no",
    "nor",
    "without",
    "removed",
    "deleted",
    "renamed",
    "gone",
    "instead",
    "rather",
    "deprecated",
    "obsolete",
    "formerly",
    "nonexistent",
];

/// A finding in words: `` missing_path `src/old.py` (renamed to src/new.py) ``.
pub fn describe(f: &NewFinding) -> String {
    let mut s = format!("{} `{}`", f.kind, f.claim);
    if let Some(t) = &f.truth {
        s.push_str(&format!(": {t}"));
    }
    if let Some(sg) = &f.suggestion {
        s.push_str(&format!(" (did you mean `{sg}`?)"));
    }
    s
}

/// Members every type may have without the map seeing a definition: the methods of
/// Rust's derivable and prelude traits (`#[derive(Default)]` gives `Config::default()`;
/// std `core::{default, clone, cmp, hash, fmt, convert, iter, ops}`), and those every
/// Python `object` and JavaScript `Object.prototype` provide. A call to one of these on
/// a type the map has is no evidence of a missing symbol.
const LANGUAGE_PROVIDED_MEMBERS: &[&str] = &[
    // Rust: derivable traits and the prelude's conversions.
    "default",
    "clone",
    "clone_from",
    "eq",
    "ne",
    "cmp",
    "partial_cmp",
    "max",
    "min",
    "clamp",
    "hash",
    "fmt",
    "from",
    "into",
    "try_from",
    "try_into",
    "to_string",
    "to_owned",
    "as_ref",
    "as_mut",
    "borrow",
    "borrow_mut",
    "deref",
    "deref_mut",
    "drop",
    "into_iter",
    "from_iter",
    "extend",
    "from_str",
    "parse",
    // Python: object.
    "__init__",
    "__new__",
    "__repr__",
    "__str__",
    "__eq__",
    "__hash__",
    "__init_subclass__",
    // JavaScript: Object.prototype.
    "toString",
    "valueOf",
    "hasOwnProperty",
    "toLocaleString",
    "constructor",
];

/// Functions the languages provide without a definition in the map, which a page may name
/// whether or not its code calls them (`print()` on a page about a file that does not):
/// Python's builtins, JavaScript's global functions, Go's builtins, Ruby's `Kernel`
/// functions and the most named of C's library. A call [`Ctx::unknown_call`] never
/// reports.
const LANGUAGE_FUNCTIONS: &[&str] = &[
    // Python: builtins.
    "abs",
    "aiter",
    "all",
    "anext",
    "any",
    "ascii",
    "bin",
    "bool",
    "breakpoint",
    "bytearray",
    "bytes",
    "callable",
    "chr",
    "classmethod",
    "compile",
    "complex",
    "delattr",
    "dict",
    "dir",
    "divmod",
    "enumerate",
    "eval",
    "exec",
    "filter",
    "float",
    "format",
    "frozenset",
    "getattr",
    "globals",
    "hasattr",
    "hash",
    "help",
    "hex",
    "id",
    "input",
    "int",
    "isinstance",
    "issubclass",
    "iter",
    "len",
    "list",
    "locals",
    "map",
    "max",
    "memoryview",
    "min",
    "next",
    "object",
    "oct",
    "open",
    "ord",
    "pow",
    "print",
    "property",
    "range",
    "repr",
    "reversed",
    "round",
    "set",
    "setattr",
    "slice",
    "sorted",
    "staticmethod",
    "str",
    "sum",
    "super",
    "tuple",
    "type",
    "vars",
    "zip",
    "__import__",
    // JavaScript: global functions and constructors.
    "parseInt",
    "parseFloat",
    "isNaN",
    "isFinite",
    "encodeURIComponent",
    "decodeURIComponent",
    "encodeURI",
    "decodeURI",
    "setTimeout",
    "setInterval",
    "clearTimeout",
    "clearInterval",
    "setImmediate",
    "queueMicrotask",
    "structuredClone",
    "fetch",
    "require",
    "alert",
    "Symbol",
    "Number",
    "String",
    "Boolean",
    "Array",
    "Object",
    "Promise",
    "Date",
    "Error",
    "RegExp",
    "Map",
    "Set",
    "BigInt",
    // Go: builtins.
    "append",
    "cap",
    "clear",
    "close",
    "copy",
    "delete",
    "imag",
    "make",
    "new",
    "panic",
    "println",
    "real",
    "recover",
    // Ruby: Kernel.
    "puts",
    "p",
    "require_relative",
    "raise",
    "loop",
    "lambda",
    "proc",
    // C: the library functions most named.
    "printf",
    "fprintf",
    "sprintf",
    "snprintf",
    "malloc",
    "calloc",
    "realloc",
    "free",
    "memcpy",
    "memmove",
    "memset",
    "strlen",
    "strcmp",
    "strcpy",
    "strncpy",
    "exit",
    "abort",
    "assert",
    "sizeof",
];

/// Whether `member` is one of [`LANGUAGE_PROVIDED_MEMBERS`].
fn provided_by_the_language(member: &str) -> bool {
    LANGUAGE_PROVIDED_MEMBERS.contains(&member)
}

/// Whether the last segment of `qualifier` names a type in the map (class, struct,
/// enum, union, trait, interface, module, type) — what a `Type.member()` claim is about.
fn names_a_type(conn: &loci_store::rusqlite::Connection, qualifier: &str) -> Result<bool> {
    // The type-like kinds of `loci_core::SymbolKind`.
    const TYPE_KINDS: &[&str] = &[
        "class",
        "struct",
        "enum",
        "union",
        "trait",
        "interface",
        "module",
        "type",
    ];
    let scope = qualifier.rsplit('.').next().unwrap_or(qualifier);
    Ok(loci_store::map::find_symbols(conn, scope, 50)?
        .iter()
        .any(|s| s.name == scope && TYPE_KINDS.contains(&s.kind.as_str())))
}

/// Where the scans saw `path` renamed to, following later renames (`a` → `b` → `c`), when
/// the path it ends at is in the map.
/// Where the folder `path` went, from the last rename the scans saw of a file under it:
/// `a/x/f.py` → `b/x/f.py` says `a` → `b`, when `b` holds files of the map. A rename the
/// scan could not tell apart (another file of the same content moved in the same scan)
/// says nothing.
fn scanned_folder_rename(
    conn: &loci_store::rusqlite::Connection,
    path: &str,
) -> Result<Option<String>> {
    use loci_store::Context;
    use loci_store::rusqlite::OptionalExtension;
    let folder = path.trim_end_matches('/');
    if folder.is_empty() {
        return Ok(None);
    }
    let last: Option<(String, String)> = conn
        .prepare_cached(
            "SELECT d.detail, d.path FROM drift d WHERE d.kind = 'rename'
             AND substr(d.detail, 1, length(?1) + 1) = ?1 || '/'
             AND NOT EXISTS (SELECT 1 FROM drift e WHERE e.scan_id = d.scan_id
                 AND e.kind = 'rename' AND e.new_hash = d.new_hash AND e.drift_id <> d.drift_id)
             ORDER BY d.drift_id DESC LIMIT 1",
        )
        .and_then(|mut s| {
            s.query_row([folder], |r| Ok((r.get(0)?, r.get(1)?)))
                .optional()
        })
        .ctx(|| "reading renames".into())?;
    let Some((old, new)) = last else {
        return Ok(None);
    };
    let inside = &old[folder.len()..];
    let Some(to) = new
        .strip_suffix(inside)
        .filter(|t| !t.is_empty() && *t != folder)
    else {
        return Ok(None);
    };
    let mapped: bool = conn
        .query_row(
            "SELECT EXISTS(SELECT 1 FROM files WHERE substr(path, 1, length(?1) + 1) = ?1 || '/')",
            [to],
            |r| r.get(0),
        )
        .ctx(|| "reading renames".into())?;
    Ok(mapped.then(|| to.to_string()))
}

fn scanned_rename(conn: &loci_store::rusqlite::Connection, path: &str) -> Result<Option<String>> {
    use loci_store::Context;
    use loci_store::rusqlite::OptionalExtension;
    let mut stmt = conn
        .prepare_cached(
            "SELECT path FROM drift WHERE kind = 'rename' AND detail = ?1 ORDER BY drift_id DESC LIMIT 1",
        )
        .ctx(|| "reading renames".into())?;
    let mut at = path.to_string();
    // A bound on the chain: renames back and forth must not loop.
    for _ in 0..16 {
        let Some(next) = stmt
            .query_row([&at], |r| r.get::<_, String>(0))
            .optional()
            .ctx(|| "reading renames".into())?
        else {
            break;
        };
        at = next;
    }
    if at == path {
        return Ok(None);
    }
    let mapped: bool = conn
        .query_row(
            "SELECT EXISTS(SELECT 1 FROM files WHERE path = ?1)",
            [&at],
            |r| r.get(0),
        )
        .ctx(|| "reading renames".into())?;
    Ok(mapped.then_some(at))
}

/// The words for a stale mark that went away: the claim it was about (or the page), as
/// [`super::audit`]'s stale warnings name it, never a row id.
fn current_again(
    tx: &loci_store::rusqlite::Transaction<'_>,
    m: &loci_store::audit::StaleMark,
) -> loci_store::Result<String> {
    let (version, claim): (i64, Option<String>) = tx
        .query_row(
            "SELECT r.version, (SELECT text FROM claims WHERE claim_id = ?2)
             FROM revisions r WHERE r.revision_id = ?1",
            loci_store::rusqlite::params![m.revision_id, m.claim_id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .ctx(|| format!("reading revision {}", m.revision_id))?;
    Ok(match claim {
        Some(t) => format!(
            "memory `{}` v{version} claim `{t}` is current again",
            m.subject
        ),
        None => format!("memory `{}` v{version} is current again", m.subject),
    })
}
