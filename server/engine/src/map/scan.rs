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
//!
//! Here: the orchestration (walk, read, parse, the order of the writes, renames, the
//! report). Its parts: [`write`] (the batch writer), [`imports`] (import resolution) and
//! [`refs`] (reference resolution).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Instant;

use loci_core::{AnalyzeOptions, FileAnalysis, Language};
use loci_store::Store;
use loci_store::map::{self, FileState};
use loci_store::search::FtsTable;
use rayon::prelude::*;
use serde::Serialize;

use super::walk::{self, Skip, SkipReason, WalkedFile};
use crate::config::ScanConfig;
use crate::secrets::SecretRules;
use crate::{EngineError, Result};

mod imports;
mod refs;
mod renames;
mod write;

use imports::resolve_deps;
use refs::{PendingRefs, resolve_refs};
use renames::{folder_moves, renames_and_deletions};
use write::{Writer, parse_to_retry};

/// Files per write transaction.
const BATCH_FILES: usize = 128;

/// Analysed files the parser threads may have waiting for the writer. Each holds its
/// analysis and its code text (tens of KB for a typical source file): when the parsers
/// outrun the writer, this many are resident at once. 256 cost a first scan of the stdlib
/// 10–15 MiB of peak RSS once the parsers got faster than the writer; the writer drains
/// them faster than the parsers refill them, so fewer only bound the memory.
const QUEUED_OUTCOMES: usize = 64;

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
    /// knowledge ([`crate::Workspace::scan`]: a one-file rescan followed by 40 s of lint
    /// says 40 s, not the scan's part). The `scans` row keeps the scan's own part.
    pub duration_ms: u64,
    /// Whether the common-terms lists of the full-text indexes were moved by what this
    /// scan changed ([`loci_store::common_terms`]) rather than listed again by walking
    /// the indexes. Not part of the output: for tests.
    #[serde(skip)]
    pub common_terms_updated: bool,
    /// The map's SCIP edges after a scan that changed the map (`loci scan --scip`,
    /// [`super::scip::reconcile`]): absent when it changed nothing or no file's references
    /// come from a SCIP index.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scip: Option<super::scip::ScipCoverage>,
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
    let has_scan = map::last_finished_scan_id(store.conn())?;
    let interrupted = interrupted_scans(store)?;
    let Triage {
        report,
        skips,
        gone,
        candidates,
        skips_changed,
    } = triage(
        walked,
        &stored,
        store,
        config,
        &interrupted,
        rules_changed,
        reanalyse,
    )?;

    if candidates.is_empty()
        && gone.is_empty()
        && has_scan.is_some()
        && interrupted.is_empty()
        && !rules_changed
        && !reanalyse
    {
        // Nothing mapped changed, but the skips did: `stats` and the note of an answer
        // that found nothing read them (a secret file added to a mapped workspace is
        // recorded now, not when some mapped file changes).
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
    // again costs 43% of a rescan's CPU after 100 edits of a 50,000-file map. A larger
    // one walks them (as fast, with less bookkeeping).
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

/// Files written by a scan that never finished (killed, or still running elsewhere) may
/// lack their references: the ids of those scans, whose files are reparsed whatever
/// their hash says.
fn interrupted_scans(store: &Store) -> Result<HashSet<i64>> {
    Ok(map::running_scans(store.conn())?)
}

/// A walk sorted against the map: the files to parse, the files gone, the skips (an
/// unchanged binary file, or one whose text held a secret under the same rules, is not
/// read again), and the count of unchanged files in the report.
struct Triage {
    report: ScanReport,
    skips: Vec<Skip>,
    gone: Vec<FileState>,
    candidates: Vec<WalkedFile>,
    /// Whether the skips differ from the stored ones: a file skipped by its path (a
    /// `.env` added) is never a candidate, and only the list of skips tells that it came
    /// or went.
    skips_changed: bool,
}

/// Sorts what the walk found against the stored file states and skips ([`Triage`]).
fn triage(
    walked: walk::Walk,
    stored: &HashMap<String, FileState>,
    store: &Store,
    config: &ScanConfig,
    interrupted: &HashSet<i64>,
    rules_changed: bool,
    reanalyse: bool,
) -> Result<Triage> {
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
    Ok(Triage {
        report,
        skips,
        gone,
        candidates,
        skips_changed,
    })
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
    let scan_id = begin_scan(store)?;
    report.scan_id = scan_id;
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
    parse_and_write(
        &mut writer,
        config,
        secrets,
        progress,
        &candidates,
        &stored,
        &interrupted,
        reanalyse,
        &mut report,
        &mut skips,
        &mut gone_too,
    )?;
    tracing::info!(
        ms = started.elapsed().as_millis() as u64,
        "scan: parsed and wrote files"
    );

    // Deletions: files no longer walked, or walked but now unusable.
    let (follow, files_moved, any_gone) =
        renames_and_deletions(&mut writer, &gone, &gone_too, &mut report)?;

    // Resolution needs memory that the walk's files and the stored states hold no longer
    // (a tenth of a rescan's peak on a 50,000-file map): they are freed first.
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
    let repair = resolve_scan(
        root,
        store,
        &report,
        pending,
        &changed_names,
        &changed_files,
        &retarget,
        write_refs,
        has_scan,
        &interrupted,
        started,
    )?;
    // A scan that found only touched files (the mtime moved, the content did not; a file
    // analysed again, retried or reanalysed, is a change) changed nothing lint checks
    // memory against, so none follows it: a lint after a touch of 100 files in a
    // 50,000-file map would cost 7 s of CPU for nothing.
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
    report.pages_moved = record_scan(
        store,
        root,
        secrets,
        scan_id,
        &skips,
        &follow,
        files_moved,
        &drift,
        &interrupted,
    )?;
    index_and_merge(store, &report, bulk, started)?;
    finish(store, report, skips, started, Some(scan_id), recording)
}

/// Records the scan's start: its row in `scans`, whose id is the scan revision.
fn begin_scan(store: &mut Store) -> Result<i64> {
    Ok(store.write(map::begin_scan)?)
}

/// Parses the candidates on a rayon pool of `config.threads` threads, outside any
/// transaction, and writes their outcomes in batches of [`BATCH_FILES`] from this thread,
/// reporting progress after each. An error stops the parsers.
#[allow(clippy::too_many_arguments)]
fn parse_and_write(
    writer: &mut Writer<'_, '_>,
    config: &ScanConfig,
    secrets: &SecretRules,
    progress: &(dyn Fn(ScanProgress) + Sync),
    candidates: &[WalkedFile],
    stored: &HashMap<String, FileState>,
    interrupted: &HashSet<i64>,
    reanalyse: bool,
    report: &mut ScanReport,
    skips: &mut Vec<Skip>,
    gone_too: &mut Vec<FileState>,
) -> Result<()> {
    let options = config.analyze_options();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(config.threads)
        .stack_size(16 << 20)
        .thread_name(|i| format!("loci-parse-{i}"))
        .build()
        .map_err(|e| EngineError::Internal(format!("starting the parser threads: {e}")))?;

    let total = candidates.len() as u64;
    let cancel = AtomicBool::new(false);
    let (sender, receiver) = mpsc::sync_channel::<Outcome>(QUEUED_OUTCOMES);
    let written: Result<()> = std::thread::scope(|scope| {
        let cancel = &cancel;
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
                    writer.write_batch(&mut batch, report, skips, gone_too)?;
                    writing += t.elapsed();
                    progress(ScanProgress::Parsing { done, total });
                }
            }
            writer.write_batch(&mut batch, report, skips, gone_too)?;
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
    written
}

/// Resolves imports, then references: all of them again after an interrupted scan or a
/// move of what roots a module tree. Returns whether it was such a repair.
#[allow(clippy::too_many_arguments)]
fn resolve_scan(
    root: &Path,
    store: &mut Store,
    report: &ScanReport,
    pending: PendingRefs,
    changed_names: &BTreeSet<String>,
    changed_files: &BTreeSet<i64>,
    retarget: &BTreeSet<i64>,
    write_refs: bool,
    has_scan: Option<i64>,
    interrupted: &HashSet<i64>,
    started: Instant,
) -> Result<bool> {
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
    let (deps_changed, modules) = resolve_deps(root, store, topology_changed, changed_files)?;
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
        changed_names,
        &deps_changed,
        retarget,
        modules,
        repair,
        write_refs,
    )?;
    tracing::info!(
        ms = started.elapsed().as_millis() as u64,
        "scan: resolved references"
    );
    Ok(repair)
}

/// The scan's end in one transaction: folders moved with their pages, the skipped files,
/// the drift ledger, the rules and versions the map was made with, interrupted scans
/// closed. Returns every page moved.
#[allow(clippy::too_many_arguments)]
fn record_scan(
    store: &mut Store,
    root: &Path,
    secrets: &SecretRules,
    scan_id: i64,
    skips: &[Skip],
    follow: &[Rename],
    files_moved: Vec<Rename>,
    drift: &[map::DriftEntry],
    interrupted: &HashSet<i64>,
) -> Result<Vec<Rename>> {
    let skipped_rows = skipped_rows(skips);
    let follow: Vec<&Rename> = follow.iter().collect();
    let folders = folder_moves(&follow, store)?;
    Ok(store.write(|tx| {
        let mut moved = files_moved.clone();
        for r in &folders {
            if super::sync::move_page(tx, &r.from, &r.to, &format!("rename:scan:{scan_id}"))? {
                moved.push(r.clone());
            }
        }
        map::replace_skipped_files(tx, &skipped_rows)?;
        map::insert_drift(tx, scan_id, drift, "scan")?;
        map::settle_drift_hashes(tx)?;
        loci_store::set_meta(tx, SECRET_RULES_META, secrets.fingerprint())?;
        loci_store::set_meta(tx, ANALYSIS_META, &loci_core::ANALYSIS_VERSION.to_string())?;
        loci_store::set_meta(tx, crate::ROOT_META, &root.to_string_lossy())?;
        for id in interrupted {
            map::close_interrupted_scan(tx, *id)?;
        }
        Ok(moved)
    })?)
}

/// A first scan's indexes (built before it is marked finished: a finished scan has them),
/// then memory that named what the scan mapped tracked, and the map's full-text segments
/// merged.
fn index_and_merge(
    store: &mut Store,
    report: &ScanReport,
    bulk: bool,
    started: Instant,
) -> Result<()> {
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
    // heavy questions); a scan that rewrote a large part of the map merges them all. So
    // does a first scan: the writer's batches left the stdlib's code-text indexes in nine
    // segments each, and `context` used 23% more CPU than on one.
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
        let tracked = crate::memory::claims::track_claims_resolved_since(tx)?;
        if written > 0 {
            for table in FtsTable::MAP {
                loci_store::search::merge_segments(tx, table, pages)?;
            }
        }
        Ok(tracked)
    })?;
    Ok(())
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
    report.scan_id = map::scan_revision(store.conn())?;
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
    report.degraded = map::all_degraded_files(store.conn())?
        .into_iter()
        .map(|(path, reason)| DegradedFile { path, reason })
        .collect();
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
        let outcome = map::ScanOutcome {
            added: r.added.len() as u64,
            modified: r.modified.len() as u64,
            deleted: r.deleted.len() as u64,
            renamed: r.renamed.len() as u64,
            unchanged: r.unchanged,
            skipped: r.skipped.values().sum::<u64>(),
            duration_ms: r.duration_ms,
            files: r.totals.files,
            symbols: r.totals.symbols,
        };
        store.write(|tx| map::finish_scan(tx, scan_id, &outcome))?;
    }
    // With the scan finished, the marks of the current revisions from its map (all of
    // them after a scan that changed it; after one that did not, those written since).
    if crate::audit::audit::marks_missing(store.conn())? {
        let at = Instant::now();
        store.write(|tx| crate::audit::audit::store_marks(tx, None))?;
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

/// Lines in `text`, as `loci_core::position::count_lines` counts them: `\n`, `\r\n` and a
/// lone `\r` each end a line; a last line without an ending counts.
pub fn count_lines(text: &str) -> i64 {
    loci_core::position::count_lines(text) as i64
}

#[cfg(test)]
mod tests {
    use super::refs::PendingRef;
    use super::{Outcome, Store, count_lines, process};
    use crate::map::walk::{SkipReason, WalkedFile};
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
        assert_eq!((at_once.len(), resolved, typed), (2_790, 2_520, 30));
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
            super::refs::resolve_written_refs(&mut ws.store, modules, (7, 7), at_once_definitions)
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
        let wall = state(Some(&super::write::degraded_reason(
            &loci_core::Degraded::WallClockGuard { after_ms: 5_000 },
        )));
        let work = state(Some(&super::write::degraded_reason(
            &loci_core::Degraded::ParseTimeout { limit_ms: 500 },
        )));
        let deep = state(Some(&super::write::degraded_reason(
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
