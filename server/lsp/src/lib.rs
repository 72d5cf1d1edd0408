//! loci's language server (`loci lsp`): incremental document sync into an in-memory
//! overlay of the open documents' symbols, hover, document symbols, code lenses and code
//! actions fed by the map and (through [`findings`]) by memory and its audit, and
//! `workspace/executeCommand` for loci's operations.
//!
//! Architecture invariant: this is the only crate that knows LSP types. Everything it
//! answers comes from `loci_core` (parsing the open buffers) and `loci_engine` (the map,
//! memory); positions are converted in one module ([`position`]).
//!
//! Module map:
//! - [`position`]: byte offsets ↔ `(line, character)` in UTF-8/16/32.
//! - [`document`]: open documents, edits applied in order, incremental reparse.
//! - [`findings`]: plug points for memory and audit (diagnostics, lens counts, hover lines).
//! - [`languages`]: each editor's names for the languages loci parses (`languageId`).
//! - [`commands`]: `workspace/executeCommand` arguments, dispatch and markdown rendering.
//! - [`transport`]: framing and JSON-RPC message checks in front of tower-lsp-server.
//! - `server`: the `LanguageServer` implementation; `roots`: workspace roots and scans.

pub mod commands;
pub mod document;
pub mod findings;
pub mod languages;
pub mod position;
mod proto;
mod roots;
mod server;
pub mod transport;

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tower_lsp_server::{ClientSocket, LspService};

pub use server::Backend;

/// Files walked at most when a workspace root is the user's home directory.
pub const HOME_MAX_FILES: u64 = 20_000;

/// Settings of one server process that do not come from the client.
#[derive(Clone, Debug)]
pub struct ServerOptions {
    /// The user's home directory (default `$HOME`): a workspace root equal to it gets a
    /// bounded walk and a message saying so.
    pub home_dir: Option<PathBuf>,
    /// Files walked at most in a home directory. Default [`HOME_MAX_FILES`].
    pub home_max_files: u64,
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            home_dir: std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(PathBuf::from),
            home_max_files: HOME_MAX_FILES,
        }
    }
}

/// The client's `initializationOptions`, all optional (camelCase keys). Unknown keys are
/// rejected with a warning and the defaults used. `Serialize` gives the defaults as the
/// client sees them: editors' settings are checked against it
/// (`server/cli/tests/it/editors_vscode.rs`, style.md rule 11).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default, rename_all = "camelCase", deny_unknown_fields)]
pub struct InitializationOptions {
    /// Cap on files walked per workspace root (overrides `.loci/config.toml`'s
    /// `scan.max_files` and the home-directory cap).
    pub max_files: Option<u64>,
    /// Scan every workspace root after `initialized`. Default true.
    pub scan: bool,
    /// Parse limit for open documents, in milliseconds of parse work (as the scan's
    /// `parse_timeout_ms`: [`loci_core::AnalyzeOptions::timeout_ms`]). Default 1,000.
    pub parse_timeout_ms: u64,
    /// Wait this many milliseconds after a change before analysing (changes arriving
    /// meanwhile are coalesced; they always are while an analysis runs). Default 0.
    pub debounce_ms: u64,
    /// Send a `$/loci/analyzed` notification (`{uri, version, symbols, micros}`) after each
    /// analysis of an open document: for tests and the latency benchmark. Default false.
    pub analyzed_notifications: bool,
    /// Enable `loci.debug.panic` (a command that panics, to test that the server
    /// survives). Default false.
    pub debug_commands: bool,
    /// Severity of a diagnostic for stale memory (what it names changed since it was
    /// written): `error`, `warning`, `information` or `hint`. Default `warning`.
    pub stale_severity: findings::Severity,
    /// Severity of a diagnostic for a false claim of memory or a doc (what it names is
    /// deleted, renamed, never existed, or the manifests contradict it): `error`,
    /// `warning`, `information` or `hint`. Default `warning`.
    pub false_severity: findings::Severity,
    /// Whether the server shows a command's answer itself: a reading command's rendered
    /// markdown through `window/showDocument` (a file under the system's temporary
    /// directory), a write's one-line outcome and any command's error through
    /// `window/showMessage`. For clients that drop what a command returns (Helix, a code
    /// action run by a plain client). `null` (default): when the client supports
    /// `window/showDocument`; the VS Code extension and the Neovim plugin show answers
    /// themselves and send `false`.
    pub show_results: Option<bool>,
}

impl InitializationOptions {
    /// The severity of each class of finding, from `staleSeverity` and `falseSeverity`.
    pub fn severities(&self) -> findings::Severities {
        findings::Severities {
            stale: self.stale_severity,
            false_claim: self.false_severity,
        }
    }
}

impl Default for InitializationOptions {
    fn default() -> Self {
        InitializationOptions {
            max_files: None,
            scan: true,
            parse_timeout_ms: 1_000,
            debounce_ms: 0,
            analyzed_notifications: false,
            debug_commands: false,
            stale_severity: findings::Severities::default().stale,
            false_severity: findings::Severities::default().false_claim,
            show_results: None,
        }
    }
}

/// The language service and its client socket, ready for [`Server::serve`].
pub fn service(options: ServerOptions) -> (LspService<Backend>, ClientSocket) {
    LspService::new(|client| Backend::new(client, options))
}

/// Serves the protocol over `input`/`output` until `exit` (or end of input), through
/// [`transport`]: malformed input gets an error reply and the session goes on.
pub async fn serve<I, O>(input: I, output: O, options: ServerOptions)
where
    I: tokio::io::AsyncRead + Unpin,
    O: tokio::io::AsyncWrite,
{
    serve_to_exit(input, output, options).await;
}

/// [`serve`], returning the exit code of the session (see [`transport::serve`]).
async fn serve_to_exit<I, O>(input: I, output: O, options: ServerOptions) -> u8
where
    I: tokio::io::AsyncRead + Unpin,
    O: tokio::io::AsyncWrite,
{
    let (service, socket) = service(options);
    transport::serve(input, output, service, socket).await
}

/// Runs the language server on stdin/stdout (`loci lsp`). Stdout carries only protocol
/// frames; the caller sets up `tracing` to write to stderr. Returns the process exit code:
/// 1 for an `exit` without `shutdown` (LSP 3.17), else 0.
pub fn run_stdio() -> std::io::Result<u8> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        // Parsing and extraction run on blocking threads; give them room.
        .thread_stack_size(8 * 1024 * 1024)
        .build()?;
    let code = runtime.block_on(serve_to_exit(
        tokio::io::stdin(),
        tokio::io::stdout(),
        ServerOptions::default(),
    ));
    // A scan may still run on a blocking thread; do not wait for it after `exit`.
    runtime.shutdown_timeout(Duration::from_millis(200));
    Ok(code)
}
