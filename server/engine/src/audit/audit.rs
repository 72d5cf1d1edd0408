//! The audit: memory checked against the code. Staleness (a claim's target still exists
//! but its fingerprint differs from the snapshot taken when the claim was written; a file
//! page whose file's semantic fingerprint changed) is computed here, deterministically,
//! from the map as it is. A scan stores every current revision's marks when it finishes
//! (and a memory write those of its revision) for readers that serve many pages at once
//! ([`store_marks`]; `0015_revision_marks.sql` says when a row is used), so they are never
//! out of date either.

use std::collections::{BTreeSet, HashMap, HashSet};

use loci_store::map;
use loci_store::memory as mem;
use loci_store::rusqlite::Connection;
use serde::{Deserialize, Serialize};

use crate::memory::claims::file_fingerprint;

/// Why a piece of memory is stale.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum StaleReason {
    /// The symbol's body changed (comments and whitespace do not count).
    BodyChanged {
        /// The symbol key.
        target: String,
    },
    /// The symbol's signature changed.
    SignatureChanged {
        /// The symbol key.
        target: String,
    },
    /// The symbol is gone from its file but a definition with its name exists elsewhere.
    Moved {
        /// The old key.
        from: String,
        /// The new key.
        to: String,
    },
    /// The target no longer exists (for a claim naming several definitions: none of them
    /// is left, and `target` is the name).
    Deleted {
        /// The path or symbol key.
        target: String,
        /// True when the target was already missing when the revision was written: a
        /// file page written (or imported) about a file that this checkout lacks.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        missing_when_written: bool,
    },
    /// The file is still in the checkout but the map no longer holds it: the last scan
    /// skipped it (`reason` as in `skipped_files`: `too_large`, `binary`, `secret`, …), so
    /// nothing about it can be checked until it is mapped again.
    Unmapped {
        /// The path.
        target: String,
        /// The skip's reason, as the scan summary counts it.
        reason: String,
        /// The skip's detail (the size over the cap, the OS error), if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        detail: Option<String>,
    },
    /// A symbol claim naming several definitions (`RegexBuilder::new` in two modules),
    /// snapshotted as the set of them: the set or one of their bodies or signatures changed.
    DefinitionsChanged {
        /// The name as the claim normalizes it (`RegexBuilder.new`).
        target: String,
        /// Keys defined now that the snapshot did not hold.
        added: Vec<String>,
        /// Keys of the snapshot no longer defined.
        removed: Vec<String>,
        /// Keys whose body or signature differs from the snapshot.
        changed: Vec<String>,
    },
    /// The file changed (its semantic fingerprint differs).
    FileChanged {
        /// The path.
        path: String,
    },
}

/// One stale mark.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Staleness {
    /// The page's subject.
    pub subject: String,
    /// The revision concerned.
    pub revision_id: i64,
    /// Its version.
    pub version: i64,
    /// The claim, when the mark is about a claim (not the page's own file).
    pub claim_id: Option<i64>,
    /// The claim's text, if any.
    pub claim_text: Option<String>,
    /// Why.
    pub reason: StaleReason,
}

impl Staleness {
    /// A one-line description (`` `login()` is stale: body changed since 2026-11-01 ``).
    pub fn describe(&self) -> String {
        let what = match &self.claim_text {
            Some(t) => format!("memory `{}` v{} claim `{t}`", self.subject, self.version),
            None => format!("memory `{}` v{}", self.subject, self.version),
        };
        let why = match &self.reason {
            StaleReason::BodyChanged { target } => format!("body of {target} changed"),
            StaleReason::SignatureChanged { target } => format!("signature of {target} changed"),
            StaleReason::Moved { from, to } => format!("{from} moved to {to}"),
            StaleReason::Deleted {
                target,
                missing_when_written: true,
            } => {
                return format!(
                    "{what} is stale: {target} does not exist here (it was missing when this \
                     revision was written or imported)"
                );
            }
            StaleReason::Deleted { target, .. } => format!("{target} was deleted"),
            StaleReason::Unmapped {
                target,
                reason,
                detail,
            } => {
                let detail = detail
                    .as_deref()
                    .map(|d| format!(": {d}"))
                    .unwrap_or_default();
                let reason = reason.replace('_', " ");
                return format!(
                    "{what} cannot be checked: {target} is no longer mapped (the last scan \
                     skipped its file: {reason}{detail})"
                );
            }
            StaleReason::FileChanged { path } => format!("{path} changed"),
            StaleReason::DefinitionsChanged {
                target,
                added,
                removed,
                changed,
            } => {
                let mut parts = Vec::new();
                for (label, keys) in [("changed", changed), ("added", added), ("removed", removed)]
                {
                    if !keys.is_empty() {
                        parts.push(format!("{label} {}", keys.join(", ")));
                    }
                }
                format!("the definitions of {target} changed ({})", parts.join("; "))
            }
        };
        format!("{what} is stale: {why} since it was written")
    }
}

/// A symbol's current fingerprints, for comparing with a claim's snapshots.
#[derive(Clone)]
struct Fingerprints {
    body: String,
    signature: String,
}

/// The fingerprints of the symbol with exactly this key (as [`map::symbol_by_key`] finds
/// it, without reading the rest of its row).
fn symbol_fingerprints(conn: &Connection, key: &str) -> loci_store::Result<Option<Fingerprints>> {
    Ok(loci_store::map::symbol_fingerprints(conn, key)?
        .map(|(body, signature)| Fingerprints { body, signature }))
}

/// The current fingerprints of these files (as [`file_fingerprint`] reads each), by path;
/// paths not in the map are absent.
fn file_fingerprints(
    conn: &Connection,
    paths: &[&str],
) -> loci_store::Result<HashMap<String, String>> {
    loci_store::map::path_fingerprints(conn, paths)
}

/// The fingerprints of the symbols with these keys (as [`symbol_fingerprints`] reads
/// each), by key; keys not in the map are absent.
fn symbols_fingerprints(
    conn: &Connection,
    keys: &[&str],
) -> loci_store::Result<HashMap<String, Fingerprints>> {
    Ok(loci_store::map::symbols_fingerprints(conn, keys)?
        .into_iter()
        .map(|(key, (body, signature))| (key, Fingerprints { body, signature }))
        .collect())
}

/// Stale marks of one revision (none for pinned pages).
pub fn revision_staleness(
    conn: &Connection,
    revision_id: i64,
) -> loci_store::Result<Vec<Staleness>> {
    let Some(rev) = mem::revision_by_id(conn, revision_id)? else {
        return Ok(Vec::new());
    };
    let Some(page) = mem::page_by_id(conn, rev.page_id)? else {
        return Ok(Vec::new());
    };
    revision_staleness_of(conn, &rev, &page)
}

/// What staleness reads about a revision and the code: one statement per question
/// ([`Direct`]) or everything for many revisions read up front ([`Batch`]). Both answer
/// alike, so both ways mark alike.
trait Lookups {
    /// A file or folder page's snapshot of its subject, if any.
    fn page_snapshot(&self, revision_id: i64) -> loci_store::Result<Option<mem::PageSnapshot>>;
    /// The revision's claims, by span.
    fn claims(&self, revision_id: i64) -> loci_store::Result<Vec<mem::ClaimRow>>;
    /// A file's current fingerprint, `None` when it is not in the map.
    fn file(&self, path: &str) -> loci_store::Result<Option<String>>;
    /// A symbol's current fingerprints, `None` when no symbol has this key.
    fn symbol(&self, key: &str) -> loci_store::Result<Option<Fingerprints>>;
}

/// One statement per lookup.
struct Direct<'c>(&'c Connection);

impl Lookups for Direct<'_> {
    fn page_snapshot(&self, revision_id: i64) -> loci_store::Result<Option<mem::PageSnapshot>> {
        mem::page_snapshot(self.0, revision_id)
    }
    fn claims(&self, revision_id: i64) -> loci_store::Result<Vec<mem::ClaimRow>> {
        mem::claims_of(self.0, revision_id)
    }
    fn file(&self, path: &str) -> loci_store::Result<Option<String>> {
        file_fingerprint(self.0, path)
    }
    fn symbol(&self, key: &str) -> loci_store::Result<Option<Fingerprints>> {
        symbol_fingerprints(self.0, key)
    }
}

/// Everything the marks of a set of revisions need, read in four statements.
struct Batch {
    snapshots: HashMap<i64, mem::PageSnapshot>,
    claims: HashMap<i64, Vec<mem::ClaimRow>>,
    files: HashMap<String, String>,
    symbols: HashMap<String, Fingerprints>,
}

impl Lookups for Batch {
    fn page_snapshot(&self, revision_id: i64) -> loci_store::Result<Option<mem::PageSnapshot>> {
        Ok(self.snapshots.get(&revision_id).cloned())
    }
    fn claims(&self, revision_id: i64) -> loci_store::Result<Vec<mem::ClaimRow>> {
        Ok(self.claims.get(&revision_id).cloned().unwrap_or_default())
    }
    fn file(&self, path: &str) -> loci_store::Result<Option<String>> {
        Ok(self.files.get(path).cloned())
    }
    fn symbol(&self, key: &str) -> loci_store::Result<Option<Fingerprints>> {
        Ok(self.symbols.get(key).cloned())
    }
}

/// [`revision_staleness`] of a revision and its page already read (`page` must be
/// `rev`'s page).
pub fn revision_staleness_of(
    conn: &Connection,
    rev: &mem::Revision,
    page: &mem::Page,
) -> loci_store::Result<Vec<Staleness>> {
    staleness_with(conn, &Direct(conn), rev, page)
}

/// The stale marks of many revisions (each with its page), by revision id: what
/// [`revision_staleness_of`] gives each, with the claims, snapshots and fingerprints of all
/// of them read in four statements instead of several per revision.
pub fn revisions_staleness(
    conn: &Connection,
    revisions: &[(&mem::Revision, &mem::Page)],
) -> loci_store::Result<HashMap<i64, Vec<Staleness>>> {
    let live: Vec<(&mem::Revision, &mem::Page)> = revisions
        .iter()
        .copied()
        .filter(|(_, p)| !p.pinned)
        .collect();
    let ids: Vec<i64> = live.iter().map(|(r, _)| r.revision_id).collect();
    let file_pages: Vec<i64> = live
        .iter()
        .filter(|(_, p)| p.kind == "file" || p.kind == "folder")
        .map(|(r, _)| r.revision_id)
        .collect();
    let claims = mem::claims_of_revisions(conn, &ids)?;
    let mut paths: Vec<&str> = live
        .iter()
        .filter(|(_, p)| p.kind == "file")
        .map(|(_, p)| p.subject.as_str())
        .collect();
    let mut keys: Vec<&str> = Vec::new();
    for c in claims.values().flatten() {
        if let Some(resolved) = c.resolved.as_deref() {
            match c.kind.as_str() {
                "path" => paths.push(resolved),
                "symbol" => keys.push(resolved),
                _ => {}
            }
        }
    }
    let batch = Batch {
        snapshots: mem::page_snapshots(conn, &file_pages)?,
        files: file_fingerprints(conn, &paths)?,
        symbols: symbols_fingerprints(conn, &keys)?,
        claims,
    };
    let mut out = HashMap::new();
    for (rev, page) in revisions {
        out.insert(rev.revision_id, staleness_with(conn, &batch, rev, page)?);
    }
    Ok(out)
}

/// Version of the rules a revision's marks are made by ([`revision_staleness_of`] and the
/// shape of [`Staleness`]), stored with them (`revision_marks.rules`): marks a loci with
/// other rules stored are made again. Bump it with any change to what a revision's marks
/// are. 2: a claim written more than once in a body is marked once.
pub const MARK_RULES: u32 = 2;

/// Stores the marks of revisions ([`revisions_staleness`], as JSON) for readers, when
/// the last scan finished (else nothing: no row would be used): with `None`, of every
/// current revision that has no usable row, dropping the rows no longer usable (the end
/// of a scan); else of the revisions `ids`. Runs in the caller's write transaction.
///
/// Errors: [`loci_store::StoreError::Sqlite`] when memory or the map cannot be read or
/// the rows written.
pub fn store_marks(tx: &Connection, ids: Option<&[i64]>) -> loci_store::Result<()> {
    let Some(scan_id) = mem::marks_scan(tx)? else {
        return Ok(());
    };
    let revisions: Vec<mem::Revision> = match ids {
        None => {
            // The marks of the scan before stay those of this one but for the revisions
            // what this scan changed concerns ([`map_changes`]; lint forgets the changes
            // only after this, under the same store lock), when no scan ran in between.
            if let Some(before) = mem::finished_scan_before(tx, scan_id)?
                && let Some(changes) = map_changes(tx)?
            {
                let moved: Vec<i64> = loci_store::audit::revisions_to_check(
                    tx,
                    &changes.names(),
                    &changes.subjects(),
                    i64::MAX,
                    false,
                )?
                .into_iter()
                .map(|(id, _)| id)
                .collect();
                mem::carry_marks(tx, before, scan_id, MARK_RULES, &moved)?;
            }
            mem::unmarked_current_revisions(tx, scan_id, MARK_RULES)?
        }
        Some(ids) => {
            let mut out = Vec::new();
            for &id in ids {
                out.extend(mem::revision_by_id(tx, id)?);
            }
            out
        }
    };
    if revisions.is_empty() {
        return Ok(());
    }
    // The pages of the revisions marked only, so that marking costs what it marks (after a
    // scan, the revisions its changes concern), not what memory holds.
    let pages = pages_of(tx, &revisions)?;
    let pairs: Vec<(&mem::Revision, &mem::Page)> = revisions
        .iter()
        .filter_map(|r| Some((r, pages.get(&r.page_id)?)))
        .collect();
    let marks = revisions_staleness(tx, &pairs)?;
    let mut rows = Vec::with_capacity(pairs.len());
    for (r, _) in &pairs {
        let json = serde_json::to_string(marks.get(&r.revision_id).map_or(&[][..], |m| m))
            .map_err(|e| loci_store::StoreError::Corrupt(e.to_string()))?;
        rows.push((r.revision_id, json));
    }
    mem::store_marks(tx, scan_id, MARK_RULES, &rows, ids.is_none())
}

/// The pages of `revisions`, by page id, each read once.
fn pages_of(
    conn: &Connection,
    revisions: &[mem::Revision],
) -> loci_store::Result<HashMap<i64, mem::Page>> {
    let mut pages = HashMap::new();
    for r in revisions {
        if !pages.contains_key(&r.page_id)
            && let Some(p) = mem::page_by_id(conn, r.page_id)?
        {
            pages.insert(p.page_id, p);
        }
    }
    Ok(pages)
}

/// Whether [`store_marks`] with `None` has anything to store: the last scan finished and
/// a current revision has no usable row.
///
/// Errors: [`loci_store::StoreError::Sqlite`] when memory cannot be read.
pub fn marks_missing(conn: &Connection) -> loci_store::Result<bool> {
    Ok(match mem::marks_scan(conn)? {
        Some(scan_id) => !mem::unmarked_current_revisions(conn, scan_id, MARK_RULES)?.is_empty(),
        None => false,
    })
}

/// The stored marks of those of `revisions` that have a row usable now (see
/// [`store_marks`]), by revision id; a row that does not parse is left out (its marks are
/// made again by the caller).
///
/// Errors: [`loci_store::StoreError::Sqlite`] when the rows cannot be read.
pub fn stored_staleness(
    conn: &Connection,
    revisions: &[i64],
) -> loci_store::Result<HashMap<i64, Vec<Staleness>>> {
    Ok(mem::stored_marks(conn, revisions, MARK_RULES)?
        .into_iter()
        .filter_map(|(id, json)| Some((id, serde_json::from_str(&json).ok()?)))
        .collect())
}

/// More names than this changed in the map (a rescan of much of the repository): memory
/// is checked in full, which is then cheaper than reading the claims of each name.
const MAX_CHANGED_NAMES: usize = 20_000;

/// What the map changed since lint last looked (`map_changes`, migration 0024), as what
/// memory can depend on. A claim's verdict and marks depend on the map only through the
/// definitions and files of its name ([`loci_store::audit::CLAIM_NAME`]; a qualified
/// name's qualifier lives in the same file as its member, so a change to it records the
/// member's name too) and on the manifests for a version claim; a file or folder page's
/// marks on the files at and under its subject.
#[derive(Debug, Default)]
pub struct MapChanges {
    /// Claim names: symbol names, and the file names, stems and folder names of paths.
    names: BTreeSet<String>,
    /// Page subjects: each changed path and the folders above it.
    subjects: BTreeSet<String>,
    /// Whether a manifest (`Cargo.toml`, `package.json`, …) changed.
    pub manifests: bool,
}

impl MapChanges {
    /// The claim names, for [`loci_store::audit::revisions_to_check`].
    pub fn names(&self) -> Vec<&str> {
        self.names.iter().map(String::as_str).collect()
    }

    /// The page subjects, for [`loci_store::audit::revisions_to_check`].
    pub fn subjects(&self) -> Vec<&str> {
        self.subjects.iter().map(String::as_str).collect()
    }

    /// Whether the map changed nothing (no name, no path, no manifest).
    pub fn is_empty(&self) -> bool {
        self.names.is_empty() && self.subjects.is_empty() && !self.manifests
    }
}

/// What the map changed since lint last looked; `None` when anything may have (a new or
/// migrated store, or more than [`MAX_CHANGED_NAMES`] names).
///
/// Errors: [`loci_store::StoreError::Sqlite`] when the changes cannot be read.
pub fn map_changes(conn: &Connection) -> loci_store::Result<Option<MapChanges>> {
    let Some(changes) = loci_store::audit::map_changes(conn)? else {
        return Ok(None);
    };
    let mut out = MapChanges::default();
    for change in changes {
        let Some(path) = change.strip_prefix('/') else {
            out.names.insert(change);
            continue;
        };
        out.manifests |= crate::map::manifests::is_manifest(path);
        // A path claim is named by its last segment, a file or a folder; a module written
        // as a symbol (`json.decoder`) by the file's stem.
        let mut segments = path.split('/');
        if let Some(file) = segments.next_back() {
            if let Some((stem, _)) = file.rsplit_once('.') {
                out.names.insert(stem.to_string());
            }
            out.names.insert(file.to_string());
        }
        out.names.extend(segments.map(str::to_string));
        let mut at = path;
        out.subjects.insert(at.to_string());
        while let Some((folder, _)) = at.rsplit_once('/') {
            out.subjects.insert(folder.to_string());
            at = folder;
        }
    }
    Ok((out.names.len() <= MAX_CHANGED_NAMES).then_some(out))
}

/// The stale marks of every current revision, by subject: those the last scan (or the
/// write of a revision since) stored for the map as it is, read through the index of
/// stale rows, and those of revisions without a usable row, made now. It costs what is
/// stale or unmarked, not what memory holds.
///
/// Errors: [`loci_store::StoreError::Sqlite`] when memory or the map cannot be read.
pub fn current_staleness(conn: &Connection) -> loci_store::Result<Vec<Staleness>> {
    let mut marks_of: HashMap<i64, Vec<Staleness>> = mem::stale_current_marks(conn, MARK_RULES)?
        .into_iter()
        .filter_map(|(id, json)| Some((id, serde_json::from_str(&json).ok()?)))
        .collect();
    let scan_id = mem::marks_scan(conn)?.unwrap_or(-1);
    let unmarked = mem::unmarked_current_revisions(conn, scan_id, MARK_RULES)?;
    let pages = pages_of(conn, &unmarked)?;
    let pairs: Vec<(&mem::Revision, &mem::Page)> = unmarked
        .iter()
        .filter_map(|r| Some((r, pages.get(&r.page_id)?)))
        .collect();
    marks_of.extend(revisions_staleness(conn, &pairs)?);
    let mut stale: Vec<Vec<Staleness>> = marks_of.into_values().filter(|m| !m.is_empty()).collect();
    stale.sort_by(|a, b| (&a[0].subject, a[0].revision_id).cmp(&(&b[0].subject, b[0].revision_id)));
    Ok(stale.into_iter().flatten().collect())
}

/// Why a file or symbol (`path#qualified.name@kind`) the snapshot held is not in the map:
/// its file was skipped by the last scan ([`StaleReason::Unmapped`], read only here, when
/// a target is missing), else it was deleted.
fn gone(conn: &Connection, target: &str) -> loci_store::Result<StaleReason> {
    let path = target.split_once('#').map_or(target, |(path, _)| path);
    Ok(match map::skipped_file(conn, path)? {
        Some(skip) => StaleReason::Unmapped {
            target: target.to_string(),
            reason: skip.reason,
            detail: skip.detail,
        },
        None => StaleReason::Deleted {
            target: target.to_string(),
            missing_when_written: false,
        },
    })
}

/// The marks of one revision, reading through `lookups` (and `conn` for the rare moved
/// symbol).
fn staleness_with(
    conn: &Connection,
    lookups: &impl Lookups,
    rev: &mem::Revision,
    page: &mem::Page,
) -> loci_store::Result<Vec<Staleness>> {
    let revision_id = rev.revision_id;
    if page.pinned {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    let mark = |claim: Option<&mem::ClaimRow>, reason| Staleness {
        subject: page.subject.clone(),
        revision_id,
        version: rev.version,
        claim_id: claim.map(|c| c.claim_id),
        claim_text: claim.map(|c| c.text.clone()),
        reason,
    };
    if page.kind == "folder"
        && let Some(snap) = lookups.page_snapshot(revision_id)?
        && snap.subject_missing
        && crate::memory::claims::resolve_path(conn, &page.subject)?.is_none()
    {
        // Written about a folder this checkout lacked, and still lacks.
        out.push(mark(
            None,
            StaleReason::Deleted {
                target: page.subject.clone(),
                missing_when_written: true,
            },
        ));
    }
    if page.kind == "file"
        && let Some(snap) = lookups.page_snapshot(revision_id)?
    {
        match (lookups.file(&page.subject)?, snap.fingerprint) {
            (Some(now), Some(snapshot)) if now != snapshot => out.push(mark(
                None,
                StaleReason::FileChanged {
                    path: page.subject.clone(),
                },
            )),
            // Written (or imported, with the exporting checkout's fingerprint) about a file
            // this checkout lacked, and still lacks.
            (None, _) if snap.subject_missing => out.push(mark(
                None,
                match gone(conn, &page.subject)? {
                    StaleReason::Deleted { target, .. } => StaleReason::Deleted {
                        target,
                        missing_when_written: true,
                    },
                    unmapped => unmapped,
                },
            )),
            (None, Some(_)) => out.push(mark(None, gone(conn, &page.subject)?)),
            _ => {}
        }
    }
    // A claim written twice in one body (`decode_rfc2231()` in two sentences) is one
    // fact: one mark, not one per mention.
    let mut seen: HashSet<(String, String, Option<String>, Option<String>)> = HashSet::new();
    for claim in lookups.claims(revision_id)? {
        if !seen.insert((
            claim.kind.clone(),
            claim.target.clone(),
            claim.resolved.clone(),
            claim.snapshot.clone(),
        )) {
            continue;
        }
        if claim.kind == "symbol" && !claim.definitions.is_empty() {
            if let Some(reason) = definitions_staleness(conn, &claim, &page.subject)? {
                out.push(mark(Some(&claim), reason));
            }
            continue;
        }
        let (Some(resolved), Some(snapshot)) = (&claim.resolved, &claim.snapshot) else {
            continue;
        };
        match claim.kind.as_str() {
            "path" => match lookups.file(resolved)? {
                Some(now) if &now != snapshot => out.push(mark(
                    Some(&claim),
                    StaleReason::FileChanged {
                        path: resolved.clone(),
                    },
                )),
                // Imported about a file this checkout lacks: lint's `missing_path` says so.
                None if claim.resolved_elsewhere => {}
                None => out.push(mark(Some(&claim), gone(conn, resolved)?)),
                _ => {}
            },
            "symbol" => match lookups.symbol(resolved)? {
                Some(now) => {
                    if claim
                        .signature_snapshot
                        .as_deref()
                        .is_some_and(|s| s != now.signature)
                    {
                        out.push(mark(
                            Some(&claim),
                            StaleReason::SignatureChanged {
                                target: resolved.clone(),
                            },
                        ));
                    } else if &now.body != snapshot {
                        out.push(mark(
                            Some(&claim),
                            StaleReason::BodyChanged {
                                target: resolved.clone(),
                            },
                        ));
                    }
                }
                None => {
                    if let Some(reason) = symbol_gone(conn, &claim, resolved, &page.subject)? {
                        out.push(mark(Some(&claim), reason));
                    }
                }
            },
            _ => {}
        }
    }
    Ok(out)
}

/// Why a symbol claim whose resolved definition is gone is stale: moved, when one
/// definition answers for it now (the one the claim names by the rule it resolved by,
/// else the one symbol of its qualified name), else gone. `None` for a claim imported
/// about a symbol this checkout lacks: lint's `missing_symbol` says so.
fn symbol_gone(
    conn: &Connection,
    claim: &mem::ClaimRow,
    resolved: &str,
    subject: &str,
) -> loci_store::Result<Option<StaleReason>> {
    let mut moved = crate::memory::claims::definitions_named(conn, &claim.target, Some(subject))?;
    if moved.len() != 1 {
        let name = resolved
            .split_once('#')
            .map(|(_, q)| q.split('@').next().unwrap_or(q))
            .unwrap_or(resolved);
        moved = map::find_symbols(conn, name, 2)?;
    }
    if moved.len() == 1 {
        Ok(Some(StaleReason::Moved {
            from: resolved.to_string(),
            to: moved[0].key.clone(),
        }))
    } else if moved.is_empty() && claim.resolved_elsewhere {
        Ok(None)
    } else {
        Ok(Some(gone(conn, resolved)?))
    }
}

/// Why a claim snapshotted as a set of definitions ([`mem::ClaimDefinition`]) is stale, if
/// it is: its name defines nothing now ([`StaleReason::Deleted`]), or the definitions it
/// names now in a page about `subject` ([`crate::memory::claims::definitions_named`], the rule it
/// was snapshotted by) differ from the snapshot in keys, bodies or signatures
/// ([`StaleReason::DefinitionsChanged`]).
fn definitions_staleness(
    conn: &Connection,
    claim: &mem::ClaimRow,
    subject: &str,
) -> loci_store::Result<Option<StaleReason>> {
    let now = crate::memory::claims::definitions_of(&crate::memory::claims::definitions_named(
        conn,
        &claim.target,
        Some(subject),
    )?);
    if now.is_empty() {
        if claim.resolved_elsewhere {
            // Imported about definitions this checkout lacks: lint's `missing_symbol` says so.
            return Ok(None);
        }
        return Ok(Some(StaleReason::Deleted {
            target: claim.target.clone(),
            missing_when_written: false,
        }));
    }
    let then: HashMap<&str, &mem::ClaimDefinition> = claim
        .definitions
        .iter()
        .map(|d| (d.key.as_str(), d))
        .collect();
    let current: HashMap<&str, &mem::ClaimDefinition> =
        now.iter().map(|d| (d.key.as_str(), d)).collect();
    let mut added: Vec<String> = now
        .iter()
        .filter(|d| !then.contains_key(d.key.as_str()))
        .map(|d| d.key.clone())
        .collect();
    let mut removed: Vec<String> = claim
        .definitions
        .iter()
        .filter(|d| !current.contains_key(d.key.as_str()))
        .map(|d| d.key.clone())
        .collect();
    let mut changed: Vec<String> = claim
        .definitions
        .iter()
        .filter(|d| {
            current
                .get(d.key.as_str())
                .is_some_and(|c| c.body != d.body || c.signature != d.signature)
        })
        .map(|d| d.key.clone())
        .collect();
    if added.is_empty() && removed.is_empty() && changed.is_empty() {
        return Ok(None);
    }
    added.sort();
    removed.sort();
    changed.sort();
    Ok(Some(StaleReason::DefinitionsChanged {
        target: claim.target.clone(),
        added,
        removed,
        changed,
    }))
}
