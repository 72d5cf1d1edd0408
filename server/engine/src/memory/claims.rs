//! Claims of memory: how answers show them, the fingerprint snapshots a revision takes of
//! what its claims name, and the resolution of path and symbol claims against the map.

use std::collections::BTreeSet;

use loci_core::claims::{ClaimKind, extract_claims};
use loci_store::map;
use loci_store::memory::{self as mem, ClaimDefinition, ClaimRow, Revision};
use loci_store::rusqlite::{Connection, Transaction};
use serde::{Deserialize, Serialize};

/// A claim as answers show it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClaimView {
    /// Row id.
    pub claim_id: i64,
    /// `path`, `symbol`, `version`.
    pub kind: String,
    /// As written.
    pub text: String,
    /// Normalized target.
    pub target: String,
    /// What it resolved to when snapshotted (a path or symbol key).
    pub resolved: Option<String>,
    /// For a symbol claim naming several definitions: their keys, tracked as one set
    /// (empty otherwise).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub definitions: Vec<String>,
    /// True for an imported claim that resolved where it was exported from but names
    /// nothing here (lint reports it missing); [`Self::resolved`] is then what it resolved
    /// to there, when the export carried its snapshot.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub resolved_elsewhere: bool,
    /// Zero-based line in the body.
    pub line: u32,
    /// What `loci lint` reports about the claim now, when it fails (a write's answer
    /// says so at once; `None` elsewhere, and when it holds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finding: Option<ClaimFinding>,
}

/// A failing claim as `loci lint` reports it ([`crate::audit::lint`]): its kind (`missing_path`,
/// `missing_symbol`, `version_mismatch`, …), severity (`high`, `medium`, `low`), what the
/// code says, and a fix when one is near.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClaimFinding {
    /// The finding's kind.
    pub kind: String,
    /// `high`, `medium` or `low`.
    pub severity: String,
    /// What the code says (`` `app/storage.py` does not exist ``).
    pub truth: Option<String>,
    /// The nearest existing path or name, if any.
    pub suggestion: Option<String>,
}

impl ClaimFinding {
    /// In words, as a write's claim line gives it: `missing_path [high]: `app/x.py` does
    /// not exist (did you mean `app/y.py`?); `loci lint` reports it`.
    pub fn describe(&self) -> String {
        format!(
            "{} [{}]{}{}; `loci lint` reports it",
            self.kind,
            self.severity,
            self.truth
                .as_ref()
                .map(|t| format!(": {t}"))
                .unwrap_or_default(),
            self.suggestion
                .as_ref()
                .map(|s| format!(" (did you mean `{s}`?)"))
                .unwrap_or_default()
        )
    }
}

impl ClaimView {
    /// What the claim is checked against, in words: `None` when it resolved to one target
    /// ([`Self::resolved`]) that this map holds; else `N definitions, tracked as a set: KEY, KEY`, or why it is
    /// not checked against a snapshot.
    pub fn untracked_or_set(&self) -> Option<String> {
        if self.resolved_elsewhere
            && let Some(there) = &self.resolved
        {
            return Some(format!(
                "not in this map, though it resolved to {there} where it was exported from: \
                 lint reports it"
            ));
        }
        if self.resolved.is_some() {
            return None;
        }
        Some(if !self.definitions.is_empty() {
            format!(
                "{} definitions, tracked as a set: {}",
                self.definitions.len(),
                self.definitions.join(", ")
            )
        } else if self.resolved_elsewhere {
            "not in this map, though it resolved where it was exported from: lint reports it".into()
        } else {
            untracked_reason(&self.kind).into()
        })
    }
}

/// Why a claim of `kind` that resolved to nothing is not tracked, in words (the CLI's and
/// MCP's claim lines): a path the map lacks, or a symbol with no definition in the map or
/// more than [`MAX_TRACKED_DEFINITIONS`]: each has its own text.
pub fn untracked_reason(kind: &str) -> &'static str {
    match kind {
        "path" => "no file or folder of that path in the map: not tracked",
        "symbol" => "no definition in the map, or more than the 8 a set tracks: not tracked",
        _ => "nothing in the map to check it against: not tracked",
    }
}

impl From<&ClaimRow> for ClaimView {
    fn from(c: &ClaimRow) -> ClaimView {
        ClaimView {
            claim_id: c.claim_id,
            kind: c.kind.clone(),
            text: c.text.clone(),
            target: c.target.clone(),
            resolved: c.resolved.clone(),
            definitions: c.definitions.iter().map(|d| d.key.clone()).collect(),
            resolved_elsewhere: c.resolved_elsewhere,
            line: c.line,
            finding: None,
        }
    }
}

/// The semantic fingerprint (or, for unparsed files, the content hash) of a file in the map.
pub(crate) fn file_fingerprint(
    conn: &Connection,
    path: &str,
) -> loci_store::Result<Option<String>> {
    loci_store::map::path_fingerprint(conn, path)
}

/// A file or folder page's subject as a revision snapshots it: a file's fingerprint in the
/// map, and whether the file or folder is missing altogether (in neither the map nor the
/// working tree: a page whose file was deleted, or an imported page about a path this
/// checkout lacks).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct SubjectSnapshot {
    /// [`file_fingerprint`] of a file subject (`None` for a folder).
    pub fingerprint: Option<String>,
    /// True when the subject is in neither the map nor the working tree under `root`.
    pub missing: bool,
}

/// The [`SubjectSnapshot`] of the page `subject` (repo-relative) of `kind` under `root`,
/// read now; `None` for pages that are not about a path (root, topics, decisions,
/// lessons).
pub(crate) fn subject_snapshot(
    conn: &Connection,
    root: &std::path::Path,
    subject: &str,
    kind: &str,
) -> loci_store::Result<Option<SubjectSnapshot>> {
    Ok(match kind {
        "file" => {
            let fingerprint = file_fingerprint(conn, subject)?;
            let missing = fingerprint.is_none() && !root.join(subject).exists();
            Some(SubjectSnapshot {
                fingerprint,
                missing,
            })
        }
        "folder" => Some(SubjectSnapshot {
            fingerprint: None,
            missing: resolve_path(conn, subject)?.is_none() && !root.join(subject).is_dir(),
        }),
        _ => None,
    })
}

/// A claim's snapshot as it was taken (where a revision was exported from, or when a
/// revision a rollback restores was written): what it resolved to and the fingerprints
/// then, the fields of [`ClaimRow`] that staleness compares with the code.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct ClaimSnapshot {
    /// The path or symbol key it resolved to (`None` for a set).
    pub resolved: Option<String>,
    /// The file's or the symbol body's fingerprint.
    pub snapshot: Option<String>,
    /// The symbol's signature fingerprint.
    pub signature_snapshot: Option<String>,
    /// The set of definitions, by key (empty unless the name had several).
    pub definitions: Vec<ClaimDefinition>,
}

impl ClaimSnapshot {
    /// The snapshot a claim row holds, if it holds one (it resolved to a target or a set).
    pub(crate) fn of(c: &ClaimRow) -> Option<ClaimSnapshot> {
        (c.resolved.is_some() || !c.definitions.is_empty()).then(|| ClaimSnapshot {
            resolved: c.resolved.clone(),
            snapshot: c.snapshot.clone(),
            signature_snapshot: c.signature_snapshot.clone(),
            definitions: c.definitions.clone(),
        })
    }

    /// The keys it names: the one it resolved to, or the set's.
    fn keys(&self) -> Vec<&str> {
        match &self.resolved {
            Some(k) => vec![k.as_str()],
            None => self.definitions.iter().map(|d| d.key.as_str()).collect(),
        }
    }
}

/// Where a new revision's claim snapshots come from.
#[derive(Clone, Copy)]
pub(super) enum Snapshots<'a> {
    /// The code as it is now (a page written or rewritten).
    Here,
    /// Another revision's (a rollback restores text, not its verification).
    Given(&'a Given),
}

/// The claim and subject snapshots of revision `revision_id`, to carry into another.
pub(super) fn given_of(
    conn: &loci_store::rusqlite::Connection,
    revision_id: i64,
) -> loci_store::Result<Given> {
    Ok(Given {
        claims: Some(
            mem::claims_of(conn, revision_id)?
                .iter()
                .filter(|c| ClaimSnapshot::of(c).is_some() || c.resolved_elsewhere)
                .map(|c| GivenClaim {
                    kind: c.kind.clone(),
                    target: c.target.clone(),
                    snapshot: ClaimSnapshot::of(c),
                    elsewhere: c.resolved_elsewhere,
                })
                .collect(),
        ),
        subject: mem::page_snapshot(conn, revision_id)?.map(|s| SubjectSnapshot {
            fingerprint: s.fingerprint,
            missing: s.subject_missing,
        }),
    })
}

/// A claim of a revision that was verified before this checkout wrote it
/// ([`Given::claims`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct GivenClaim {
    /// `path` or `symbol`.
    pub kind: String,
    /// The normalized target.
    pub target: String,
    /// Its snapshot there; `None` when only the fact that it resolved is known (an export
    /// written before exports carried snapshots, a claim imported from one).
    pub snapshot: Option<ClaimSnapshot>,
    /// True when it resolved in another checkout (every claim of an export; a restored
    /// claim that was imported so): if it names nothing here it is stored
    /// `resolved_elsewhere`, and lint reports it missing. A restored claim of this
    /// checkout's own whose code was deleted since is stale instead (deleted).
    pub elsewhere: bool,
}

/// The snapshots a new revision keeps instead of taking its own: the exporting checkout's
/// (`import`) or those of the revision a `rollback` restores. Restoring or carrying text
/// is not verifying it again (`confirm` does that), so a claim that was stale stays stale.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Given {
    /// The claims that resolved where the revision comes from, matched to the body's by
    /// kind and target (the first of each); `None` when not known (an export written
    /// before exports said which claims resolved: every path and symbol claim counts as
    /// resolved there).
    pub claims: Option<Vec<GivenClaim>>,
    /// The page's subject as snapshotted there (a file or folder page); `None` to take it
    /// here.
    pub subject: Option<SubjectSnapshot>,
}

/// A claim that names other code here than in its given snapshot ([`Given`]): a key the
/// map lacks, or another set of definitions. It keeps the given snapshot, so staleness
/// marks it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Diverged {
    /// The claim as written.
    pub text: String,
    /// What it named there: a key, or `N definitions`.
    pub there: String,
    /// What it names here.
    pub here: String,
}

/// What [`snapshot_revision`] stored.
#[derive(Clone, Debug, Default)]
pub(crate) struct Snapshotted {
    /// The claims as inserted (row ids not read back).
    pub claims: Vec<ClaimRow>,
    /// Claims with a given snapshot that name other code here (none without [`Given`]).
    pub diverged: Vec<Diverged>,
}

/// `key`, or `N definitions` for a set, or `nothing`.
fn named(keys: &[&str]) -> String {
    match keys {
        [] => "nothing".into(),
        [one] => (*one).to_string(),
        many => format!("{} definitions ({})", many.len(), many.join(", ")),
    }
}

/// The one way a new revision is checked against the code (`remember`, `decide`, `learn`,
/// `rollback`, `import`): its claims are extracted and resolved against the map with their
/// snapshots ([`resolve_claims`]), and a file or folder page's subject is snapshotted
/// (`subject`, `None` for other pages).
///
/// With `given` (import, rollback), a claim that has a given snapshot keeps it instead of
/// the one taken now, and the page keeps the given subject snapshot: staleness then
/// compares the code here with the code the text was verified against. A claim that
/// names other code here than its given snapshot is listed in [`Snapshotted::diverged`].
/// A claim that resolved in another checkout ([`GivenClaim::elsewhere`]) but names
/// nothing here is stored `resolved_elsewhere`, so lint reports it missing. A claim without a given snapshot is
/// snapshotted now, as `remember` does.
pub(crate) fn snapshot_revision(
    tx: &Transaction<'_>,
    revision: &Revision,
    page_subject: &str,
    subject: Option<&SubjectSnapshot>,
    given: Option<&Given>,
) -> loci_store::Result<Snapshotted> {
    let mut claims = resolve_claims(tx, &revision.body, Some(page_subject))?;
    let mut diverged = Vec::new();
    if let Some(given) = given {
        for c in &mut claims {
            if c.kind == "version" {
                continue;
            }
            let (elsewhere, snapshot) = match &given.claims {
                None => (true, None),
                Some(list) => match list
                    .iter()
                    .find(|g| g.kind == c.kind && g.target == c.target)
                {
                    Some(g) => (g.elsewhere, g.snapshot.as_ref()),
                    None => (false, None),
                },
            };
            let here = ClaimSnapshot::of(c);
            c.resolved_elsewhere = elsewhere && here.is_none();
            let Some(there) = snapshot else {
                continue;
            };
            let here_keys = here.as_ref().map(ClaimSnapshot::keys).unwrap_or_default();
            let there_keys = there.keys();
            // One key there: staleness follows that key, wherever the name resolves here.
            // A set: staleness compares the whole set with the one the name has here.
            let differs = match &there.resolved {
                Some(key) => !here_keys.contains(&key.as_str()),
                None => {
                    let mut a = here_keys.clone();
                    a.sort_unstable();
                    a != there_keys
                }
            };
            if differs && here.is_some() {
                diverged.push(Diverged {
                    text: c.text.clone(),
                    there: named(&there_keys),
                    here: named(&here_keys),
                });
            }
            c.resolved = there.resolved.clone();
            c.snapshot = there.snapshot.clone();
            c.signature_snapshot = there.signature_snapshot.clone();
            c.definitions = there.definitions.clone();
        }
    }
    mem::insert_claims(tx, revision.revision_id, &claims)?;
    let subject = match (subject, given.and_then(|g| g.subject.as_ref())) {
        (Some(_), Some(there)) => Some(there),
        (here, _) => here,
    };
    if let Some(s) = subject {
        mem::put_page_snapshot(
            tx,
            revision.revision_id,
            s.fingerprint.as_deref(),
            s.missing,
        )?;
    }
    Ok(Snapshotted { claims, diverged })
}

/// The most definitions a symbol claim is tracked as a set of: a name defined more often
/// (`new`, `__init__`) says too little about which code the prose means, and any edit to
/// any of them would mark it stale. Such a claim stays untracked, and says so.
pub const MAX_TRACKED_DEFINITIONS: usize = 8;

/// The snapshot of a set of definitions, ordered by key (see [`ClaimDefinition`]).
pub(crate) fn definitions_of(hits: &[map::SymbolHit]) -> Vec<ClaimDefinition> {
    let mut out: Vec<ClaimDefinition> = hits
        .iter()
        .map(|h| ClaimDefinition {
            key: h.key.clone(),
            body: h.body_fingerprint.clone(),
            signature: h.signature_fingerprint.clone(),
        })
        .collect();
    out.sort();
    out
}

/// Starts tracking the claims of current revisions that named nothing in the map when
/// written and do now: memory written before the first scan finished (it had stayed
/// untracked for good, and lint called it fine), or about code written since. A path or
/// symbol claim qualifies when it resolved to nothing, has no set of definitions and was
/// not imported as resolved elsewhere, and its target is now a mapped path or folder, or
/// its last name is defined; its revision's claims are resolved again and only those
/// claims take the new snapshot (one that resolved keeps its own: taking the code as it
/// is now would hide its staleness). Returns how many claims were snapshotted.
pub(crate) fn track_claims_resolved_since(tx: &Transaction<'_>) -> loci_store::Result<u64> {
    let mut tracked = track_pages_mapped_since(tx)?;
    let untracked = mem::untracked_current_claims(tx)?;
    let mut revisions: BTreeSet<i64> = BTreeSet::new();
    for (revision_id, kind, target) in &untracked {
        if revisions.contains(revision_id) {
            continue;
        }
        let now = if kind == "path" {
            resolve_path(tx, target)?.is_some()
        } else {
            let name = target.rsplit(['.', ':']).next().unwrap_or(target);
            loci_store::map::name_defined(tx, name)?
        };
        if now {
            revisions.insert(*revision_id);
        }
    }
    for revision_id in revisions {
        let Some(rev) = mem::revision_by_id(tx, revision_id)? else {
            continue;
        };
        let fresh = resolve_claims(tx, &rev.body, Some(&rev.subject))?;
        for (old, new) in mem::claims_of(tx, revision_id)?.iter().zip(&fresh) {
            let was_untracked = matches!(old.kind.as_str(), "path" | "symbol")
                && old.resolved.is_none()
                && old.definitions.is_empty()
                && !old.resolved_elsewhere;
            if was_untracked && (new.resolved.is_some() || !new.definitions.is_empty()) {
                mem::update_claim_snapshot(tx, old.claim_id, new)?;
                tracked += 1;
            }
        }
    }
    Ok(tracked)
}

/// Starts tracking the file pages written while their file was on disk but not in the map
/// (before the first scan, or before a scan mapped a new file): their snapshot had no
/// fingerprint, so no later change of the file ever marked them, and an export carried
/// `null`. Each such revision of a page whose file the map now holds takes the file's
/// fingerprint as the scan mapped it, the first code loci saw under the text. A page
/// written about a file missing altogether keeps its mark ("does not exist here", see
/// [`SubjectSnapshot`]). Returns how many snapshots were taken.
pub(crate) fn track_pages_mapped_since(tx: &Transaction<'_>) -> loci_store::Result<u64> {
    mem::snapshot_pages_mapped_since(tx)
}

/// Extracts the claims of a body and resolves each against the map, taking snapshots:
/// one target's fingerprints, or for a symbol with several definitions (up to
/// [`MAX_TRACKED_DEFINITIONS`]) the set of them. `subject` (a page's subject) breaks ties
/// between same-named symbols.
pub(crate) fn resolve_claims(
    conn: &Connection,
    body: &str,
    subject: Option<&str>,
) -> loci_store::Result<Vec<ClaimRow>> {
    let mut out = Vec::new();
    for c in extract_claims(body) {
        let mut definitions = Vec::new();
        let (resolved, snapshot, signature_snapshot) = match c.kind {
            ClaimKind::Path => match resolve_path(conn, &c.target)? {
                Some((path, fp)) => (Some(path), fp, None),
                None => (None, None, None),
            },
            ClaimKind::Symbol => match resolve_symbol(conn, &c.target, subject)? {
                SymbolResolution::Unique(s) => (
                    Some(s.key),
                    Some(s.body_fingerprint),
                    Some(s.signature_fingerprint),
                ),
                SymbolResolution::Ambiguous(hits) => {
                    if hits.len() <= MAX_TRACKED_DEFINITIONS {
                        definitions = definitions_of(&hits);
                    }
                    (None, None, None)
                }
                SymbolResolution::Missing => (None, None, None),
            },
            ClaimKind::Version => (None, None, None),
        };
        out.push(ClaimRow {
            claim_id: 0,
            revision_id: 0,
            kind: c.kind.as_str().into(),
            text: c.text,
            target: c.target,
            version: c.version,
            start_byte: c.start,
            end_byte: c.end,
            line: c.line,
            resolved,
            snapshot,
            signature_snapshot,
            snapshot_at: String::new(),
            definitions,
            resolved_elsewhere: false,
        });
    }
    Ok(out)
}

/// A path claim's target in the map: a file (with its fingerprint) or a folder (no
/// fingerprint). `None` when missing.
pub(crate) fn resolve_path(
    conn: &Connection,
    path: &str,
) -> loci_store::Result<Option<(String, Option<String>)>> {
    if let Some(fp) = file_fingerprint(conn, path)? {
        return Ok(Some((path.to_string(), Some(fp))));
    }
    let folder = loci_store::map::folder_has_files(conn, path)?;
    Ok(folder.then(|| (path.to_string(), None)))
}

/// How a symbol claim resolved.
#[derive(Clone, Debug)]
pub(crate) enum SymbolResolution {
    /// Exactly one definition.
    Unique(Box<map::SymbolHit>),
    /// Several definitions and nothing to choose between them: all of them (one per
    /// key; see [`symbol_candidates`] for the bound on their number).
    Ambiguous(Vec<map::SymbolHit>),
    /// None.
    Missing,
}

/// Resolves `A.b.c` (written `A::b::c`, `A.b.c()` ...): the qualified name exactly, then
/// its last two segments as a qualified-name suffix, then — a module path — a top-level
/// `c` in a file or folder named like the nearest qualifier segment that names one
/// (`json.decoder.scanstring` → `json/decoder.py`); a bare name matches by name. Ties are
/// broken by the page subject (a definition in that file or folder wins).
pub(crate) fn resolve_symbol(
    conn: &Connection,
    target: &str,
    subject: Option<&str>,
) -> loci_store::Result<SymbolResolution> {
    let mut candidates = definitions_named(conn, target, subject)?;
    match candidates.len() {
        0 => Ok(SymbolResolution::Missing),
        1 => Ok(SymbolResolution::Unique(Box::new(candidates.remove(0)))),
        _ => Ok(SymbolResolution::Ambiguous(candidates)),
    }
}

/// The definitions a claim on `target` in a page about `subject` names: those of
/// [`symbol_candidates`] in the subject's file or folder when there are any (the subject
/// breaks ties), else all of them. One is what the claim resolves to; several are the
/// set it is tracked as (the same rule when the claim was written and when it is checked).
pub(crate) fn definitions_named(
    conn: &Connection,
    target: &str,
    subject: Option<&str>,
) -> loci_store::Result<Vec<map::SymbolHit>> {
    let candidates = symbol_candidates(conn, target)?;
    if candidates.len() > 1
        && let Some(subject) = subject
    {
        let near: Vec<map::SymbolHit> = candidates
            .iter()
            .filter(|c| c.path == subject || c.path.starts_with(&format!("{subject}/")))
            .cloned()
            .collect();
        if !near.is_empty() {
            return Ok(near);
        }
    }
    Ok(candidates)
}

/// Every definition `target` names, one per key, before any tie-break (what
/// [`resolve_symbol`] chooses from): the map's matches of the qualified name (at most 50),
/// else of its last two segments or a module path, else of the bare name (at most 200).
pub(crate) fn symbol_candidates(
    conn: &Connection,
    target: &str,
) -> loci_store::Result<Vec<map::SymbolHit>> {
    let segs: Vec<&str> = target.split('.').filter(|s| !s.is_empty()).collect();
    let Some(last) = segs.last() else {
        return Ok(Vec::new());
    };
    let mut candidates = map::find_symbols(conn, target, 50)?;
    if candidates.is_empty() && segs.len() >= 2 {
        let tail = format!("{}.{}", segs[segs.len() - 2], last);
        candidates = map::find_symbols(conn, last, 200)?
            .into_iter()
            .filter(|s| s.qualified_name == tail || s.qualified_name.ends_with(&format!(".{tail}")))
            .collect();
        if candidates.is_empty() {
            // A module path (`os.path.join`, `loci_core::claims::extract_claims`): a
            // top-level definition in a file or folder named like the nearest qualifier
            // segment that names one. A farther segment names a package's own module only
            // (`email.py`, `email/__init__.py`, `email/mod.rs`: what it re-exports), never
            // any file under its folder: once `email/utils.py` is renamed,
            // `email.utils.formataddr` does not resolve to `email/addr.py` through
            // `email`, and the claim naming a module that is gone is not called fine.
            let tops: Vec<map::SymbolHit> = map::find_symbols(conn, last, 200)?
                .into_iter()
                .filter(|s| s.qualified_name == *last)
                .collect();
            for (i, seg) in segs[..segs.len() - 1].iter().rev().enumerate() {
                let named: Vec<map::SymbolHit> = tops
                    .iter()
                    .filter(|s| {
                        if i > 0 {
                            return package_module(&s.path, seg);
                        }
                        s.path
                            .split('/')
                            .any(|part| part == *seg || part.split('.').next() == Some(seg))
                    })
                    .cloned()
                    .collect();
                if !named.is_empty() {
                    candidates = named;
                    break;
                }
            }
        }
    } else if candidates.is_empty() {
        candidates = map::find_symbols(conn, last, 200)?;
    }
    // Definitions only count once per key.
    let mut seen = BTreeSet::new();
    candidates.retain(|c| seen.insert(c.key.clone()));
    Ok(candidates)
}

/// Whether `path` is the module of package `name` itself: `name.py` (any extension) or the
/// index file of a folder `name` (`__init__.py`, `mod.rs`, `lib.rs`, `index.js`, …).
fn package_module(path: &str, name: &str) -> bool {
    let mut parts = path.rsplit('/');
    let file = parts.next().unwrap_or(path);
    let stem = file.split('.').next().unwrap_or(file);
    stem == name
        || (matches!(stem, "__init__" | "mod" | "lib" | "index") && parts.next() == Some(name))
}
