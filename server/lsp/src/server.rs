//! The `LanguageServer` implementation: lifecycle, document sync, the overlay, hover,
//! document symbols, code lenses, code actions and commands.
//!
//! Ordering: notifications apply their edits before any await (style.md rule 4), and a
//! request reads the document before its first await, so it answers for exactly the
//! changes sent before it (case B03), even while later changes are being applied and
//! analysed in the background.
//!
//! Never down: request handlers run under [`guard`], which turns a panic into a `-32603`
//! error response; notification handlers log it; blocking work (parsing, SQLite) runs in
//! `spawn_blocking` and a panic there is a `JoinError` turned into the same. The server
//! keeps serving either way.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::atomic::Ordering;
use std::sync::{Arc, LazyLock, Mutex, OnceLock, RwLock};
use std::time::{Duration, Instant};

use dashmap::DashMap;
use futures::FutureExt;
use loci_core::{AnalyzeOptions, FileAnalysis, Language};
use loci_engine::SecretRules;
use loci_engine::memory::synthesis::Targets;
use loci_engine::{Envelope, Workspace};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::task::JoinError;
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::notification::Notification;
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{Client, LanguageServer};

use crate::commands::{self, Args};
use crate::document::{self, Document, Location, Overlay, Snapshot};
use crate::findings;
use crate::position::Encoding;
use crate::proto::{self, Source, View, ViewSymbol};
use crate::roots::{Behind, Failure, Root, behind_message};
use crate::{InitializationOptions, ServerOptions};

/// `$/loci/analyzed`: sent after each analysis of an open document when
/// `initializationOptions.analyzedNotifications` is on.
pub enum Analyzed {}

/// Parameters of `$/loci/analyzed`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AnalyzedParams {
    /// The document.
    pub uri: Uri,
    /// The version analysed.
    pub version: i32,
    /// Symbols found.
    pub symbols: usize,
    /// Parse plus extraction time in microseconds.
    pub micros: u64,
    /// Why the analysis is incomplete, if it is.
    pub degraded: Option<String>,
}

impl Notification for Analyzed {
    type Params = AnalyzedParams;
    const METHOD: &'static str = "$/loci/analyzed";
}

/// `$/loci/pagesBehind`: sent after every sync the server runs (on its own when `HEAD`
/// moves, or for `loci.sync`), after a synthesis run, and at start when pages are behind:
/// how many pages are behind the code, for a status line. The editors' plugins show it;
/// other clients get a `window/showMessage` instead when the server shows results.
pub enum PagesBehind {}

/// Parameters of `$/loci/pagesBehind`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct PagesBehindParams {
    /// The workspace root.
    pub root: Uri,
    /// The commit `HEAD` is at (full hex); `null` outside git.
    pub head: Option<String>,
    /// How many pages are behind the code.
    pub count: u64,
    /// Their subjects (files and folders), stale pages first, then roll-ups.
    pub pages: Vec<String>,
    /// "3 pages behind the code" (or "1 page …", "no page …").
    pub message: String,
}

impl Notification for PagesBehind {
    type Params = PagesBehindParams;
    const METHOD: &'static str = "$/loci/pagesBehind";
}

/// The loci language server.
pub struct Backend {
    inner: Arc<Inner>,
}

/// What the client told us in `initialize`.
#[derive(Debug, Default)]
struct Session {
    encoding: Encoding,
    init: InitializationOptions,
    hierarchical_symbols: bool,
    work_done_progress: bool,
    dynamic_watchers: bool,
    /// The client's watchers take `{baseUri, pattern}` (LSP 3.17 relative patterns).
    relative_watchers: bool,
    code_lens_refresh: bool,
    /// The client supports `window/showDocument`.
    show_document: bool,
}

static DEFAULT_SESSION: LazyLock<Session> = LazyLock::new(Session::default);

/// The secret rules of documents outside every root (single-file mode).
static DEFAULT_SECRETS: LazyLock<Arc<SecretRules>> = LazyLock::new(Default::default);

struct Inner {
    client: Client,
    options: ServerOptions,
    docs: DashMap<Uri, Document>,
    roots: RwLock<Vec<Arc<Root>>>,
    session: OnceLock<Session>,
    /// Messages decided in `initialize`, shown in `initialized` (notifications before the
    /// `initialize` response are not allowed).
    startup_messages: Mutex<Vec<(MessageType, String)>>,
    /// Woken whenever an analysis stores an overlay or an analysis task ends: requests
    /// wait for the running analysis instead of parsing the same version twice.
    analysed: tokio::sync::Notify,
    /// Where the editor's cursor was last seen (a hover, a code action, an edit, an
    /// open): what a command run without its target takes (`commands::Cursor`). The one
    /// piece of request state kept in the server: Helix's command picker sends no
    /// argument at all, so there is nothing else to read it from.
    cursor: Mutex<Option<(Uri, Position)>>,
    /// Numbers the answers shown through `window/showDocument` (each is a new file: an
    /// editor does not reload a document it already shows).
    shown: std::sync::atomic::AtomicU64,
}

impl Backend {
    /// A server talking to `client`.
    pub fn new(client: Client, options: ServerOptions) -> Backend {
        Backend {
            inner: Arc::new(Inner {
                client,
                options,
                docs: DashMap::new(),
                roots: RwLock::new(Vec::new()),
                session: OnceLock::new(),
                startup_messages: Mutex::new(Vec::new()),
                analysed: tokio::sync::Notify::new(),
                cursor: Mutex::new(None),
                shown: std::sync::atomic::AtomicU64::new(0),
            }),
        }
    }
}

/// Runs a request handler body; a panic becomes `-32603` with its message.
async fn guard<T>(what: &str, body: impl Future<Output = Result<T>>) -> Result<T> {
    match AssertUnwindSafe(body).catch_unwind().await {
        Ok(result) => result,
        Err(panic) => {
            let message = panic_message(panic.as_ref());
            tracing::error!("{what} panicked: {message}");
            Err(commands::internal(format!(
                "{what} failed: internal error: {message}"
            )))
        }
    }
}

/// Runs a notification handler body; a panic is logged. Returns whether it panicked.
async fn guard_notification(what: &str, body: impl Future<Output = ()>) -> bool {
    match AssertUnwindSafe(body).catch_unwind().await {
        Ok(()) => false,
        Err(panic) => {
            tracing::error!("{what} panicked: {}", panic_message(panic.as_ref()));
            true
        }
    }
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic".into()
    }
}

/// A `spawn_blocking` failure in words (a panic's message, or cancellation).
pub(crate) fn join_error(e: JoinError) -> String {
    if e.is_panic() {
        panic_message(e.into_panic().as_ref())
    } else {
        "cancelled".into()
    }
}

/// Runs `f` on a blocking thread; a panic becomes `-32603`.
async fn blocking<T: Send + 'static>(
    what: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T> {
    tokio::task::spawn_blocking(f).await.map_err(|e| {
        commands::internal(format!("{what} failed: internal error: {}", join_error(e)))
    })
}

impl Inner {
    fn session(&self) -> &Session {
        self.session.get().unwrap_or(&DEFAULT_SESSION)
    }

    fn encoding(&self) -> Encoding {
        self.session().encoding
    }

    fn roots(&self) -> Vec<Arc<Root>> {
        self.roots
            .read()
            .map(|r| r.clone())
            .unwrap_or_else(|p| p.into_inner().clone())
    }

    fn root_paths(&self) -> Vec<PathBuf> {
        self.roots().iter().map(|r| r.path.clone()).collect()
    }

    /// Where `uri` lives: the open document's location, else computed from the roots.
    fn location_of(&self, uri: &Uri) -> Location {
        match self.docs.get(uri) {
            Some(doc) => doc.location.clone(),
            None => document::locate(uri, &self.root_paths()),
        }
    }

    /// The secret rules for a document: its root's, else the defaults.
    fn secret_rules(&self, location: &Location) -> Arc<SecretRules> {
        self.root_of(location)
            .map(|r| r.secrets.clone())
            .unwrap_or_else(|| DEFAULT_SECRETS.clone())
    }

    fn root_of(&self, location: &Location) -> Option<Arc<Root>> {
        let path = location.root.as_ref()?;
        self.roots().into_iter().find(|r| &r.path == path)
    }

    /// The root containing `path`, longest first.
    fn root_containing(&self, path: &Path) -> Option<Arc<Root>> {
        let canonical = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        self.roots()
            .into_iter()
            .filter(|r| canonical.starts_with(&r.path) || path.starts_with(&r.path))
            .max_by_key(|r| r.path.as_os_str().len())
    }

    async fn log(&self, level: MessageType, message: String) {
        self.client.log_message(level, message).await;
    }

    // ---- lifecycle ----------------------------------------------------------------

    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        let offered = params
            .capabilities
            .general
            .as_ref()
            .and_then(|g| g.position_encodings.as_deref());
        let (encoding, announced) = crate::position::negotiate(offered);
        let mut messages = Vec::new();
        let init = match params.initialization_options {
            // Lua's `{}` is encoded as an empty array (issue 33, item 7).
            None | Some(Value::Null) => InitializationOptions::default(),
            Some(Value::Array(a)) if a.is_empty() => InitializationOptions::default(),
            Some(value) => match serde_json::from_value(value) {
                Ok(init) => init,
                Err(e) => {
                    messages.push((
                        MessageType::WARNING,
                        format!("loci: ignoring initializationOptions: {e}"),
                    ));
                    InitializationOptions::default()
                }
            },
        };
        let caps = &params.capabilities;
        let session = Session {
            encoding,
            hierarchical_symbols: caps
                .text_document
                .as_ref()
                .and_then(|t| t.document_symbol.as_ref())
                .and_then(|d| d.hierarchical_document_symbol_support)
                .unwrap_or(false),
            work_done_progress: caps
                .window
                .as_ref()
                .and_then(|w| w.work_done_progress)
                .unwrap_or(false),
            dynamic_watchers: caps
                .workspace
                .as_ref()
                .and_then(|w| w.did_change_watched_files.as_ref())
                .and_then(|d| d.dynamic_registration)
                .unwrap_or(false),
            relative_watchers: caps
                .workspace
                .as_ref()
                .and_then(|w| w.did_change_watched_files.as_ref())
                .and_then(|d| d.relative_pattern_support)
                .unwrap_or(false),
            code_lens_refresh: caps
                .workspace
                .as_ref()
                .and_then(|w| w.code_lens.as_ref())
                .and_then(|c| c.refresh_support)
                .unwrap_or(false),
            show_document: caps
                .window
                .as_ref()
                .and_then(|w| w.show_document.as_ref())
                .is_some_and(|s| s.support),
            init,
        };

        // Roots: workspace folders, else rootUri, else rootPath; none is single-file mode
        // (case B10a: never walk the current directory instead).
        #[allow(deprecated)]
        let folders: Vec<PathBuf> = match &params.workspace_folders {
            Some(folders) if !folders.is_empty() => folders
                .iter()
                .filter_map(|f| document::file_path(&f.uri))
                .collect(),
            _ => match (&params.root_uri, &params.root_path) {
                (Some(uri), _) => document::file_path(uri).into_iter().collect(),
                (None, Some(path)) if !path.is_empty() => vec![PathBuf::from(path)],
                _ => Vec::new(),
            },
        };
        let mut roots = Vec::new();
        for folder in folders {
            if !folder.is_dir() {
                messages.push((
                    MessageType::WARNING,
                    format!(
                        "loci: workspace folder {} is not a directory; ignoring it",
                        folder.display()
                    ),
                ));
                continue;
            }
            let root = self
                .open_root(&folder, &session.init, &mut messages)
                .await?;
            roots.push(root);
        }
        if roots.is_empty() {
            messages.push((
                MessageType::LOG,
                "loci: no workspace folder: single-file mode (open documents only, no map)".into(),
            ));
        }
        *self.roots.write().unwrap_or_else(|p| p.into_inner()) = roots;
        if let Ok(mut m) = self.startup_messages.lock() {
            m.extend(messages);
        }
        let _ = self.session.set(session);
        Ok(InitializeResult {
            capabilities: capabilities(announced),
            server_info: Some(ServerInfo {
                name: "loci".into(),
                version: Some(env!("CARGO_PKG_VERSION").into()),
            }),
            offset_encoding: None,
        })
    }

    /// Opens one root's store on a blocking thread, with the home-directory cap.
    async fn open_root(
        &self,
        folder: &Path,
        init: &InitializationOptions,
        messages: &mut Vec<(MessageType, String)>,
    ) -> Result<Arc<Root>> {
        let canonical = folder
            .canonicalize()
            .unwrap_or_else(|_| folder.to_path_buf());
        let is_home = self
            .options
            .home_dir
            .as_ref()
            .map(|h| h.canonicalize().unwrap_or_else(|_| h.clone()))
            .is_some_and(|h| h == canonical);
        let cap = init
            .max_files
            .or(is_home.then_some(self.options.home_max_files));
        if is_home {
            messages.push((
                MessageType::WARNING,
                format!(
                    "loci: the workspace folder {} is your home directory: indexing at most {} \
                     files. Open a project folder instead, or set initializationOptions.maxFiles.",
                    canonical.display(),
                    cap.unwrap_or(self.options.home_max_files)
                ),
            ));
        }
        let root = blocking("opening the store", move || {
            Arc::new(Root::open(&canonical, cap))
        })
        .await?;
        if let Some(error) = &root.error {
            messages.push((
                MessageType::ERROR,
                format!(
                    "loci: cannot open the store of {}: {error}; answering from open documents only",
                    root.path.display()
                ),
            ));
        }
        Ok(root)
    }

    async fn initialized(self: &Arc<Self>) {
        let messages = self
            .startup_messages
            .lock()
            .map(|mut m| std::mem::take(&mut *m))
            .unwrap_or_default();
        for (level, message) in messages {
            if level == MessageType::LOG || level == MessageType::INFO {
                self.client.log_message(level, message).await;
            } else {
                self.client.show_message(level, message).await;
            }
        }
        if self.session().dynamic_watchers {
            // Everything under the roots (their `.git/HEAD` and `.git/refs/heads/` among
            // it); a root whose git directories lie outside it (a linked worktree, a
            // separate git dir) gets them watched too, for the sync after a commit.
            let mut watchers = vec![json!({ "globPattern": "**/*" })];
            if self.session().relative_watchers {
                for root in self.roots() {
                    let Some((git_dir, common_dir)) = root.git_dirs() else {
                        continue;
                    };
                    for (dir, pattern) in [
                        (git_dir, "HEAD"),
                        (common_dir, "{refs/heads/**,packed-refs}"),
                    ] {
                        if dir.starts_with(&root.path) {
                            continue;
                        }
                        if let Some(base) = Uri::from_file_path(&dir) {
                            watchers.push(
                                json!({ "globPattern": { "baseUri": base, "pattern": pattern } }),
                            );
                        }
                    }
                }
            }
            let registration = Registration {
                id: "loci-watched-files".into(),
                method: "workspace/didChangeWatchedFiles".into(),
                register_options: Some(json!({ "watchers": watchers })),
            };
            if let Err(e) = self.client.register_capability(vec![registration]).await {
                tracing::warn!("the client refused the file watcher registration: {e}");
            }
        }
        if self.session().init.scan {
            for root in self.roots() {
                self.request_scan(&root);
            }
        }
        for root in self.roots() {
            self.start_team_listener(&root);
        }
        // Commits made while no editor was open: HEAD is not where the last sync left it.
        for root in self.roots() {
            if root.head_moved() {
                self.request_sync(&root);
            } else {
                let r = root.clone();
                if let Ok(Some(behind)) = blocking("reading the pages behind the code", move || {
                    r.recorded_behind()
                })
                .await
                    && behind.count > 0
                {
                    self.tell_behind(&root, &behind).await;
                }
            }
        }
    }

    /// Whether `HEAD` of the root of `location` moved (a commit, checkout, merge or pull
    /// made outside the editor): a few file reads ([`Root::head_moved`]); when it did, a
    /// sync runs in the background. For clients that do not watch files (Neovim on Linux):
    /// called on opens, saves and after each burst of changes.
    fn check_head(self: &Arc<Self>, location: &Location) {
        if let Some(root) = self.root_of(location)
            && root.head_moved()
        {
            self.request_sync(&root);
        }
    }

    /// A sync of `root` in the background (coalesced with a running one), then its count
    /// told to the editor ([`Inner::after_sync`]).
    fn request_sync(self: &Arc<Self>, root: &Arc<Root>) {
        let inner = self.clone();
        root.request_sync(
            self.client.clone(),
            self.session().work_done_progress,
            move |root, outcome| {
                let inner = inner.clone();
                async move { inner.after_sync(&root, outcome).await }
            },
        );
    }

    /// After a sync: open documents' findings and lenses again (the stale marks moved),
    /// then the count of pages behind the code told to the editor. A failed background
    /// sync is logged.
    async fn after_sync(
        self: &Arc<Self>,
        root: &Arc<Root>,
        outcome: std::result::Result<Behind, Failure>,
    ) {
        match outcome {
            Ok(behind) => {
                if behind.synced.is_some() {
                    self.after_scan(root).await;
                }
                self.tell_behind(root, &behind).await;
            }
            Err(e) => {
                tracing::warn!("{}: sync: {e}", root.path.display());
                self.log(
                    MessageType::WARNING,
                    format!(
                        "loci: {}: sync after HEAD moved failed: {e}",
                        root.path.display()
                    ),
                )
                .await;
            }
        }
    }

    /// Tells the editor how many pages are behind the code: `$/loci/pagesBehind` always,
    /// and when the server shows results itself (Helix, plain clients) and some are
    /// behind, a `window/showMessage` saying what to run.
    async fn tell_behind(&self, root: &Root, behind: &Behind) {
        let Some(uri) = Uri::from_file_path(&root.path) else {
            return;
        };
        let message = behind_message(behind.count);
        self.client
            .send_notification::<PagesBehind>(PagesBehindParams {
                root: uri,
                head: behind.head.clone(),
                count: behind.count,
                pages: behind.pages.clone(),
                message: message.clone(),
            })
            .await;
        if behind.count > 0 && self.shows_results() {
            let at = behind
                .head
                .as_deref()
                .map(|h| format!(" at {}", &h[..h.len().min(12)]))
                .unwrap_or_default();
            let them = if behind.count == 1 { "it" } else { "them" };
            self.client
                .show_message(
                    MessageType::INFO,
                    format!(
                        "loci: {message}{at} — run the command loci.synthesize to redraft \
                         {them} (loci.sync lists {them})"
                    ),
                )
                .await;
        }
    }

    /// A background scan of `root`, then a refresh of its open documents' diagnostics.
    fn request_scan(self: &Arc<Self>, root: &Arc<Root>) {
        let inner = self.clone();
        root.request_scan(
            self.client.clone(),
            self.session().work_done_progress,
            move |root| {
                let inner = inner.clone();
                async move { inner.after_scan(&root).await }
            },
        );
    }

    /// Team memory (issue 34): for a root whose store is team-backed, a thread keeps a
    /// connection that `LISTEN`s for the team server's events; each is pulled into the
    /// store at once and the root's open documents get their findings and lenses again,
    /// as after a scan, so a colleague's write shows here within a second or two. The
    /// thread ends with the server.
    fn start_team_listener(self: &Arc<Self>, root: &Arc<Root>) {
        /// How often a lost connection to the team server is tried again.
        const TEAM_RETRY: Duration = Duration::from_secs(5);
        let weak = Arc::downgrade(self);
        let root = root.clone();
        let handle = tokio::runtime::Handle::current();
        let spawned = std::thread::Builder::new()
            .name("loci-team".into())
            .spawn(move || {
                if !root.workspace().is_some_and(|w| w.team_configured()) {
                    return;
                }
                let path = root.path.clone();
                loci_engine::memory::team::listen_at(&path, None, TEAM_RETRY, |pulled| {
                    let Some(inner) = weak.upgrade() else {
                        return false;
                    };
                    if pulled > 0 {
                        let root = root.clone();
                        handle.spawn(async move { inner.after_scan(&root).await });
                    }
                    true
                });
            });
        if let Err(e) = spawned {
            tracing::warn!("the team listener did not start: {e}");
        }
    }

    async fn after_scan(self: &Arc<Self>, root: &Arc<Root>) {
        let uris: Vec<Uri> = self
            .docs
            .iter()
            .filter(|d| d.location.root.as_ref() == Some(&root.path))
            .map(|d| d.key().clone())
            .collect();
        for uri in uris {
            let current = self
                .docs
                .get(&uri)
                .map(|d| (d.current_overlay(), d.location.clone()));
            match current {
                Some((Some(overlay), location)) => {
                    self.publish_findings(&uri, &overlay, &location).await
                }
                Some((None, _)) => self.schedule_analysis(&uri),
                None => {}
            }
        }
        if self.session().code_lens_refresh {
            let _ = self.client.code_lens_refresh().await;
        }
    }

    // ---- documents ----------------------------------------------------------------

    fn open(self: &Arc<Self>, params: DidOpenTextDocumentParams) {
        let item = params.text_document;
        let location = document::locate(&item.uri, &self.root_paths());
        let doc = Document::new(location.clone(), &item.language_id, item.text, item.version);
        self.docs.insert(item.uri.clone(), doc);
        self.set_cursor(&item.uri, Position::new(0, 0));
        self.schedule_analysis(&item.uri);
        self.check_head(&location);
    }

    /// Applies a `didChange` synchronously (style.md rule 4). Returns false when the
    /// document is not open (the change is dropped, case B09).
    fn change(self: &Arc<Self>, params: DidChangeTextDocumentParams) -> bool {
        let uri = params.text_document.uri;
        let encoding = self.encoding();
        {
            let Some(mut doc) = self.docs.get_mut(&uri) else {
                return false;
            };
            if let Some(range) = params.content_changes.last().and_then(|c| c.range) {
                self.set_cursor(&uri, range.start);
            }
            for change in params.content_changes {
                doc.apply(change, encoding);
            }
            doc.version = params.text_document.version;
        }
        self.schedule_analysis(&uri);
        true
    }

    /// Shares the analysed text of a code document with agents through the store, or
    /// stops when it matches the disk ([`Workspace::share_unsaved`]); never a secret's.
    /// Off the async threads: writes of one document may land out of order, and the next
    /// analysis writes the newest.
    fn share_unsaved(&self, location: &Location, overlay: &Arc<Overlay>) {
        if overlay.secret.is_some() || findings::is_markdown(&location.key_path) {
            return;
        }
        let Some(root) = self.root_of(location) else {
            return;
        };
        let (path, version, text) = (
            location.key_path.clone(),
            i64::from(overlay.version),
            overlay.text.clone(),
        );
        tokio::task::spawn_blocking(move || {
            if let Some(mut ws) = root.workspace()
                && let Err(e) = ws.share_unsaved(&path, version, &text)
            {
                tracing::warn!("sharing the unsaved buffer of {path}: {e}");
            }
        });
    }

    /// [`Self::stop_sharing_unsaved`] for one document, off the async threads (a busy
    /// store waits there, not in the notification).
    fn stop_sharing_unsaved_later(self: &Arc<Self>, location: Location) {
        let inner = self.clone();
        tokio::task::spawn_blocking(move || inner.stop_sharing_unsaved(Some(&location)));
    }

    /// Stops sharing `location`'s buffer (saved or closed), or with `None` every buffer
    /// of this server in every root.
    fn stop_sharing_unsaved(&self, location: Option<&Location>) {
        let (roots, path) = match location {
            Some(l) => (
                self.root_of(l).into_iter().collect(),
                Some(l.key_path.clone()),
            ),
            None => (self.roots(), None),
        };
        for root in roots {
            if let Some(mut ws) = root.workspace()
                && let Err(e) = ws.stop_sharing_unsaved(path.as_deref())
            {
                tracing::warn!("dropping shared unsaved buffers: {e}");
            }
        }
    }

    async fn close(self: &Arc<Self>, params: DidCloseTextDocumentParams) {
        let uri = params.text_document.uri;
        if let Some(doc) = self.docs.get(&uri) {
            let location = doc.location.clone();
            drop(doc);
            self.stop_sharing_unsaved_later(location);
        }
        // Cleared whenever anything was published: the client may have dropped the last
        // (empty) publish as out of date and still show an older set.
        if let Some((_, doc)) = self.docs.remove(&uri)
            && doc.published_version.is_some()
        {
            self.client.publish_diagnostics(uri, Vec::new(), None).await;
        }
    }

    /// Starts the analysis task of `uri` unless one runs (it then runs once more).
    fn schedule_analysis(self: &Arc<Self>, uri: &Uri) {
        let start = match self.docs.get_mut(uri) {
            Some(mut doc) => {
                if doc.analysis_running {
                    doc.analysis_pending = true;
                    false
                } else {
                    doc.analysis_running = true;
                    doc.analysis_pending = false;
                    true
                }
            }
            None => false,
        };
        if start {
            let inner = self.clone();
            let uri = uri.clone();
            tokio::spawn(async move {
                let panicked =
                    guard_notification("analysis", inner.clone().analysis_loop(uri.clone())).await;
                // A panic left the flag set: clear it so later changes analyse again.
                if panicked && let Some(mut doc) = inner.docs.get_mut(&uri) {
                    doc.analysis_running = false;
                }
            });
        }
    }

    async fn analysis_loop(self: Arc<Self>, uri: Uri) {
        let debounce = self.session().init.debounce_ms;
        loop {
            if debounce > 0 {
                tokio::time::sleep(Duration::from_millis(debounce)).await;
            }
            let (snapshot, location, keys_before) = {
                let Some(mut doc) = self.docs.get_mut(&uri) else {
                    return;
                };
                doc.analysis_pending = false;
                let before = doc.overlay.clone();
                (doc.snapshot(), doc.location.clone(), before)
            };
            match self.analyse(&uri, snapshot).await {
                Ok(overlay) => {
                    self.publish_findings(&uri, &overlay, &location).await;
                    self.share_unsaved(&location, &overlay);
                    if !findings::is_markdown(&location.key_path)
                        && keys_before.is_none_or(|b| symbol_keys(&b) != symbol_keys(&overlay))
                    {
                        self.republish_markdown(&location).await;
                    }
                    if self.session().init.analyzed_notifications {
                        self.client
                            .send_notification::<Analyzed>(AnalyzedParams {
                                uri: uri.clone(),
                                version: overlay.version,
                                symbols: overlay.analysis.symbols.len(),
                                micros: overlay.micros,
                                degraded: overlay
                                    .analysis
                                    .degraded
                                    .as_ref()
                                    .map(proto::degraded_reason),
                            })
                            .await;
                    }
                }
                Err(e) => tracing::error!("analysing {}: {e}", uri.as_str()),
            }
            let again = match self.docs.get_mut(&uri) {
                Some(mut doc) => {
                    if doc.analysis_pending {
                        true
                    } else {
                        doc.analysis_running = false;
                        false
                    }
                }
                None => false,
            };
            if !again {
                self.analysed.notify_waiters();
                // Once per burst of changes: did a commit move HEAD meanwhile?
                self.check_head(&location);
                return;
            }
        }
    }

    /// Parses (incrementally, from the snapshot's edited tree) and extracts one version on
    /// a blocking thread; stores the overlay and tree when the document is still at it.
    async fn analyse(
        &self,
        uri: &Uri,
        snapshot: Snapshot,
    ) -> std::result::Result<Arc<Overlay>, String> {
        let options = AnalyzeOptions {
            timeout_ms: self.session().init.parse_timeout_ms,
            ..AnalyzeOptions::default()
        };
        let secrets = self.secret_rules(&self.location_of(uri));
        let (tree, overlay) =
            tokio::task::spawn_blocking(move || analyse_snapshot(snapshot, &options, &secrets))
                .await
                .map_err(join_error)?;
        let overlay = Arc::new(overlay);
        if let Some(mut doc) = self.docs.get_mut(uri)
            && doc.location.key_path == overlay.key_path
        {
            // The tree only when it is the document's current text (older trees lack
            // the edits since); the overlay whenever it is the newest analysed, so requests
            // waiting for this version find it.
            if doc.version == overlay.version && tree.is_some() {
                doc.tree = tree;
            }
            if doc
                .overlay
                .as_ref()
                .is_none_or(|o| o.version <= overlay.version || o.key_path != overlay.key_path)
            {
                doc.overlay = Some(overlay.clone());
            }
        }
        self.analysed.notify_waiters();
        Ok(overlay)
    }

    /// The overlay of the document as it is now, when the request arrives: requests see
    /// every change sent before them and none sent after (snapshot semantics). The stored
    /// overlay when it is for this version, else the one the running analysis task
    /// produces for it (waited for, up to the parse time limit), else one analysed now
    /// from a snapshot taken before any await. `None` when the document is not open.
    async fn current_overlay(
        &self,
        uri: &Uri,
    ) -> Option<(Arc<Overlay>, Location, Option<Language>)> {
        // Everything up to the first await runs before later notifications are applied.
        let (snapshot, running, location, language) = {
            let doc = self.docs.get(uri)?;
            if let Some(overlay) = doc.current_overlay() {
                return Some((overlay, doc.location.clone(), doc.language));
            }
            (
                doc.snapshot(),
                doc.analysis_running,
                doc.location.clone(),
                doc.language,
            )
        };
        let version = snapshot.version;
        if running {
            let wait_limit = Duration::from_millis(self.session().init.parse_timeout_ms + 500);
            let deadline = tokio::time::Instant::now() + wait_limit;
            loop {
                let notified = self.analysed.notified();
                tokio::pin!(notified);
                // Registered before the check, so a store between the check and the wait
                // wakes us.
                notified.as_mut().enable();
                let (latest, still_running) = {
                    let doc = self.docs.get(uri)?;
                    (
                        doc.overlay
                            .clone()
                            .filter(|o| o.key_path == location.key_path),
                        doc.analysis_running,
                    )
                };
                match latest {
                    Some(o) if o.version == version => return Some((o, location, language)),
                    // The task moved past this version (coalesced it): analyse it here.
                    Some(o) if o.version > version => break,
                    _ => {}
                }
                if !still_running || tokio::time::timeout_at(deadline, notified).await.is_err() {
                    break;
                }
            }
        }
        let overlay = self.analyse(uri, snapshot).await.ok()?;
        Some((overlay, location, language))
    }

    /// Computes the document's findings and publishes them for its current version (see
    /// the rule inside).
    async fn publish_findings(&self, uri: &Uri, overlay: &Arc<Overlay>, location: &Location) {
        let root = self.root_of(location);
        let encoding = self.encoding();
        let severities = self.session().init.severities();
        let o = overlay.clone();
        let key_path = location.key_path.clone();
        // A markdown document's claims are checked against the open code documents'
        // unsaved definitions too.
        let open = if findings::is_markdown(&key_path) {
            self.open_code_overlays(location)
        } else {
            Vec::new()
        };
        let diagnostics = blocking("computing findings", move || {
            if o.secret.is_some() {
                return Vec::new();
            }
            let ws = root.as_ref().and_then(|r| r.workspace());
            let open: Vec<(&str, &str, &[loci_core::Symbol])> = open
                .iter()
                .map(|o| (o.key_path.as_str(), &*o.text, o.analysis.symbols.as_slice()))
                .collect();
            findings::findings_for_document(
                ws.as_deref(),
                &key_path,
                &o.text,
                &o.analysis.symbols,
                &open,
                &severities,
            )
            .iter()
            .map(|f| proto::diagnostic(f, &o.text, &o.index, encoding))
            .collect::<Vec<_>>()
        })
        .await;
        let diagnostics = match diagnostics {
            Ok(d) => d,
            Err(e) => {
                tracing::error!("{}", e.message);
                return;
            }
        };
        // Rule: publish for the document's current version only (an older analysis is
        // superseded by the one the change scheduled), and whenever the diagnostics differ
        // from the last publish or that publish carried an older version. A client may drop
        // a publish older than its document (Helix: "Version (2) is out of date ...
        // dropping"), and it cannot tell us: a burst of typing that ends with the same
        // diagnostics as it began would otherwise leave the client with none (issue 33,
        // item 1). Before the first publish the client holds nothing, so an empty set is
        // not sent.
        let changed = match self.docs.get_mut(uri) {
            Some(mut doc)
                if doc.version == overlay.version
                    && (doc.published != diagnostics
                        || doc.published_version.is_some_and(|v| v != overlay.version)) =>
            {
                doc.published = diagnostics.clone();
                doc.published_version = Some(overlay.version);
                true
            }
            _ => false,
        };
        if changed {
            self.client
                .publish_diagnostics(uri.clone(), diagnostics, Some(overlay.version))
                .await;
            // The lenses count what the diagnostics report, from the same overlay: a
            // client asks for them again only when told (a lens had said "0 stale" over a
            // function the diagnostic called stale).
            if self.session().code_lens_refresh {
                let _ = self.client.code_lens_refresh().await;
            }
        }
    }

    /// The overlay `view` was built from, when it was (not the map's view of a file that
    /// is not open, nor of a degraded analysis).
    fn view_overlay(&self, uri: &Uri, view: &View) -> Option<Arc<Overlay>> {
        if view.source == Source::Map {
            return None;
        }
        self.docs
            .get(uri)
            .and_then(|d| d.current_overlay())
            .filter(|o| o.secret.is_none() && *o.text == *view.text)
    }

    /// The newest overlays of the open code documents (not markdown, not secret) of the
    /// root holding `location`.
    fn open_code_overlays(&self, location: &Location) -> Vec<Arc<Overlay>> {
        let Some(root) = location.root.as_ref() else {
            return Vec::new();
        };
        self.docs
            .iter()
            .filter(|d| d.location.root.as_ref() == Some(root))
            .filter(|d| !findings::is_markdown(&d.location.key_path))
            // The newest analysed, even while a later change is being analysed: that
            // analysis publishes the markdown again only if the definitions change.
            .filter_map(|d| {
                d.overlay
                    .clone()
                    .filter(|o| o.key_path == d.location.key_path)
            })
            .filter(|o| o.secret.is_none())
            .collect()
    }

    /// Publishes the findings of the open markdown documents of the root holding
    /// `location` again: a code document's definitions changed, and what their claims
    /// name may have been deleted or renamed in it (or defined again).
    async fn republish_markdown(&self, location: &Location) {
        let Some(root) = location.root.as_ref() else {
            return;
        };
        let docs: Vec<(Uri, Arc<Overlay>, Location)> = self
            .docs
            .iter()
            .filter(|d| d.location.root.as_ref() == Some(root))
            .filter(|d| findings::is_markdown(&d.location.key_path))
            .filter_map(|d| Some((d.key().clone(), d.current_overlay()?, d.location.clone())))
            .collect();
        for (uri, overlay, location) in docs {
            self.publish_findings(&uri, &overlay, &location).await;
        }
    }

    // ---- views ----------------------------------------------------------------------

    /// What the document holds: the overlay when it is open (falling back to the map's
    /// symbols, checked against the buffer, when the overlay could not be built), else the
    /// map's symbols positioned on the file on disk.
    async fn view(&self, uri: &Uri) -> Option<View> {
        if let Some((overlay, location, language)) = self.current_overlay(uri).await {
            if let Some(reason) = &overlay.secret {
                tracing::debug!("{}: not served: {reason}", uri.as_str());
                return None;
            }
            let name = language.map(Language::name);
            let view = View::from_analysis(
                overlay.text.clone(),
                overlay.index.clone(),
                &overlay.analysis,
                name,
            );
            if overlay.analysis.degraded.is_some()
                && let Some(root) = self.root_of(&location)
            {
                let key_path = location.key_path.clone();
                let symbols = blocking("reading the map", move || {
                    root.workspace()
                        .and_then(|ws| ws.file_symbols(&key_path).ok())
                        .map(|env| env.result)
                        .unwrap_or_default()
                })
                .await
                .unwrap_or_default();
                if !symbols.is_empty() {
                    let mut map_view =
                        View::from_map(overlay.text.clone(), overlay.index.clone(), &symbols, name);
                    map_view.degraded = view.degraded;
                    return Some(map_view);
                }
            }
            return Some(view);
        }
        // Not open: the map, positioned on the file as it is on disk.
        let path = document::file_path(uri)?;
        let root = self.root_containing(&path)?;
        let location = document::locate(uri, std::slice::from_ref(&root.path));
        let language = Language::from_path(&location.key_path).map(Language::name);
        // Read through the engine: not through links out of the root, never a secret.
        let key_path = location.key_path.clone();
        let r = root.clone();
        let text = blocking("reading the file", move || {
            r.workspace().and_then(|ws| ws.read_served(&key_path))
        })
        .await
        .ok()??;
        let key_path = location.key_path.clone();
        let r = root.clone();
        let (symbols, stale) = blocking("reading the map", move || {
            r.workspace()
                .and_then(|ws| ws.file_symbols(&key_path).ok())
                .map(|env| (env.result, !env.stale_warnings.is_empty()))
                .unwrap_or_default()
        })
        .await
        .ok()?;
        let symbols = if stale {
            // Refresh on read (case B25): the file changed since it was scanned.
            if let Err(e) = root
                .scan(&self.client, self.session().work_done_progress)
                .await
            {
                tracing::warn!("{e}");
            }
            let key_path = location.key_path.clone();
            let r = root.clone();
            blocking("reading the map", move || {
                r.workspace()
                    .and_then(|ws| ws.file_symbols(&key_path).ok())
                    .map(|env| env.result)
                    .unwrap_or_default()
            })
            .await
            .ok()?
        } else {
            symbols
        };
        let text: Arc<str> = Arc::from(text);
        let index = crate::position::LineIndex::new(&text);
        Some(View::from_map(text, index, &symbols, language))
    }

    // ---- requests -------------------------------------------------------------------

    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        let uri = params.text_document_position_params.text_document.uri;
        let position = params.text_document_position_params.position;
        self.set_cursor(&uri, position);
        let encoding = self.encoding();
        let Some(view) = self.view(&uri).await else {
            return Ok(None);
        };
        // A line past the end is no position at all (case B08 c): null, not a clamp.
        let Some(offset) = view.index.offset_checked(&view.text, position, encoding) else {
            return Ok(None);
        };
        // On a claim in a markdown document: the truth about it.
        if uri.path().as_str().ends_with(".md") || uri.path().as_str().ends_with(".markdown") {
            let claim = loci_core::claims::extract_claims(&view.text)
                .into_iter()
                .find(|c| c.start <= offset && offset < c.end);
            let Some(claim) = claim else {
                return Ok(None);
            };
            let root = self
                .docs
                .get(&uri)
                .and_then(|d| self.root_of(&d.location))
                .or_else(|| document::file_path(&uri).and_then(|p| self.root_containing(&p)));
            let span = (claim.start, claim.end);
            let truth = blocking("hover", move || {
                let root = root?;
                let ws = root.workspace()?;
                Some(
                    ws.explain_claim(&claim)
                        .unwrap_or_else(|e| format!("loci: {e}")),
                )
            })
            .await?;
            return Ok(truth.map(|value| Hover {
                contents: HoverContents::Markup(MarkupContent {
                    kind: MarkupKind::Markdown,
                    value,
                }),
                range: Some(view.range(span, encoding)),
            }));
        }
        let (symbol, range) = match view.symbol_named_at(offset) {
            Some(i) => (
                HoverSymbol::Here(view.symbols[i].clone()),
                view.symbols[i].name_span,
            ),
            None => match view.ref_at(offset) {
                Some(r) => match view.symbols.iter().find(|s| s.name == r.name) {
                    Some(s) => (HoverSymbol::Here(s.clone()), r.span),
                    None => (HoverSymbol::Elsewhere(r.name.clone()), r.span),
                },
                None => return Ok(None),
            },
        };
        let root = self
            .docs
            .get(&uri)
            .and_then(|d| self.root_of(&d.location))
            .or_else(|| document::file_path(&uri).and_then(|p| self.root_containing(&p)));
        let scanning = root
            .as_ref()
            .is_some_and(|r| !r.scanned.load(Ordering::SeqCst) && r.scanning());
        let has_root = root.is_some();
        let overlay = self.view_overlay(&uri, &view);
        let facts = blocking("hover", move || map_facts(root.as_deref(), symbol, overlay)).await?;
        let Some(facts) = facts else {
            return Ok(None);
        };
        let markdown = hover_markdown(&view, &facts, has_root, scanning);
        Ok(Some(Hover {
            contents: HoverContents::Markup(MarkupContent {
                kind: MarkupKind::Markdown,
                value: markdown,
            }),
            range: Some(view.range(range, encoding)),
        }))
    }

    async fn document_symbol(
        &self,
        params: DocumentSymbolParams,
    ) -> Result<Option<DocumentSymbolResponse>> {
        let uri = params.text_document.uri;
        let encoding = self.encoding();
        let Some(view) = self.view(&uri).await else {
            return Ok(None);
        };
        if self.session().hierarchical_symbols {
            return Ok(Some(DocumentSymbolResponse::Nested(
                view.document_symbols(encoding),
            )));
        }
        #[allow(deprecated)]
        let flat = view
            .symbols
            .iter()
            .map(|s| SymbolInformation {
                name: s.name.clone(),
                kind: proto::symbol_kind(s.kind),
                tags: None,
                deprecated: None,
                location: tower_lsp_server::ls_types::Location {
                    uri: uri.clone(),
                    range: view.range(s.span, encoding),
                },
                container_name: s
                    .parent
                    .and_then(|p| view.symbols.get(p))
                    .map(|p| p.name.clone()),
            })
            .collect();
        Ok(Some(DocumentSymbolResponse::Flat(flat)))
    }

    async fn code_lens(&self, params: CodeLensParams) -> Result<Option<Vec<CodeLens>>> {
        let uri = params.text_document.uri;
        let encoding = self.encoding();
        let Some(view) = self.view(&uri).await else {
            return Ok(None);
        };
        let location = self.location_of(&uri);
        let Some(root) = self.root_of(&location) else {
            return Ok(Some(Vec::new()));
        };
        let overlay = self.view_overlay(&uri, &view);
        let key_path = location.key_path.clone();
        let memory = blocking("code lens", move || {
            let ws = root.workspace();
            let live = overlay
                .as_ref()
                .map(|o| (&*o.text, o.analysis.symbols.as_slice()));
            findings::memory_for_document(ws.as_deref(), &key_path, live, false)
        })
        .await?;
        let lenses = view
            .symbols
            .iter()
            .filter_map(|s| {
                let m = memory.get(&s.key)?;
                let range = view.range(s.name_span, encoding);
                // Everything resolve needs travels in `data` (style.md rule 8).
                Some(CodeLens {
                    range,
                    command: None,
                    data: Some(json!({
                        "uri": uri.as_str(),
                        "key": s.key,
                        "target": format!("{}:{}", location.key_path, range.start.line + 1),
                        "memories": m.memories,
                        "stale": m.stale,
                        "false": m.false_claims,
                    })),
                })
            })
            .collect();
        Ok(Some(lenses))
    }

    async fn code_lens_resolve(&self, mut lens: CodeLens) -> Result<CodeLens> {
        let data = lens.data.clone().unwrap_or(Value::Null);
        let Some(key) = data.get("key").and_then(Value::as_str).map(str::to_string) else {
            return Err(commands::invalid(
                "codeLens/resolve: missing argument `data.key` (the symbol key)".into(),
            ));
        };
        let uri = data.get("uri").and_then(Value::as_str).map(str::to_string);
        let counts = match (
            data.get("memories").and_then(Value::as_u64),
            data.get("stale").and_then(Value::as_u64),
        ) {
            (Some(memories), Some(stale)) => Some((
                memories,
                stale,
                data.get("false").and_then(Value::as_u64).unwrap_or(0),
            )),
            _ => {
                // No counts in `data` (another client built the lens): ask the map.
                let root = uri
                    .as_deref()
                    .and_then(|u| Uri::from_str(u).ok())
                    .and_then(|u| document::file_path(&u))
                    .and_then(|p| self.root_containing(&p));
                let k = key.clone();
                blocking("code lens", move || {
                    let ws = root.as_ref().and_then(|r| r.workspace());
                    let path = k.split('#').next().unwrap_or_default();
                    findings::memory_for_document(ws.as_deref(), path, None, false)
                        .get(&k)
                        .map(|m| {
                            (
                                u64::from(m.memories),
                                u64::from(m.stale),
                                u64::from(m.false_claims),
                            )
                        })
                })
                .await?
            }
        };
        let title = match counts {
            Some((memories, stale, false_claims)) => {
                let mut title = format!(
                    "{memories} {} · {stale} stale",
                    if memories == 1 { "memory" } else { "memories" }
                );
                if false_claims > 0 {
                    title.push_str(&format!(" · {false_claims} false"));
                }
                title
            }
            None => "no memory".into(),
        };
        let target = data
            .get("target")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| key.clone());
        let mut argument = json!({ "target": target });
        if let Some(uri) = uri {
            argument["uri"] = Value::String(uri);
        }
        lens.command = Some(Command {
            title,
            command: "loci.why".into(),
            arguments: Some(vec![argument]),
        });
        Ok(lens)
    }

    async fn code_action(&self, params: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        let uri = params.text_document.uri;
        self.set_cursor(&uri, params.range.start);
        let mut actions: CodeActionResponse = Vec::new();
        // Follow-ups of loci's own diagnostics: everything needed is in `data`.
        for diagnostic in &params.context.diagnostics {
            if diagnostic.source.as_deref() != Some("loci") {
                continue;
            }
            if let Some((title, new_text)) = proto::diagnostic_replacement(diagnostic) {
                let edit = TextEdit {
                    range: diagnostic.range,
                    new_text,
                };
                actions.push(CodeActionOrCommand::CodeAction(CodeAction {
                    title,
                    kind: Some(CodeActionKind::QUICKFIX),
                    diagnostics: Some(vec![diagnostic.clone()]),
                    edit: Some(WorkspaceEdit {
                        changes: Some([(uri.clone(), vec![edit])].into_iter().collect()),
                        ..WorkspaceEdit::default()
                    }),
                    is_preferred: Some(true),
                    ..CodeAction::default()
                }));
            }
            for (title, command, arguments) in proto::diagnostic_actions(diagnostic) {
                actions.push(CodeActionOrCommand::CodeAction(CodeAction {
                    title: title.clone(),
                    kind: Some(CodeActionKind::QUICKFIX),
                    diagnostics: Some(vec![diagnostic.clone()]),
                    command: Some(Command {
                        title,
                        command,
                        arguments: Some(vec![arguments]),
                    }),
                    ..CodeAction::default()
                }));
            }
        }
        // On a symbol's name: its impact.
        if let Some(view) = self.view(&uri).await
            && let Some(offset) =
                view.index
                    .offset_checked(&view.text, params.range.start, self.encoding())
            && let Some(i) = view.symbol_named_at(offset)
        {
            let s = &view.symbols[i];
            let title = format!("loci: impact of `{}`", s.qualified_name);
            actions.push(CodeActionOrCommand::CodeAction(CodeAction {
                title: title.clone(),
                kind: Some(CodeActionKind::new("source.loci")),
                command: Some(Command {
                    title,
                    command: "loci.impact".into(),
                    arguments: Some(vec![json!({ "target": s.key, "uri": uri.as_str() })]),
                }),
                ..CodeAction::default()
            }));
        }
        Ok(Some(actions))
    }

    // ---- commands -------------------------------------------------------------------

    /// Runs a command; a command run without the keys that say where takes them from the
    /// cursor ([`commands::Cursor`]). When the server shows results (`showResults`), the
    /// answer or the error is shown too ([`Inner::show_result`]).
    async fn execute_command(
        self: &Arc<Self>,
        params: ExecuteCommandParams,
    ) -> Result<Option<Value>> {
        let debug = self.session().init.debug_commands;
        let cursor = if commands::wants_cursor(&params.command, &params.arguments) {
            self.cursor().await
        } else {
            None
        };
        let result =
            match commands::parse(&params.command, &params.arguments, debug, cursor.as_ref()) {
                Ok(args) => self.run_command(&args).await,
                Err(e) => Err(e),
            };
        if self.shows_results() {
            let inner = self.clone();
            let command = params.command.clone();
            let shown = result.clone();
            // After the response: the client answers `window/showDocument` meanwhile.
            tokio::spawn(async move { inner.show_result(&command, shown).await });
        }
        result
    }

    /// Whether the server shows command answers itself: `showResults`, else whether the
    /// client supports `window/showDocument`.
    fn shows_results(&self) -> bool {
        let session = self.session();
        session.init.show_results.unwrap_or(session.show_document)
    }

    /// Shows a command's outcome in the editor (issue 33, item 4): an error as an error
    /// message; a reading command's markdown as a document (`window/showDocument` of a
    /// file under the temporary directory) when the client can open one, else as a
    /// message; a write's first line as a message.
    async fn show_result(&self, command: &str, result: Result<Option<Value>>) {
        let value = match result {
            Err(e) => {
                self.client
                    .show_message(MessageType::ERROR, e.message.to_string())
                    .await;
                return;
            }
            Ok(Some(v)) => v,
            Ok(None) => return,
        };
        let Some(markdown) = value.get("markdown").and_then(Value::as_str) else {
            return;
        };
        let reading = matches!(
            command,
            "loci.why" | "loci.impact" | "loci.context" | "loci.recap" | "loci.scan"
        );
        if !reading {
            let first = markdown
                .lines()
                .next()
                .unwrap_or_default()
                .replace("**", "");
            self.client.show_message(MessageType::INFO, first).await;
            return;
        }
        if self.session().show_document {
            let n = self.shown.fetch_add(1, Ordering::SeqCst) + 1;
            let name = format!("{n:03}-{}.md", command.trim_start_matches("loci."));
            match write_answer(&name, markdown) {
                Ok(uri) => {
                    let params = ShowDocumentParams {
                        uri,
                        external: Some(false),
                        take_focus: Some(true),
                        selection: None,
                    };
                    match self.client.show_document(params).await {
                        Ok(true) => return,
                        Ok(false) => tracing::warn!("the client did not show {name}"),
                        Err(e) => tracing::warn!("window/showDocument of {name}: {e}"),
                    }
                }
                Err(e) => tracing::warn!("writing the answer {name}: {e}"),
            }
        }
        self.client
            .show_message(MessageType::INFO, markdown.to_string())
            .await;
    }

    /// Remembers where the editor's cursor is.
    fn set_cursor(&self, uri: &Uri, position: Position) {
        if let Ok(mut c) = self.cursor.lock() {
            *c = Some((uri.clone(), position));
        }
    }

    /// The cursor as last seen, in a workspace root: its file, line and the innermost
    /// definition around it. `None` before any, or outside every root.
    async fn cursor(&self) -> Option<commands::Cursor> {
        let (uri, position) = self.cursor.lock().ok()?.clone()?;
        let location = self.location_of(&uri);
        location.root.as_ref()?;
        let encoding = self.encoding();
        let symbol = self.view(&uri).await.and_then(|view| {
            let offset = view.index.offset_checked(&view.text, position, encoding)?;
            view.symbols
                .iter()
                .filter(|s| s.span.0 <= offset && offset <= s.span.1)
                .min_by_key(|s| s.span.1 - s.span.0)
                .map(|s| s.key.clone())
        });
        Some(commands::Cursor {
            uri: uri.as_str().to_string(),
            path: location.key_path,
            line: position.line + 1,
            symbol,
        })
    }

    async fn run_command(self: &Arc<Self>, args: &Args) -> Result<Option<Value>> {
        let debug = self.session().init.debug_commands;
        if !args.spec.available {
            return Err(commands::not_available(args.spec));
        }
        match args.spec.name {
            "loci.debug.text" => self.debug_text(args).map(Some),
            "loci.debug.panic" => panic!("loci.debug.panic was called"),
            "loci.impact" => self.impact(args).await.map(Some),
            "loci.scan" => self.scan_command(args).await.map(Some),
            "loci.synthesize" => self.synthesize_command(args).await.map(Some),
            "loci.sync" => self.sync_command(args).await.map(Some),
            "loci.why" => {
                let target = args.str("target").unwrap_or_default().to_string();
                self.engine_command(
                    args,
                    false,
                    move |ws| ws.why(&target),
                    commands::why_markdown,
                )
                .await
                .map(Some)
            }
            "loci.recap" => {
                let n = args.u64("n").unwrap_or(3).min(1_000) as u32;
                self.engine_command(args, false, move |ws| ws.recap(n), commands::recap_markdown)
                    .await
                    .map(Some)
            }
            "loci.remember" => {
                let subject = args.str("subject").unwrap_or_default().to_string();
                let body = args.str("body").unwrap_or_default().to_string();
                let opts = args.write_options();
                // A note is added to the page; replacing it is explicit (issue 33, item 6).
                let replace = args.bool("replace").unwrap_or(false);
                self.engine_command(
                    args,
                    true,
                    move |ws| {
                        if replace {
                            ws.remember(&subject, &body, &opts)
                        } else {
                            ws.remember_append(&subject, &body, &opts)
                        }
                    },
                    commands::written_markdown,
                )
                .await
                .map(Some)
            }
            "loci.decide" | "loci.learn" => {
                let decide = args.spec.name == "loci.decide";
                let text = args.str("text").unwrap_or_default().to_string();
                let subject = args.str("subject").map(str::to_string);
                let opts = args.write_options();
                self.engine_command(
                    args,
                    true,
                    move |ws| {
                        if decide {
                            ws.decide(&text, subject.as_deref(), &opts)
                        } else {
                            ws.learn(&text, subject.as_deref(), &opts)
                        }
                    },
                    commands::written_markdown,
                )
                .await
                .map(Some)
            }
            "loci.confirm" => {
                let subject = args.str("subject").unwrap_or_default().to_string();
                let opts = args.write_options();
                self.engine_command(
                    args,
                    true,
                    move |ws| ws.confirm(&subject, &opts),
                    commands::confirmed_markdown,
                )
                .await
                .map(Some)
            }
            "loci.context" => {
                let req = loci_engine::context::ContextRequest {
                    query: args.str("query").unwrap_or_default().to_string(),
                    open_files: args.strings("open_files"),
                    budget: args.u64("budget"),
                    floor: args.f64("floor"),
                };
                self.engine_command(
                    args,
                    false,
                    move |ws| ws.context(&req),
                    commands::context_markdown,
                )
                .await
                .map(Some)
            }
            "loci.resolve" => {
                let id = args.u64("contradiction").unwrap_or_default() as i64;
                let note = args.str("note").map(str::to_string);
                let session = args.u64("session").map(|s| s as i64);
                self.engine_command(
                    args,
                    true,
                    move |ws| ws.resolve(id, note.as_deref(), session),
                    commands::resolved_markdown,
                )
                .await
                .map(Some)
            }
            other => Err(commands::not_available(
                commands::spec(other, debug).unwrap_or(args.spec),
            )),
        }
    }

    fn debug_text(&self, args: &Args) -> Result<Value> {
        let raw = args.str("uri").unwrap_or_default();
        let uri = Uri::from_str(raw).map_err(|e| {
            commands::invalid(format!("loci.debug.text: invalid argument `uri`: {e}"))
        })?;
        let doc = self.docs.get(&uri).ok_or_else(|| {
            commands::error(
                commands::NOT_FOUND,
                format!("loci.debug.text: {raw} is not open"),
            )
        })?;
        let mut answer = json!({ "uri": raw, "version": doc.version, "text": doc.text });
        if args.bool("tree") == Some(true) {
            // The tree as last reparsed, edited since when changes arrived after that
            // parse; `null` before the first parse.
            answer["tree"] = json!(doc.tree.as_ref().map(document::tree_dump));
        }
        Ok(answer)
    }

    /// The root a command works on: `root`, else the root of `uri`, else the first root.
    fn command_root(&self, args: &Args) -> Result<Arc<Root>> {
        let name = args.spec.name;
        if let Some(root) = args.str("root") {
            let path = PathBuf::from(root);
            let canonical = path.canonicalize().unwrap_or(path);
            return self
                .roots()
                .into_iter()
                .find(|r| r.path == canonical)
                .ok_or_else(|| {
                    commands::invalid(format!(
                        "{name}: invalid argument `root`: {root} is not a workspace folder of this server"
                    ))
                });
        }
        if let Some(uri) = args.str("uri") {
            let parsed = Uri::from_str(uri)
                .map_err(|e| commands::invalid(format!("{name}: invalid argument `uri`: {e}")))?;
            return document::file_path(&parsed)
                .and_then(|p| self.root_containing(&p))
                .ok_or_else(|| {
                    commands::invalid(format!(
                        "{name}: invalid argument `uri`: {uri} is in no workspace folder of this server"
                    ))
                });
        }
        self.roots().into_iter().next().ok_or_else(|| {
            commands::error(
                commands::NO_WORKSPACE,
                format!("{name}: no workspace folder: the server runs in single-file mode"),
            )
        })
    }

    fn notes(root: &Root) -> Vec<String> {
        if !root.scanned.load(Ordering::SeqCst) && root.scanning() {
            vec!["language server: the initial scan is still running; the map is incomplete".into()]
        } else {
            Vec::new()
        }
    }

    async fn impact(&self, args: &Args) -> Result<Value> {
        let root = self.command_root(args)?;
        let target = args.str("target").unwrap_or_default().to_string();
        let depth = args.u64("depth").unwrap_or(3).min(u64::from(u32::MAX)) as u32;
        let hard = args.bool("hard").unwrap_or(false);
        let min_confidence = args
            .f64("min_confidence")
            .unwrap_or(loci_engine::map::MIN_CONFIDENCE);
        let limit = args
            .u64("limit")
            .map_or(loci_engine::map::IMPACT_LIMIT, |l| {
                l.min(u64::from(u32::MAX)) as u32
            });
        let notes = Self::notes(&root);
        let r = root.clone();
        let env = blocking("loci.impact", move || match r.workspace() {
            Some(ws) => ws
                .impact_with(
                    &target,
                    depth,
                    loci_engine::map::Edges {
                        hard,
                        min_confidence,
                    },
                    limit,
                )
                .map_err(|e| commands::engine_error("loci.impact", ws.name_damage(e))),
            None => Err(r.unopened("loci.impact")),
        })
        .await??;
        Ok(commands::with_markdown(
            &env,
            commands::impact_markdown(&env),
            &notes,
        ))
    }

    /// Runs one engine operation on the command's root, on a blocking thread, and renders
    /// its envelope. After a write (`writes`), open documents' diagnostics and code lenses
    /// are refreshed.
    async fn engine_command<T, F>(
        self: &Arc<Self>,
        args: &Args,
        writes: bool,
        op: F,
        markdown: fn(&Envelope<T>) -> String,
    ) -> Result<Value>
    where
        T: Serialize + Send + 'static,
        F: FnOnce(&mut Workspace) -> loci_engine::Result<Envelope<T>> + Send + 'static,
    {
        let name = args.spec.name;
        let root = self.command_root(args)?;
        let notes = Self::notes(&root);
        let r = root.clone();
        let env = blocking(name, move || match r.workspace() {
            Some(mut ws) => {
                op(&mut ws).map_err(|e| commands::engine_error(name, ws.name_damage(e)))
            }
            None => Err(r.unopened(name)),
        })
        .await??;
        if writes {
            self.after_scan(&root).await;
        }
        Ok(commands::with_markdown(&env, markdown(&env), &notes))
    }

    async fn scan_command(self: &Arc<Self>, args: &Args) -> Result<Value> {
        let root = self.command_root(args)?;
        let env = root
            .scan(&self.client, self.session().work_done_progress)
            .await
            .map_err(|e| e.to_error("loci.scan"))?;
        self.after_scan(&root).await;
        let markdown = commands::scan_markdown(&root.path.display().to_string(), &env);
        Ok(commands::with_markdown(&env, markdown, &[]))
    }

    /// `loci.sync`: a sync on a connection of its own with `$/progress` (as after a
    /// commit), or with `limit` as `loci sync --limit` on the query connection; then the
    /// count of pages behind the code told to the editor.
    async fn sync_command(self: &Arc<Self>, args: &Args) -> Result<Value> {
        if let Some(limit) = args.u64("limit").map(|n| n as usize) {
            return self
                .engine_command(
                    args,
                    true,
                    move |ws| ws.sync(Some(limit)),
                    |env| commands::text_markdown("Sync", env, loci_engine::text::sync),
                )
                .await;
        }
        let root = self.command_root(args)?;
        let notes = Self::notes(&root);
        let behind = root
            .sync(&self.client, self.session().work_done_progress, true)
            .await
            .map_err(|e| e.to_error("loci.sync"))?;
        let env = behind
            .synced
            .clone()
            .ok_or_else(|| commands::internal("loci.sync: the sync did not run".into()))?;
        self.after_sync(&root, Ok(behind)).await;
        Ok(commands::with_markdown(
            &env,
            commands::text_markdown("Sync", &env, loci_engine::text::sync),
            &notes,
        ))
    }

    /// `loci.synthesize`: a dry run answers the prompts; a run writes pages with
    /// `$/progress` per page, then republishes the open documents' findings.
    async fn synthesize_command(self: &Arc<Self>, args: &Args) -> Result<Value> {
        let paths = args.strings("paths");
        let targets = if paths.is_empty() {
            Targets::Pending
        } else {
            Targets::Paths(paths)
        };
        if args.bool("dry_run").unwrap_or(false) {
            return self
                .engine_command(
                    args,
                    false,
                    move |ws| ws.synthesis_prompts(&targets),
                    |env| {
                        commands::text_markdown(
                            "Prompts",
                            env,
                            loci_engine::text::synthesis_prompts,
                        )
                    },
                )
                .await;
        }
        let root = self.command_root(args)?;
        let session = args.u64("session").map(|s| s as i64);
        let env = root
            .synthesize(
                &self.client,
                self.session().work_done_progress,
                targets,
                session,
            )
            .await
            .map_err(|e| e.to_error("loci.synthesize"))?;
        self.after_scan(&root).await;
        // Pages written are no longer behind: the count the editor shows goes down.
        if env.result.runs.iter().any(|r| r.status == "written") {
            let r = root.clone();
            if let Ok(Some(behind)) = blocking("reading the pages behind the code", move || {
                r.recorded_behind()
            })
            .await
            {
                self.tell_behind(&root, &behind).await;
            }
        }
        let markdown =
            commands::text_markdown("Pages written", &env, loci_engine::text::synthesis_report);
        Ok(commands::with_markdown(&env, markdown, &[]))
    }

    // ---- outside edits --------------------------------------------------------------

    fn watched_files_changed(self: &Arc<Self>, params: DidChangeWatchedFilesParams) {
        let mut roots: Vec<Arc<Root>> = Vec::new();
        let mut heads: Vec<Arc<Root>> = Vec::new();
        for change in params.changes {
            let Some(path) = document::file_path(&change.uri) else {
                continue;
            };
            // loci's own database and git's internals change under every scan and commit;
            // of git's, `HEAD` and the branches say a commit, checkout, merge or pull
            // moved `HEAD`.
            if path.components().any(|c| c.as_os_str() == ".loci") {
                continue;
            }
            if path.components().any(|c| c.as_os_str() == ".git")
                || self.roots().iter().any(|r| {
                    r.git_dirs()
                        .is_some_and(|(g, c)| path.starts_with(&g) || path.starts_with(&c))
                })
            {
                if is_head_or_branch(&path) {
                    for root in self.roots() {
                        if !heads.iter().any(|r| Arc::ptr_eq(r, &root))
                            && root
                                .git_dirs()
                                .is_some_and(|(g, c)| path.starts_with(&g) || path.starts_with(&c))
                        {
                            heads.push(root);
                        }
                    }
                }
                continue;
            }
            if let Some(root) = self.root_containing(&path)
                && !roots.iter().any(|r| Arc::ptr_eq(r, &root))
            {
                roots.push(root);
            }
        }
        for root in roots {
            self.request_scan(&root);
        }
        for root in heads {
            if root.head_moved() {
                self.request_sync(&root);
            }
        }
    }

    async fn folders_changed(self: &Arc<Self>, params: DidChangeWorkspaceFoldersParams) {
        let removed: Vec<PathBuf> = params
            .event
            .removed
            .iter()
            .filter_map(|f| document::file_path(&f.uri))
            .map(|p| p.canonicalize().unwrap_or(p))
            .collect();
        if let Ok(mut roots) = self.roots.write() {
            roots.retain(|r| !removed.contains(&r.path));
        }
        let init = self.session().init.clone();
        let mut messages = Vec::new();
        let mut added = Vec::new();
        for folder in params.event.added {
            let Some(path) = document::file_path(&folder.uri).filter(|p| p.is_dir()) else {
                continue;
            };
            match self.open_root(&path, &init, &mut messages).await {
                Ok(root) => added.push(root),
                Err(e) => tracing::error!("{}", e.message),
            }
        }
        if let Ok(mut roots) = self.roots.write() {
            roots.extend(added.iter().cloned());
        }
        // Documents move between roots (or into single-file mode).
        let paths = self.root_paths();
        let mut moved = Vec::new();
        for mut doc in self.docs.iter_mut() {
            let location = document::locate(doc.key(), &paths);
            if location != doc.location {
                // Symbol keys embed the path: the overlay must be rebuilt.
                doc.location = location;
                doc.overlay = None;
                moved.push(doc.key().clone());
            }
        }
        for uri in moved {
            self.schedule_analysis(&uri);
        }
        if init.scan {
            for root in &added {
                self.request_scan(root);
            }
        }
        for (level, message) in messages {
            self.client.show_message(level, message).await;
        }
    }
}

/// Whether a changed file under a git directory says `HEAD` may have moved: `HEAD` itself,
/// a branch (`refs/heads/…`), or `packed-refs`.
fn is_head_or_branch(path: &Path) -> bool {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    if name == "HEAD" || name == "packed-refs" {
        return true;
    }
    let parts: Vec<&str> = path
        .components()
        .filter_map(|c| c.as_os_str().to_str())
        .collect();
    parts.windows(2).any(|w| w == ["refs", "heads"])
}

/// The keys of an overlay's definitions, in document order.
fn symbol_keys(overlay: &Overlay) -> Vec<&str> {
    overlay
        .analysis
        .symbols
        .iter()
        .map(|s| s.key.as_str())
        .collect()
}

/// What a hover is about.
enum HoverSymbol {
    /// A symbol of this document.
    Here(ViewSymbol),
    /// A name used here and defined elsewhere (looked up in the map).
    Elsewhere(String),
}

/// A hover's facts, gathered on a blocking thread.
struct HoverFacts {
    symbol: ViewSymbol,
    /// The file, when the symbol is in another file.
    path: Option<String>,
    /// Call sites in the map; `None` when the map does not have the symbol.
    callers: Option<usize>,
    memory: Option<findings::SymbolMemory>,
}

/// The facts of a hover on `symbol`; `overlay` is the document's when the view is built
/// from it (memory about its own symbols is judged against it).
fn map_facts(
    root: Option<&Root>,
    symbol: HoverSymbol,
    overlay: Option<Arc<Overlay>>,
) -> Option<HoverFacts> {
    let ws = root.and_then(|r| r.workspace());
    let (symbol, path, overlay) = match symbol {
        HoverSymbol::Here(s) => (s, None, overlay),
        HoverSymbol::Elsewhere(name) => {
            let hit = ws
                .as_ref()?
                .symbol(&name, 1)
                .ok()?
                .result
                .into_iter()
                .next()?;
            (
                ViewSymbol {
                    key: hit.key,
                    name: hit.name,
                    qualified_name: hit.qualified_name,
                    kind: loci_core::SymbolKind::parse(&hit.kind),
                    span: (0, 0),
                    name_span: (0, 0),
                    signature: hit.signature,
                    doc: hit.doc,
                    parent: None,
                },
                Some(hit.path),
                None,
            )
        }
    };
    let callers = ws.as_ref().and_then(|ws| {
        // One call listed; the rest counted.
        let env = ws.callers(&symbol.key, 1).ok()?;
        (!env.result.targets.is_empty()).then_some((env.limits.used + env.limits.omitted) as usize)
    });
    let key_path = symbol.key.split('#').next().unwrap_or_default();
    let live = overlay
        .as_ref()
        .map(|o| (&*o.text, o.analysis.symbols.as_slice()));
    let memory =
        findings::memory_for_document(ws.as_deref(), key_path, live, true).remove(&symbol.key);
    Some(HoverFacts {
        symbol,
        path,
        callers,
        memory,
    })
}

fn hover_markdown(view: &View, facts: &HoverFacts, has_root: bool, scanning: bool) -> String {
    let s = &facts.symbol;
    let mut md = format!("**{}** `{}`", s.kind.as_str(), s.qualified_name);
    if let Some(path) = &facts.path {
        md.push_str(&format!(" in `{path}`"));
    }
    if !s.signature.is_empty() {
        let fence = if s.signature.contains("```") {
            "````"
        } else {
            "```"
        };
        md.push_str(&format!(
            "\n\n{fence}{}\n{}\n{fence}",
            view.language.unwrap_or(""),
            s.signature
        ));
    }
    if let Some(doc) = s.doc.as_deref().filter(|d| !d.trim().is_empty()) {
        md.push_str(&format!("\n\n{doc}"));
    }
    md.push_str("\n\n---\n\n");
    let callers = match (has_root, facts.callers) {
        (false, _) => "callers unknown (single-file mode: no map)".to_string(),
        (true, Some(1)) => "1 caller".to_string(),
        (true, Some(n)) => format!("{n} callers"),
        (true, None) if scanning => "callers unknown yet (initial scan running)".to_string(),
        (true, None) => "not in the map yet (unsaved or not scanned)".to_string(),
    };
    md.push_str(&format!("{callers} · `{}`", s.key));
    if view.source == Source::Map && facts.path.is_none() {
        md.push_str("\n\n_from the map (the file as last scanned)_");
    }
    if let Some(reason) = &view.degraded {
        md.push_str(&format!("\n\n_analysis incomplete: {reason}_"));
    }
    if scanning && facts.callers.is_some() {
        md.push_str("\n\n_initial scan running: counts may grow_");
    }
    if let Some(memory) = &facts.memory {
        for line in &memory.hover_lines {
            md.push_str(&format!("\n\n{line}"));
        }
    }
    md
}

/// This process's folder of answers shown through `window/showDocument`: `loci-answers-PID`
/// under the temporary directory, removed at `shutdown`.
fn answers_dir() -> PathBuf {
    std::env::temp_dir().join(format!("loci-answers-{}", std::process::id()))
}

/// Writes a command's answer as `NAME` in this process's answer folder under the
/// temporary directory (`loci-answers-PID`, owner-only on Unix), for `window/showDocument`;
/// returns its URI. Outside every workspace, so nothing of it is scanned or committed.
fn write_answer(name: &str, markdown: &str) -> std::io::Result<Uri> {
    let dir = answers_dir();
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(&dir)?;
    let path = dir.join(name);
    std::fs::write(&path, markdown)?;
    Uri::from_file_path(&path)
        .ok_or_else(|| std::io::Error::other(format!("{} has no file URI", path.display())))
}

/// Documents up to this many bytes whose incremental reparse has errors are parsed again
/// from scratch (see `analyse_snapshot`). A fresh parse of 32 KiB of Python takes about
/// 2 ms here; of `typing.py` (110 KiB), 15 ms — the keystroke benchmark's p50 went from
/// 6 to 25 ms when every broken keystroke paid it.
const FRESH_REPARSE_MAX_BYTES: usize = 32 * 1024;

/// Parse (reusing the edited tree) and extract one snapshot. Runs on a blocking thread.
fn analyse_snapshot(
    snapshot: Snapshot,
    options: &AnalyzeOptions,
    secrets: &SecretRules,
) -> (Option<loci_core::tree_sitter::Tree>, Overlay) {
    let started = Instant::now();
    // A secret is not parsed at all (and so never reaches the overlay, hover or symbols).
    let secret = secrets.file_reason(&snapshot.key_path, Some(&snapshot.text));
    let (tree, analysis) = match snapshot.language {
        _ if secret.is_some() => (None, FileAnalysis::default()),
        None => (None, FileAnalysis::default()),
        Some(language) => {
            let (mut tree, mut degraded) = loci_core::analyze::parse(
                language,
                &snapshot.text,
                snapshot.tree.as_ref(),
                options,
            );
            // Error recovery depends on which subtrees an incremental parse reuses: on
            // broken code, the reparsed tree can differ from a fresh parse of the same
            // text (fault found by tests/tests/it/edit_fuzz.rs: a Python `:` annotation
            // recovered as `ERROR` after an empty edit). A tree with errors is parsed
            // again from scratch, so what loci serves for a text never depends on the
            // edits that led to it; error-free trees keep the incremental parse. Only up
            // to [`FRESH_REPARSE_MAX_BYTES`]: almost every keystroke leaves code broken,
            // and a full parse of a large module on each would blow the keystroke budget.
            if snapshot.tree.is_some()
                && snapshot.text.len() <= FRESH_REPARSE_MAX_BYTES
                && tree.as_ref().is_some_and(|t| t.root_node().has_error())
            {
                (tree, degraded) =
                    loci_core::analyze::parse(language, &snapshot.text, None, options);
            }
            let analysis = match &tree {
                Some(tree) => loci_core::analyze::extract(
                    &snapshot.key_path,
                    language,
                    &snapshot.text,
                    tree,
                    options,
                ),
                None => FileAnalysis {
                    degraded,
                    ..FileAnalysis::default()
                },
            };
            (tree, analysis)
        }
    };
    let overlay = Overlay {
        version: snapshot.version,
        key_path: snapshot.key_path,
        text: snapshot.text,
        index: snapshot.index,
        analysis,
        micros: started.elapsed().as_micros() as u64,
        secret,
    };
    (tree, overlay)
}

/// What the server can do (the `initialize` answer).
fn capabilities(position_encoding: Option<PositionEncodingKind>) -> ServerCapabilities {
    ServerCapabilities {
        position_encoding,
        text_document_sync: Some(TextDocumentSyncCapability::Options(
            TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(TextDocumentSyncKind::INCREMENTAL),
                will_save: None,
                will_save_wait_until: None,
                save: Some(TextDocumentSyncSaveOptions::Supported(true)),
            },
        )),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        document_symbol_provider: Some(OneOf::Left(true)),
        code_lens_provider: Some(CodeLensOptions {
            resolve_provider: Some(true),
        }),
        code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
            code_action_kinds: Some(vec![
                CodeActionKind::QUICKFIX,
                CodeActionKind::new("source.loci"),
            ]),
            work_done_progress_options: WorkDoneProgressOptions::default(),
            resolve_provider: Some(false),
        })),
        execute_command_provider: Some(ExecuteCommandOptions {
            commands: commands::COMMANDS
                .iter()
                .map(|c| c.name.to_string())
                .collect(),
            work_done_progress_options: WorkDoneProgressOptions::default(),
        }),
        workspace: Some(WorkspaceServerCapabilities {
            workspace_folders: Some(WorkspaceFoldersServerCapabilities {
                supported: Some(true),
                change_notifications: Some(OneOf::Left(true)),
            }),
            file_operations: None,
        }),
        experimental: Some(json!({
            "loci": {
                // Requests are answered while the initial scan runs, from the open
                // documents' overlay and whatever the map already holds.
                "backgroundScan": true,
                "overlay": true,
                "analyzedNotification": "$/loci/analyzed",
                "pagesBehindNotification": "$/loci/pagesBehind",
            }
        })),
        ..ServerCapabilities::default()
    }
}

impl LanguageServer for Backend {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        guard("initialize", self.inner.initialize(params)).await
    }

    async fn initialized(&self, _: InitializedParams) {
        let _ = guard_notification("initialized", self.inner.initialized()).await;
    }

    async fn shutdown(&self) -> Result<()> {
        self.inner.stop_sharing_unsaved(None);
        // The answers shown through `window/showDocument` go with the session.
        if self.inner.shown.load(Ordering::SeqCst) > 0 {
            let _ = std::fs::remove_dir_all(answers_dir());
        }
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        let inner = &self.inner;
        if let Err(panic) = std::panic::catch_unwind(AssertUnwindSafe(|| inner.open(params))) {
            tracing::error!("didOpen panicked: {}", panic_message(panic.as_ref()));
        }
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        // Applied synchronously, before any await (style.md rule 4, case B03).
        let uri = params.text_document.uri.clone();
        let version = params.text_document.version;
        let inner = &self.inner;
        match std::panic::catch_unwind(AssertUnwindSafe(|| inner.change(params))) {
            Ok(true) => {}
            Ok(false) => {
                let message = format!(
                    "loci: dropped didChange for {} (version {version}): the document is not open",
                    uri.as_str()
                );
                tracing::warn!("{message}");
                inner.log(MessageType::WARNING, message).await;
            }
            Err(panic) => tracing::error!("didChange panicked: {}", panic_message(panic.as_ref())),
        }
    }

    async fn did_save(&self, params: DidSaveTextDocumentParams) {
        let saved = self
            .inner
            .docs
            .get(&params.text_document.uri)
            .map(|d| d.location.clone());
        if let Some(location) = saved {
            self.inner.stop_sharing_unsaved_later(location);
        }
        let root = document::file_path(&params.text_document.uri)
            .and_then(|p| self.inner.root_containing(&p));
        if let Some(root) = root {
            self.inner.request_scan(&root);
            if root.head_moved() {
                self.inner.request_sync(&root);
            }
        }
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        let _ = guard_notification("didClose", self.inner.close(params)).await;
    }

    async fn did_change_watched_files(&self, params: DidChangeWatchedFilesParams) {
        let inner = &self.inner;
        if let Err(panic) =
            std::panic::catch_unwind(AssertUnwindSafe(|| inner.watched_files_changed(params)))
        {
            tracing::error!(
                "didChangeWatchedFiles panicked: {}",
                panic_message(panic.as_ref())
            );
        }
    }

    async fn did_change_workspace_folders(&self, params: DidChangeWorkspaceFoldersParams) {
        let _ = guard_notification(
            "didChangeWorkspaceFolders",
            self.inner.folders_changed(params),
        )
        .await;
    }

    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        guard("hover", self.inner.hover(params)).await
    }

    async fn document_symbol(
        &self,
        params: DocumentSymbolParams,
    ) -> Result<Option<DocumentSymbolResponse>> {
        guard("documentSymbol", self.inner.document_symbol(params)).await
    }

    async fn code_lens(&self, params: CodeLensParams) -> Result<Option<Vec<CodeLens>>> {
        guard("codeLens", self.inner.code_lens(params)).await
    }

    async fn code_lens_resolve(&self, params: CodeLens) -> Result<CodeLens> {
        guard("codeLens/resolve", self.inner.code_lens_resolve(params)).await
    }

    async fn code_action(&self, params: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        guard("codeAction", self.inner.code_action(params)).await
    }

    async fn execute_command(&self, params: ExecuteCommandParams) -> Result<Option<Value>> {
        let what = format!("workspace/executeCommand {}", params.command);
        guard(&what, self.inner.execute_command(params)).await
    }
}
