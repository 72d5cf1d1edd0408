//! Workspace roots: one store (one [`Workspace`]) per root, and scans (then embedding,
//! when configured) with `$/progress`.
//!
//! Each root keeps one `Workspace` behind a mutex for queries; a scan opens its own
//! `Workspace` on the same database in a blocking task (several connections on one WAL
//! database are fine), so queries keep being answered from the map while it scans. Scans
//! of one root never overlap: requests that arrive while one runs are coalesced into one
//! more scan after it.

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use loci_engine::SecretRules;
use loci_engine::context::EmbedProgress;
use loci_engine::map::git::HeadWatch;
use loci_engine::map::{SYNCED_HEAD_META, ScanProgress, ScanReport, SyncReport, SyncStep};
use loci_engine::memory::synthesis::{SynthesisReport, Targets};
use loci_engine::{EngineError, Envelope, Workspace};
use tower_lsp_server::ls_types::{MessageType, ProgressToken};
use tower_lsp_server::{Bounded, Client, NotCancellable, OngoingProgress};

use crate::commands;

/// One workspace root.
pub(crate) struct Root {
    /// The root directory, canonical.
    pub path: PathBuf,
    /// The query connection; `None` when the store could not be opened (`error` says why).
    ws: Option<Mutex<Workspace>>,
    /// Why the store could not be opened.
    pub error: Option<Failure>,
    /// Cap on files walked by scans, when one applies (home directory, client option).
    pub max_files: Option<u64>,
    /// The root's secret rules (the defaults when the store could not be opened).
    pub secrets: Arc<SecretRules>,
    /// Held while a scan runs.
    scan_lock: tokio::sync::Mutex<()>,
    /// A scan was asked for while one ran.
    pending: AtomicBool,
    /// A background scan task is running.
    running: AtomicBool,
    /// At least one scan finished.
    pub scanned: AtomicBool,
    /// Reads the commit `HEAD` is at; `None` outside git.
    head: Option<HeadWatch>,
    /// The `HEAD` commit last synced (here or, per the store's `synced_head`, by another
    /// process such as a git hook) or seen at start: a `HEAD` that differs has moved.
    seen_head: Mutex<Option<String>>,
    /// A sync was asked for while one ran.
    sync_pending: AtomicBool,
    /// A background sync task is running.
    sync_running: AtomicBool,
}

/// What a sync left behind: the pages behind the code at `head`.
#[derive(Clone, Debug)]
pub(crate) struct Behind {
    /// The commit `HEAD` was at (full hex); `None` outside git or before the first commit.
    pub head: Option<String>,
    /// The sync's answer; `None` when another process had synced this `HEAD` already
    /// (the count is then the one it recorded).
    pub synced: Option<Envelope<SyncReport>>,
    /// How many pages are behind the code.
    pub count: u64,
    /// Their subjects, as the plan lists them (stale pages, then roll-ups).
    pub pages: Vec<String>,
}

static NEXT_TOKEN: AtomicU64 = AtomicU64::new(1);

/// A failure of the engine kept for a later answer: its kind ([`EngineError::kind`]: the
/// words the CLI's JSON and the MCP tools use) and its message.
#[derive(Clone, Debug)]
pub(crate) struct Failure {
    /// `corrupt`, `newer_schema`, `busy`, ...
    pub kind: &'static str,
    /// What failed and the way out.
    pub message: String,
}

impl From<EngineError> for Failure {
    fn from(e: EngineError) -> Failure {
        Failure {
            kind: e.kind(),
            message: e.to_string(),
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl Failure {
    /// The failure as the answer to `command` ([`commands::failure`]).
    pub(crate) fn to_error(&self, command: &str) -> tower_lsp_server::jsonrpc::Error {
        commands::failure(command, self.kind, &self.message)
    }
}

/// A workspace of its own on `path`'s store, for work off the async threads, walking at
/// most `cap` files (the client's setting).
fn open_capped(path: &Path, cap: Option<u64>) -> Result<Workspace, Failure> {
    let mut ws = Workspace::open(path, None).map_err(Failure::from)?;
    if let Some(cap) = cap {
        ws.set_max_files(cap);
    }
    Ok(ws)
}

impl Root {
    /// Opens the store of `path` (creating `.loci/`); failures are kept, not fatal.
    pub(crate) fn open(path: &Path, max_files: Option<u64>) -> Root {
        let (ws, error) = match Workspace::open(path, None) {
            Ok(ws) => (Some(Mutex::new(ws)), None),
            Err(e) => (None, Some(Failure::from(e))),
        };
        let path = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        let secrets = Arc::new(
            ws.as_ref()
                .map(|w| {
                    w.lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .secrets()
                        .clone()
                })
                .unwrap_or_default(),
        );
        let head = HeadWatch::open(&path);
        // The HEAD the last sync saw, else the one of now: a repository never synced is
        // not synced on opening, only once HEAD moves.
        let synced = ws.as_ref().and_then(|w| {
            w.lock()
                .unwrap_or_else(|p| p.into_inner())
                .store()
                .meta(SYNCED_HEAD_META)
                .ok()
                .flatten()
                .filter(|h| !h.is_empty())
        });
        let seen = synced.or_else(|| head.as_ref().and_then(HeadWatch::head));
        Root {
            path,
            ws,
            error,
            max_files,
            secrets,
            scan_lock: tokio::sync::Mutex::new(()),
            pending: AtomicBool::new(false),
            running: AtomicBool::new(false),
            scanned: AtomicBool::new(false),
            head,
            seen_head: Mutex::new(seen),
            sync_pending: AtomicBool::new(false),
            sync_running: AtomicBool::new(false),
        }
    }

    /// The root's git directories (`HEAD`'s, and the one holding `refs/heads/`); `None`
    /// outside git.
    pub(crate) fn git_dirs(&self) -> Option<(PathBuf, PathBuf)> {
        self.head
            .as_ref()
            .map(|h| (h.git_dir().to_path_buf(), h.common_dir().to_path_buf()))
    }

    /// Whether `HEAD` moved since it was last synced or seen (a commit, checkout, merge or
    /// pull): true once per new commit, which it then counts as seen. A few small file
    /// reads (`HEAD` and the branch's reference), no database access: cheap enough for
    /// every burst of edits.
    pub(crate) fn head_moved(&self) -> bool {
        let Some(now) = self.head.as_ref().and_then(HeadWatch::head) else {
            return false;
        };
        let mut seen = self.seen_head.lock().unwrap_or_else(|p| p.into_inner());
        if seen.as_deref() == Some(now.as_str()) {
            return false;
        }
        *seen = Some(now);
        true
    }

    /// Asks for a sync in the background; coalesced with a running one (one more runs
    /// after it). `after` gets each sync's outcome.
    pub(crate) fn request_sync<F, Fut>(self: &Arc<Self>, client: Client, progress: bool, after: F)
    where
        F: Fn(Arc<Root>, Result<Behind, Failure>) -> Fut + Send + 'static,
        Fut: std::future::Future<Output = ()> + Send,
    {
        self.sync_pending.store(true, Ordering::SeqCst);
        if self.sync_running.swap(true, Ordering::SeqCst) {
            return;
        }
        let root = self.clone();
        tokio::spawn(async move {
            loop {
                root.sync_pending.store(false, Ordering::SeqCst);
                let outcome = root.sync(&client, progress, false).await;
                after(root.clone(), outcome).await;
                if root.sync_pending.load(Ordering::SeqCst) {
                    continue;
                }
                root.sync_running.store(false, Ordering::SeqCst);
                if !root.sync_pending.load(Ordering::SeqCst)
                    || root.sync_running.swap(true, Ordering::SeqCst)
                {
                    break;
                }
            }
        });
    }

    /// Syncs git history (`loci_engine::map::sync`) on a connection of its own, after any
    /// running scan (a sync scans first) and with `$/progress` when `progress` is set
    /// ("loci: syncing git history": refreshing the map, recording N commits, checking
    /// memory; it ends with the count of pages behind the code). Unless `force`, a `HEAD`
    /// that the store says was synced already (by a git hook running `loci sync`) is not
    /// synced again: the answer is the count that sync recorded.
    pub(crate) async fn sync(
        self: &Arc<Self>,
        client: &Client,
        progress: bool,
        force: bool,
    ) -> Result<Behind, Failure> {
        let _guard = self.scan_lock.lock().await;
        if let Some(error) = &self.error {
            return Err(error.clone());
        }
        let head = self.head.as_ref().and_then(HeadWatch::head);
        let path = self.path.clone();
        let wanted = head.clone();
        let skip = tokio::task::spawn_blocking(move || -> Result<Option<Behind>, Failure> {
            let ws = Workspace::open(&path, None).map_err(Failure::from)?;
            let synced = ws
                .store()
                .meta(SYNCED_HEAD_META)
                .map_err(|e| Failure::from(EngineError::from(e)))?;
            if force || wanted.is_none() || synced != wanted {
                return Ok(None);
            }
            let pages: Vec<String> = ws
                .pages_behind_brief()
                .map_err(Failure::from)?
                .into_iter()
                .map(|i| i.subject)
                .collect();
            Ok(Some(Behind {
                head: wanted,
                synced: None,
                count: pages.len() as u64,
                pages,
            }))
        })
        .await
        .map_err(|e| Failure {
            kind: "internal",
            message: format!("the sync failed: {}", crate::server::join_error(e)),
        })??;
        if let Some(behind) = skip {
            self.mark_seen(behind.head.clone());
            return Ok(behind);
        }
        let ongoing = if progress {
            begin_progress(client, "sync", "loci: syncing git history", &self.path).await
        } else {
            None
        };
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<SyncStep>();
        let path = self.path.clone();
        let cap = self.max_files;
        let task = tokio::task::spawn_blocking(move || {
            let mut ws = open_capped(&path, cap)?;
            ws.sync_with(None, &|step| {
                let _ = tx.send(step);
            })
            .map_err(|e| Failure::from(ws.name_damage(e)))
        });
        while let Some(step) = rx.recv().await {
            if let Some(ongoing) = &ongoing {
                let (message, pct) = match step {
                    SyncStep::Scanning => ("refreshing the map".to_string(), 0),
                    SyncStep::Recording { commits } => (
                        format!(
                            "recording {commits} commit{}",
                            if commits == 1 { "" } else { "s" }
                        ),
                        33,
                    ),
                    SyncStep::Checking => ("checking memory against the code".to_string(), 67),
                };
                ongoing.report_with_message(message, pct).await;
            }
        }
        let result = match task.await {
            Ok(result) => result,
            Err(e) => Err(Failure {
                kind: "internal",
                message: format!("the sync failed: {}", crate::server::join_error(e)),
            }),
        };
        let behind = result.map(|env| {
            let pages: Vec<String> = env
                .result
                .pages_behind
                .iter()
                .map(|i| i.subject.clone())
                .collect();
            Behind {
                head: head.clone(),
                count: pages.len() as u64,
                pages,
                synced: Some(env),
            }
        });
        if let Some(ongoing) = ongoing {
            let summary = match &behind {
                Ok(b) => behind_message(b.count),
                Err(e) => e.message.clone(),
            };
            ongoing.finish_with_message(summary).await;
        }
        if behind.is_ok() {
            self.mark_seen(head);
        }
        behind
    }

    /// Counts `head` as synced: the next [`Root::head_moved`] compares with it.
    fn mark_seen(&self, head: Option<String>) {
        if head.is_some() {
            *self.seen_head.lock().unwrap_or_else(|p| p.into_inner()) = head;
        }
    }

    /// The count of pages behind the code the last sync, lint or synthesis run recorded
    /// (`Workspace::pages_behind_recorded`) with their subjects; `None` before any, or
    /// when the store cannot be read. Call only from blocking code.
    pub(crate) fn recorded_behind(&self) -> Option<Behind> {
        let ws = self.workspace()?;
        ws.pages_behind_recorded().ok()??;
        let pages: Vec<String> = ws
            .pages_behind_brief()
            .ok()?
            .into_iter()
            .map(|i| i.subject)
            .collect();
        Some(Behind {
            head: self.head.as_ref().and_then(HeadWatch::head),
            synced: None,
            count: pages.len() as u64,
            pages,
        })
    }

    /// The query workspace, locked; `None` when the store could not be opened. Call only
    /// from blocking code.
    pub(crate) fn workspace(&self) -> Option<MutexGuard<'_, Workspace>> {
        self.ws
            .as_ref()
            .map(|m| m.lock().unwrap_or_else(|poisoned| poisoned.into_inner()))
    }

    /// The answer to `command` when the store could not be opened: its kind and the way
    /// out ([`Failure::to_error`]); the server stays up and answers from open documents.
    pub(crate) fn unopened(&self, command: &str) -> tower_lsp_server::jsonrpc::Error {
        match &self.error {
            Some(e) => e.to_error(command),
            None => commands::internal(format!("{command}: the store is not open")),
        }
    }

    /// Whether a scan is running now.
    pub(crate) fn scanning(&self) -> bool {
        self.scan_lock.try_lock().is_err()
    }

    /// Scans now (waiting for a running scan to finish first), reporting `$/progress`
    /// when `progress` is set. Returns the engine's envelope or the error in words.
    pub(crate) async fn scan(
        self: &Arc<Self>,
        client: &Client,
        progress: bool,
    ) -> Result<Envelope<ScanReport>, Failure> {
        let _guard = self.scan_lock.lock().await;
        self.pending.store(false, Ordering::SeqCst);
        if let Some(error) = &self.error {
            return Err(error.clone());
        }
        let ongoing = if progress {
            begin_progress(client, "scan", "loci: scanning", &self.path).await
        } else {
            None
        };
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<ScanProgress>();
        let path = self.path.clone();
        let cap = self.max_files;
        let task = tokio::task::spawn_blocking(move || {
            let mut ws = open_capped(&path, cap)?;
            ws.scan(&|p| {
                let _ = tx.send(p);
            })
            .map_err(|e| Failure::from(ws.name_damage(e)))
        });
        let mut last = 0;
        while let Some(p) = rx.recv().await {
            if let (Some(ongoing), ScanProgress::Parsing { done, total }) = (&ongoing, &p) {
                let pct = if *total == 0 {
                    100
                } else {
                    (done * 100 / total) as u32
                };
                if pct != last {
                    last = pct;
                    ongoing
                        .report_with_message(format!("{done}/{total} files"), pct)
                        .await;
                }
            }
        }
        let result = match task.await {
            Ok(result) => result,
            Err(e) => Err(Failure {
                kind: "internal",
                message: format!("the scan failed: {}", crate::server::join_error(e)),
            }),
        };
        let summary = match &result {
            Ok(env) => loci_engine::text::markdown::scan_summary(&env.result),
            Err(e) => e.message.clone(),
        };
        // Scanned before the progress ends: a hover the client sends on seeing the end must
        // not still say the initial scan is running (found by
        // `neovim_hovers_answer_during_the_first_scan_of_the_stdlib` under load).
        self.scanned.store(true, Ordering::SeqCst);
        if let Some(ongoing) = ongoing {
            ongoing.finish_with_message(summary.clone()).await;
        }
        let level = if result.is_ok() {
            MessageType::INFO
        } else {
            MessageType::ERROR
        };
        tracing::info!("{}: {summary}", self.path.display());
        client
            .log_message(level, format!("loci: {}: {summary}", self.path.display()))
            .await;
        result
    }

    /// Drafts pages with the configured `[synthesis] command` (`loci_engine::memory::synthesis`),
    /// reporting `$/progress` per page when `progress` is set. The run has a connection of
    /// its own: one page's command may take minutes, and hovers and diagnostics go on
    /// meanwhile.
    pub(crate) async fn synthesize(
        self: &Arc<Self>,
        client: &Client,
        progress: bool,
        targets: Targets,
        session: Option<i64>,
    ) -> Result<Envelope<SynthesisReport>, Failure> {
        if let Some(error) = &self.error {
            return Err(error.clone());
        }
        let ongoing = if progress {
            begin_progress(client, "synthesize", "loci: writing pages", &self.path).await
        } else {
            None
        };
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(usize, usize, String)>();
        let path = self.path.clone();
        let task = tokio::task::spawn_blocking(move || {
            let mut ws = Workspace::open(&path, None).map_err(Failure::from)?;
            ws.synthesize(&targets, session, &|p| {
                let _ = tx.send((p.done, p.total, p.subject.to_string()));
            })
            .map_err(|e| Failure::from(ws.name_damage(e)))
        });
        while let Some((done, total, subject)) = rx.recv().await {
            if let Some(ongoing) = &ongoing {
                let pct = (done * 100).checked_div(total).unwrap_or(100) as u32;
                ongoing
                    .report_with_message(format!("page {} of {total}: {subject}", done + 1), pct)
                    .await;
            }
        }
        let result = match task.await {
            Ok(result) => result,
            Err(e) => Err(Failure {
                kind: "internal",
                message: format!("writing pages failed: {}", crate::server::join_error(e)),
            }),
        };
        if let Some(ongoing) = ongoing {
            let summary = match &result {
                // The report's last line: "2 pages of 2 written by `sh`".
                Ok(env) => loci_engine::text::to_string(|o| {
                    loci_engine::text::synthesis_report(o, &env.result)
                })
                .lines()
                .last()
                .unwrap_or_default()
                .to_string(),
                Err(e) => e.message.clone(),
            };
            ongoing.finish_with_message(summary).await;
        }
        result
    }

    /// Embeds the code chunks that have no vector yet when `[embeddings]` names a model
    /// (`loci_engine::context::embed`), reporting `$/progress` when `progress` is set and there is
    /// something to embed. It stops between batches as soon as a scan is asked for (the
    /// scan runs first; the next run resumes where this one stopped), and holds the scan
    /// lock meanwhile, so it never embeds a map a scan is rewriting.
    pub(crate) async fn embed(self: &Arc<Self>, client: &Client, progress: bool) {
        let _guard = self.scan_lock.lock().await;
        if self.error.is_some() {
            return;
        }
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<EmbedProgress>();
        let root = self.clone();
        let task = tokio::task::spawn_blocking(move || {
            let mut ws = Workspace::open(&root.path, None).map_err(|e| e.to_string())?;
            if ws.embeddings_model_dir().is_none() {
                return Ok(None);
            }
            ws.embed(&|p| {
                let _ = tx.send(p);
                if root.pending.load(Ordering::SeqCst) {
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            })
            .map(|env| Some(env.result))
            .map_err(|e| e.to_string())
        });
        let mut ongoing = None;
        let mut last = None;
        while let Some(p) = rx.recv().await {
            if p.done >= p.total {
                continue;
            }
            if progress && ongoing.is_none() {
                ongoing =
                    begin_progress(client, "embed", "loci: embedding code chunks", &self.path)
                        .await;
            }
            let pct = (p.done * 100 / p.total) as u32;
            if let Some(ongoing) = &ongoing
                && last != Some(pct)
            {
                last = Some(pct);
                ongoing
                    .report_with_message(format!("{}/{} chunks", p.done, p.total), pct)
                    .await;
            }
        }
        let (level, summary) = match task.await {
            Ok(Ok(None)) => return,
            Ok(Ok(Some(r))) if r.embedded == 0 => return,
            Ok(Ok(Some(r))) => (
                MessageType::INFO,
                format!(
                    "embedded {} chunks in {} ms with {}: {} of {} chunks have vectors",
                    r.embedded, r.duration_ms, r.model, r.with_vectors, r.chunks
                ),
            ),
            Ok(Err(e)) => (MessageType::WARNING, format!("embedding failed: {e}")),
            Err(e) => (
                MessageType::WARNING,
                format!("embedding failed: {}", crate::server::join_error(e)),
            ),
        };
        if let Some(ongoing) = ongoing {
            ongoing.finish_with_message(summary.clone()).await;
        }
        tracing::info!("{}: {summary}", self.path.display());
        client
            .log_message(level, format!("loci: {}: {summary}", self.path.display()))
            .await;
    }

    /// Asks for a scan in the background; coalesced with a running one. `after` runs
    /// after each scan (refreshing open documents' diagnostics).
    pub(crate) fn request_scan<F, Fut>(self: &Arc<Self>, client: Client, progress: bool, after: F)
    where
        F: Fn(Arc<Root>) -> Fut + Send + 'static,
        Fut: std::future::Future<Output = ()> + Send,
    {
        self.pending.store(true, Ordering::SeqCst);
        if self.running.swap(true, Ordering::SeqCst) {
            return;
        }
        let root = self.clone();
        tokio::spawn(async move {
            loop {
                if let Err(e) = root.scan(&client, progress).await {
                    tracing::warn!("{e}");
                }
                after(root.clone()).await;
                if !root.pending.load(Ordering::SeqCst) {
                    root.embed(&client, progress).await;
                }
                if root.pending.load(Ordering::SeqCst) {
                    continue;
                }
                root.running.store(false, Ordering::SeqCst);
                // A request between the check and the store would otherwise be lost.
                if !root.pending.load(Ordering::SeqCst) || root.running.swap(true, Ordering::SeqCst)
                {
                    break;
                }
            }
        });
    }
}

/// Begins a `$/progress` (`loci/<kind>/<n>`) at 0% with the root as its message, or `None`
/// when the client refuses to create it.
async fn begin_progress(
    client: &Client,
    kind: &str,
    title: &str,
    root: &Path,
) -> Option<OngoingProgress<Bounded, NotCancellable>> {
    let token = ProgressToken::String(format!(
        "loci/{kind}/{}",
        NEXT_TOKEN.fetch_add(1, Ordering::Relaxed)
    ));
    match client.create_work_done_progress(token.clone()).await {
        Ok(()) => Some(
            client
                .progress(token, title)
                .with_percentage(0)
                .with_message(root.display().to_string())
                .begin()
                .await,
        ),
        Err(e) => {
            tracing::debug!("no progress for {kind}: {e}");
            None
        }
    }
}

/// "3 pages behind the code", "1 page behind the code", "no page behind the code".
pub(crate) fn behind_message(count: u64) -> String {
    match count {
        0 => "no page behind the code".into(),
        1 => "1 page behind the code".into(),
        n => format!("{n} pages behind the code"),
    }
}
