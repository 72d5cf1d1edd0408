//! The scan's batch writer: each batch of analysed files written to the map in one
//! `BEGIN IMMEDIATE` transaction, with what the batch changed for the rest of the scan
//! (changed names, drift, references waiting for resolution), and the `degraded` reasons
//! of parses a limit stopped.

use std::collections::{BTreeSet, HashMap, HashSet};

use loci_core::FileAnalysis;
use loci_store::Store;
use loci_store::map::{self, FileRow, FileState};
use loci_store::memory as mem;

use super::refs::{PendingRefs, unresolved_rows};
use super::{Analyzed, Outcome, Rename, ScanReport};
use crate::Result;
use crate::map::walk::Skip;

pub(super) struct Writer<'a, 's> {
    pub(super) store: &'a mut Store,
    pub(super) scan_id: i64,
    pub(super) stored: &'s HashMap<String, FileState>,
    /// No scan has finished before this one (what is in the map was written by a scan
    /// that was killed).
    pub(super) first: bool,
    /// The map was built by another analysis version: unchanged files are analysed again.
    pub(super) reanalyse: bool,
    /// References of changed files, waiting for resolution.
    pub(super) pending: PendingRefs,
    /// A first scan's bulk load: each file's references are written with it, unresolved
    /// (but for those its own file resolves), and resolved from the store at the end
    /// ([`super::refs::resolve_written_refs`]), so memory does not hold the repository's
    /// references until then (3.3 M on a 50,000-file map). Else they wait in
    /// `pending`.
    pub(super) write_refs: bool,
    /// The parse limit files are analysed with ([`parse_to_retry`]).
    pub(super) parse_timeout_ms: u64,
    /// Names that gained or lost a definition, for the stored references they may now
    /// resolve differently; none in a bulk load, whose references are all its own (every
    /// name of the map, 313,000 on a 48,000-file corpus, would be held to the end).
    pub(super) changed_names: BTreeSet<String>,
    /// Files written in this scan.
    pub(super) changed_files: BTreeSet<i64>,
    /// Observed changes, for the drift ledger.
    pub(super) drift: Vec<map::DriftEntry>,
    /// References in other files that pointed at symbols of a rewritten file.
    pub(super) retarget: BTreeSet<i64>,
}

impl Writer<'_, '_> {
    pub(super) fn write_batch(
        &mut self,
        batch: &mut Vec<Outcome>,
        report: &mut ScanReport,
        skips: &mut Vec<Skip>,
        gone_too: &mut Vec<FileState>,
    ) -> Result<()> {
        if batch.is_empty() {
            return Ok(());
        }
        let stored = self.stored;
        let written = self.write_rows(batch)?;
        // The transaction committed: now update the in-memory bookkeeping.
        let mut written = written.into_iter();
        for outcome in batch.drain(..) {
            match outcome {
                Outcome::Touched { .. } => report.unchanged += 1,
                Outcome::Skipped(skip) => {
                    if let Some(s) = stored.get(&skip.path) {
                        gone_too.push(s.clone());
                    }
                    skips.push(skip);
                }
                Outcome::Analyzed(a) => {
                    let Some(file) = written.next() else {
                        continue;
                    };
                    self.note_analyzed(*a, file, report);
                }
            }
        }
        Ok(())
    }

    /// Writes a batch's rows in one transaction: touched files' times, each analysed
    /// file with its symbols, imports, chunks and code text (and its unresolved
    /// references on a bulk load), and the snapshots memory carries forward when files
    /// are analysed again with the same content. Returns what each analysed file wrote.
    fn write_rows(&mut self, batch: &[Outcome]) -> Result<Vec<WrittenFile>> {
        let stored = self.stored;
        let scan_id = self.scan_id;
        let reanalyse = self.reanalyse;
        let write_refs = self.write_refs;
        Ok(self.store.write(|tx| {
            let mut written = Vec::new();
            // What memory snapshots, read in this transaction (no memory write can come
            // between), when files may be analysed again with the same content.
            let snapshotted = if reanalyse {
                mem::snapshotted_targets(tx)?
            } else {
                HashSet::new()
            };
            let mut carried = Vec::new();
            for outcome in batch.iter() {
                match outcome {
                    Outcome::Touched {
                        file_id,
                        size,
                        mtime_ns,
                    } => {
                        map::touch_file(tx, *file_id, *size, *mtime_ns)?;
                    }
                    Outcome::Skipped(_) => {}
                    Outcome::Analyzed(a) => {
                        written.push(write_analyzed(
                            tx,
                            a,
                            stored,
                            scan_id,
                            reanalyse,
                            write_refs,
                            &snapshotted,
                            &mut carried,
                        )?);
                    }
                }
            }
            // The code text of every file goes in last, after every other row of the
            // batch: FTS5 flushes its pending terms to a new segment at each statement
            // that opens a statement savepoint (a `files` insert does: it has a
            // trigger), so written file by file, between the next file's rows, each
            // file's terms became a segment of their own and the merges that follow
            // cost the writer a fifth of its time on a first scan.
            let analyzed = batch.iter().filter_map(|o| match o {
                Outcome::Analyzed(a) => Some(a),
                _ => None,
            });
            for (a, (file_id, _, _, ids, _)) in analyzed.zip(&written) {
                if let Some(code) = &a.code {
                    map::insert_code_text(
                        tx,
                        *file_id,
                        code,
                        ids,
                        loci_core::secondary::secondary_code(&a.path).is_some(),
                    )?;
                }
            }
            mem::carry_snapshots_forward(tx, &carried)?;
            Ok(written)
        })?)
    }

    /// The in-memory bookkeeping of one analysed file, once its rows are committed: names
    /// that gained or lost a definition, references to re-target, drift (the file and
    /// every signature changed), the report's lists, and its pending references.
    fn note_analyzed(&mut self, a: Analyzed, file: WrittenFile, report: &mut ScanReport) {
        let (file_id, existed, old_keys, symbol_ids, incoming) = file;
        let stored = self.stored;
        self.retarget.extend(incoming);
        let new_keys: Vec<(String, String, String)> = a
            .analysis
            .as_ref()
            .map(|x| {
                x.symbols
                    .iter()
                    .map(|s| {
                        (
                            s.key.clone(),
                            s.name.clone(),
                            s.signature_fingerprint.clone(),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        let old: HashSet<(&str, &str)> = old_keys
            .iter()
            .map(|(k, n, _)| (k.as_str(), n.as_str()))
            .collect();
        let new: HashSet<(&str, &str)> = new_keys
            .iter()
            .map(|(k, n, _)| (k.as_str(), n.as_str()))
            .collect();
        if !self.write_refs {
            for (_, name) in old.symmetric_difference(&new) {
                self.changed_names.insert(name.to_string());
            }
        }
        // Drift is measured from the file's content as of the last finished
        // scan (`drift_hash`), not from the row's hash, which a killed scan may
        // have rewritten without recording the change (its drift is written
        // when a scan finishes), so a change made just before a killed scan still
        // reaches the ledger.
        let state = stored.get(&a.path);
        let recorded = state.and_then(|s| s.drift_hash.as_deref());
        let changed = recorded != Some(a.content_hash.as_str());
        // Same content as the row: read again because an interrupted scan
        // wrote it (its references were lost with it), because another
        // analysis version built it, or only touched.
        let rewritten = existed && state.is_some_and(|s| s.content_hash == a.content_hash);
        // On a first scan nothing was there before the killed one: its work
        // is finished (`resumed`).
        let resumed = rewritten && self.first;
        // Same content as at the last finished scan, analysed again only
        // because another analysis version built the row: no drift.
        let reanalysed = !changed && self.reanalyse && !self.first;
        // Same content, analysed again because a parse limit had cut its
        // last analysis short.
        let retried = !changed && state.is_some_and(|s| parse_to_retry(s, self.parse_timeout_ms));
        // Drift: the file, and every symbol whose signature changed (a killed
        // scan recorded none; its rewritten rows hold the signatures it found).
        let added = !existed || recorded.is_none();
        if changed {
            self.drift.push(map::DriftEntry {
                path: a.path.clone(),
                kind: if added { "add" } else { "modify" },
                old_hash: recorded.map(str::to_string),
                new_hash: Some(a.content_hash.clone()),
                detail: None,
            });
            let old_sigs: HashMap<&str, &str> = old_keys
                .iter()
                .map(|(k, _, s)| (k.as_str(), s.as_str()))
                .collect();
            for (key, _, sig) in &new_keys {
                if let Some(old_sig) = old_sigs.get(key.as_str())
                    && *old_sig != sig
                {
                    self.drift.push(map::DriftEntry {
                        path: a.path.clone(),
                        kind: "signature_change",
                        old_hash: Some(old_sig.to_string()),
                        new_hash: Some(sig.clone()),
                        detail: Some(key.clone()),
                    });
                }
            }
        }
        if a.lossy_utf8 {
            report.lossy_utf8.push(a.path.clone());
        }
        if resumed {
            report.resumed += 1;
        } else if reanalysed {
            report.reanalysed += 1;
        } else if retried {
            report.retried += 1;
        } else if !changed {
            // Read again with the content the last finished scan had: only
            // touched, renamed over, or rewritten by a killed scan.
            report.unchanged += 1;
        } else if existed {
            report.modified.push(a.path);
        } else {
            report.added.push(a.path);
        }
        self.changed_files.insert(file_id);
        if !self.write_refs {
            let refs = a.analysis.as_ref().map_or(&[][..], |x| &x.refs[..]);
            self.pending.push(file_id, refs, &symbol_ids);
        }
    }

    /// Deletes the files that are `gone` from the map and, in the same transaction, moves
    /// the memory of each file that `follow` says was renamed (see
    /// [`crate::map::sync::move_page`]); returns the renames whose page moved. One
    /// transaction, because a scan killed between the two would delete the old path and
    /// lose the rename for memory: the next scan would see only the new file.
    pub(super) fn delete(
        &mut self,
        gone: &[&FileState],
        report: &mut ScanReport,
        follow: &[Rename],
    ) -> Result<Vec<Rename>> {
        // The workers finish in any order; the report's lists are sorted whether or not
        // anything was deleted.
        report.added.sort();
        report.modified.sort();
        report.lossy_utf8.sort();
        if gone.is_empty() {
            return Ok(Vec::new());
        }
        let scan_id = self.scan_id;
        let (names, moved) = self.store.write(|tx| {
            let mut names = Vec::new();
            for g in gone {
                names.extend(
                    map::symbol_keys(tx, g.file_id)?
                        .into_iter()
                        .map(|(_, n, _)| n),
                );
                map::delete_file(tx, g.file_id)?;
            }
            let mut moved = Vec::new();
            for r in follow {
                if crate::map::sync::move_page(
                    tx,
                    &r.from,
                    &r.to,
                    &format!("rename:scan:{scan_id}"),
                )? {
                    moved.push(r.clone());
                }
            }
            Ok((names, moved))
        })?;
        self.changed_names.extend(names);
        for g in gone {
            self.drift.push(map::DriftEntry {
                path: g.path.clone(),
                kind: "delete",
                // Its content as the ledger last recorded it (a killed scan may have
                // rewritten the row since).
                old_hash: Some(
                    g.drift_hash
                        .clone()
                        .unwrap_or_else(|| g.content_hash.clone()),
                ),
                new_hash: None,
                detail: None,
            });
        }
        let mut deleted: Vec<String> = gone.iter().map(|g| g.path.clone()).collect();
        deleted.sort();
        deleted.dedup();
        report.deleted = deleted;
        Ok(moved)
    }
}

/// Whether memory snapshots the file at `path` or one of the symbols its new analysis
/// found (`snapshotted` as [`mem::snapshotted_targets`] lists them): a symbol whose key
/// the new analysis no longer has cannot be carried forward.
/// The keys of the symbols an analysed file has now.
fn current_keys(a: &Analyzed) -> impl Iterator<Item = &str> {
    a.analysis
        .iter()
        .flat_map(|x| x.symbols.iter().map(|s| s.key.as_str()))
}

fn snapshots_name(
    snapshotted: &HashSet<String>,
    path: &str,
    analysis: &Option<FileAnalysis>,
) -> bool {
    !snapshotted.is_empty()
        && (snapshotted.contains(path)
            || analysis
                .iter()
                .flat_map(|x| &x.symbols)
                .any(|s| snapshotted.contains(&s.key)))
}

/// The fingerprints of a file analysed again with the same content, and of those of its
/// symbols memory snapshots, that the new analysis changed: `before` as
/// [`map::file_fingerprints`] read it before the rows were replaced. Pushed to `out`.
fn fingerprint_changes(
    a: &Analyzed,
    before: map::FileFingerprints,
    snapshotted: &HashSet<String>,
    out: &mut Vec<mem::FingerprintChange>,
) {
    let map::FileFingerprints {
        file: old_file,
        symbols: old_symbols,
    } = before;
    let new_file = a
        .analysis
        .as_ref()
        .map_or(a.content_hash.as_str(), |x| x.fingerprint.as_str());
    if old_file != new_file {
        out.push(mem::FingerprintChange {
            target: a.path.clone(),
            old: old_file,
            new: new_file.to_string(),
            signature: None,
        });
    }
    let Some(analysis) = &a.analysis else {
        return;
    };
    let new: HashMap<&str, &loci_core::Symbol> = analysis
        .symbols
        .iter()
        .map(|s| (s.key.as_str(), s))
        .collect();
    for (key, body, signature) in old_symbols {
        if let Some(s) = new.get(key.as_str())
            && snapshotted.contains(&key)
            && (s.body_fingerprint != body || s.signature_fingerprint != signature)
        {
            out.push(mem::FingerprintChange {
                old: body,
                new: s.body_fingerprint.clone(),
                signature: Some((signature, s.signature_fingerprint.clone())),
                target: key,
            });
        }
    }
}

/// The `degraded` reason stored for a file: the kind (`parse_timeout`, `too_deep`), a
/// colon, the words.
pub(super) fn degraded_reason(d: &loci_core::Degraded) -> String {
    match d {
        loci_core::Degraded::ParseTimeout { limit_ms } => {
            format!("{PARSE_TIMEOUT}: stopped after {limit_ms} ms of parse work")
        }
        loci_core::Degraded::WallClockGuard { after_ms } => {
            format!("{PARSE_WALL_CLOCK}: stopped by the wall-clock guard after {after_ms} ms")
        }
        loci_core::Degraded::TooDeep { limit } => {
            format!("too_deep: nesting beyond {limit} nodes not analysed")
        }
    }
}

/// The kind of a `degraded` reason for a parse the parse limit stopped.
const PARSE_TIMEOUT: &str = "parse_timeout";

/// The kind of a `degraded` reason for a parse the wall-clock guard stopped.
const PARSE_WALL_CLOCK: &str = "parse_wall_clock";

/// Whether a stored file's last analysis must be tried again, changed or not: the
/// wall-clock guard stopped it (load may have, so every scan tries until it parses: a
/// file that load once stopped would otherwise stay without symbols while unchanged), or
/// the parse limit stopped it at a lower limit than `limit_ms`. A stop by the same limit is
/// final: the budget counts work, so the same text stops again.
pub(super) fn parse_to_retry(s: &FileState, limit_ms: u64) -> bool {
    let Some((kind, words)) = s.degraded.as_deref().and_then(|d| d.split_once(':')) else {
        return false;
    };
    let stopped_at = || {
        words
            .trim()
            .strip_prefix("stopped after ")
            .and_then(|w| w.split(' ').next())
            .and_then(|n| n.parse::<u64>().ok())
    };
    kind == PARSE_WALL_CLOCK || (kind == PARSE_TIMEOUT && stopped_at().is_none_or(|n| n < limit_ms))
}

/// What one analysed file wrote: its id, whether it existed, its old symbol keys (key,
/// name, signature fingerprint), its new symbol ids, and the references into it that
/// resolve again.
type WrittenFile = (i64, bool, Vec<(String, String, String)>, Vec<i64>, Vec<i64>);

/// Writes one analysed file's rows in `tx` but its code text, which
/// [`Writer::write_rows`] writes after the batch's other rows.
#[allow(clippy::too_many_arguments)]
fn write_analyzed(
    tx: &loci_store::rusqlite::Transaction<'_>,
    a: &Analyzed,
    stored: &HashMap<String, FileState>,
    scan_id: i64,
    reanalyse: bool,
    write_refs: bool,
    snapshotted: &HashSet<String>,
    carried: &mut Vec<mem::FingerprintChange>,
) -> loci_store::Result<WrittenFile> {
    let existing = stored.get(&a.path).map(|s| s.file_id);
    let (old_keys, incoming, reuse) = match existing {
        Some(id) => (
            map::symbol_keys(tx, id)?,
            map::refs_into_file(tx, id)?,
            map::symbol_ids_by_key(tx, id)?,
        ),
        None => (Vec::new(), Vec::new(), HashMap::new()),
    };
    // Same content analysed again by another analysis version: the
    // fingerprints memory snapshotted, before they are replaced.
    let same_content = reanalyse
        && stored
            .get(&a.path)
            .is_some_and(|s| s.content_hash == a.content_hash);
    let before = match existing {
        Some(id) if same_content && snapshots_name(snapshotted, &a.path, &a.analysis) => {
            map::file_fingerprints(tx, id)?
        }
        _ => None,
    };
    let degraded = a.analysis.as_ref().and_then(|x| x.degraded.as_ref());
    let degraded = degraded.map(degraded_reason);
    let row = FileRow {
        path: &a.path,
        language: a.language,
        size: a.size,
        mtime_ns: a.mtime_ns,
        content_hash: &a.content_hash,
        fingerprint: a.analysis.as_ref().map(|x| x.fingerprint.as_str()),
        lines: a.lines,
        error_nodes: a.analysis.as_ref().map_or(0, |x| x.error_nodes as i64),
        degraded: degraded.as_deref(),
        lossy_utf8: a.lossy_utf8,
    };
    let file_id = map::put_file(tx, existing, &row, scan_id)?;
    let mut ids = Vec::new();
    map::insert_doc_chunks(tx, file_id, &a.chunks)?;
    if let Some(x) = &a.analysis {
        ids = map::insert_symbols(tx, file_id, &x.symbols, &reuse)?;
        map::insert_imports(tx, file_id, &x.imports, &ids)?;
        if write_refs {
            map::insert_refs(tx, file_id, unresolved_rows(&x.refs, &ids))?;
        }
    }
    if let Some(before) = before {
        fingerprint_changes(a, before, snapshotted, carried);
    }
    // References from other files into a symbol whose key is still
    // there keep their target (its id was reused); those into one that
    // is gone resolve again.
    let kept: HashSet<i64> = current_keys(a)
        .filter_map(|k| reuse.get(k).copied())
        .collect();
    let incoming: Vec<i64> = incoming
        .into_iter()
        .filter(|(_, target)| !kept.contains(target))
        .map(|(r, _)| r)
        .collect();
    Ok((file_id, existing.is_some(), old_keys, ids, incoming))
}
