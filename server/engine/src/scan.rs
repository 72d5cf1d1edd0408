//! Scanning: walk the working tree, parse what changed in parallel, write the map in
//! short transactions, then resolve imports and references.
//!
//! Freshness rule: a file whose size and modification time match the map is not read; one
//! whose content hash matches is not reparsed (only its mtime is updated). A file whose
//! stored analysis a parse limit cut short (`degraded` = `parse_timeout: ...`) is the
//! exception: every scan reads and analyses it again, changed or not, until it parses, so
//! a limit that load once tripped (the wall-clock guard of [`loci_core::analyze`]) does
//! not leave the map short of its symbols for as long as the file stays unchanged. The
//! size and
//! mtime recorded are those of the read itself, never of the walk's earlier `stat`; a
//! file that changed while it was read gets an mtime no file has, so the next scan reads
//! it again. Deleted files
//! are removed; a deleted file whose content reappears at a new path is reported as a
//! rename. Parsing happens on a rayon pool, outside any transaction; a single writer
//! (the calling thread) writes batches of files, each batch one `BEGIN IMMEDIATE`
//! transaction. Import resolution is redone for every file when files were added or
//! deleted (a new file can satisfy an old import), otherwise only for changed files;
//! references are resolved for changed files and re-resolved elsewhere only when a name
//! they use gained or lost a definition.
//!
//! Memory across a new analysis version ([`loci_core::ANALYSIS_VERSION`]): a file analysed
//! again with the content hash the map has for it is the same code under new fingerprint
//! rules, so in the transaction that rewrites it each snapshot of memory that equals the
//! old fingerprint of the file or of a symbol key it still has takes the new one
//! ([`loci_store::memory::carry_snapshots_forward`]); a snapshot that differed was stale
//! and stays so, and a file whose content changed carries nothing.
//!
//! Secrets ([`crate::secrets`]): files matching a path rule are skipped by the walk; a
//! file read here whose text holds a credential-shaped token is skipped with reason
//! `secret` (and removed from the map if it was there). When the rules change, every file
//! is read again, so a new rule applies to files that did not change.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Instant;

use loci_core::imports::PathIndex;
use loci_core::{AnalyzeOptions, FileAnalysis, Import, Language, Receiver, RefKind, Span};
use loci_store::map::{self, FileRow, FileState, RefRow};
use loci_store::memory as mem;
use loci_store::rusqlite::{OptionalExtension, params};
use loci_store::search::FtsTable;
use loci_store::{Context, Store};
use rayon::prelude::*;
use serde::Serialize;
use std::num::NonZeroI64;

use crate::config::ScanConfig;
use crate::secrets::SecretRules;
use crate::walk::{self, Skip, SkipReason, WalkedFile};
use crate::{EngineError, Result};

/// Files per write transaction.
const BATCH_FILES: usize = 128;

/// The `meta` key holding the fingerprint of the secret rules the map was built with.
pub(crate) const SECRET_RULES_META: &str = "secret_rules";

/// The `meta` key holding the [`loci_core::ANALYSIS_VERSION`] the map was built with.
pub(crate) const ANALYSIS_META: &str = "analysis_version";

/// What a scan is doing, for progress bars and `$/progress`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "phase")]
pub enum ScanProgress {
    /// Listing the working tree.
    Walking,
    /// Reading, hashing and parsing: `done` of `total` files that may have changed.
    Parsing {
        /// Files processed so far.
        done: u64,
        /// Files to process.
        total: u64,
    },
    /// Resolving imports and references.
    Resolving,
    /// Finished.
    Done,
}

/// A file that moved: same content at a new path.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Rename {
    /// The old path.
    pub from: String,
    /// The new path.
    pub to: String,
}

/// A file whose analysis is incomplete.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DegradedFile {
    /// The file.
    pub path: String,
    /// Why (`parse_timeout`, `too_deep`).
    pub reason: String,
}

/// Files and lines of one language.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LanguageCount {
    /// Files.
    pub files: u64,
    /// Lines.
    pub lines: u64,
}

/// How many skipped paths a [`ScanReport`] names.
pub const SKIPPED_EXAMPLES: usize = 50;

/// What a scan did and what the map holds afterwards.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ScanReport {
    /// The scan revision this scan produced (or the current one, when nothing changed).
    pub scan_id: i64,
    /// Whether anything changed (false for a no-op rescan, which writes nothing).
    pub changed: bool,
    /// Files added (a renamed file's new path is in `renamed` only).
    pub added: Vec<String>,
    /// Files whose content changed.
    pub modified: Vec<String>,
    /// Files removed from the map (a renamed file's old path is in `renamed` only).
    pub deleted: Vec<String>,
    /// Deleted files whose content reappeared at a new path; neither path is also in
    /// `added` or `deleted`, so the four lists count each changed file once.
    pub renamed: Vec<Rename>,
    /// Memory pages that followed a rename to the new path: renames whose content no other
    /// file deleted or added in this scan has (of two identical files moved at once,
    /// which went where is left for `loci sync`), from a path with a page to one without,
    /// and the pages of folders that moved with their files (every file under the old
    /// folder went, and all to the same new one). Each move is a `rename` event. The
    /// claims naming an old path name the new one, whether or not the path had a page
    /// (design.md: "A rename keeps memory attached").
    pub pages_moved: Vec<Rename>,
    /// Files found unchanged.
    pub unchanged: u64,
    /// Files that a first scan which never finished (killed) had recorded, analysed again
    /// with the same content to finish its work: neither added nor modified. (After a
    /// later scan was killed, the files it rewrote are reported modified: they had
    /// changed since the last finished scan.)
    pub resumed: u64,
    /// Files analysed again with the same content because the map was built by another
    /// analysis version ([`loci_core::ANALYSIS_VERSION`]; after an upgrade of loci):
    /// neither modified nor in the drift ledger.
    pub reanalysed: u64,
    /// Files a parse limit had degraded, analysed again with the same content (every scan
    /// retries them until they parse): neither modified nor in the drift ledger; those
    /// still stopped by the limit are in `degraded` again.
    pub retried: u64,
    /// Files in the map, by language (`unknown` for unparsed extensions).
    pub languages: BTreeMap<String, LanguageCount>,
    /// Totals of the map after the scan.
    pub totals: map::MapCounts,
    /// Skipped paths by reason.
    pub skipped: BTreeMap<String, u64>,
    /// Skipped paths with reasons, at most [`SKIPPED_EXAMPLES`]: those skipped for a
    /// reason other than `binary` first, each group in path order.
    pub skipped_examples: Vec<Skip>,
    /// Files with incomplete analysis.
    pub degraded: Vec<DegradedFile>,
    /// Files whose invalid UTF-8 was replaced (U+FFFD) before parsing.
    pub lossy_utf8: Vec<String>,
    /// Wall time in milliseconds of the whole operation: waiting for the store lock, the
    /// walk, parse and writes, and the lint that records what the change did to the
    /// knowledge ([`crate::Workspace::scan`]; a one-file rescan had said "2.5 s" after
    /// 40 s of lint, issue 37). The `scans` row keeps the scan's own part.
    pub duration_ms: u64,
    /// Whether the common-terms lists of the full-text indexes were moved by what this
    /// scan changed ([`loci_store::common_terms`]) rather than listed again by walking
    /// the indexes. Not part of the output: for tests.
    #[serde(skip)]
    pub common_terms_updated: bool,
    /// The map's SCIP edges after a scan that changed the map (`loci scan --scip`,
    /// [`crate::scip::reconcile`]): absent when it changed nothing or no file's references
    /// come from a SCIP index.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scip: Option<crate::scip::ScipCoverage>,
}

/// The result of reading and analysing one file on a worker thread.
enum Outcome {
    /// Same content as stored; only the mtime (or a wrong stored size) moved.
    Touched {
        file_id: i64,
        size: i64,
        mtime_ns: i64,
    },
    /// New or changed content.
    Analyzed(Box<Analyzed>),
    /// Could not be used.
    Skipped(Skip),
}

struct Analyzed {
    path: String,
    size: i64,
    mtime_ns: i64,
    content_hash: String,
    language: Option<&'static str>,
    analysis: Option<FileAnalysis>,
    /// Sections of a markdown file, for search.
    chunks: Vec<loci_core::markdown::Chunk>,
    /// A source file's code text: its path's words and its chunks, for the code-text
    /// indexes.
    code: Option<map::CodeText>,
    lines: i64,
    lossy_utf8: bool,
}

/// Scans `root` into `store`.
pub fn scan(
    root: &Path,
    store: &mut Store,
    config: &ScanConfig,
    secrets: &SecretRules,
    progress: &(dyn Fn(ScanProgress) + Sync),
) -> Result<ScanReport> {
    let started = Instant::now();
    progress(ScanProgress::Walking);
    let walked = walk::walk(
        root,
        config.max_file_size,
        config.max_files,
        config.threads,
        secrets,
    );
    let stored = map::file_states(store.conn())?;
    // Rules that changed since the map was built: every file is read again.
    let rules_changed = store.meta(SECRET_RULES_META)?.as_deref() != Some(secrets.fingerprint());
    // A map another analysis built: every file is analysed again.
    let reanalyse = !stored.is_empty()
        && store.meta(ANALYSIS_META)?.as_deref()
            != Some(loci_core::ANALYSIS_VERSION.to_string().as_str());
    let has_scan: Option<i64> = store
        .conn()
        .query_row(
            "SELECT max(scan_id) FROM scans WHERE status = 'finished'",
            [],
            |r| r.get(0),
        )
        .ctx(|| "reading the last scan".into())?;

    // Files written by a scan that never finished (killed, or still running elsewhere)
    // may lack their references: they are reparsed, whatever their hash says.
    let interrupted: HashSet<i64> = {
        let mut stmt = store
            .conn()
            .prepare("SELECT scan_id FROM scans WHERE status = 'running'")
            .ctx(|| "reading interrupted scans".into())?;
        stmt.query_map([], |r| r.get(0))
            .ctx(|| "reading interrupted scans".into())?
            .collect::<std::result::Result<_, _>>()
            .ctx(|| "reading interrupted scans".into())?
    };

    let mut report = ScanReport::default();
    let mut skips = walked.skips;
    let skipped_before = map::skipped_files(store.conn())?;
    // What the rest of the scan holds is owned, so the walk and the stored states are
    // freed before resolution needs the memory: the files gone, and the candidates.
    let mut gone: Vec<FileState> = {
        let walked_paths: HashSet<&str> = walked.files.iter().map(|f| f.path.as_str()).collect();
        stored
            .values()
            .filter(|s| !walked_paths.contains(s.path.as_str()))
            .cloned()
            .collect()
    };
    gone.sort_by(|a, b| a.path.cmp(&b.path));
    let mut candidates: Vec<WalkedFile> = Vec::new();
    for f in walked.files {
        match stored.get(&f.path) {
            Some(s)
                if s.size == f.size as i64
                    && s.mtime_ns == f.mtime_ns
                    && !interrupted.contains(&s.scan_id)
                    && !rules_changed
                    && !reanalyse
                    && !parse_to_retry(s, config.parse_timeout_ms) =>
            {
                report.unchanged += 1
            }
            _ => match skipped_before.get(&f.path) {
                // An unchanged binary file, or one whose text held a secret under the same
                // rules, need not be read again.
                Some(s)
                    if s.size == f.size as i64
                        && s.mtime_ns == f.mtime_ns
                        && (s.reason == SkipReason::Binary.as_str()
                            || (s.reason == SkipReason::Secret.as_str() && !rules_changed)) =>
                {
                    skips.push(Skip {
                        path: f.path.clone(),
                        reason: s.reason.parse().unwrap_or(SkipReason::Binary),
                        detail: s.detail.clone(),
                        size: f.size,
                        mtime_ns: f.mtime_ns,
                    })
                }
                _ => candidates.push(f),
            },
        }
    }
    // A file skipped by its path (a `.env` added) is never a candidate: only the list of
    // skips tells that it came or went.
    let skips_changed = skips.len() != skipped_before.len()
        || skips.iter().any(|s| {
            skipped_before
                .get(&s.path)
                .is_none_or(|b| b.reason != s.reason.as_str() || b.detail != s.detail)
        });
    drop(skipped_before);

    if candidates.is_empty()
        && gone.is_empty()
        && has_scan.is_some()
        && interrupted.is_empty()
        && !rules_changed
        && !reanalyse
    {
        // Nothing mapped changed, but the skips did: `stats` and the note of an answer
        // that found nothing read them (issue 32: a secret file added to a mapped
        // workspace had gone unrecorded until some mapped file changed).
        if skips_changed {
            let rows = skipped_rows(&skips);
            store.write(|tx| map::replace_skipped_files(tx, &rows))?;
        }
        return finish_noop(store, report, skips, started);
    }

    // A first scan is a bulk load: secondary indexes of the big tables are built once at
    // the end (a sort) instead of row by row. They are recreated even if this scan fails.
    let bulk = stored.is_empty() && candidates.len() > 256;
    if bulk {
        store.write(map::drop_bulk_indexes)?;
    } else if map::bulk_indexes_missing(store.conn())? {
        store.write(map::create_bulk_indexes)?;
    }
    // A rescan of a small part of the map records what it changes in the full-text
    // indexes, and its end moves their common-terms lists by that: walking every index
    // again was 43% of a rescan's CPU after 100 edits of a 50,000-file map (issue 37).
    // A larger one walks them (as fast, with less bookkeeping).
    let recording = !bulk
        && candidates.len() + gone.len() <= stored.len() / RECORD_SHARE
        && loci_store::common_terms::start_recording(store.conn())?;
    let result = scan_inner(
        root,
        store,
        config,
        secrets,
        progress,
        started,
        report,
        skips,
        candidates,
        gone,
        stored,
        interrupted,
        has_scan,
        bulk,
        reanalyse,
        recording,
    );
    if recording {
        loci_store::common_terms::stop_recording(store.conn())?;
    }
    if bulk && result.is_err() {
        store.write(map::create_bulk_indexes)?;
    }
    result
}

/// A rescan records its changes to the full-text indexes (see [`scan`]) when it analyses
/// or deletes at most one file in this many of the map.
const RECORD_SHARE: usize = 4;

/// Files a scan must add, change, delete or analyse again for it to merge every segment of the map's
/// full-text indexes at its end (fewer merge a bounded amount,
/// [`loci_store::search::MERGE_PAGES`]). A full merge rewrites the index: 135 ms for the
/// stdlib's symbols (1,250 pages), against 9 s to analyse all its files again.
const FULL_MERGE_FILES: usize = 256;

#[allow(clippy::too_many_arguments)]
fn scan_inner(
    root: &Path,
    store: &mut Store,
    config: &ScanConfig,
    secrets: &SecretRules,
    progress: &(dyn Fn(ScanProgress) + Sync),
    started: Instant,
    mut report: ScanReport,
    mut skips: Vec<Skip>,
    candidates: Vec<WalkedFile>,
    gone: Vec<FileState>,
    stored: HashMap<String, FileState>,
    interrupted: HashSet<i64>,
    has_scan: Option<i64>,
    bulk: bool,
    reanalyse: bool,
    recording: bool,
) -> Result<ScanReport> {
    let scan_id = store.write(|tx| {
        tx.execute(
            "INSERT INTO scans(started_at) VALUES (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))",
            [],
        )
        .ctx(|| "recording the scan".into())?;
        Ok(tx.last_insert_rowid())
    })?;
    report.scan_id = scan_id;

    let options = config.analyze_options();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(config.threads)
        .stack_size(16 << 20)
        .thread_name(|i| format!("loci-parse-{i}"))
        .build()
        .map_err(|e| EngineError::Internal(format!("starting the parser threads: {e}")))?;

    let total = candidates.len() as u64;
    let cancel = AtomicBool::new(false);
    let (sender, receiver) = mpsc::sync_channel::<Outcome>(256);
    let mut writer = Writer {
        store,
        scan_id,
        stored: &stored,
        first: has_scan.is_none(),
        reanalyse,
        pending: PendingRefs::default(),
        write_refs: bulk,
        parse_timeout_ms: config.parse_timeout_ms,
        changed_names: BTreeSet::new(),
        changed_files: BTreeSet::new(),
        drift: Vec::new(),
        retarget: BTreeSet::new(),
    };
    let mut gone_too: Vec<FileState> = Vec::new();
    let written: Result<()> = std::thread::scope(|scope| {
        let cancel = &cancel;
        let stored = &stored;
        let interrupted = &interrupted;
        let candidates = &candidates;
        let options = &options;
        let pool = &pool;
        scope.spawn(move || {
            pool.install(|| {
                candidates.par_iter().for_each_with(sender, |sender, f| {
                    if cancel.load(Ordering::Relaxed) {
                        return;
                    }
                    let known = stored.get(&f.path).filter(|s| {
                        !interrupted.contains(&s.scan_id)
                            && !reanalyse
                            && !parse_to_retry(s, options.timeout_ms)
                    });
                    let outcome = process(f, known, options, secrets);
                    if sender.send(outcome).is_err() {
                        cancel.store(true, Ordering::Relaxed);
                    }
                })
            })
        });
        let mut batch = Vec::with_capacity(BATCH_FILES);
        let mut done = 0u64;
        let mut writing = std::time::Duration::ZERO;
        let result = (|| {
            for outcome in receiver.iter() {
                done += 1;
                batch.push(outcome);
                if batch.len() >= BATCH_FILES {
                    let t = Instant::now();
                    writer.write_batch(&mut batch, &mut report, &mut skips, &mut gone_too)?;
                    writing += t.elapsed();
                    progress(ScanProgress::Parsing { done, total });
                }
            }
            writer.write_batch(&mut batch, &mut report, &mut skips, &mut gone_too)?;
            progress(ScanProgress::Parsing { done, total });
            tracing::info!(
                ms = writing.as_millis() as u64,
                "scan: time spent writing batches"
            );
            Ok(())
        })();
        if result.is_err() {
            cancel.store(true, Ordering::Relaxed);
        }
        result
    });
    written?;
    tracing::info!(
        ms = started.elapsed().as_millis() as u64,
        "scan: parsed and wrote files"
    );

    // Deletions: files no longer walked, or walked but now unusable.
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
    let follow: Vec<Rename> = unambiguous_renames(&report, &gone_all, writer.store)?
        .into_iter()
        .cloned()
        .collect();
    let files_moved = writer.delete(&gone_all, &mut report, &follow)?;
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

    // Resolution needs memory that the walk's files and the stored states hold no longer
    // (a tenth of a rescan's peak on a 50,000-file map): they are freed first.
    let any_gone = !gone_all.is_empty();
    drop(gone_all);
    let Writer {
        store,
        pending,
        changed_names,
        changed_files,
        retarget,
        write_refs,
        drift,
        ..
    } = writer;
    drop((gone, gone_too, candidates, stored));
    progress(ScanProgress::Resolving);
    // A changed manifest (`go.mod`, `Cargo.toml`) changes what module paths name.
    let manifest = |p: &String| {
        ["go.mod", "Cargo.toml"]
            .iter()
            .any(|m| p == m || p.ends_with(&format!("/{m}")))
    };
    let topology_changed = has_scan.is_none()
        || !interrupted.is_empty()
        || !report.added.is_empty()
        || !report.deleted.is_empty()
        || !report.renamed.is_empty()
        || report.modified.iter().any(manifest);
    let (deps_changed, modules) = resolve_deps(root, store, topology_changed, &changed_files)?;
    tracing::info!(
        ms = started.elapsed().as_millis() as u64,
        "scan: resolved imports"
    );
    // A scan that was killed may have committed files whose symbols it rewrote (new row
    // ids) before it re-resolved the references into them, and it took with it what it
    // knew of names that gained or lost a definition: every stored reference is resolved
    // again, so the map equals what a fresh scan of the tree makes.
    // So does a scan that added, deleted or renamed what roots a module tree (a crate's
    // `lib.rs` or `main.rs`, a manifest): the paths resolved through it (`crate::a::f`)
    // resolve differently or not at all, whichever file holds them.
    let root_file = |p: &str| {
        ["go.mod", "Cargo.toml", "lib.rs", "main.rs"]
            .iter()
            .any(|m| p == *m || p.ends_with(&format!("/{m}")))
    };
    let roots_moved = report
        .added
        .iter()
        .chain(&report.deleted)
        .map(String::as_str)
        .chain(
            report
                .renamed
                .iter()
                .flat_map(|r| [r.from.as_str(), r.to.as_str()]),
        )
        .any(root_file);
    let repair = !interrupted.is_empty() || (has_scan.is_some() && roots_moved);
    resolve_refs(
        store,
        pending,
        &changed_names,
        &deps_changed,
        &retarget,
        modules,
        repair,
        write_refs,
    )?;

    tracing::info!(
        ms = started.elapsed().as_millis() as u64,
        "scan: resolved references"
    );
    // A scan that found only touched files (the mtime moved, the content did not; a file
    // analysed again, retried or reanalysed, is a change) changed nothing lint checks
    // memory against, so none follows it: a touch of 100 files in a 50,000-file map had
    // cost a whole lint, 7 s of CPU (issue 37).
    report.changed = has_scan.is_none()
        || repair
        || !report.added.is_empty()
        || !report.modified.is_empty()
        || !report.deleted.is_empty()
        || !report.renamed.is_empty()
        || any_gone
        || report.retried > 0
        || report.reanalysed > 0;
    skips.sort_by(|a, b| a.path.cmp(&b.path));
    let skipped_rows = skipped_rows(&skips);
    let follow: Vec<&Rename> = follow.iter().collect();
    let folders = folder_moves(&follow, store)?;
    let pages_moved = store.write(|tx| {
        let mut moved = files_moved.clone();
        for r in &folders {
            if crate::sync::move_page(tx, &r.from, &r.to, &format!("rename:scan:{scan_id}"))? {
                moved.push(r.clone());
            }
        }
        map::replace_skipped_files(tx, &skipped_rows)?;
        map::insert_drift(tx, scan_id, &drift, "scan")?;
        map::settle_drift_hashes(tx)?;
        loci_store::set_meta(tx, SECRET_RULES_META, secrets.fingerprint())?;
        loci_store::set_meta(tx, ANALYSIS_META, &loci_core::ANALYSIS_VERSION.to_string())?;
        loci_store::set_meta(tx, crate::ROOT_META, &root.to_string_lossy())?;
        for id in &interrupted {
            tx.execute(
                "UPDATE scans SET status = 'interrupted' WHERE scan_id = ?1 AND status = 'running'",
                [id],
            )
            .ctx(|| "closing interrupted scans".into())?;
        }
        Ok(moved)
    })?;
    report.pages_moved = pages_moved;
    if bulk {
        // Part of the scan's time and before it is marked finished: a finished scan has
        // its indexes (a first scan of the stdlib spends about 1 s here).
        store.write(map::create_bulk_indexes)?;
        tracing::info!(
            ms = started.elapsed().as_millis() as u64,
            "scan: built indexes and full-text tables"
        );
    }
    // With the indexes built (a first scan drops them): memory that named what this scan
    // mapped is tracked from now on. The map's full-text indexes are merged as memory's
    // is after every write: each batch of rows a scan writes is a segment, which every
    // search then reads (a rescan of the whole stdlib left `context` 31% slower on the
    // heavy questions); a scan that rewrote a large part of the map merges them all.
    let written = report.added.len()
        + report.modified.len()
        + report.deleted.len()
        + report.reanalysed as usize;
    let pages = if written >= FULL_MERGE_FILES {
        u32::MAX >> 1
    } else {
        loci_store::search::MERGE_PAGES
    };
    store.write(|tx| {
        let tracked = crate::memory::track_claims_resolved_since(tx)?;
        if !bulk && written > 0 {
            for table in FtsTable::MAP {
                loci_store::search::merge_segments(tx, table, pages)?;
            }
        }
        Ok(tracked)
    })?;
    finish(store, report, skips, started, Some(scan_id), recording)
}

/// The `skipped_files` rows of `skips`, by path.
fn skipped_rows(skips: &[Skip]) -> Vec<map::SkippedFile> {
    let mut rows: Vec<map::SkippedFile> = skips
        .iter()
        .map(|s| map::SkippedFile {
            path: s.path.clone(),
            reason: s.reason.as_str().into(),
            detail: s.detail.clone(),
            size: s.size as i64,
            mtime_ns: s.mtime_ns,
        })
        .collect();
    rows.sort_by(|a, b| a.path.cmp(&b.path));
    rows
}

fn finish_noop(
    store: &mut Store,
    mut report: ScanReport,
    skips: Vec<Skip>,
    started: Instant,
) -> Result<ScanReport> {
    report.scan_id = store
        .conn()
        .query_row(
            "SELECT ifnull(max(scan_id), 0) FROM scans WHERE status = 'finished'",
            [],
            |r| r.get(0),
        )
        .ctx(|| "reading the last scan".into())?;
    finish(store, report, skips, started, None, false)
}

/// The totals of a scan that changed nothing: those the last scan kept (`last`, the newest
/// finished scan), else counted now and kept for it.
fn noop_totals(store: &mut Store, last: i64) -> Result<map::MapTotals> {
    if let Some(totals) = map::kept_totals(store.conn())? {
        return Ok(totals);
    }
    let totals = map::count_totals(store.conn(), None)?;
    if last > 0 && !store.is_read_only() {
        store.write(|tx| map::keep_totals(tx, last, &totals))?;
    }
    Ok(totals)
}

fn finish(
    store: &mut Store,
    mut report: ScanReport,
    skips: Vec<Skip>,
    started: Instant,
    scan_id: Option<i64>,
    recorded: bool,
) -> Result<ScanReport> {
    let totals = match scan_id {
        Some(id) => {
            let totals = map::count_totals(store.conn(), Some(id))?;
            store.write(|tx| map::keep_totals(tx, id, &totals))?;
            totals
        }
        None => noop_totals(store, report.scan_id)?,
    };
    report.totals = totals.counts;
    for (language, files, lines) in totals.languages {
        report.languages.insert(
            language.unwrap_or_else(|| "unknown".into()),
            LanguageCount { files, lines },
        );
    }
    for (reason, n) in walk::count_skips(&skips) {
        report.skipped.insert(reason.as_str().into(), n);
    }
    // Binary files are many and expected: the examples name the other skips first.
    let (mut examples, binary): (Vec<Skip>, Vec<Skip>) = skips
        .into_iter()
        .partition(|s| s.reason != SkipReason::Binary);
    examples.extend(binary);
    examples.truncate(SKIPPED_EXAMPLES);
    report.skipped_examples = examples;
    let mut stmt = store
        .conn()
        .prepare("SELECT path, degraded FROM files WHERE degraded IS NOT NULL ORDER BY path")
        .ctx(|| "reading degraded files".into())?;
    report.degraded = stmt
        .query_map([], |r| {
            Ok(DegradedFile {
                path: r.get(0)?,
                reason: r.get(1)?,
            })
        })
        .ctx(|| "reading degraded files".into())?
        .collect::<std::result::Result<_, _>>()
        .ctx(|| "reading degraded files".into())?;
    drop(stmt);
    // The map's full-text indexes list their common terms again where they changed (or
    // never did: a store made before migration 0014), so no question walks those terms'
    // posting lists: from the changes this scan recorded, else by walking each index.
    // Reading the stamps is all a scan that changed nothing does.
    if recorded {
        let at = Instant::now();
        store.write(|tx| loci_store::common_terms::apply_recorded(tx))?;
        report.common_terms_updated = true;
        tracing::info!(
            ms = at.elapsed().as_millis() as u64,
            "scan: updated the common terms of the map's full-text indexes from its changes"
        );
    }
    let mut stale = Vec::new();
    for table in FtsTable::MAP {
        if !loci_store::search::common_terms_current(store.conn(), table)? {
            stale.push(table);
        }
    }
    if !stale.is_empty() {
        let at = Instant::now();
        store.write(|tx| {
            for &table in &stale {
                loci_store::search::refresh_common_terms(tx, table)?;
            }
            Ok(())
        })?;
        tracing::info!(
            ms = at.elapsed().as_millis() as u64,
            "scan: listed the common terms of the map's full-text indexes"
        );
    }
    report.duration_ms = started.elapsed().as_millis() as u64;
    if let Some(scan_id) = scan_id {
        let r = &report;
        store.write(|tx| {
            tx.execute(
                "UPDATE scans SET finished_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now'),
                    status = 'finished', added = ?2, modified = ?3, deleted = ?4, renamed = ?5, unchanged = ?6,
                    skipped = ?7, duration_ms = ?8, files = ?9, symbols = ?10
                 WHERE scan_id = ?1",
                params![
                    scan_id,
                    r.added.len(),
                    r.modified.len(),
                    r.deleted.len(),
                    r.renamed.len(),
                    r.unchanged,
                    r.skipped.values().sum::<u64>(),
                    r.duration_ms,
                    r.totals.files,
                    r.totals.symbols
                ],
            )
            .ctx(|| "finishing the scan".into())?;
            Ok(())
        })?;
    }
    // With the scan finished, the marks of the current revisions from its map (all of
    // them after a scan that changed it; after one that did not, those written since).
    if crate::audit::marks_missing(store.conn())? {
        let at = Instant::now();
        store.write(|tx| crate::audit::store_marks(tx, None))?;
        tracing::info!(
            ms = at.elapsed().as_millis() as u64,
            "scan: stored the marks of the current revisions"
        );
    }
    Ok(report)
}

/// Reads, hashes and (when new or changed) analyses one file. Runs on a worker thread.
fn process(
    f: &WalkedFile,
    stored: Option<&FileState>,
    options: &AnalyzeOptions,
    secrets: &SecretRules,
) -> Outcome {
    let ReadFile {
        bytes,
        size,
        mtime_ns,
    } = match read_text_file(&f.abs) {
        Ok(Some(r)) => r,
        Ok(None) => {
            return Outcome::Skipped(Skip {
                path: f.path.clone(),
                reason: SkipReason::Binary,
                detail: None,
                size: f.size,
                mtime_ns: f.mtime_ns,
            });
        }
        Err(e) => {
            let reason = if e.kind() == std::io::ErrorKind::NotFound {
                SkipReason::Vanished
            } else {
                SkipReason::Unreadable
            };
            return Outcome::Skipped(Skip {
                path: f.path.clone(),
                reason,
                detail: Some(e.to_string()),
                size: f.size,
                mtime_ns: f.mtime_ns,
            });
        }
    };
    let content_hash = loci_core::fingerprint::content_hash(&bytes);
    let (text, lossy_utf8) = match String::from_utf8(bytes) {
        Ok(s) => (s, false),
        Err(e) => (String::from_utf8_lossy(e.as_bytes()).into_owned(), true),
    };
    if let Some(m) = secrets.find_token(&text) {
        return Outcome::Skipped(Skip {
            path: f.path.clone(),
            reason: SkipReason::Secret,
            detail: Some(format!("contains {m}")),
            size: size as u64,
            mtime_ns,
        });
    }
    // Same content: only the mtime moved, and the size if an older scan recorded one
    // from another read than the hash.
    if let Some(s) = stored
        && s.content_hash == content_hash
    {
        return Outcome::Touched {
            file_id: s.file_id,
            size,
            mtime_ns,
        };
    }
    // Editors show text without the byte-order mark; positions are relative to that text.
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let lines = count_lines(text);
    let analysis =
        Language::from_path(&f.path).map(|lang| loci_core::analyze(&f.path, lang, text, options));
    let code = analysis
        .as_ref()
        .map(|a| map::index_code_text(&f.path, text, &a.symbols));
    Outcome::Analyzed(Box::new(Analyzed {
        path: f.path.clone(),
        size,
        mtime_ns,
        content_hash,
        language: loci_core::lang::file_language_name(&f.path),
        analysis,
        chunks: if loci_core::lang::file_language_name(&f.path) == Some("markdown") {
            loci_core::markdown::chunks(text)
        } else {
            Vec::new()
        },
        code,
        lines,
        lossy_utf8,
    }))
}

/// Bytes of git's binary sniff: a NUL byte among the first 8,000 bytes means binary
/// (git `buffer_is_binary`, `FIRST_FEW_BYTES`).
const BINARY_SNIFF_BYTES: usize = 8_000;

/// Reads a whole file, or `None` when it looks binary; the sniff reads only the first
/// [`BINARY_SNIFF_BYTES`] of a binary file.
fn read_text_file(path: &Path) -> std::io::Result<Option<ReadFile>> {
    use std::io::Read;
    let mut file = std::fs::File::open(path)?;
    let before = file.metadata()?;
    // The whole file in one allocation (the size may change while it is read: a hint,
    // capped so a lying size cannot reserve much).
    let hint = usize::try_from(before.len()).unwrap_or(0).min(64 << 20);
    let mut bytes = Vec::with_capacity(hint + 1);
    (&mut file)
        .take(BINARY_SNIFF_BYTES as u64)
        .read_to_end(&mut bytes)?;
    if bytes.contains(&0) {
        return Ok(None);
    }
    file.read_to_end(&mut bytes)?;
    let after = file.metadata()?;
    let mtime = walk::change_time_ns(&before);
    let steady = mtime == walk::change_time_ns(&after)
        && before.len() == after.len()
        && after.len() == bytes.len() as u64;
    Ok(Some(ReadFile {
        size: bytes.len() as i64,
        mtime_ns: if steady { mtime } else { UNVERIFIED_MTIME },
        bytes,
    }))
}

/// What [`read_text_file`] read: the bytes, their length, and the file's modification
/// time taken before reading, or [`UNVERIFIED_MTIME`] when the file changed while it was
/// read. The map records these, never the walk's earlier `stat`, so its size and mtime
/// describe the content it hashed.
struct ReadFile {
    bytes: Vec<u8>,
    /// `bytes.len()`.
    size: i64,
    /// Nanoseconds since the Unix epoch, or [`UNVERIFIED_MTIME`].
    mtime_ns: i64,
}

/// The mtime recorded for a file that changed while a scan read it: it matches no real
/// file time, so the next scan reads the file again.
const UNVERIFIED_MTIME: i64 = 0;

/// Lines in `text`: `\n`, `\r\n` and a lone `\r` each end a line; a last line without an
/// ending counts.
pub fn count_lines(text: &str) -> i64 {
    let bytes = text.as_bytes();
    let mut n = 0i64;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => n += 1,
            b'\r' => {
                n += 1;
                if bytes.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    if !bytes.is_empty() && !matches!(bytes[bytes.len() - 1], b'\n' | b'\r') {
        n += 1;
    }
    n
}

struct Writer<'a, 's> {
    store: &'a mut Store,
    scan_id: i64,
    stored: &'s HashMap<String, FileState>,
    /// No scan has finished before this one (what is in the map was written by a scan
    /// that was killed).
    first: bool,
    /// The map was built by another analysis version: unchanged files are analysed again.
    reanalyse: bool,
    /// References of changed files, waiting for resolution.
    pending: PendingRefs,
    /// A first scan's bulk load: each file's references are written with it, unresolved
    /// (but for those its own file resolves), and resolved from the store at the end
    /// ([`resolve_written_refs`]), so memory does not hold the repository's references
    /// until then (3.3 M on a 50,000-file map, issue 32 item 6). Else they wait in
    /// `pending`.
    write_refs: bool,
    /// The parse limit files are analysed with ([`parse_to_retry`]).
    parse_timeout_ms: u64,
    /// Names that gained or lost a definition, for the stored references they may now
    /// resolve differently; none in a bulk load, whose references are all its own (every
    /// name of the map, 313,000 on a 48,000-file corpus, had been held to the end).
    changed_names: BTreeSet<String>,
    /// Files written in this scan.
    changed_files: BTreeSet<i64>,
    /// Observed changes, for the drift ledger.
    drift: Vec<map::DriftEntry>,
    /// References in other files that pointed at symbols of a rewritten file.
    retarget: BTreeSet<i64>,
}

impl Writer<'_, '_> {
    fn write_batch(
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
        let scan_id = self.scan_id;
        let reanalyse = self.reanalyse;
        let write_refs = self.write_refs;
        let written = self.store.write(|tx| {
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
                            Some(id)
                                if same_content
                                    && snapshots_name(&snapshotted, &a.path, &a.analysis) =>
                            {
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
                            map::insert_imports(tx, file_id, &x.imports)?;
                            if write_refs {
                                map::insert_refs(tx, file_id, unresolved_rows(&x.refs, &ids))?;
                            }
                        }
                        if let Some(code) = &a.code {
                            map::insert_code_text(
                                tx,
                                file_id,
                                code,
                                &ids,
                                loci_core::secondary::secondary_code(&a.path).is_some(),
                            )?;
                        }
                        if let Some(before) = before {
                            fingerprint_changes(a, before, &snapshotted, &mut carried);
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
                        written.push((file_id, existing.is_some(), old_keys, ids, incoming));
                    }
                }
            }
            mem::carry_snapshots_forward(tx, &carried)?;
            Ok(written)
        })?;
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
                    let Some((file_id, existed, old_keys, symbol_ids, incoming)) = written.next()
                    else {
                        continue;
                    };
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
                    // when a scan finishes): a change made just before a killed scan was
                    // missing from the ledger.
                    let state = stored.get(&a.path);
                    let recorded = state.and_then(|s| s.drift_hash.as_deref());
                    let changed = recorded != Some(a.content_hash.as_str());
                    // Same content as the row: read again because an interrupted scan
                    // wrote it (its references were lost with it), because another
                    // analysis version built it, or only touched.
                    let rewritten =
                        existed && state.is_some_and(|s| s.content_hash == a.content_hash);
                    // On a first scan nothing was there before the killed one: its work
                    // is finished (`resumed`).
                    let resumed = rewritten && self.first;
                    // Same content as at the last finished scan, analysed again only
                    // because another analysis version built the row: no drift.
                    let reanalysed = !changed && self.reanalyse && !self.first;
                    // Same content, analysed again because a parse limit had cut its
                    // last analysis short.
                    let retried =
                        !changed && state.is_some_and(|s| parse_to_retry(s, self.parse_timeout_ms));
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
            }
        }
        Ok(())
    }

    /// Deletes the files that are `gone` from the map and, in the same transaction, moves
    /// the memory of each file that `follow` says was renamed (see
    /// [`crate::sync::move_page`]); returns the renames whose page moved. One transaction,
    /// because a scan killed between the two had deleted the old path and lost the rename
    /// for memory: the next scan saw only the new file.
    fn delete(
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
                if crate::sync::move_page(tx, &r.from, &r.to, &format!("rename:scan:{scan_id}"))? {
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
fn degraded_reason(d: &loci_core::Degraded) -> String {
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
/// file that load once stopped had stayed without symbols while it was unchanged), or the
/// parse limit stopped it at a lower limit than `limit_ms`. A stop by the same limit is
/// final: the budget counts work, so the same text stops again.
fn parse_to_retry(s: &FileState, limit_ms: u64) -> bool {
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

/// The references of a scan's changed files, held until every definition is known and
/// they can be resolved. A first scan holds every reference of the repository here (345,000
/// for the standard library, millions for a large monorepo), so each is packed into 32
/// bytes and its name is interned: as `RefRow`s with owned names they took 140 bytes each,
/// the largest part of a first scan's memory.
#[derive(Default)]
struct PendingRefs {
    /// (file id, range of `refs`), in write order.
    files: Vec<(i64, std::ops::Range<usize>)>,
    refs: Vec<PendingRef>,
    names: Vec<Box<str>>,
    ids: HashMap<Box<str>, u32>,
    /// (index into `refs`, target symbol id), ascending: the references their own file
    /// resolves ([`loci_core::Reference::target`]; few, so not a field of every ref).
    local: Vec<(u32, i64)>,
    /// (index into `refs`, index into `names` of its receiver's name), ascending
    /// ([`loci_core::Reference::receiver_name`]: only refs on another object have one).
    receivers: Vec<(u32, u32)>,
}

/// One unresolved reference: see [`PendingRefs`].
struct PendingRef {
    /// Index into [`PendingRefs::names`].
    name: u32,
    kind: loci_core::RefKind,
    receiver: Receiver,
    line: u32,
    column: u32,
    start_byte: u32,
    end_byte: u32,
    /// Row id of the innermost enclosing definition (row ids start at 1).
    enclosing: Option<NonZeroI64>,
}

impl PendingRefs {
    /// Adds a file's references (none for a file that was not analysed); `symbol_ids` are
    /// the row ids of its symbols, in order.
    fn push(&mut self, file_id: i64, refs: &[loci_core::Reference], symbol_ids: &[i64]) {
        let start = self.refs.len();
        for r in refs {
            let name = self.intern(&r.name);
            if let Some(&id) = r.target.and_then(|i| symbol_ids.get(i as usize)) {
                self.local.push((self.refs.len() as u32, id));
            }
            if let Some(receiver) = &r.receiver_name {
                let id = self.intern(receiver);
                self.receivers.push((self.refs.len() as u32, id));
            }
            self.refs.push(PendingRef {
                name,
                kind: r.kind,
                receiver: r.receiver,
                line: r.span.line,
                column: r.span.column,
                start_byte: r.span.start,
                end_byte: r.span.end,
                enclosing: r
                    .enclosing
                    .and_then(|i| symbol_ids.get(i as usize))
                    .and_then(|&id| NonZeroI64::new(id)),
            });
        }
        self.files.push((file_id, start..self.refs.len()));
    }

    /// The index of `name` in [`PendingRefs::names`], added if new.
    fn intern(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        let id = self.names.len() as u32;
        self.names.push(name.into());
        self.ids.insert(name.into(), id);
        id
    }

    /// A file's references as rows, resolved with `resolver`.
    fn rows<'a>(
        &'a self,
        file_id: i64,
        range: std::ops::Range<usize>,
        resolver: &'a Resolver,
    ) -> impl Iterator<Item = RefRow<'a>> + 'a {
        let start = range.start;
        self.refs[range].iter().enumerate().map(move |(k, r)| {
            let name = &*self.names[r.name as usize];
            let enclosing_id = r.enclosing.map(NonZeroI64::get);
            let local = self
                .local
                .binary_search_by_key(&((start + k) as u32), |&(i, _)| i)
                .ok()
                .map(|i| self.local[i].1);
            let receiver_name = self
                .receivers
                .binary_search_by_key(&((start + k) as u32), |&(i, _)| i)
                .ok()
                .map(|i| &*self.names[self.receivers[i].1 as usize]);
            // A member of a type the file defines, resolved by the file: as sure as a
            // same-file `self.f()` (see `Resolver::resolve`).
            let (target_id, provenance, confidence) = match local {
                Some(id) => (Some(id), "derived", SAME_FILE_CONFIDENCE),
                None => resolver.resolve(
                    file_id,
                    name,
                    r.kind,
                    enclosing_id,
                    r.receiver,
                    receiver_name,
                ),
            };
            RefRow {
                name,
                kind: r.kind.as_str(),
                receiver: r.receiver.as_str(),
                receiver_name,
                line: r.line,
                column: r.column,
                start_byte: r.start_byte,
                end_byte: r.end_byte,
                enclosing_id,
                target_id,
                provenance,
                confidence,
            }
        })
    }
}

/// A file's references as rows before resolution: those its own file resolves
/// ([`loci_core::Reference::target`]) resolved as [`PendingRefs::rows`] resolves them, the
/// others unresolved as [`Resolver::resolve`] leaves a name it cannot place, for
/// [`resolve_written_refs`].
fn unresolved_rows<'a>(
    refs: &'a [loci_core::Reference],
    symbol_ids: &'a [i64],
) -> impl Iterator<Item = RefRow<'a>> + 'a {
    refs.iter().map(move |r| {
        let target_id = r.target.and_then(|i| symbol_ids.get(i as usize)).copied();
        let (provenance, confidence) = match target_id {
            Some(_) => ("derived", SAME_FILE_CONFIDENCE),
            None => UNRESOLVED_AS,
        };
        RefRow {
            name: &r.name,
            kind: r.kind.as_str(),
            receiver: r.receiver.as_str(),
            receiver_name: r.receiver_name.as_deref(),
            line: r.span.line,
            column: r.span.column,
            start_byte: r.span.start,
            end_byte: r.span.end,
            enclosing_id: r
                .enclosing
                .and_then(|i| symbol_ids.get(i as usize))
                .copied(),
            target_id,
            provenance,
            confidence,
        }
    })
}

/// The provenance and confidence [`Resolver::resolve`] gives a reference it cannot
/// resolve.
const UNRESOLVED_AS: (&str, f64) = ("derived", 0.0);

/// References a batch of [`resolve_written_refs`] reads and resolves at once: in name
/// order, where each batch reads its names' definitions, and in the order they were
/// written, where every definition is read at once (a batch then needs nothing more).
const RESOLVE_BATCH_REFS: (i64, i64) = (100_000, 20_000);

/// Definitions a map may have for [`resolve_written_refs`] to read them all at once (the
/// stdlib has 78,000, which with every file's imports add about 45 MiB to its first scan's
/// resident set), and its references in the order they
/// were written: reading them in name order instead, and the definitions name by name,
/// cost the stdlib's first scan 0.9 s more.
const RESOLVE_AT_ONCE_DEFINITIONS: i64 = 250_000;

/// Resolves the references a bulk load wrote unresolved ([`unresolved_rows`]), `batch` at a
/// time (by name, written order: [`RESOLVE_BATCH_REFS`]), each batch's new targets written
/// in one transaction. A
/// map of more than `at_once` definitions ([`RESOLVE_AT_ONCE_DEFINITIONS`]) is resolved
/// in name order:
/// each batch reads the definitions of the names it uses (and of the calls its typed
/// receivers' type expressions make) and the scopes its references are written in, so
/// memory holds one batch's references and definitions and every file's paths and
/// imports, never the map's definitions (990,000 on a 48,000-file map had taken 360 MiB).
/// The rows, and what each resolves to, are those [`PendingRefs::rows`] writes.
fn resolve_written_refs(
    store: &mut Store,
    modules: PathIndex,
    batch: (i64, i64),
    at_once: i64,
) -> Result<()> {
    let definitions: i64 = store
        .conn()
        .query_row("SELECT count(*) FROM symbols", [], |r| r.get(0))
        .ctx(|| "counting definitions".into())?;
    let by_name = definitions > at_once;
    let batch = if by_name { batch.0 } else { batch.1 };
    let mut resolver = Resolver::default();
    if by_name {
        // The batches are read by name and their definitions looked up by name.
        store.write(map::create_name_indexes)?;
    } else {
        resolver.read_definitions(store.conn(), None)?;
    }
    resolver.read_paths(store.conn(), None)?;
    resolver.read_imports(store.conn(), None)?;
    resolver.modules = modules;
    let mut after = (String::new(), 0i64);
    loop {
        type Row = (
            i64,
            i64,
            String,
            Option<i64>,
            Receiver,
            Option<String>,
            RefKind,
        );
        let rows: Vec<Row> = {
            let mut stmt = store
                .conn()
                .prepare_cached(if by_name {
                    "SELECT ref_id, file_id, name, enclosing_id, receiver, receiver_name, kind
                     FROM refs WHERE (name, ref_id) > (?1, ?2) AND target_id IS NULL
                     ORDER BY name, ref_id LIMIT ?3"
                } else {
                    // The same parameters; the name (?1) orders nothing here.
                    "SELECT ref_id, file_id, name, enclosing_id, receiver, receiver_name, kind
                     FROM refs WHERE ref_id > ?2 AND target_id IS NULL
                     ORDER BY ref_id LIMIT ?3"
                })
                .ctx(|| "reading refs to resolve".into())?;
            stmt.query_map(params![after.0, after.1, batch], |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    Receiver::parse(r.get::<_, Option<String>>(4)?.as_deref()),
                    r.get(5)?,
                    RefKind::parse(&r.get::<_, String>(6)?),
                ))
            })
            .ctx(|| "reading refs to resolve".into())?
            .collect::<std::result::Result<_, _>>()
            .ctx(|| "reading refs to resolve".into())?
        };
        let Some(last) = rows.last() else {
            return Ok(());
        };
        after = (last.2.clone(), last.0);
        if by_name {
            let names: BTreeSet<&str> = rows
                .iter()
                .map(|r| r.2.as_str())
                .chain(
                    rows.iter()
                        .filter_map(|r| r.5.as_deref())
                        .flat_map(called_names),
                )
                .collect();
            let enclosing: BTreeSet<i64> = rows.iter().filter_map(|r| r.3).collect();
            resolver.read_definitions(store.conn(), Some(&names))?;
            resolver.parents.clear();
            resolver.read_scopes(store.conn(), "s.symbol_id", &enclosing)?;
        }
        let updates: Vec<(i64, Option<i64>, &'static str, f64)> = rows
            .iter()
            .filter_map(
                |(ref_id, file_id, name, enclosing, receiver, receiver_name, kind)| {
                    let (t, p, c) = resolver.resolve(
                        *file_id,
                        name,
                        *kind,
                        *enclosing,
                        *receiver,
                        receiver_name.as_deref(),
                    );
                    (t.is_some() || (p, c) != UNRESOLVED_AS).then_some((*ref_id, t, p, c))
                },
            )
            .collect();
        store.write(|tx| {
            for (ref_id, target, provenance, confidence) in &updates {
                map::set_ref_target(tx, *ref_id, *target, provenance, *confidence)?;
            }
            Ok(())
        })?;
    }
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
    let mut stmt = store
        .conn()
        .prepare_cached("SELECT content_hash FROM files WHERE path = ?1")
        .ctx(|| "reading content hashes".into())?;
    for path in added {
        let hash: Option<String> = stmt
            .query_row([path], |r| r.get(0))
            .optional()
            .ctx(|| "reading content hashes".into())?;
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
fn folder_moves(renames: &[&Rename], store: &Store) -> Result<Vec<Rename>> {
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
    let mut stmt = store
        .conn()
        .prepare_cached(
            "SELECT 1 FROM files WHERE substr(path, 1, length(?1) + 1) = ?1 || '/' LIMIT 1",
        )
        .ctx(|| "reading folders".into())?;
    let mut out = Vec::new();
    for (from, to) in to_of {
        let Some(to) = to else { continue };
        let left = stmt
            .query_row([&from], |_| Ok(()))
            .optional()
            .ctx(|| format!("reading folder {from}"))?;
        if left.is_none() {
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
    let mut stmt = store
        .conn()
        .prepare_cached("SELECT content_hash FROM files WHERE path = ?1")
        .ctx(|| "reading content hashes".into())?;
    let mut added: HashMap<String, usize> = HashMap::new();
    for path in report
        .added
        .iter()
        .chain(report.renamed.iter().map(|r| &r.to))
    {
        let hash: Option<String> = stmt
            .query_row([path], |r| r.get(0))
            .optional()
            .ctx(|| "reading content hashes".into())?;
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

/// Resolves imports into `deps` for every file (when `all`) or the `changed` ones.
/// Returns the files whose resolved edges changed.
fn resolve_deps(
    root: &Path,
    store: &mut Store,
    all: bool,
    changed: &BTreeSet<i64>,
) -> Result<(BTreeSet<i64>, PathIndex)> {
    let conn = store.conn();
    let mut index = PathIndex::default();
    let mut ids: HashMap<String, i64> = HashMap::new();
    let mut manifests: Vec<String> = Vec::new();
    {
        let mut stmt = conn
            .prepare("SELECT file_id, path FROM files")
            .ctx(|| "reading paths".into())?;
        let rows = stmt
            .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))
            .ctx(|| "reading paths".into())?;
        for row in rows {
            let (id, path) = row.ctx(|| "reading paths".into())?;
            if (path == "go.mod" || path.ends_with("/go.mod"))
                && let Some(module) = go_module_path(&root.join(&path))
            {
                let dir = path.strip_suffix("go.mod").unwrap_or("");
                index
                    .go_modules
                    .insert(dir.trim_end_matches('/').to_string(), module);
            }
            if path == "Cargo.toml" || path.ends_with("/Cargo.toml") {
                manifests.push(path.clone());
            }
            index.paths.insert(path.clone());
            ids.insert(path, id);
        }
    }
    for manifest in manifests {
        if let Some((name, root_file)) = rust_library(root, &manifest)
            && index.paths.contains(&root_file)
        {
            let dir = root_file
                .rsplit_once('/')
                .map_or(String::new(), |(d, _)| d.to_string());
            // Two crates of one name (vendored copies): the first path keeps it.
            index.rust_crates.entry(name).or_insert((dir, root_file));
        }
    }
    // Every import when the topology changed, else only the changed files': a rescan
    // after one edit read all 400,000 imports of a 50,000-file map (2.6 s).
    // (file id, path, language, module, names, line)
    let imports: Vec<(i64, String, Option<String>, String, String, u32)> = read_keyed(
        conn,
        "reading imports",
        "SELECT i.file_id, f.path, f.language, i.module, i.names, i.line
         FROM imports i JOIN files f USING (file_id)",
        "",
        ("i.file_id", (!all).then_some(changed)),
        "i.import_id",
        |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
            ))
        },
    )?;
    // Namespaces and packages (module symbols) resolve only Java, C# and PHP imports; the
    // query reads every symbol, so a rescan without such an import skips it.
    if imports
        .iter()
        .any(|(_, _, language, ..)| matches!(language.as_deref(), Some("java" | "csharp" | "php")))
    {
        let mut stmt = conn
            .prepare(
                "SELECT s.qualified_name, f.path FROM symbols s JOIN files f USING (file_id)
                 WHERE s.kind = 'module'",
            )
            .ctx(|| "reading namespaces".into())?;
        let rows = stmt
            .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
            .ctx(|| "reading namespaces".into())?;
        for row in rows {
            let (ns, path) = row.ctx(|| "reading namespaces".into())?;
            index.namespaces.entry(ns).or_default().insert(path);
        }
    }
    // file → (module, target) → (first line, count)
    type Edges = BTreeMap<(String, Option<i64>), (u32, u32)>;
    let mut edges: BTreeMap<i64, Edges> = BTreeMap::new();
    for (file_id, path, language, module, names, line) in &imports {
        if !all && !changed.contains(file_id) {
            continue;
        }
        let Some(lang) = language.as_deref().and_then(Language::from_name) else {
            continue;
        };
        let import = Import {
            module: module.clone(),
            names: split_names(names),
            span: Span {
                line: *line,
                end_line: *line,
                ..Span::default()
            },
        };
        let targets = loci_core::imports::resolve(lang, path, &import, &index);
        let file_edges = edges.entry(*file_id).or_default();
        let targets: Vec<Option<i64>> = if targets.is_empty() {
            vec![None]
        } else {
            targets.iter().map(|t| ids.get(t).copied()).collect()
        };
        for to in targets {
            if to == Some(*file_id) {
                continue;
            }
            let e = file_edges.entry((module.clone(), to)).or_insert((*line, 0));
            e.0 = e.0.min(*line);
            e.1 += 1;
        }
    }
    // Files to rewrite: all importing files (or the changed ones), plus changed files
    // that no longer import anything.
    let mut targets: BTreeSet<i64> = edges.keys().copied().collect();
    if all {
        targets.extend(ids.values().copied());
    } else {
        targets.extend(changed.iter().copied());
    }
    let old = load_deps(conn, (!all).then_some(&targets))?;
    let mut deps_changed = BTreeSet::new();
    let mut writes = Vec::new();
    for file_id in targets {
        let new: Vec<(String, Option<i64>, u32, u32)> = edges
            .get(&file_id)
            .map(|m| {
                m.iter()
                    .map(|((module, to), (line, count))| (module.clone(), *to, *line, *count))
                    .collect()
            })
            .unwrap_or_default();
        let old_edges = old.get(&file_id).cloned().unwrap_or_default();
        if new != old_edges {
            deps_changed.insert(file_id);
            writes.push((file_id, new));
        }
    }
    for chunk in writes.chunks(512) {
        store.write(|tx| {
            for (file_id, new) in chunk {
                map::replace_deps(tx, *file_id, new)?;
            }
            Ok(())
        })?;
    }
    Ok((deps_changed, index))
}

/// The rows of `select` (`SELECT … FROM …`, no `WHERE`) that pass `filter` (an SQL
/// condition, `""` for none): of the whole table in one pass when the key set of `key`
/// (a column, and the keys wanted) is `None`, else of each wanted key by one indexed
/// lookup (`column = ?1`), keys in their set's order. Within one key the rows come in
/// `order` in both modes, which is all the callers rely on: they group the rows by key
/// (across keys, a full pass is in `order` only). `what` names the read in errors.
fn read_keyed<K: loci_store::rusqlite::ToSql, T>(
    conn: &loci_store::rusqlite::Connection,
    what: &str,
    select: &str,
    filter: &str,
    keyed: (&str, Option<&BTreeSet<K>>),
    order: &str,
    read: impl FnMut(&loci_store::rusqlite::Row<'_>) -> loci_store::rusqlite::Result<T>,
) -> Result<Vec<T>> {
    let mut out = Vec::new();
    read_keyed_each(conn, what, select, filter, keyed, order, read, |row| {
        out.push(row)
    })?;
    Ok(out)
}

/// [`read_keyed`], handing each row to `each` as it is read instead of collecting them:
/// a whole map's definitions collected before use had held every row's strings at once
/// (1.19 M symbols on a 50,000-file map).
#[allow(clippy::too_many_arguments)]
fn read_keyed_each<K: loci_store::rusqlite::ToSql, T>(
    conn: &loci_store::rusqlite::Connection,
    what: &str,
    select: &str,
    filter: &str,
    (column, keys): (&str, Option<&BTreeSet<K>>),
    order: &str,
    mut read: impl FnMut(&loci_store::rusqlite::Row<'_>) -> loci_store::rusqlite::Result<T>,
    mut each: impl FnMut(T),
) -> Result<()> {
    let ctx = || what.to_string();
    let and = if filter.is_empty() {
        String::new()
    } else {
        format!(" AND {filter}")
    };
    match keys {
        None => {
            let filter = if filter.is_empty() {
                String::new()
            } else {
                format!(" WHERE {filter}")
            };
            let mut stmt = conn
                .prepare(&format!("{select}{filter} ORDER BY {order}"))
                .ctx(ctx)?;
            for row in stmt.query_map([], &mut read).ctx(ctx)? {
                each(row.ctx(ctx)?);
            }
        }
        Some(keys) => {
            let mut stmt = conn
                .prepare_cached(&format!(
                    "{select} WHERE {column} = ?1{and} ORDER BY {order}"
                ))
                .ctx(ctx)?;
            for key in keys {
                for row in stmt.query_map([key], &mut read).ctx(ctx)? {
                    each(row.ctx(ctx)?);
                }
            }
        }
    }
    Ok(())
}

type DepRows = BTreeMap<i64, Vec<(String, Option<i64>, u32, u32)>>;

/// The stored deps of `files` (of every file when `None`), by importing file.
fn load_deps(
    conn: &loci_store::rusqlite::Connection,
    files: Option<&BTreeSet<i64>>,
) -> Result<DepRows> {
    let rows = read_keyed(
        conn,
        "reading deps",
        "SELECT from_file_id, module, to_file_id, line, count FROM deps",
        "",
        ("from_file_id", files),
        "module, to_file_id",
        |r| {
            Ok((
                r.get::<_, i64>(0)?,
                (r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?),
            ))
        },
    )?;
    let mut out: DepRows = BTreeMap::new();
    for (from, edge) in rows {
        out.entry(from).or_default().push(edge);
    }
    Ok(out)
}

fn split_names(names: &str) -> Vec<String> {
    names
        .split(',')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// The `module` path declared by a `go.mod` file.
fn go_module_path(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    text.lines().find_map(|l| {
        let l = l.trim();
        l.strip_prefix("module")
            .filter(|rest| rest.starts_with(char::is_whitespace))
            .map(|rest| rest.trim().trim_matches('"').to_string())
    })
}

/// The library a `Cargo.toml` (repo-relative `manifest`) declares: its name as code names
/// it (`[lib] name`, else `[package] name` with `-` as `_`, per Cargo's target rules) and
/// its root file, repo-relative (`[lib] path`, else `src/lib.rs` beside the manifest).
/// `None` for a manifest that cannot be read or parsed, or has no package (a virtual
/// workspace).
fn rust_library(root: &Path, manifest: &str) -> Option<(String, String)> {
    let text = std::fs::read_to_string(root.join(manifest)).ok()?;
    let doc: toml::Table = text.parse().ok()?;
    let package = doc.get("package")?.as_table()?;
    let lib = doc.get("lib").and_then(|l| l.as_table());
    let name = lib
        .and_then(|l| l.get("name"))
        .or_else(|| package.get("name"))?
        .as_str()?
        .replace('-', "_");
    let dir = manifest.strip_suffix("Cargo.toml")?;
    let path = lib
        .and_then(|l| l.get("path"))
        .and_then(|p| p.as_str())
        .unwrap_or("src/lib.rs")
        .trim_start_matches("./")
        .replace('\\', "/");
    Some((name, format!("{dir}{path}")))
}

/// A definition, as reference resolution sees it.
/// Whether a symbol of `kind` ([`loci_core::SymbolKind::as_str`]) is a type a `type`
/// reference may name.
fn is_type_kind(kind: &str) -> bool {
    use loci_core::SymbolKind as K;
    matches!(
        K::parse(kind),
        K::Class | K::Struct | K::Enum | K::Union | K::Trait | K::Interface | K::Type
    )
}

/// Whether a symbol of `kind` can be what a call names: anything but a module
/// (namespace, package), a trait or interface, or a type alias (Rust's `type Err`).
fn is_callable_kind(kind: &str) -> bool {
    use loci_core::SymbolKind as K;
    !matches!(
        K::parse(kind),
        K::Module | K::Trait | K::Interface | K::Type
    )
}

/// The last segment of a qualified name's scope: `Builder` for `Builder.new`, `Inner` for
/// `Outer.Inner.f`, `None` for a top-level name.
fn owner_of(qualified: &str) -> Option<Box<str>> {
    qualified
        .rsplit_once('.')
        .map(|(scope, _)| scope.rsplit('.').next().unwrap_or(scope).into())
}

/// Whether a definition's owner (see [`owner_of`]) is a type by the naming convention
/// (capitalised): a type declared in it (Rust's associated `type Value = Json;`, a nested
/// class) is named through it, not by its bare name (`Value` in a signature had resolved
/// to an `impl Visitor`'s `Value`, serde_json's was meant).
fn def_owner_is_type(owner: Option<&str>) -> bool {
    owner.is_some_and(|o| o.starts_with(|c: char| c.is_uppercase()))
}

#[derive(Clone)]
struct Def {
    id: i64,
    parent: Option<i64>,
    /// The last segment of the scope its qualified name gives (`Builder` for
    /// `Builder.new`), if any.
    owner: Option<Box<str>>,
    /// Its qualified name has two segments (`Type.member`): the owner is top-level.
    top_member: bool,
    /// It is a module (`mod m { .. }`, a namespace): no call or module path names it.
    module: bool,
    /// It is a member of a type (a method, a field, an enum variant, an associated item):
    /// in Rust, Python, Go, JavaScript, TypeScript and PHP a bare name never means one.
    member: bool,
    file_id: i64,
    /// The type path its signature declares it returns, for a function or method
    /// ([`Language::return_type`]; `Self` as written): what a call of it is, when a type
    /// expression calls it ([`Resolver::evaluate`]).
    returns: Option<Box<str>>,
}

/// The definitions of one name.
#[derive(Default)]
struct Defs {
    /// In key order, so every choice is deterministic.
    all: Vec<Def>,
    /// (file id, index into `all`), sorted: the definitions in one file are found by a
    /// binary search, not a scan of all of them (a name like `get` has thousands of
    /// definitions in a monorepo, and each of its references asked about several files).
    by_file: Vec<(i64, u32)>,
}

impl Defs {
    /// The definitions in `file_id`, in key order.
    fn in_file(&self, file_id: i64) -> impl Iterator<Item = (u32, &Def)> {
        let start = self.by_file.partition_point(|&(f, _)| f < file_id);
        self.by_file[start..]
            .iter()
            .take_while(move |&&(f, _)| f == file_id)
            .map(|&(_, i)| (i, &self.all[i as usize]))
    }
}

/// The definitions of one link group of languages ([`Language::link_group`]), by name.
#[derive(Default)]
struct Names {
    /// name → its definitions.
    defs: HashMap<String, Defs>,
    /// name → its definitions that can be called (not modules, traits, interfaces or
    /// type aliases), for the names that have others too: what a `call` may name
    /// (`Err(e)` is no call of an associated `type Err`). A name not here has only
    /// callable definitions.
    callables: HashMap<String, Defs>,
    /// name → its definitions that are types (classes, structs, enums, unions, traits,
    /// interfaces, type aliases): what a `type` reference may name.
    types: HashMap<String, Defs>,
}

#[derive(Default)]
struct Resolver {
    /// link group → the definitions in files of its languages. A reference looks only
    /// in its own file's group ([`Resolver::names_for`]), so no rule below can link
    /// languages that [`Language::links_to`] keeps apart.
    groups: HashMap<Language, Names>,
    /// symbol id → its parent's id, and the last segment of its qualified name's scope
    /// (`Accels` for `Accels.needles`: a method of an `impl` has no parent symbol).
    parents: HashMap<i64, (Option<i64>, Option<Box<str>>)>,
    /// file → (module, imported names)
    imports: HashMap<i64, Vec<(String, Vec<String>)>>,
    /// file → (module, target file), by module then target path: file ids follow the
    /// order parser threads finish in, so they must never decide between two targets.
    deps: HashMap<i64, Vec<(String, i64)>>,
    /// file → its path's last component without the extension (`xml/dom/minidom.py` →
    /// `minidom`), to tell a submodule an import names from the module itself.
    stems: HashMap<i64, String>,
    /// file → its path, for the files of the definitions read and the files resolving.
    paths: HashMap<i64, Box<str>>,
    /// Every path of the map, with the repository's Rust crates: what a Rust path names
    /// ([`Resolver::resolve_module_path`]), by the rules `use` resolves with.
    modules: PathIndex,
}

/// What [`Resolver::load`] reads: everything, or only what references named `names` in
/// `files` need.
struct Needs<'a> {
    names: &'a BTreeSet<&'a str>,
    files: &'a BTreeSet<i64>,
}

impl Resolver {
    /// Loads the definitions, parents, imports and deps reference resolution uses: of the
    /// whole map in one pass per table (`needs` is `None`), or only what resolving the
    /// references named `needs.names` in `needs.files` needs, by indexed lookups. A rescan
    /// after a few edits resolves a few files' references; loading every definition of a
    /// 50,000-file map for it took 8.7 s and 339 MiB. The lookups need the map's
    /// secondary indexes (a first scan's bulk load drops them, and reads everything).
    fn load(conn: &loci_store::rusqlite::Connection, needs: Option<Needs<'_>>) -> Result<Resolver> {
        let mut r = Resolver::default();
        let files = needs.as_ref().map(|n| n.files);
        r.read_definitions(conn, needs.as_ref().map(|n| n.names))?;
        // Paths of the files the definitions read are in, and of the files resolving.
        let path_of: BTreeSet<i64> = r
            .groups
            .values()
            .flat_map(|n| n.defs.values())
            .flat_map(|d| d.all.iter().map(|d| d.file_id))
            .chain(files.into_iter().flatten().copied())
            .collect();
        r.read_paths(conn, needs.is_some().then_some(&path_of))?;
        if let Some(files) = files {
            r.read_scopes(conn, "s.file_id", files)?;
        }
        r.read_imports(conn, files)?;
        Ok(r)
    }

    /// Reads the definitions of `wanted` names (of every name when `None`, and then every
    /// symbol's scope too: each is a definition read), in place of those read before.
    fn read_definitions(
        &mut self,
        conn: &loci_store::rusqlite::Connection,
        wanted: Option<&BTreeSet<&str>>,
    ) -> Result<()> {
        self.groups.clear();
        let mut uncallable: HashSet<i64> = HashSet::new();
        read_keyed_each(
            conn,
            "reading definitions",
            "SELECT s.name, s.symbol_id, s.file_id, p.symbol_id, s.qualified_name, s.kind, p.kind,
                    f.language, s.signature
             FROM symbols s JOIN files f ON f.file_id = s.file_id
             LEFT JOIN symbols p ON p.key = s.parent_key",
            "",
            ("s.name", wanted),
            "s.key",
            |row| {
                Ok((
                    row.get::<_, String>(0)?,
                    row.get::<_, i64>(1)?,
                    row.get::<_, i64>(2)?,
                    row.get::<_, Option<i64>>(3)?,
                    row.get::<_, String>(4)?,
                    row.get::<_, String>(5)?,
                    row.get::<_, Option<String>>(6)?,
                    row.get::<_, Option<String>>(7)?,
                    row.get::<_, Option<String>>(8)?,
                ))
            },
            |(name, id, file_id, parent, qualified, kind, parent_kind, language, signature)| {
                // `Builder` for `Builder.new`, `Inner` for `Outer.Inner.f`: methods of an
                // `impl` have no parent symbol, only their qualified name.
                let owner: Option<Box<str>> = owner_of(&qualified);
                if wanted.is_none() {
                    // Every symbol is a definition read here: no separate parents pass.
                    self.parents.insert(id, (parent, owner.clone()));
                }
                // A member of a type: a method, anything declared in a class, struct, enum or
                // trait, or in an `impl` of a (capitalised) type: an enum variant, an
                // associated `type Err`.
                let member = owner.is_some()
                    && (kind == "method"
                        || parent_kind.as_deref().is_some_and(is_type_kind)
                        || (parent.is_none()
                            && owner
                                .as_deref()
                                .is_some_and(|o| o.starts_with(|c: char| c.is_uppercase()))));
                let top_member = qualified.matches('.').count() == 1;
                let nested_type = def_owner_is_type(owner.as_deref());
                let parsed = language.as_deref().and_then(Language::from_name);
                let returns = match (parsed, signature) {
                    (Some(l), Some(signature)) if kind == "function" || kind == "method" => {
                        l.return_type(&signature, &name).map(String::into_boxed_str)
                    }
                    _ => None,
                };
                let def = Def {
                    id,
                    parent,
                    owner,
                    top_member,
                    module: kind == "module",
                    member,
                    file_id,
                    returns,
                };
                // A definition in a file of no parsed language (a Markdown heading) is what
                // no reference names.
                let Some(group) = language
                    .as_deref()
                    .and_then(Language::from_name)
                    .map(Language::link_group)
                else {
                    return;
                };
                let names = self.groups.entry(group).or_default();
                if is_type_kind(&kind) && !nested_type {
                    let types = names.types.entry(name.clone()).or_default();
                    types.by_file.push((file_id, types.all.len() as u32));
                    types.all.push(def.clone());
                }
                if !is_callable_kind(&kind) {
                    uncallable.insert(id);
                }
                let defs = names.defs.entry(name).or_default();
                defs.by_file.push((file_id, defs.all.len() as u32));
                defs.all.push(def);
            },
        )?;
        for names in self.groups.values_mut() {
            // The few names some of whose definitions cannot be called (a module, a trait,
            // a type alias) get their callable ones apart; every other name's are all
            // callable.
            for (name, defs) in &names.defs {
                if defs.all.iter().any(|d| uncallable.contains(&d.id)) {
                    let mut callables = Defs::default();
                    for d in defs.all.iter().filter(|d| !uncallable.contains(&d.id)) {
                        callables
                            .by_file
                            .push((d.file_id, callables.all.len() as u32));
                        callables.all.push(d.clone());
                    }
                    names.callables.insert(name.clone(), callables);
                }
            }
            for defs in names
                .defs
                .values_mut()
                .chain(names.types.values_mut())
                .chain(names.callables.values_mut())
            {
                defs.by_file.sort_unstable();
            }
        }
        Ok(())
    }

    /// Reads the paths of the files `ids` (of every file when `None`).
    fn read_paths(
        &mut self,
        conn: &loci_store::rusqlite::Connection,
        ids: Option<&BTreeSet<i64>>,
    ) -> Result<()> {
        read_keyed_each(
            conn,
            "reading paths",
            "SELECT file_id, path FROM files",
            "",
            ("file_id", ids),
            "file_id",
            |row| Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?)),
            |(id, path)| {
                self.paths.insert(id, path.into());
            },
        )
    }

    /// Reads the scopes ([`Resolver::parents`]) of the symbols whose `column` (`s.file_id`
    /// or `s.symbol_id`) is one of `keys`.
    fn read_scopes(
        &mut self,
        conn: &loci_store::rusqlite::Connection,
        column: &str,
        keys: &BTreeSet<i64>,
    ) -> Result<()> {
        read_keyed_each(
            conn,
            "reading parents",
            "SELECT s.symbol_id, p.symbol_id, s.qualified_name FROM symbols s
             LEFT JOIN symbols p ON p.key = s.parent_key",
            "",
            (column, Some(keys)),
            "s.symbol_id",
            |row| {
                Ok((
                    row.get::<_, i64>(0)?,
                    row.get::<_, Option<i64>>(1)?,
                    row.get::<_, String>(2)?,
                ))
            },
            |(id, parent, qualified)| {
                self.parents.insert(id, (parent, owner_of(&qualified)));
            },
        )
    }

    /// Reads the imports and resolved imports (deps) of the files `files` (of every file
    /// when `None`).
    fn read_imports(
        &mut self,
        conn: &loci_store::rusqlite::Connection,
        files: Option<&BTreeSet<i64>>,
    ) -> Result<()> {
        read_keyed_each(
            conn,
            "reading imports",
            "SELECT file_id, module, names FROM imports",
            "names != ''",
            ("file_id", files),
            "import_id",
            |row| {
                Ok((
                    row.get::<_, i64>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, String>(2)?,
                ))
            },
            |(file_id, module, names)| {
                self.imports
                    .entry(file_id)
                    .or_default()
                    .push((module, split_names(&names)));
            },
        )?;
        read_keyed_each(
            conn,
            "reading deps",
            "SELECT d.from_file_id, d.module, d.to_file_id, f.path FROM deps d
             JOIN files f ON f.file_id = d.to_file_id",
            "",
            ("d.from_file_id", files),
            "d.module, f.path",
            |row| {
                Ok((
                    row.get::<_, i64>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, i64>(2)?,
                    row.get::<_, String>(3)?,
                ))
            },
            |(from, module, to, path)| {
                self.deps.entry(from).or_default().push((module, to));
                self.stems.entry(to).or_insert_with(|| stem_of(&path));
            },
        )
    }

    /// The definitions a reference written in file `file_id` may resolve to: those of
    /// its language's link group ([`Language::link_group`]); none for a file of no parsed
    /// language.
    fn names_for(&self, file_id: i64) -> Option<&Names> {
        let language = self
            .paths
            .get(&file_id)
            .and_then(|p| Language::from_path(p))?;
        self.groups.get(&language.link_group())
    }

    /// Whether `target` is a definition of `name` in file `file_id`.
    fn defined_in(&self, file_id: i64, name: &str, target: i64) -> bool {
        self.names_for(file_id)
            .and_then(|n| n.defs.get(name))
            .is_some_and(|defs| defs.in_file(file_id).any(|(_, d)| d.id == target))
    }

    /// Resolves a reference's `name`, written in file `file_id` inside definition
    /// `enclosing`, looked up on `receiver` (see [`Receiver`]). Returns the target's row
    /// id, provenance and confidence.
    ///
    /// A `type` reference (`kind`: a type named in a signature, a field, an annotation)
    /// looks only at the definitions that are types; every other kind at all of them.
    ///
    /// A bare name ([`Receiver::None`]), in order: a name imported by a resolved import
    /// (stated, 1.0); a definition in the same file (derived, 0.9; a sibling of the
    /// enclosing definition first); a definition in an imported file (derived, 0.7, or 0.5
    /// when several); the only definition of that name anywhere (derived, 0.5); otherwise
    /// unresolved.
    ///
    /// A name on the enclosing object or type (`self.f()`, `this.f()`, `Self::f()`,
    /// [`Receiver::Own`]): the same rules without the import one (a member is never the
    /// imported module-level name of the same spelling). A member written on the name of
    /// a type the file defines (`Foo::new()`) never gets here: its file resolved it
    /// ([`loci_core::Reference::target`], derived, 0.9).
    ///
    /// A name on something the file imports (`util.fmt()` after `from . import util`,
    /// [`Receiver::Imported`]): the bare-name rules without the import and same-file ones
    /// (what an import brings in is defined elsewhere): a definition in an imported file
    /// (0.7, or 0.5 when several), else the only definition anywhere (0.5).
    ///
    /// A name on any other receiver (`self.meta.is_match(x)`, `obj.parse()`,
    /// [`Receiver::Other`]): the map knows the receiver's text, not its type, so a
    /// same-named definition is only a guess. A definition in the same file or in one
    /// imported file gets 0.3 (the same file's methods of *other* types first, as the
    /// enclosing type would have been written `self`); several imported candidates, or
    /// only the one definition of that name anywhere, get 0.2. 0.3 sits below every
    /// bare-name guess (0.5 and up), so a receiver call never outranks a bare call's
    /// evidence, and stays above 0, so `callers` still lists it, marked as a guess.
    fn resolve(
        &self,
        file_id: i64,
        name: &str,
        kind: RefKind,
        enclosing: Option<i64>,
        receiver: Receiver,
        receiver_name: Option<&str>,
    ) -> (Option<i64>, &'static str, f64) {
        // A type named in a signature, field or annotation is a type: `Path` in
        // `fn f(p: &Path)` had resolved to an enum variant `ClaimKind::Path`.
        // Only the definitions of languages this file's links to: never a same-named one
        // of another language (see `Language::link_group`).
        let Some(names) = self.names_for(file_id) else {
            return (None, "derived", 0.0);
        };
        let defs = match kind {
            RefKind::Type => names.types.get(name),
            RefKind::Call => names.callables.get(name).or_else(|| names.defs.get(name)),
            _ => names.defs.get(name),
        };
        let Some(defs) = defs else {
            return (None, "derived", 0.0);
        };
        // A value whose type its file made evident (`rt.block_on(..)` after `let rt =
        // Runtime::new()?`): its type expression evaluated through the map's declared
        // return types, then a member of that type (derived: the type is inferred, never
        // proven; [`TYPED_CERTAIN`] where the type's name is bound as a stated edge would
        // be). Otherwise the value's type is unknown here (a call the map cannot follow, a
        // method a trait or a base class gives): a name on another value.
        if receiver == Receiver::Typed {
            if let Some(ty) = receiver_name.and_then(|e| self.evaluate(file_id, e))
                && let Some((Some(id), provenance, confidence)) =
                    self.member_of_named_type(file_id, defs, Receiver::Other, Some(&ty))
            {
                return if provenance == "stated" {
                    (Some(id), "derived", TYPED_CERTAIN)
                } else {
                    (Some(id), provenance, confidence)
                };
            }
            return self.resolve(file_id, name, kind, enclosing, Receiver::Other, None);
        }
        // A Rust path naming a module (`crate::from_str()`, `std::fs::read()`): the
        // crate's module tree, never a same-named definition nearby.
        if receiver == Receiver::Path
            && let Some(path) = receiver_name
        {
            // The standard library is not in the map (unless the map is it): `std::fs::File`
            // is not the repository's own `fs/file.rs#File`.
            let first = path.split('.').next().unwrap_or(path);
            if matches!(first, "std" | "core" | "alloc")
                && !self.modules.rust_crates.contains_key(first)
            {
                return (None, "derived", 0.0);
            }
            let last = path.rsplit('.').next().unwrap_or(path);
            if !last.starts_with(|c: char| c.is_uppercase()) {
                return self.resolve_module_path(file_id, name, defs, path);
            }
        }
        let other = matches!(receiver, Receiver::Other | Receiver::Path);
        let deps = self.deps.get(&file_id);
        if let Some(found) = self.member_of_named_type(file_id, defs, receiver, receiver_name) {
            return found;
        }
        // A Rust path names a module or a type, which the rules above follow; past them it
        // is no same-named definition nearby (`RangedI64ValueParser::<i64>::new()` had gone
        // to `BoolValueParser.new` beside it).
        if receiver == Receiver::Path {
            return (None, "derived", 0.0);
        }
        if receiver == Receiver::None
            && let Some(imports) = self.imports.get(&file_id)
        {
            for (module, names) in imports {
                if !names.iter().any(|n| n == name) {
                    continue;
                }
                // The module itself before the submodules the import also names: in
                // `from xml.dom import minidom, Node`, `Node` is xml/dom/__init__.py's,
                // not minidom's own `Node`.
                let targets = deps.into_iter().flatten().filter(|(m, _)| m == module);
                let named = |to: &i64| {
                    self.stems
                        .get(to)
                        .is_some_and(|stem| names.iter().any(|n| n == stem))
                };
                let (submodules, own): (Vec<_>, Vec<_>) = targets.partition(|(_, to)| named(to));
                for (_, to) in own.into_iter().chain(submodules) {
                    // A module-level definition: no parent, and no owner (the methods of
                    // an `impl` have no parent symbol, only their qualified name: `pub use
                    // crate::m::make` had bound the free `make` to `D::make` beside it).
                    if let Some((_, d)) = defs
                        .in_file(*to)
                        .find(|(_, d)| d.parent.is_none() && d.owner.is_none())
                    {
                        return (Some(d.id), "stated", 1.0);
                    }
                }
            }
        }
        let language = self
            .paths
            .get(&file_id)
            .and_then(|p| Language::from_path(p));
        // In these languages a bare name is never a member of the enclosing type (that is
        // written `self.f()`, `this.f()`, `$this->f()`, `Self::f()`), so never a member at
        // all: a bare `Err(e)` in Rust is no enum variant `Foo::Err`, a bare `set(..)` in
        // a Python method no method `Morsel.set` beside it.
        let explicit_members = language.is_some_and(|l| l.spec().resolution.explicit_members);
        // Python's class body is the exception: `_deprecate(assertEqual)` written in it
        // names the class's own `_deprecate`, and `class CompNone(CompBase)` in it the
        // class's own `CompBase` (a class's bases are written in the scope around it).
        let enclosing_scope = enclosing.and_then(|k| self.parents.get(&k));
        let body = |d: &Def| {
            d.parent.is_some()
                && (d.parent == enclosing
                    || (kind == RefKind::Inherit
                        && enclosing_scope.is_some_and(|(p, _)| d.parent == *p)))
        };
        // A name on some other value (`wd.min_depth(..)`, `self._transport.close()`) is
        // never the very definition the call is written in (a `close` calling another
        // object's `close` is no recursion), and in Rust, Go, Java, C# and C++, where a
        // value is no module, a method or field of it: never a free function (a test's
        // `fn min_depth` had been taken). In Python a value may be a module
        // (`ssl = import_module('ssl')`), in JavaScript a function.
        let values_are_members = language.is_some_and(|l| l.spec().resolution.values_are_members);
        let eligible = |d: &Def| {
            if receiver == Receiver::Other {
                return (d.member || !values_are_members) && Some(d.id) != enclosing;
            }
            !(receiver == Receiver::None && explicit_members && d.member && !body(d))
        };
        // Outside its file, a bare name is a top-level definition: a function's nested
        // `callback` or a test module's `wrap` is not what a parameter or closure of that
        // name in another file calls.
        let visible =
            |d: &Def| receiver != Receiver::None || (d.parent.is_none() && d.owner.is_none());
        let same: Vec<&Def> = if receiver == Receiver::Imported {
            Vec::new()
        } else {
            defs.in_file(file_id)
                .map(|(_, d)| d)
                .filter(|d| eligible(d))
                .collect()
        };
        if !same.is_empty() {
            let (enclosing_parent, enclosing_owner) =
                enclosing_scope.map_or((None, None), |(p, o)| (*p, o.as_deref()));
            if other {
                let best = same
                    .iter()
                    .find(|d| {
                        d.parent.is_some() && d.parent != enclosing_parent && d.parent != enclosing
                    })
                    .unwrap_or(&same[0]);
                return (Some(best.id), "derived", 0.3);
            }
            // On the enclosing type (`self.len()`): a member of that type, by its name
            // (the methods of an `impl` have no parent symbol); `self.len()` in
            // `impl<A> Accels<A>` had gone to `Accel.len` beside it, first in key order.
            let own_type = (receiver == Receiver::Own)
                .then(|| {
                    same.iter()
                        .find(|d| d.owner.is_some() && d.owner.as_deref() == enclosing_owner)
                })
                .flatten();
            if receiver == Receiver::Own
                && own_type.is_none()
                && own_by_type(language, enclosing_owner)
            {
                return self.resolve_own_elsewhere(file_id, defs, enclosing_owner);
            }
            let best = own_type
                .or_else(|| {
                    same.iter()
                        .find(|d| d.parent.is_some() && d.parent == enclosing_parent)
                })
                .or_else(|| {
                    same.iter()
                        .find(|d| d.parent.is_some() && d.parent == enclosing)
                })
                .or_else(|| same.iter().find(|d| d.parent.is_none()))
                .unwrap_or(&same[0]);
            return (Some(best.id), "derived", SAME_FILE_CONFIDENCE);
        }
        if receiver == Receiver::Own {
            let enclosing_owner = enclosing_scope.and_then(|(_, o)| o.as_deref());
            if own_by_type(language, enclosing_owner) {
                return self.resolve_own_elsewhere(file_id, defs, enclosing_owner);
            }
        }
        // Go: a package is its directory, and every file of it sees the others' names.
        if receiver == Receiver::None
            && language.is_some_and(|l| l.spec().resolution.directory_packages)
            && let Some(here) = self.paths.get(&file_id)
        {
            let dir = here.rsplit_once('/').map_or("", |(d, _)| d);
            let package: Vec<&Def> = defs
                .all
                .iter()
                .filter(|d| {
                    !d.member
                        && self.paths.get(&d.file_id).is_some_and(|p| {
                            p.ends_with(".go") && p.rsplit_once('/').map_or("", |(d, _)| d) == dir
                        })
                })
                .collect();
            if let Some(d) = package.first() {
                let confidence = if package.len() == 1 {
                    SAME_FILE_CONFIDENCE
                } else {
                    0.7
                };
                return (Some(d.id), "derived", confidence);
            }
        }
        // Definitions in imported files: how many, and the first in key order. On an
        // imported name (`util.Open()`), the files of the imports that bind that name
        // only: `util.Open` had gone to the `Open` of another package the file imports.
        let bound = receiver_name
            .filter(|_| receiver == Receiver::Imported)
            .and_then(|r| r.split('.').next())
            .map(|binding| self.bound_by(file_id, binding, language));
        // Where the language's import rules are all known here, a name on an import that
        // binds no file of the map is outside it (`threading.Lock()`, Go `net.Dial()`): not
        // a same-named definition anywhere (`asyncio/locks.py#Lock`, `Socket.Dial`).
        let bindings_known = language.is_some_and(|l| l.spec().resolution.bindings_known);
        if bindings_known && bound.as_ref().is_some_and(|files| files.is_empty()) {
            return (None, "derived", 0.0);
        }
        let mut targets: Vec<i64> = bound
            .clone()
            .filter(|files| !files.is_empty())
            .unwrap_or_else(|| deps.into_iter().flatten().map(|(_, to)| *to).collect());
        targets.sort_unstable();
        targets.dedup();
        // On an imported module's name (`logging.getLogger()` after `import logging`) a
        // module-level definition is meant, not a method beside it: the first in key
        // order had been `Manager.getLogger`. Members are the fallback.
        let on_module = receiver == Receiver::Imported
            && receiver_name.is_some_and(|r| {
                !r.rsplit('.')
                    .next()
                    .unwrap_or(r)
                    .starts_with(|c: char| c.is_uppercase())
            });
        let mut imported = 0usize;
        let mut first: Option<u32> = None;
        for module_level in [on_module, false] {
            for &to in &targets {
                for (i, d) in defs.in_file(to) {
                    if (module_level && (d.parent.is_some() || d.owner.is_some()))
                        || !eligible(d)
                        || !visible(d)
                    {
                        continue;
                    }
                    imported += 1;
                    first = Some(first.map_or(i, |f| f.min(i)));
                }
            }
            if first.is_some() || !on_module {
                break;
            }
        }
        if let Some(i) = first {
            let confidence = match (other, imported == 1) {
                (false, true) => 0.7,
                (false, false) => 0.5,
                (true, true) => 0.3,
                (true, false) => 0.2,
            };
            return (Some(defs.all[i as usize].id), "derived", confidence);
        }
        // The only definition anywhere; for a type, one declared at the top of its file
        // (a type declared in a function or module is reached through an import: a
        // test's local `type Row` had taken every `Row` of the repository).
        // (Only in languages linked to the use's, as every rule here: a Rust `Item` had
        // resolved to a Go struct, a Rust `compiled.get()` to Python's `Message.get`.) (On an imported module's name, `unittest.skipUnless` re-exported by the package's
        // `__init__.py`, only a top-level one: `os.write` is no method `write`.)
        if defs.all.len() == 1
            && eligible(&defs.all[0])
            && visible(&defs.all[0])
            && !(on_module && (defs.all[0].parent.is_some() || defs.all[0].owner.is_some()))
            && (kind != RefKind::Type || defs.all[0].owner.is_none())
        {
            return (
                Some(defs.all[0].id),
                "derived",
                if other { 0.2 } else { 0.5 },
            );
        }
        (None, "derived", 0.0)
    }
}

/// Whether `self.f()` written in `language` in a definition scoped by `owner` names a
/// member of that type and no other, which [`Resolver::resolve_own_elsewhere`] then
/// answers: Rust and Go have no inheritance, and the scope is a known type (capitalised:
/// `Accels` for `Accels.needles`).
fn own_by_type(language: Option<Language>, owner: Option<&str>) -> bool {
    language.is_some_and(|l| l.spec().resolution.own_by_type)
        && owner.is_some_and(|o| o.starts_with(|c: char| c.is_uppercase()))
}

impl Resolver {
    /// The type a [`Receiver::Typed`] reference's type expression names
    /// ([`loci_core::Reference::receiver_name`]: a type path, or a free function's call,
    /// then the methods called on it, `Builder.new_multi_thread().enable_all().build()`),
    /// each call's type being the return type its definition declares
    /// ([`Language::return_type`]; `Self` is the definition's owner): a free function in
    /// this file, else in an imported file, else the only one of that name; a method of
    /// the type so far as [`Resolver::member_of_named_type`] picks one. `None` when a call
    /// is not in the map or declares no type the map can follow.
    fn evaluate(&self, file_id: i64, expr: &str) -> Option<String> {
        let names = self.names_for(file_id)?;
        let segments: Vec<&str> = expr.split('.').collect();
        let Some(first_call) = segments.iter().position(|s| s.ends_with("()")) else {
            return Some(expr.to_string());
        };
        let mut ty: Option<String> = (first_call > 0).then(|| segments[..first_call].join("."));
        for segment in &segments[first_call..] {
            // A collection's element (`for rt in rts()`): `Runtime[]` → `Runtime`.
            if *segment == "[]" {
                ty = Some(ty?.strip_suffix("[]")?.to_string());
                continue;
            }
            let method = segment.strip_suffix("()")?;
            let defs = names
                .callables
                .get(method)
                .or_else(|| names.defs.get(method))?;
            let def = match &ty {
                None => {
                    let free = |d: &&Def| d.owner.is_none() && d.parent.is_none() && !d.module;
                    let imported = |f: i64| {
                        self.deps
                            .get(&file_id)
                            .into_iter()
                            .flatten()
                            .any(|(_, to)| *to == f)
                    };
                    // In this file, a function of an inline module too (`mod tests { fn
                    // rt() -> Runtime }`).
                    defs.in_file(file_id)
                        .map(|(_, d)| d)
                        .find(|d| !d.member && !d.module)
                        .or_else(|| defs.all.iter().filter(free).find(|d| imported(d.file_id)))
                        .or_else(|| {
                            let mut all = defs.all.iter().filter(free);
                            match (all.next(), all.next()) {
                                (Some(d), None) => Some(d),
                                _ => None,
                            }
                        })?
                }
                Some(ty) => {
                    let (Some(id), _, _) =
                        self.member_of_named_type(file_id, defs, Receiver::Other, Some(ty))?
                    else {
                        return None;
                    };
                    defs.all.iter().find(|d| d.id == id)?
                }
            };
            let returns = def.returns.as_deref()?;
            ty = Some(if returns == "Self" {
                def.owner.as_deref()?.to_string()
            } else {
                returns.to_string()
            });
        }
        ty
    }

    /// A member written on a type's name (`Builder::new_multi_thread()`,
    /// `runtime::Builder::new()`, `Parser.create()`), or called on a value of that type
    /// ([`Receiver::Typed`] once evaluated): the members of types of that name, in this
    /// file, then in imported files, then anywhere. `None` when the rule does not decide
    /// (no receiver name, or a lower-case one no top-level type answers), for the rules
    /// after it.
    fn member_of_named_type(
        &self,
        file_id: i64,
        defs: &Defs,
        receiver: Receiver,
        receiver_name: Option<&str>,
    ) -> Option<(Option<i64>, &'static str, f64)> {
        let deps = self.deps.get(&file_id);
        let language = self
            .paths
            .get(&file_id)
            .and_then(|p| Language::from_path(p));
        // A member written on a type's name (`Builder::new_multi_thread()`,
        // `runtime::Builder::new()`, `Parser.create()`): the members of types of that
        // name, in this file, then in imported files, then anywhere.
        let (type_name, leading) = receiver_name.and_then(|path| {
            let mut segments: Vec<&str> = path.split('.').collect();
            let last = segments.pop()?;
            // A crate's own name is where its paths start, not a folder: `indicatif::
            // ProgressBar::new()` in the crate's tests is its `ProgressBar`.
            segments.retain(|s| {
                !matches!(*s, "crate" | "self" | "super" | "Self")
                    && !self.modules.rust_crates.contains_key(*s)
            });
            Some((last, segments))
        })?;
        // `runtime::Builder` is a `Builder` in a file whose path holds `runtime`, the
        // module right before it (earlier segments may name the crate: `tokio::`):
        // `meta::Regex::new()` (another crate's `Regex`) is not this crate's.
        let placed = |d: &Def| {
            let path = self.paths.get(&d.file_id).map_or("", |p| &**p);
            leading.last().is_none_or(|seg| {
                path.split('/')
                    .any(|part| part == *seg || part.split('.').next() == Some(*seg))
            })
        };
        // A capitalised name is a type's by convention (`Builder`, `Regex`); a lower-case
        // one is more often a variable or a module (`c = C(); c.foo()`), so it names
        // only a top-level class of that name (`datetime.fromtimestamp`).
        let capitalised = type_name.starts_with(|c: char| c.is_uppercase());
        let typed: Vec<&Def> = defs
            .all
            .iter()
            .filter(|d| {
                d.owner.as_deref() == Some(type_name) && placed(d) && (capitalised || d.top_member)
            })
            .collect();
        // A member of a type the map does not hold (`Arc::new`, `thread::Builder::new`,
        // another crate's `meta::Regex::new`): not any same-named member nearby. (In
        // Go a capitalised name is any exported one: `DefaultSocket.Dial()` is a call on
        // a package variable.)
        if typed.is_empty()
            && capitalised
            && language.is_none_or(|l| l.spec().resolution.capitalised_types)
        {
            return Some((None, "derived", 0.0));
        }
        if let Some(first) = typed.first() {
            // Certain where the parser proves which type the name is: an import of this
            // file binds it to a file that defines it with this member once, as a bare
            // name an import binds is (stated, 1.0). `--hard` follows these.
            let (files, paths) = self.type_bound_in(file_id, receiver, receiver_name, type_name);
            let mut certain = typed.iter().filter(|d| {
                files.contains(&d.file_id)
                    || self
                        .paths
                        .get(&d.file_id)
                        .is_some_and(|p| paths.iter().any(|b| **b == **p))
            });
            if let (Some(d), None) = (certain.next(), certain.next()) {
                return Some((Some(d.id), "stated", 1.0));
            }
            let imported = |f: i64| deps.into_iter().flatten().any(|(_, to)| *to == f);
            // The nearest: most folders in common with this file (`super::Builder::new()`
            // in `task/join_set.rs` is `task`'s); the first in key order of those.
            let common = |d: &Def| self.folders_in_common(file_id, d.file_id);
            let best = typed
                .iter()
                .find(|d| d.file_id == file_id)
                .or_else(|| typed.iter().find(|d| imported(d.file_id)))
                .or_else(|| typed.iter().min_by_key(|d| std::cmp::Reverse(common(d))))
                .unwrap_or(first);
            let confidence = if typed.len() == 1 { 0.7 } else { 0.5 };
            return Some((Some(best.id), "derived", confidence));
        }
        None
    }

    /// How many leading path components two files' paths share: the nearest of several
    /// candidates is the one sharing most folders with the use (`super::Builder::new()`
    /// in `task/join_set.rs` is `task`'s `Builder`).
    fn folders_in_common(&self, a: i64, b: i64) -> usize {
        let path = |f: i64| self.paths.get(&f).map_or("", |p| &**p);
        path(a)
            .split('/')
            .zip(path(b).split('/'))
            .take_while(|(x, y)| x == y)
            .count()
    }

    /// `self.f()` / `Self::f()` inside a type `owner` whose file defines no member `f` of
    /// it. Rust and Go: a member of that type in another file (an `impl` or method set
    /// split across files: `self.loose_iter()` in `Store` is `loose/iter.rs#Store.loose_iter`),
    /// the nearest by folders (derived, 0.7, or 0.5 when several); otherwise nothing: a
    /// method the type derives or takes from a trait or the standard library
    /// (`self.clone()` under `#[derive(Clone)]`, `self.as_str()` on `String`) is no member
    /// of another type beside it (`Error.clone`, `Id.as_str` at 0.7–0.9 had been given).
    /// Only for Rust and Go ([`own_by_type`]): the other languages inherit members from
    /// base classes, which the same-file and import rules guess at.
    fn resolve_own_elsewhere(
        &self,
        file_id: i64,
        defs: &Defs,
        owner: Option<&str>,
    ) -> (Option<i64>, &'static str, f64) {
        let members: Vec<&Def> = defs
            .all
            .iter()
            .filter(|d| d.owner.as_deref() == owner)
            .collect();
        let common = |d: &&&Def| self.folders_in_common(file_id, d.file_id);
        match members.iter().min_by_key(|d| std::cmp::Reverse(common(d))) {
            Some(d) if members.len() == 1 => (Some(d.id), "derived", 0.7),
            Some(d) => (Some(d.id), "derived", 0.5),
            None => (None, "derived", 0.0),
        }
    }

    /// The files where the type a member is written on (`type_name`, the last segment of
    /// `receiver_name`) is bound by a parser's proof, for [`Resolver::resolve`] to state
    /// the member there: for a bare type name (`Foo.create()`, `Builder::new()`), the
    /// files that this file's imports naming it resolved to (`from m import Foo`, `use
    /// crate::rt::builder::Builder;`, `import a.b.Foo;`); for a Rust path
    /// (`crate::rt::builder::Builder::new()`), the files its module part resolves to by
    /// the crate's module tree, as a `use` of it would. A re-export (`pub use
    /// builder::Builder;` in `rt/mod.rs`) is not followed: the type is not defined in the
    /// file bound, so the member stays derived. The files by id (imports), and by path
    /// (module paths).
    fn type_bound_in(
        &self,
        file_id: i64,
        receiver: Receiver,
        receiver_name: Option<&str>,
        type_name: &str,
    ) -> (Vec<i64>, Vec<String>) {
        let Some(path) = receiver_name else {
            return (Vec::new(), Vec::new());
        };
        match path.rsplit_once('.') {
            None => {
                let modules: Vec<&str> = self
                    .imports
                    .get(&file_id)
                    .into_iter()
                    .flatten()
                    .filter(|(_, names)| names.iter().any(|n| n == type_name))
                    .map(|(module, _)| module.as_str())
                    .collect();
                let files = self
                    .deps
                    .get(&file_id)
                    .into_iter()
                    .flatten()
                    .filter(|(module, _)| modules.contains(&module.as_str()))
                    .map(|(_, to)| *to)
                    .collect();
                (files, Vec::new())
            }
            Some((module, _)) if receiver == Receiver::Path => {
                let Some(here) = self.paths.get(&file_id) else {
                    return (Vec::new(), Vec::new());
                };
                let import = Import {
                    module: module.replace('.', "::"),
                    names: vec![type_name.to_string()],
                    span: Span::default(),
                };
                let paths =
                    loci_core::imports::resolve(Language::Rust, here, &import, &self.modules);
                (Vec::new(), paths)
            }
            Some(_) => (Vec::new(), Vec::new()),
        }
    }

    /// The files that the imports of `file_id` binding `binding` resolved to: those
    /// listing it as a name (`from . import util`, `use crate::de;`), and those whose
    /// module the language binds to it (Python `import os.path` binds `os`, Go
    /// `import "x/pkg/util"` binds `util`, Java `import a.b.Util;` binds `Util`).
    fn bound_by(&self, file_id: i64, binding: &str, language: Option<Language>) -> Vec<i64> {
        let named: Vec<&str> = self
            .imports
            .get(&file_id)
            .into_iter()
            .flatten()
            .filter(|(_, names)| names.iter().any(|n| n == binding))
            .map(|(module, _)| module.as_str())
            .collect();
        let binds = |module: &str| {
            named.contains(&module)
                || language.is_some_and(|l| (l.spec().module_binding)(module) == Some(binding))
        };
        self.deps
            .get(&file_id)
            .into_iter()
            .flatten()
            .filter(|(module, _)| binds(module))
            .map(|(_, to)| *to)
            .collect()
    }

    /// A name on a Rust path naming a module ([`Receiver::Path`] whose last segment is
    /// not capitalised: `crate::from_str()`, `super::helper()`, `de::from_str()` after
    /// `crate::`, `std::fs::read()`), by the crate's module tree as a `use` of that path
    /// resolves ([`loci_core::imports::resolve`]), in order:
    ///
    /// 1. `super::f()` where the file itself defines a free `f`: that one (derived, 0.9);
    ///    an inline `mod tests` calls its file's functions so;
    /// 2. a free definition (no owner, not a module) in the module file the path names, or one of an
    ///    inline module of the path's last name in the file that holds it (stated, 1.0);
    /// 3. a path to a module of the map that defines no such name re-exports it (`pub use
    ///    crate::de::from_str;` in `lib.rs`): the free definitions of the name in that
    ///    crate's folder (derived, 0.7, or 0.5 when several: one in a file named after it
    ///    first, as `mod spawn; pub use spawn::spawn;` writes it, then the one sharing most
    ///    folders with the use);
    /// 4. a path to no module of the map (`std::fs::read()`, another crate's
    ///    `loom::model()`): unresolved, never a same-named definition nearby
    ///    (`std::fs::canonicalize(p)` had resolved to the enclosing `canonicalize`,
    ///    serde_json's `crate::from_str(s)` to the method `Map.from_str` beside it).
    fn resolve_module_path(
        &self,
        file_id: i64,
        name: &str,
        defs: &Defs,
        path: &str,
    ) -> (Option<i64>, &'static str, f64) {
        const UNRESOLVED: (Option<i64>, &str, f64) = (None, "derived", 0.0);
        let Some(here) = self.paths.get(&file_id) else {
            return UNRESOLVED;
        };
        let segments: Vec<&str> = path.split('.').collect();
        // A free item: no owner (not `Map.from_str`), and no module (`mod spawn;` is not
        // what `tokio::spawn()` calls).
        let free = |d: &Def| d.owner.is_none() && !d.module;
        if segments == ["super"]
            && let Some((_, d)) = defs.in_file(file_id).find(|(_, d)| free(d))
        {
            return (Some(d.id), "derived", SAME_FILE_CONFIDENCE);
        }
        let files_of = |segments: &[&str]| {
            let import = Import {
                module: segments.join("::"),
                names: vec![name.to_string()],
                span: Span::default(),
            };
            loci_core::imports::resolve(Language::Rust, here, &import, &self.modules)
        };
        let path_of = |d: &Def| self.paths.get(&d.file_id).map_or("", |p| &**p);
        let files = files_of(&segments);
        let Some(module) = files.first() else {
            return UNRESOLVED;
        };
        if let Some(d) = defs
            .all
            .iter()
            .find(|d| free(d) && files.iter().any(|f| f == path_of(d)))
        {
            return (Some(d.id), "stated", 1.0);
        }
        if let [parent @ .., last] = &segments[..]
            && !parent.is_empty()
        {
            let files = files_of(parent);
            if let Some(d) = defs.all.iter().find(|d| {
                d.owner.as_deref() == Some(*last)
                    && !d.module
                    && files.iter().any(|f| f == path_of(d))
            }) {
                return (Some(d.id), "stated", 1.0);
            }
        }
        let (crate_dir, _) = loci_core::imports::rust_crate_root(module, &self.modules);
        let inside = |p: &str| {
            p.ends_with(".rs")
                && (crate_dir.is_empty()
                    || p.strip_prefix(crate_dir.as_str())
                        .is_some_and(|rest| rest.starts_with('/')))
        };
        let exported: Vec<&Def> = defs
            .all
            .iter()
            .filter(|d| free(d) && inside(path_of(d)))
            .collect();
        // A file named after the item first (`mod spawn; pub use spawn::spawn;`), then
        // the one sharing most folders with the use.
        let rank = |d: &&&Def| {
            let common = self.folders_in_common(file_id, d.file_id);
            (stem_of(path_of(d)) != name, std::cmp::Reverse(common))
        };
        match exported.iter().min_by_key(rank) {
            Some(d) if exported.len() == 1 => (Some(d.id), "derived", 0.7),
            Some(d) => (Some(d.id), "derived", 0.5),
            None => UNRESOLVED,
        }
    }
}

/// The confidence of a method called on a value whose type its file made evident, where
/// the type's name is bound to the file defining that member as a stated edge's would be
/// ([`Receiver::Typed`]): above an inferred member of a named type (0.7), below the same
/// file's (0.9), since the type is inferred from the code around the call, not proven.
const TYPED_CERTAIN: f64 = 0.8;

/// The confidence of a same-file definition for a bare name or a name on the enclosing
/// object or type (or on a type the file defines; see [`loci_core::Receiver::Own`]).
const SAME_FILE_CONFIDENCE: f64 = 0.9;

/// A path's last component without its extensions: `xml/dom/minidom.py` → `minidom`.
fn stem_of(path: &str) -> String {
    let file = path.rsplit('/').next().unwrap_or(path);
    file.split('.').next().unwrap_or(file).to_string()
}

/// The names a type expression calls (`rt()`, `Builder.new_multi_thread().build()`:
/// `rt`; `new_multi_thread`, `build`), none for any other name.
fn called_names(expr: &str) -> impl Iterator<Item = &str> {
    expr.split('.').filter_map(|s| s.strip_suffix("()"))
}

/// Above this many changed files a scan loads the whole map's definitions at once (one
/// pass over the table) instead of looking up the names its references use.
const TARGETED_RESOLVE_MAX_FILES: usize = 1024;

/// Resolves the pending references of changed files and re-resolves stored references
/// that use a changed name, live in a file whose imports changed, or pointed into a file
/// this scan rewrote (`retarget`). With `all` (after an interrupted scan, whose changed
/// names and rewritten targets were never recorded), every stored reference is resolved
/// again and every reference edge (`ref_deps`) rewritten. With `written` (a bulk first
/// scan), the references were stored with their files instead of held in `pending`, and
/// are resolved from the store.
#[allow(clippy::too_many_arguments)]
fn resolve_refs(
    store: &mut Store,
    pending: PendingRefs,
    changed_names: &BTreeSet<String>,
    deps_changed: &BTreeSet<i64>,
    retarget: &BTreeSet<i64>,
    modules: PathIndex,
    all: bool,
    written: bool,
) -> Result<()> {
    if written {
        // Every stored reference is this scan's own: the map held nothing before it.
        resolve_written_refs(
            store,
            modules,
            RESOLVE_BATCH_REFS,
            RESOLVE_AT_ONCE_DEFINITIONS,
        )?;
        store.write(map::rebuild_ref_deps)?;
        return Ok(());
    }
    let pending_files: HashSet<i64> = pending.files.iter().map(|(id, _)| *id).collect();
    // Stored refs of unchanged files that may resolve differently now, and whether to
    // rewrite them even when they resolve as before:
    // (ref, file, name, enclosing, target, provenance, confidence, receiver, its name,
    // kind).
    type Stored = (
        i64,
        i64,
        String,
        Option<i64>,
        Option<i64>,
        String,
        f64,
        Receiver,
        Option<String>,
        RefKind,
    );
    const COLUMNS: &str = "ref_id, file_id, name, enclosing_id, target_id, provenance, confidence, receiver, receiver_name, kind";
    let read = |r: &loci_store::rusqlite::Row<'_>| -> loci_store::rusqlite::Result<Stored> {
        Ok((
            r.get(0)?,
            r.get(1)?,
            r.get(2)?,
            r.get(3)?,
            r.get(4)?,
            r.get(5)?,
            r.get(6)?,
            Receiver::parse(r.get::<_, Option<String>>(7)?.as_deref()),
            r.get(8)?,
            RefKind::parse(&r.get::<_, String>(9)?),
        ))
    };
    let mut stored: Vec<(Stored, bool)> = Vec::new();
    let mut seen = HashSet::new();
    {
        let conn = store.conn();
        let mut by_name = conn
            .prepare_cached(&format!("SELECT {COLUMNS} FROM refs WHERE name = ?1"))
            .ctx(|| "reading refs".into())?;
        let mut by_file = conn
            .prepare_cached(&format!("SELECT {COLUMNS} FROM refs WHERE file_id = ?1"))
            .ctx(|| "reading refs".into())?;
        let mut by_id = conn
            .prepare_cached(&format!("SELECT {COLUMNS} FROM refs WHERE ref_id = ?1"))
            .ctx(|| "reading refs".into())?;
        let mut consider = |row: Stored, force: bool| {
            if !pending_files.contains(&row.1) && seen.insert(row.0) {
                stored.push((row, force));
            }
        };
        // With `all`, every stored reference is read below, once the resolver is loaded.
        let changed_names = if all { &BTreeSet::new() } else { changed_names };
        let deps_changed = if all { &BTreeSet::new() } else { deps_changed };
        for name in changed_names {
            for row in by_name
                .query_map([name], read)
                .ctx(|| "reading refs".into())?
            {
                consider(row.ctx(|| "reading refs".into())?, false);
            }
        }
        for file_id in deps_changed {
            for row in by_file
                .query_map([file_id], read)
                .ctx(|| "reading refs".into())?
            {
                consider(row.ctx(|| "reading refs".into())?, false);
            }
        }
        // Their old target ids are gone even when the key survived: always rewrite.
        for ref_id in retarget {
            for row in by_id
                .query_map([ref_id], read)
                .ctx(|| "reading refs".into())?
            {
                consider(row.ctx(|| "reading refs".into())?, true);
            }
        }
    }
    let files: BTreeSet<i64> = pending_files
        .iter()
        .copied()
        .chain(stored.iter().map(|(row, _)| row.1))
        .collect();
    let mut resolver = if !all
        && files.len() <= TARGETED_RESOLVE_MAX_FILES
        && !map::bulk_indexes_missing(store.conn())?
    {
        // The calls of typed receivers' type expressions are looked up too
        // (`Builder.new_multi_thread().build()`: `new_multi_thread`, `build`).
        let receivers = pending
            .names
            .iter()
            .map(|n| &**n)
            .chain(stored.iter().filter_map(|(row, _)| row.8.as_deref()));
        let names: BTreeSet<&str> = pending
            .names
            .iter()
            .map(|n| &**n)
            .chain(stored.iter().map(|(row, _)| row.2.as_str()))
            .chain(receivers.flat_map(called_names))
            .collect();
        Resolver::load(
            store.conn(),
            Some(Needs {
                names: &names,
                files: &files,
            }),
        )?
    } else {
        Resolver::load(store.conn(), None)?
    };
    resolver.modules = modules;
    // A stored reference's new resolution, if it must be written.
    let update = |row: &Stored, force: bool| -> Option<(i64, Option<i64>, &'static str, f64)> {
        let (
            ref_id,
            file_id,
            name,
            enclosing,
            target,
            provenance,
            confidence,
            receiver,
            receiver_name,
            kind,
        ) = row;
        // A name on the enclosing or a same-file type that resolved in its own file stays
        // resolved until that file changes (and then its refs are rewritten, not stored):
        // what it resolved to depends on nothing else. Its file may have chosen the
        // target itself (`Foo::new()`, `Reference::target`), which `resolve` cannot redo.
        if *receiver == Receiver::Own
            && !force
            && target.is_some_and(|t| resolver.defined_in(*file_id, name, t))
        {
            return None;
        }
        let (t, p, c) = resolver.resolve(
            *file_id,
            name,
            *kind,
            *enclosing,
            *receiver,
            receiver_name.as_deref(),
        );
        (force || t != *target || p != provenance || c != *confidence).then_some((*ref_id, t, p, c))
    };
    let mut updates: Vec<(i64, Option<i64>, &'static str, f64)> = stored
        .iter()
        .filter_map(|(row, force)| update(row, *force))
        .collect();
    if all {
        // One pass over the table, a row at a time: memory holds the updates, never the
        // whole map's references.
        let conn = store.conn();
        let mut every = conn
            .prepare(&format!("SELECT {COLUMNS} FROM refs"))
            .ctx(|| "reading refs".into())?;
        for row in every.query_map([], read).ctx(|| "reading refs".into())? {
            let row = row.ctx(|| "reading refs".into())?;
            if !pending_files.contains(&row.1) && !seen.contains(&row.0) {
                updates.extend(update(&row, false));
            }
        }
    }
    for chunk in pending.files.chunks(256) {
        store.write(|tx| {
            for (file_id, range) in chunk {
                map::insert_refs(
                    tx,
                    *file_id,
                    pending.rows(*file_id, range.clone(), &resolver),
                )?;
            }
            Ok(())
        })?;
    }
    for chunk in updates.chunks(4096) {
        store.write(|tx| {
            for (ref_id, target, provenance, confidence) in chunk {
                map::set_ref_target(tx, *ref_id, *target, provenance, *confidence)?;
            }
            Ok(())
        })?;
    }
    // The file edges of resolved references (`ref_deps`): of every file whose references
    // were written or re-resolved; in one pass when that is most of the map (a first
    // scan's bulk load has no index to look them up by).
    let updated: HashSet<i64> = updates.iter().map(|u| u.0).collect();
    let touched: BTreeSet<i64> = pending_files
        .iter()
        .copied()
        .chain(
            stored
                .iter()
                .filter(|(row, _)| updated.contains(&row.0))
                .map(|(row, _)| row.1),
        )
        .collect();
    if all || touched.len() > TARGETED_RESOLVE_MAX_FILES || map::bulk_indexes_missing(store.conn())?
    {
        store.write(map::rebuild_ref_deps)?;
    } else if !touched.is_empty() {
        let touched: Vec<i64> = touched.into_iter().collect();
        for chunk in touched.chunks(256) {
            store.write(|tx| map::replace_ref_deps(tx, chunk))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{Outcome, PendingRef, Store, count_lines, process};
    use crate::walk::{SkipReason, WalkedFile};
    use std::collections::BTreeSet;

    /// References resolved a few at a time, in name order (a name's references split
    /// between batches) or with every definition read at once, resolve exactly as a scan
    /// resolves them: each batch reads every definition its names and its typed receivers'
    /// calls need.
    #[test]
    fn references_resolved_in_small_batches_by_name_equal_those_resolved_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let write = |rel: &str, text: &str| {
            let path = root.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        write(
            "Cargo.toml",
            "[package]\nname = \"r\"\nversion = \"0.1.0\"\n",
        );
        write("pkg/__init__.py", "");
        for n in 0..240 {
            write(
                &format!("pkg/m{n}.py"),
                &format!(
                    "from pkg.m{p} import get, Node\n\nclass Node:\n    def get(self):\n        return get()\n\ndef get():\n    return Node().get()\n\ndef f{n}(x):\n    x.get()\n    n = Node()\n    return get(), n.get(), f{p}(x)\n",
                    p = (n + 239) % 240
                ),
            );
        }
        for n in 0..30 {
            write(
                &format!("src/r{n}.rs"),
                &format!(
                    "use crate::r{p}::Thing{p};\n\npub struct Thing{n} {{ v: u32 }}\n\nimpl Thing{n} {{\n    pub fn new() -> Self {{ Thing{n} {{ v: 1 }} }}\n    pub fn get(&self) -> u32 {{ self.v }}\n}}\n\npub fn make{n}() -> Thing{n} {{\n    Thing{n}::new()\n}}\n\npub fn run{n}() -> u32 {{\n    let t = Thing{p}::new();\n    let m = make{n}();\n    crate::r{p}::run{p}();\n    t.get() + m.get()\n}}\n",
                    p = (n + 29) % 30
                ),
            );
        }
        let db = tempfile::tempdir().unwrap();
        let mut ws = crate::Workspace::open(root, Some(&db.path().join("t.db"))).unwrap();
        assert_eq!(ws.scan(&|_| {}).unwrap().result.added.len(), 272);
        // Each reference by its place, with its target's key.
        let refs = |store: &Store| -> Vec<(String, i64, String, String, String)> {
            let mut stmt = store
                .conn()
                .prepare(
                    "SELECT f.path, r.start_byte, r.name, ifnull(t.key, ''),
                            r.provenance || printf(' %.3f', r.confidence)
                     FROM refs r JOIN files f USING (file_id)
                     LEFT JOIN symbols t ON t.symbol_id = r.target_id
                     ORDER BY 1, 2, 3",
                )
                .unwrap();
            stmt.query_map([], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
            })
            .unwrap()
            .collect::<std::result::Result<_, _>>()
            .unwrap()
        };
        let at_once = refs(&ws.store);
        let resolved = at_once.iter().filter(|r| !r.3.is_empty()).count();
        let typed = at_once.iter().filter(|r| r.4 == "derived 0.700").count();
        assert_eq!((at_once.len(), resolved, typed), (2_730, 2_700, 270));
        // The same first scan stopped where resolution begins, then resolved 7 at a time.
        let small = tempfile::tempdir().unwrap();
        let path = small.path().join("t.db");
        let mut killed = crate::Workspace::open(root, Some(&path)).unwrap();
        let stopped = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            killed.scan(&|p| {
                if matches!(p, super::ScanProgress::Resolving) {
                    std::panic::panic_any("stopped");
                }
            })
        }));
        assert!(stopped.is_err());
        drop(killed);
        let copy = small.path().join("copy.db");
        std::fs::copy(&path, &copy).unwrap();
        // By name (more definitions than 0), then all at once (fewer than `i64::MAX`).
        for (db, at_once_definitions) in [(&path, 0), (&copy, i64::MAX)] {
            let mut ws = crate::Workspace::open(root, Some(db)).unwrap();
            let (_, modules) =
                super::resolve_deps(root, &mut ws.store, true, &BTreeSet::new()).unwrap();
            super::resolve_written_refs(&mut ws.store, modules, (7, 7), at_once_definitions)
                .unwrap();
            assert_eq!(
                refs(&ws.store),
                at_once,
                "at once up to {at_once_definitions}"
            );
        }
    }

    /// A file the wall-clock guard stopped is tried at every scan (load may have stopped
    /// it); one the parse limit stopped, only under a higher limit (the same limit stops
    /// the same text again: it counts work).
    #[test]
    fn a_parse_is_tried_again_after_a_wall_clock_stop_or_under_a_higher_limit() {
        let state = |degraded: Option<&str>| loci_store::map::FileState {
            file_id: 1,
            path: "big.rs".into(),
            size: 1,
            mtime_ns: 1,
            content_hash: String::new(),
            fingerprint: None,
            scan_id: 1,
            drift_hash: None,
            degraded: degraded.map(str::to_string),
        };
        let wall = state(Some(&super::degraded_reason(
            &loci_core::Degraded::WallClockGuard { after_ms: 5_000 },
        )));
        let work = state(Some(&super::degraded_reason(
            &loci_core::Degraded::ParseTimeout { limit_ms: 500 },
        )));
        let deep = state(Some(&super::degraded_reason(
            &loci_core::Degraded::TooDeep { limit: 2_000 },
        )));
        let tried = |s: &loci_store::map::FileState| {
            [100, 500, 2_000].map(|limit| super::parse_to_retry(s, limit))
        };
        assert_eq!(tried(&wall), [true, true, true]);
        assert_eq!(tried(&work), [false, false, true]);
        assert_eq!(tried(&deep), [false, false, false]);
        assert_eq!(tried(&state(None)), [false, false, false]);
    }

    #[test]
    fn a_pending_reference_takes_32_bytes() {
        // A first scan holds every reference of the repository until resolution.
        assert_eq!(std::mem::size_of::<PendingRef>(), 32);
    }

    #[test]
    fn a_file_that_vanishes_mid_scan_is_a_counted_skip_not_a_failure() {
        let dir = tempfile::tempdir().unwrap();
        let walked = WalkedFile {
            path: "gone.py".into(),
            abs: dir.path().join("gone.py"),
            size: 10,
            mtime_ns: 1,
        };
        match process(
            &walked,
            None,
            &loci_core::AnalyzeOptions::default(),
            &crate::secrets::SecretRules::default(),
        ) {
            Outcome::Skipped(skip) => {
                assert_eq!(skip.reason, SkipReason::Vanished);
                assert_eq!(skip.path, "gone.py");
            }
            _ => panic!("a vanished file must be skipped with its reason"),
        }
    }

    #[test]
    fn a_directory_where_a_file_was_listed_is_unreadable_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("now_a_dir.py")).unwrap();
        let walked = WalkedFile {
            path: "now_a_dir.py".into(),
            abs: dir.path().join("now_a_dir.py"),
            size: 10,
            mtime_ns: 1,
        };
        match process(
            &walked,
            None,
            &loci_core::AnalyzeOptions::default(),
            &crate::secrets::SecretRules::default(),
        ) {
            Outcome::Skipped(skip) => assert_eq!(skip.reason, SkipReason::Unreadable),
            _ => panic!("an unreadable path must be skipped with its reason"),
        }
    }

    #[test]
    fn count_lines_treats_crlf_and_lone_cr_as_line_ends() {
        assert_eq!(count_lines(""), 0);
        assert_eq!(count_lines("a"), 1);
        assert_eq!(count_lines("a\n"), 1);
        assert_eq!(count_lines("a\r\nb"), 2);
        assert_eq!(count_lines("a\rb\rc\n"), 3);
    }
}
