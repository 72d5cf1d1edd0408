//! Renames a scan finds (a deleted file's content added under another path, and folders
//! moved whole), the deletions written with memory following each unambiguous rename,
//! and the drift entries they make.

use std::collections::{BTreeMap, HashMap, HashSet};

use loci_store::Store;
use loci_store::map::{self, FileState};

use crate::Result;

use super::{Rename, ScanReport, Writer};

/// Deletions (files no longer walked, or walked but now unusable) and renames: the
/// renames found among them, the drift entries they make, and the deletions written with
/// memory following each unambiguous rename. Returns the renames memory follows, the
/// pages moved, and whether anything was gone.
pub(super) fn renames_and_deletions(
    writer: &mut Writer<'_, '_>,
    gone: &[FileState],
    gone_too: &[FileState],
    report: &mut ScanReport,
) -> Result<(Vec<Rename>, Vec<Rename>, bool)> {
    let gone_all: Vec<&FileState> = gone.iter().chain(gone_too.iter()).collect();
    // Renames are found before the deletions (the new files are written, the old rows are
    // still there), so memory follows a renamed file in the deletions' transaction.
    report.added.sort();
    report.renamed = detect_renames(&gone_all, &report.added, writer.store)?;
    // A rename is reported, and entered in the drift ledger, as a rename only, not also
    // as an add and a delete.
    let moved_to: HashSet<String> = report.renamed.iter().map(|r| r.to.clone()).collect();
    let moved_from: HashSet<String> = report.renamed.iter().map(|r| r.from.clone()).collect();
    report.added.retain(|p| !moved_to.contains(p.as_str()));
    let follow: Vec<Rename> = unambiguous_renames(report, &gone_all, writer.store)?
        .into_iter()
        .cloned()
        .collect();
    let files_moved = writer.delete(&gone_all, report, &follow)?;
    report.deleted.retain(|p| !moved_from.contains(p.as_str()));
    writer.drift.retain(|d| match d.kind {
        "add" => !moved_to.contains(d.path.as_str()),
        "delete" => !moved_from.contains(d.path.as_str()),
        _ => true,
    });
    for r in &report.renamed {
        let hash = gone_all
            .iter()
            .find(|g| g.path == r.from)
            .map(|g| g.content_hash.clone());
        writer.drift.push(map::DriftEntry {
            path: r.to.clone(),
            kind: "rename",
            old_hash: hash.clone(),
            new_hash: hash,
            detail: Some(r.from.clone()),
        });
    }
    Ok((follow, files_moved, !gone_all.is_empty()))
}

/// Pairs deleted files with added files of the same content (one-to-one, by path order).
fn detect_renames(gone: &[&FileState], added: &[String], store: &Store) -> Result<Vec<Rename>> {
    if gone.is_empty() || added.is_empty() {
        return Ok(Vec::new());
    }
    let mut by_hash: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for g in gone {
        by_hash
            .entry(g.content_hash.as_str())
            .or_default()
            .push(&g.path);
    }
    let mut renames = Vec::new();
    for path in added {
        let hash = map::content_hash(store.conn(), path)?;
        if let Some(from) = hash.and_then(|h| by_hash.get_mut(h.as_str()))
            && !from.is_empty()
        {
            renames.push(Rename {
                from: from.remove(0).to_string(),
                to: path.clone(),
            });
        }
    }
    Ok(renames)
}

/// The folders that moved with the files in them, from `renames` (the unambiguous ones):
/// `a/x/f.py` → `b/x/f.py` moves `a/x` to `b/x` and `a` to `b` (the parts the two paths end
/// with are the same), when every such rename out of a folder agrees on where it went and
/// no file of the map is left under the old folder. Folders in path order.
pub(super) fn folder_moves(renames: &[&Rename], store: &Store) -> Result<Vec<Rename>> {
    let mut to_of: BTreeMap<String, Option<String>> = BTreeMap::new();
    for r in renames {
        let from: Vec<&str> = r.from.split('/').collect();
        let to: Vec<&str> = r.to.split('/').collect();
        let common = from
            .iter()
            .rev()
            .zip(to.iter().rev())
            .take_while(|(a, b)| a == b)
            .count();
        // The file name and each folder above it that kept its name, while both paths
        // still have a folder above it.
        for kept in 1..=common.min(from.len() - 1).min(to.len() - 1) {
            let old = from[..from.len() - kept].join("/");
            let new = to[..to.len() - kept].join("/");
            let entry = to_of.entry(old).or_insert_with(|| Some(new.clone()));
            if entry.as_deref() != Some(new.as_str()) {
                *entry = None;
            }
        }
    }
    let mut out = Vec::new();
    for (from, to) in to_of {
        let Some(to) = to else { continue };
        if !map::folder_has_files(store.conn(), &from)? {
            out.push(Rename { from, to });
        }
    }
    Ok(out)
}

/// The renames memory follows (see [`ScanReport::pages_moved`]): those whose content no
/// other file deleted in this scan had and no other file added in it has.
fn unambiguous_renames<'r>(
    report: &'r ScanReport,
    gone: &[&FileState],
    store: &Store,
) -> Result<Vec<&'r Rename>> {
    if report.renamed.is_empty() {
        return Ok(Vec::new());
    }
    let mut added: HashMap<String, usize> = HashMap::new();
    for path in report
        .added
        .iter()
        .chain(report.renamed.iter().map(|r| &r.to))
    {
        let hash = map::content_hash(store.conn(), path)?;
        if let Some(hash) = hash {
            *added.entry(hash).or_default() += 1;
        }
    }
    Ok(report
        .renamed
        .iter()
        .filter(|r| {
            gone.iter().find(|g| g.path == r.from).is_some_and(|from| {
                let hash = &from.content_hash;
                gone.iter().filter(|g| &g.content_hash == hash).count() == 1
                    && added.get(hash) == Some(&1)
            })
        })
        .collect())
}
