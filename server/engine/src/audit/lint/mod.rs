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
//! hold `<!-- loci: ignore -->` are skipped, and a doc with a line
//! `<!-- loci: ignore-file -->` is skipped entirely (`markdown::doc_claims`, one rule for
//! lint, `check_markdown` and the language server's live check).

mod language;
mod markdown;
mod names;
mod record;
mod rules;

use std::collections::{BTreeMap, HashMap, HashSet};

use loci_core::claims::ClaimKind;
use loci_store::audit::{self as au, NewFinding, StaleMark};
use loci_store::memory as mem;
use serde::Serialize;

use super::audit::Staleness;
use super::renamed::Snapshot;
use crate::map::manifests;
use crate::memory::claims::resolve_path;
use crate::{EngineError, Envelope, Result, Workspace};

pub use self::markdown::TextFinding;
pub(crate) use self::markdown::{doc_claims, doc_ignored};
use self::names::words_one_apart;
use self::record::{Scope, record_findings};
use self::rules::Check;

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
    /// every manifest of a large repository for a lint without version claims would be
    /// work in proportion to the repository at every rescan.
    declared: Option<Vec<manifests::Declared>>,
    /// [`Ctx::closest_name`]'s answers in this run, by name.
    closest: HashMap<String, Option<(String, f64)>>,
    /// [`Ctx::members_of`]'s answers in this run, by scope.
    members: HashMap<String, Vec<String>>,
    file_names: Option<HashMap<String, Vec<String>>>,
    /// [`Ctx::head_mapped`]'s answers in this run, by a qualifier's first segment.
    heads: HashMap<String, bool>,
    /// Revision bodies read by [`Ctx::unknown_call`] in this run, by revision id.
    bodies: HashMap<i64, String>,
    /// [`Ctx::scope`]'s answers in this run, by revision id.
    scopes: HashMap<i64, Vec<String>>,
}

impl<'a> Ctx<'a> {
    /// A run's context over `ws`, nothing read yet.
    fn new(ws: &'a Workspace) -> Ctx<'a> {
        Ctx {
            ws,
            declared: None,
            closest: HashMap::new(),
            members: HashMap::new(),
            file_names: None,
            heads: HashMap::new(),
            bodies: HashMap::new(),
            scopes: HashMap::new(),
        }
    }
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
        let scan_id = loci_store::map::scan_revision(conn)?;
        let mut ctx = Ctx::new(self);
        let mut findings: Vec<NewFinding> = Vec::new();
        let mut claims_checked = 0u64;

        // Memory: the claims of every current revision, or of those whose verdict what
        // changed since the last lint can move ([`MemoryToCheck`]).
        let last_revision = mem::last_revision_id(conn)?;
        let to_check = MemoryToCheck::read(conn)?;
        let revisions = to_check.revisions(conn)?;
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
        let (docs_checked, doc_resolved) = ctx.check_docs(&mut findings, &mut claims_checked)?;
        drop(ctx);

        // Staleness of every current revision: the marks the last scan (or the write of a
        // revision since) stored for the map as it is, the others made now.
        let stale = super::audit::current_staleness(conn)?;
        let marks = stale_marks_of(&stale);
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
            record_stale_changes(tx, scan_id, &old_marks, &marks, stale_ref)?;
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
        Ok(loci_store::map::any_scan_finished(self.store.conn())?)
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
        let last = loci_store::map::scan_revision(conn)?;
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
    /// The current revisions (id, subject) this run checks: every page's, or those whose
    /// verdict what changed since the last lint can move.
    fn revisions(&self, conn: &loci_store::rusqlite::Connection) -> Result<Vec<(i64, String)>> {
        Ok(match self {
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
        })
    }

    fn read(conn: &loci_store::rusqlite::Connection) -> Result<Self> {
        let after: Option<i64> = loci_store::read_meta(conn, LINTED_REVISION)
            .ok()
            .flatten()
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

/// The `[lint] docs` globs as one set; a bad glob is a configuration error.
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

/// The words for a stale mark that went away: the claim it was about (or the page), as
/// [`super::audit`]'s stale warnings name it, never a row id.
fn current_again(
    tx: &loci_store::rusqlite::Transaction<'_>,
    m: &loci_store::audit::StaleMark,
) -> loci_store::Result<String> {
    let (version, claim) = mem::revision_version_and_claim(tx, m.revision_id, m.claim_id)?;
    Ok(match claim {
        Some(t) => format!(
            "memory `{}` v{version} claim `{t}` is current again",
            m.subject
        ),
        None => format!("memory `{}` v{version} is current again", m.subject),
    })
}

impl Ctx<'_> {
    /// The claims of the repository's own docs (the markdown files `[lint] docs` matches,
    /// less those marked `loci: ignore-file` and the lines marked `loci: ignore`), checked:
    /// their findings added to `findings`, their count to `claims_checked`. Returns the
    /// docs checked and the claims that resolved for the first time (doc, kind, target,
    /// what it resolved to).
    #[allow(clippy::type_complexity)]
    fn check_docs(
        &mut self,
        findings: &mut Vec<NewFinding>,
        claims_checked: &mut u64,
    ) -> Result<(Vec<String>, Vec<(String, &'static str, String, String)>)> {
        let conn = self.ws.store.conn();
        // The markdown files only: lint reads docs, and every path of a large map is
        // work in proportion to the repository at every rescan.
        let paths = loci_store::map::markdown_paths(conn)?;
        let mut doc_resolved: Vec<(String, &'static str, String, String)> = Vec::new();
        let globs = build_globs(&self.ws.config.lint.docs)?;
        let mut docs_checked = Vec::new();
        for path in paths.iter().filter(|p| {
            (p.ends_with(".md") || p.ends_with(".markdown")) && globs.is_match(p.as_str())
        }) {
            let Some(text) = self.ws.read_served(path) else {
                continue;
            };
            if doc_ignored(&text) {
                continue;
            }
            docs_checked.push(path.clone());
            let doc_dir = path.rsplit_once('/').map(|(d, _)| d).unwrap_or("");
            for c in doc_claims(&text) {
                *claims_checked += 1;
                let was_resolved =
                    au::doc_claim_resolved_before(conn, path, c.kind.as_str(), &c.target)?;
                let check = Check::of_doc(path, doc_dir, &c, was_resolved);
                let (finding, resolved) = self.check(&check)?;
                findings.extend(finding);
                if let (Some(resolved), false) = (resolved, was_resolved) {
                    doc_resolved.push((path.clone(), c.kind.as_str(), c.target.clone(), resolved));
                }
            }
        }
        Ok((docs_checked, doc_resolved))
    }
}

/// The stale marks of `stale` as stored, keyed `revision:claim` (`revision:page` for the
/// page's own mark).
fn stale_marks_of(stale: &[Staleness]) -> Vec<StaleMark> {
    stale
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
        .collect()
}

/// The knowledge changes of a lint run: a `became_stale` for each mark that is new, a
/// `no_longer_stale` for each that went away.
fn record_stale_changes(
    tx: &loci_store::rusqlite::Transaction<'_>,
    scan_id: i64,
    old_marks: &[StaleMark],
    marks: &[StaleMark],
    stale_ref: &[Staleness],
) -> loci_store::Result<()> {
    let old: BTreeMap<&str, &StaleMark> =
        old_marks.iter().map(|m| (m.mark_key.as_str(), m)).collect();
    let new: BTreeMap<&str, &StaleMark> = marks.iter().map(|m| (m.mark_key.as_str(), m)).collect();
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
    Ok(())
}
