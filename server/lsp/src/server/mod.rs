//! The `LanguageServer` implementation: the server's state, the guards that keep it up,
//! its capabilities and the protocol's entry points, which call the handlers of
//! [`lifecycle`], [`documents`], [`requests`] and [`execute`].
//!
//! Ordering: notifications apply their edits before any await (style.md rule 4), and a
//! request reads the document before its first await, so it answers for exactly the changes
//! sent before it, even while later changes are being applied and analysed in the
//! background.
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

mod documents;
mod execute;
mod lifecycle;
mod requests;

use execute::answers_dir;

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
        // Applied synchronously, before any await (style.md rule 4).
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
