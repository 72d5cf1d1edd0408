//! The MCP server handler: `initialize` (with instructions for agents), `tools/list`, and
//! `tools/call`, which runs one engine operation on a blocking thread after refreshing the
//! map from disk.
//!
//! Concurrency: writes, map refreshes and scans run one at a time on the *writer*
//! workspace, behind a mutex. Reads run on *reader* workspaces, each with its own SQLite
//! connection (WAL: readers see the last committed data and never wait for a writer),
//! taken from a small pool, so a long write, `lint`, `check` or refresh does not hold up
//! `context` or `symbol`. On a store no scan has finished yet (a fresh checkout's first
//! scan loads the map in bulk, without its indexes), reads wait for the first refresh.
//!
//! Freshness: before a call, the map is refreshed with an incremental scan (size + mtime,
//! then content hash; a no-op when nothing changed) if the last refresh is older than
//! [`ServerOptions::refresh_interval`], and always before a write. After a read, the files
//! the answer relies on are compared with the disk; if any changed, the map is refreshed
//! and the read is answered again, so an answer never pairs an old line with a file's new
//! text. `freshness.refreshed` lists the files rescanned.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use loci_engine::{CancelFlag, EngineError, StoreError, Workspace};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    InitializeRequestParams, InitializeResult, ListToolsResult, PaginatedRequestParams,
    ProgressNotificationParam, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::json;

use crate::render;
use crate::tools::{self, Access, Answer, ArgumentError, Call, ParseError, Progress};

/// What the server tells an agent at `initialize`.
pub const INSTRUCTIONS: &str = "\
loci is a live, verified memory of this repository: a structural map (symbols, references, \
imports; refreshed from disk before every answer) and authored memory (notes, decisions, \
lessons) with provenance and staleness checks.
1. Start a task with `session_begin` (and `recap` to see what earlier sessions did); pass the \
returned `session_id` as `session` to every write.
2. Before reading files, ask loci: `context` with your question or task (ranked memory, code \
and docs under a token budget), `search` for words; `symbol`, `source`, `outline`, `references`, \
`callers`, `callees`, `impact` for structure; `why`, `show`, `history`, `memory_list` for what was \
written about a file or line.
3. Record what you learn as you go: `remember` (notes on a file, folder or `topic:NAME`), \
`decide` (a decision and its reason), `learn` (a pitfall and what to do instead).
4. Heed `stale_warnings`: memory about code that changed may be wrong; `confirm` it if still \
true, or `remember` a correction. `drift` shows what changed; `lint` finds memory the code \
contradicts (`resolve` dismisses a false alarm).
5. Finish with `session_end` and a short summary.
Structured results use zero-based lines; text uses one-based `path:line`. Large answers are \
paged: call again with the `next_cursor` the answer gives.";

/// Tunables of the server.
#[derive(Clone, Debug)]
pub struct ServerOptions {
    /// Minimum time between two full incremental refreshes before reads. A read always
    /// rechecks the files its answer relies on regardless.
    pub refresh_interval: Duration,
    /// Bytes of structured result per page (and of text per result), before JSON escaping
    /// overhead; keeps each response line well under hosts' ~64 KiB line limits (B23).
    pub page_bytes: usize,
}

impl Default for ServerOptions {
    fn default() -> ServerOptions {
        ServerOptions {
            refresh_interval: Duration::from_secs(2),
            page_bytes: render::PAGE_BYTES,
        }
    }
}

struct State {
    /// The writer workspace; `None` while the store cannot be opened
    /// ([`Inner::refused`]).
    ws: Option<Workspace>,
    last_refresh: Option<Instant>,
    /// Files the refreshes before answers rescanned since the last `scan` call (at most
    /// [`SINCE_SCAN_KEPT`]), and how many there were in all: a `scan` after them finds
    /// nothing left to do and says where its changes went.
    since_scan: (std::collections::BTreeSet<String>, usize),
}

impl State {
    /// The writer workspace. Errors: [`EngineError::Internal`] before the store opened
    /// ([`LociServer::execute`] answers the reason first, so no call meets this).
    fn ws(&mut self) -> Result<&mut Workspace, EngineError> {
        self.ws
            .as_mut()
            .ok_or_else(|| EngineError::Internal("the store is not open".into()))
    }
}

impl Inner {
    /// Makes `ws` the writer, and where readers open from.
    fn install(&self, state: &mut State, ws: Workspace) {
        let _ = self.reader_source.set(
            ws.store()
                .path()
                .map(|db| (ws.root().to_path_buf(), db.to_path_buf())),
        );
        // A map a scan finished is whole, if perhaps stale: reads need not wait for the
        // startup refresh (the files an answer relies on are still checked).
        self.map_ready
            .store(ws.map_is_built().unwrap_or(false), Ordering::Release);
        self.team_backed
            .store(ws.team_configured(), Ordering::Release);
        state.ws = Some(ws);
    }
}

/// The refreshed paths [`State::since_scan`] keeps by name; beyond them it only counts.
const SINCE_SCAN_KEPT: usize = 1_000;

struct Inner {
    /// The writer workspace.
    state: Mutex<State>,
    /// Where reader workspaces open from: the workspace root and its database file, or
    /// `None` for a store without a file (reads then run on the writer). Set when the
    /// writer opens.
    reader_source: OnceLock<Option<(PathBuf, PathBuf)>>,
    /// While the store cannot be opened: why, and where to open it from. Every call tries
    /// again first, so the way out the error names (`loci restore`, a newer loci) works
    /// without restarting the server.
    refused: Mutex<Option<Refused>>,
    /// Idle reader workspaces (at most [`IDLE_READERS`]).
    readers: Mutex<Vec<Workspace>>,
    /// Whether the map is whole (a scan has finished, before or since start): before
    /// that, it may be half loaded, and reads wait for the writer.
    map_ready: AtomicBool,
    options: ServerOptions,
    tools: Vec<Tool>,
    /// Tool calls whose blocking worker has not returned yet.
    calls_running: AtomicUsize,
    /// Whether the workspace's memory is team-backed (`[team]`): set when the writer
    /// opens, not read from it later, since the first refresh holds it.
    team_backed: AtomicBool,
}

/// How often the team listener tries a lost connection to the team server again.
pub const TEAM_RETRY: Duration = Duration::from_secs(5);

/// A store `loci mcp` could not open (a newer schema, a damaged file, one another
/// application made): the server starts anyway, answers `initialize` and `tools/list`, and
/// answers every tool call with an error result that names the problem and the way out,
/// rather than exit 2 before answering `initialize`, which an agent would see as a dead
/// server with no reason.
#[derive(Debug)]
pub struct Refused {
    /// The workspace root.
    pub root: PathBuf,
    /// The database given (`--db`, `LOCI_DB`), or `None` for `<root>/.loci/loci.db`.
    pub db: Option<PathBuf>,
    /// Why it could not be opened ([`EngineError::kind`] names it to the agent).
    pub error: EngineError,
}

/// Idle reader workspaces kept for reuse; a burst of more concurrent reads opens more,
/// which are closed after their call. Each holds one SQLite connection and its caches.
pub const IDLE_READERS: usize = 4;

/// How long a call waiting for the writer sleeps between two attempts at most. A thread
/// blocked in `Mutex::lock` cannot be called off, and a call queued behind a long scan
/// must be when its client cancels it or goes away; the first attempts come sooner.
const WRITER_POLL: Duration = Duration::from_millis(5);

/// The MCP server for one workspace. Cheap to clone: clones share the writer workspace
/// (one SQLite connection behind a mutex) and the pool of readers. Each MCP session gets
/// its own [`LociServer::for_session`] (one per HTTP session; stdio has one).
#[derive(Clone)]
pub struct LociServer {
    inner: Arc<Inner>,
    /// Whether this session has answered `initialize`: a second one is refused.
    initialized: Arc<AtomicBool>,
}

impl LociServer {
    /// A server over `ws`.
    pub fn new(ws: Workspace, options: ServerOptions) -> LociServer {
        let server = LociServer::without_store(None, options);
        server.inner.install(&mut server.lock(), ws);
        server
    }

    /// A server over a store that could not be opened (see [`Refused`]): each tool call
    /// tries to open it again, and answers the error while it still fails.
    pub fn refused(refused: Refused, options: ServerOptions) -> LociServer {
        tracing::warn!(error = %refused.error, "the store cannot be opened; every tool call will say so");
        LociServer::without_store(Some(refused), options)
    }

    fn without_store(refused: Option<Refused>, options: ServerOptions) -> LociServer {
        LociServer {
            inner: Arc::new(Inner {
                state: Mutex::new(State {
                    ws: None,
                    last_refresh: None,
                    since_scan: Default::default(),
                }),
                reader_source: OnceLock::new(),
                refused: Mutex::new(refused),
                readers: Mutex::new(Vec::new()),
                map_ready: AtomicBool::new(false),
                options,
                tools: tools::TOOLS.iter().map(|t| t.to_tool()).collect(),
                calls_running: AtomicUsize::new(0),
                team_backed: AtomicBool::new(false),
            }),
            initialized: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Why the store cannot be opened, as a tool result, after trying once more; `None`
    /// once it is open (it stays open from then on).
    fn still_refused(&self) -> Option<CallToolResult> {
        let mut refused = self.inner.refused.lock().unwrap_or_else(|p| p.into_inner());
        let r = refused.as_mut()?;
        match Workspace::open(&r.root, r.db.as_deref()) {
            Ok(ws) => {
                tracing::info!(root = %r.root.display(), "the store opens now; serving it");
                *refused = None;
                drop(refused);
                self.inner.install(&mut self.lock(), ws);
                None
            }
            Err(e) => {
                r.error = e;
                Some(error_result(
                    r.error.kind(),
                    r.error.kind() == "busy",
                    format!(
                        "loci cannot open its store, so no tool can answer: {}",
                        r.error
                    ),
                    None,
                ))
            }
        }
    }

    /// A server for a new MCP session over the same workspace: it shares the writer and
    /// the readers, and has its own `initialize` state.
    pub fn for_session(&self) -> LociServer {
        LociServer {
            inner: self.inner.clone(),
            initialized: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Tool calls whose worker is still running (a cancelled call counts until its
    /// worker has stopped): for tests that a cancelled call frees its worker.
    #[doc(hidden)]
    pub fn calls_running(&self) -> usize {
        self.inner.calls_running.load(Ordering::Acquire)
    }

    /// Starts the first refresh (a full scan on a fresh checkout) in the background, so
    /// that the first tool call finds the map ready or waits for it.
    pub fn warm_up(&self) {
        let server = self.clone();
        tokio::task::spawn_blocking(move || {
            let mut state = server.lock();
            if state.ws.is_none() {
                // A store that could not be opened is tried again by each call.
                return;
            }
            let mut notes = Vec::new();
            let first_build = !server.inner.map_ready.load(Ordering::Acquire);
            let refreshed = server.refresh(&mut state, &mut notes);
            if first_build {
                // Building the map is not a change a later `scan` call should report.
                state.since_scan = Default::default();
            }
            for note in notes {
                tracing::warn!("{note}");
            }
            tracing::info!(files = refreshed.len(), "initial refresh done");
        });
    }

    /// Team memory: when the workspace's memory is team-backed, a thread of its own keeps a
    /// connection that `LISTEN`s for the team server's events and pulls each into the store
    /// as it is written ([`loci_engine::memory::team::listen_at`], as `loci lsp` does), so
    /// the next answer — read by any reader — holds a colleague's write without a restart
    /// or a write of this agent's first. A lost connection is tried again every
    /// [`TEAM_RETRY`]. The thread ends when the server is dropped (at its next wake-up).
    pub fn start_team_listener(&self) {
        if !self.inner.team_backed.load(Ordering::Acquire) {
            return;
        }
        let Some((root, db)) = self.inner.reader_source.get().cloned().flatten() else {
            return;
        };
        let weak = Arc::downgrade(&self.inner);
        let spawned = std::thread::Builder::new()
            .name("loci-team".into())
            .spawn(move || {
                loci_engine::memory::team::listen_at(&root, Some(&db), TEAM_RETRY, |_| {
                    weak.strong_count() > 0
                });
            });
        if let Err(e) = spawned {
            tracing::warn!("the team listener did not start: {e}");
        }
    }

    /// The tool definitions `tools/list` returns.
    pub fn tools(&self) -> &[Tool] {
        &self.inner.tools
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic inside an engine call poisons the mutex; the workspace is still usable
        // (every write is one transaction), so keep serving.
        self.inner
            .state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The writer if no one holds it (a write, refresh or scan in progress holds it).
    fn try_lock(&self) -> Option<MutexGuard<'_, State>> {
        match self.inner.state.try_lock() {
            Ok(guard) => Some(guard),
            Err(std::sync::TryLockError::Poisoned(poisoned)) => Some(poisoned.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) => None,
        }
    }

    /// The writer, waiting for it until `cancel` is raised ([`EngineError::Cancelled`]).
    /// Polls ([`WRITER_POLL`]) instead of blocking, so that a cancelled call queued behind
    /// a long scan or write stops waiting.
    fn lock_unless_cancelled(
        &self,
        cancel: &CancelFlag,
    ) -> Result<MutexGuard<'_, State>, EngineError> {
        let mut pause = Duration::from_micros(100);
        loop {
            if let Some(guard) = self.try_lock() {
                return Ok(guard);
            }
            cancel.check()?;
            std::thread::sleep(pause);
            pause = (pause * 2).min(WRITER_POLL);
        }
    }

    /// Holds the writer until the guard is dropped, as a long write or refresh does: for
    /// tests of what waits for it (writes) and what does not (reads).
    #[doc(hidden)]
    pub fn hold_writer(&self) -> impl Drop + '_ {
        self.lock()
    }

    /// Runs `f` on a reader workspace: an idle one from the pool, else a newly opened
    /// one, else (no database file, or opening failed) the writer.
    fn with_reader<T>(
        &self,
        mut f: impl FnMut(&mut Workspace) -> Result<T, EngineError>,
    ) -> Result<T, EngineError> {
        let pooled = self
            .inner
            .readers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .pop();
        let reader = pooled.or_else(|| {
            let (root, db) = self.inner.reader_source.get()?.as_ref()?;
            Workspace::open(root, Some(db))
                .inspect_err(
                    |e| tracing::warn!(error = %e, "opening a reader; reading on the writer"),
                )
                .ok()
        });
        let Some(mut reader) = reader else {
            return self.lock().ws().and_then(f);
        };
        let out = f(&mut reader);
        let mut idle = self.inner.readers.lock().unwrap_or_else(|p| p.into_inner());
        if idle.len() < IDLE_READERS {
            idle.push(reader);
        }
        out
    }

    /// An incremental refresh on the writer (see [`refresh`]); marks the map ready.
    fn refresh(&self, state: &mut State, notes: &mut Vec<String>) -> Vec<String> {
        let paths = refresh(state, notes);
        if state.last_refresh.is_some() {
            self.inner.map_ready.store(true, Ordering::Release);
        }
        let (kept, count) = &mut state.since_scan;
        for p in &paths {
            if kept.len() < SINCE_SCAN_KEPT {
                kept.insert(p.clone());
            }
        }
        *count += paths.len();
        paths
    }

    /// A read: refresh first if due (skipped while a write or refresh holds the writer,
    /// unless the call must refresh first (`drift`): the read answers from the last
    /// committed map, and the files it relies on are still checked), run on a reader, and if a file the answer relies on changed on disk,
    /// refresh (waiting for the writer) and answer again.
    fn read(
        &self,
        call: &Call,
        default_author: Option<&str>,
        cancel: &CancelFlag,
        refreshed: &mut Vec<String>,
        notes: &mut Vec<String>,
    ) -> Result<Answer, EngineError> {
        let interval = self.inner.options.refresh_interval;
        let due = |state: &State| {
            call.refresh_first() || state.last_refresh.is_none_or(|t| t.elapsed() >= interval)
        };
        let writer = if self.inner.map_ready.load(Ordering::Acquire) && !call.refresh_first() {
            self.try_lock()
        } else {
            Some(self.lock_unless_cancelled(cancel)?)
        };
        if let Some(mut state) = writer
            && due(&state)
        {
            cancel.check()?;
            refreshed.extend(self.refresh(&mut state, notes));
        }
        let run = |ws: &mut Workspace| {
            ws.set_cancel(cancel.clone());
            call.run(ws, default_author, &|_| {})
                .map_err(|e| ws.name_damage(e))
        };
        cancel.check()?;
        let mut result = self.with_reader(run);
        let stale = matches!(&result, Ok(a) if a.env.freshness.changed_since_scan.unwrap_or(0) > 0);
        if stale {
            let mut state = self.lock_unless_cancelled(cancel)?;
            cancel.check()?;
            refreshed.extend(self.refresh(&mut state, notes));
            drop(state);
            result = self.with_reader(run);
        }
        result
    }

    /// Runs one parsed call: refresh, engine operation, rendering. Blocking. Every
    /// outcome is a tool result: a failure is one with `isError: true`.
    ///
    /// Cancellation: once `cancel` is raised the call stops at its next check — while
    /// waiting for the writer, between the refresh and the operation, and inside long
    /// reads (see [`CancelFlag`]) — and answers `cancelled`. A write checks once it holds
    /// the writer, then runs whole: it is never stopped half done.
    ///
    /// `progress` hears how a long write advances (`synthesize`).
    pub fn execute(
        &self,
        tool: &str,
        call: &Call,
        default_author: Option<&str>,
        progress: &dyn Fn(Progress),
        cancel: &CancelFlag,
    ) -> CallToolResult {
        if let Some(refused) = self.still_refused() {
            return refused;
        }
        let mut refreshed = Vec::new();
        let mut notes = Vec::new();
        let access = call.access();
        let result = if access == Access::Read {
            self.read(call, default_author, cancel, &mut refreshed, &mut notes)
        } else {
            self.write(
                call,
                default_author,
                progress,
                cancel,
                &mut refreshed,
                &mut notes,
            )
        };
        self.render(tool, call, result, refreshed, notes)
    }

    /// A write, scan or lint on the writer (see [`LociServer::execute`]).
    fn write(
        &self,
        call: &Call,
        default_author: Option<&str>,
        progress: &dyn Fn(Progress),
        cancel: &CancelFlag,
        refreshed: &mut Vec<String>,
        notes: &mut Vec<String>,
    ) -> Result<Answer, EngineError> {
        let mut state = self.lock_unless_cancelled(cancel)?;
        cancel.check()?;
        // Writes never poll a flag (a read on the writer may have left one).
        state.ws()?.set_cancel(CancelFlag::default());
        if call.refresh_first() {
            refreshed.extend(self.refresh(&mut state, notes));
        }
        let ws = state.ws()?;
        let result = call
            .run(ws, default_author, progress)
            .map_err(|e| ws.name_damage(e));
        if call.access() == Access::Index && result.is_ok() {
            // What the refreshes before earlier answers rescanned is this scan's news
            // too: without it, a `scan` after any read would say nothing had changed.
            let (kept, count) = std::mem::take(&mut state.since_scan);
            if count > 0 {
                notes.push(format!(
                    "{count} changed files were already rescanned since the last `scan` call (the server refreshes the map before answers); this scan's lists leave them out, `freshness.refreshed` names the first {}",
                    kept.len().min(tools::LIST_CAP)
                ));
                refreshed.extend(kept.into_iter().take(tools::LIST_CAP));
            }
        }
        result
    }

    /// The tool result of an operation's outcome, with the files refreshed before it and
    /// the notes gathered on the way.
    fn render(
        &self,
        tool: &str,
        call: &Call,
        result: Result<Answer, EngineError>,
        mut refreshed: Vec<String>,
        mut notes: Vec<String>,
    ) -> CallToolResult {
        match result {
            Ok(Answer {
                mut env,
                text,
                says_what_was_cut,
            }) => {
                refreshed.sort();
                refreshed.dedup();
                // A branch switch refreshes thousands of files: name the first ones.
                if refreshed.len() > tools::LIST_CAP {
                    notes.push(format!(
                        "refreshed {} files from disk before answering; `freshness.refreshed` lists the first {}",
                        refreshed.len(),
                        tools::LIST_CAP
                    ));
                    refreshed.truncate(tools::LIST_CAP);
                }
                env.freshness.refreshed = refreshed;
                env.capability.notes.extend(notes);
                let answer = Answer {
                    env,
                    text,
                    says_what_was_cut,
                };
                render::tool_result(tool, answer, call.cursor(), self.inner.options.page_bytes)
                    .unwrap_or_else(|e| argument_error(tool, e))
            }
            Err(e) => engine_error(tool, e),
        }
    }
}

/// Counts a tool call's worker in [`Inner::calls_running`] until dropped (a panic too).
struct Running(Arc<Inner>);

impl Running {
    fn start(inner: &Arc<Inner>) -> Running {
        inner.calls_running.fetch_add(1, Ordering::AcqRel);
        Running(inner.clone())
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.0.calls_running.fetch_sub(1, Ordering::AcqRel);
    }
}

/// An incremental scan; returns the paths it added, modified, deleted or renamed (both
/// paths). A failure is
/// never fatal: it becomes a capability note on the answer (the map may be stale).
fn refresh(state: &mut State, notes: &mut Vec<String>) -> Vec<String> {
    let started = Instant::now();
    match state.ws().and_then(|ws| ws.scan(&|_| {})) {
        Ok(env) => {
            state.last_refresh = Some(Instant::now());
            let r = env.result;
            let mut paths: Vec<String> = r.added;
            paths.extend(r.modified);
            paths.extend(r.deleted);
            paths.extend(r.renamed.into_iter().flat_map(|m| [m.from, m.to]));
            tracing::debug!(
                changed = paths.len(),
                ms = started.elapsed().as_millis() as u64,
                "refresh"
            );
            paths
        }
        Err(e) => {
            tracing::warn!(error = %e, "refresh failed");
            notes.push(format!(
                "could not refresh the map from disk ({e}); the answer may be stale"
            ));
            Vec::new()
        }
    }
}

/// Maps an engine error to a tool result with `isError: true` whose text says what went
/// wrong and what to do, and whose structured content says `kind` and whether a retry
/// can succeed (MCP 2025-11-25: argument and domain errors are tool execution errors, so
/// that the model sees them; only protocol faults are JSON-RPC errors).
pub fn engine_error(tool: &str, e: EngineError) -> CallToolResult {
    let (kind, retryable, message) = match e {
        EngineError::InvalidArgument { name, message } => {
            return argument_error(tool, tools::invalid_argument(&name, &message));
        }
        EngineError::NotFound(message) => ("not_found", false, not_found_hint(tool, message)),
        EngineError::Unscanned(message) => ("unscanned", false, message),
        // Only a client that withdrew the call could read this; rmcp drops it.
        EngineError::Cancelled => (
            "cancelled",
            true,
            "the call was cancelled before it finished (its client cancelled it or went away); nothing was changed".to_string(),
        ),
        EngineError::Store(s) if s.is_busy() => (
            "busy",
            true,
            format!(
                "the database is busy (another loci process is writing); nothing was changed, retry the call: {s}"
            ),
        ),
        EngineError::Store(StoreError::Conflict(message)) => ("conflict", false, message),
        // The kind the CLI's JSON names too (`corrupt`, `newer_schema`, `read_only`, `io`,
        // ...), not `error` for every kind, so that an agent can tell a damaged store from
        // a bug.
        other => {
            tracing::warn!(tool, error = %other, "tool failed");
            (other.kind(), false, other.to_string())
        }
    };
    error_result(kind, retryable, message, None)
}

/// An argument the call cannot use, as a tool result with `isError: true`: the message
/// names the argument and ends with what to do (fix it and call `tool` again).
pub fn argument_error(tool: &str, e: ArgumentError) -> CallToolResult {
    let message = format!(
        "{}; fix {} and call `{tool}` again",
        as_tools_say(&e.message),
        if e.argument.is_empty() {
            "the arguments".to_string()
        } else {
            format!("`{}`", e.argument)
        }
    );
    error_result("invalid_argument", false, message, Some(&e.argument))
}

/// The engine's messages name CLI commands where a tool does the same; say the tool.
fn as_tools_say(message: &str) -> String {
    message.replace("`loci session begin`", "`session_begin`")
}

/// A `not_found` message with what to do where the engine's message does not say it.
fn not_found_hint(tool: &str, message: String) -> String {
    match tool {
        "session_end" if message.starts_with("no session ") => format!(
            "{message}; pass the `session_id` that `session_begin` returned (`recap` lists recent sessions)"
        ),
        _ => as_tools_say(&message),
    }
}

/// A tool-level error result: text `KIND: MESSAGE`, structured content `{error: {kind,
/// message, retryable, argument?}}` (the `error` branch of every tool's output schema).
pub fn error_result(
    kind: &str,
    retryable: bool,
    message: String,
    argument: Option<&str>,
) -> CallToolResult {
    let mut r = CallToolResult::error(vec![ContentBlock::text(format!("{kind}: {message}"))]);
    let mut error = json!({ "kind": kind, "message": message, "retryable": retryable });
    if let Some(a) = argument.filter(|a| !a.is_empty()) {
        error["argument"] = json!(a);
    }
    r.structured_content = Some(json!({ "error": error }));
    r
}

/// The author of writes that name none: `$LOCI_AUTHOR`, else `agent:<client name>`.
fn default_author(context: &RequestContext<RoleServer>) -> Option<String> {
    if let Ok(a) = std::env::var("LOCI_AUTHOR")
        && !a.trim().is_empty()
    {
        return Some(a);
    }
    context
        .peer
        .peer_info()
        .map(|info| info.client_info.name.trim().to_string())
        .filter(|n| !n.is_empty())
        .map(|n| format!("agent:{n}"))
}

impl ServerHandler for LociServer {
    fn get_info(&self) -> ServerConfig {
        let mut implementation = Implementation::new("loci", env!("CARGO_PKG_VERSION"));
        implementation.title = Some("loci".into());
        implementation.description =
            Some("A live, verified memory of a codebase: structural map and authored memory with provenance.".into());
        // An agent reads the instructions first: a store that cannot be opened is said
        // there too, not only by the first tool call.
        let refused = self
            .inner
            .refused
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .map(|r| {
                format!(
                    "\nNOW: loci cannot open its store ({}: {}); every tool answers this error until it is fixed.",
                    r.error.kind(),
                    r.error
                )
            })
            .unwrap_or_default();
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(implementation)
            .with_instructions(format!("{INSTRUCTIONS}{refused}"))
    }

    /// Answers the session's `initialize`; a second one is an error (`-32600`), as
    /// `initialize` "MUST be the first interaction" and happens once (MCP lifecycle).
    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        if self.initialized.swap(true, Ordering::AcqRel) {
            return Err(ErrorData::invalid_request(
                "the session is already initialized: `initialize` is sent once, first; to start \
                 over, open a new session (a new process over stdio, a POST without \
                 `Mcp-Session-Id` over HTTP)",
                None,
            ));
        }
        context.peer.set_peer_info(request.clone());
        self.negotiate_initialize(&request)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.inner.tools.clone()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.inner.tools.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        let call = match tools::parse(&name, request.arguments) {
            Ok(call) => call,
            Err(ParseError::UnknownTool(e)) => return Err(e),
            Err(ParseError::Argument(e)) => return Ok(argument_error(&name, e).into()),
        };
        let author = default_author(&context);
        let server = self.clone();
        let tool = name.clone();
        // One mechanism stops work: a `CancelFlag` the worker polls (see `execute`). rmcp
        // cancels `context.ct` on `notifications/cancelled` for this request and when the
        // session ends (stdio: stdin closed, see `stdio::serve`); the flag is raised then,
        // and the worker is still awaited, so that its reader or the writer is back in
        // the pool before the call ends. Abandoning the worker instead would answer at
        // once but leave it busy, holding a core and a connection, for as long as the
        // operation takes.
        let cancel = CancelFlag::new();
        let flag = cancel.clone();
        let running = Running::start(&self.inner);
        // A client that sent a progress token hears `notifications/progress` as the call
        // advances, in order (each is sent before the work goes on).
        let notify = context.meta.get_progress_token().map(|token| {
            (
                token,
                context.peer.clone(),
                tokio::runtime::Handle::current(),
            )
        });
        let mut worker = tokio::task::spawn_blocking(move || {
            let _running = running;
            let progress = |p: Progress| {
                if let Some((token, peer, runtime)) = &notify {
                    let param = ProgressNotificationParam::new(token.clone(), p.done as f64)
                        .with_total(p.total as f64)
                        .with_message(p.message);
                    if let Err(e) = runtime.block_on(peer.notify_progress(param)) {
                        tracing::debug!(error = %e, "progress notification not sent");
                    }
                }
            };
            server.execute(&tool, &call, author.as_deref(), &progress, &flag)
        });
        let joined = tokio::select! {
            joined = &mut worker => joined,
            () = context.ct.cancelled() => {
                tracing::info!(tool = %name, "call cancelled; stopping its worker");
                cancel.cancel();
                worker.await
            }
        };
        match joined {
            Ok(result) => Ok(result.into()),
            Err(e) => {
                // A panic in the engine: answer this request, keep the server up.
                tracing::error!(tool = %name, error = %e, "tool panicked");
                Ok(error_result(
                    "internal",
                    false,
                    format!("internal error in `{name}`: {e}; the server is still running"),
                    None,
                )
                .into())
            }
        }
    }
}
