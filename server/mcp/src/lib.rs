//! The loci MCP server: every engine operation as a typed, self-describing MCP tool, over
//! stdio (`loci mcp`) or streamable HTTP on loopback with a bearer token
//! (`loci mcp --http 127.0.0.1:PORT`).
//!
//! Architecture invariant: this is the only crate that knows `rmcp`. Tools are thin
//! adapters: parse typed arguments ([`tools`]), call one [`loci_engine::Workspace`]
//! function on a blocking thread, and turn its answer into a tool result — text content as
//! the CLI prints it ([`loci_engine::text`]) plus structured content (the envelope JSON,
//! declared by each tool's `outputSchema`), both capped and paged ([`render`]). Argument
//! and domain errors are tool results with `isError: true`; only protocol faults are
//! JSON-RPC errors. Before answering, files changed on disk since the last scan are
//! rescanned ([`server`]). Stdout carries only protocol: one JSON-RPC message per line,
//! written by a single task ([`stdio`]).

pub mod http;
pub mod render;
pub mod server;
pub mod stdio;
pub mod tools;

use std::net::SocketAddr;
use std::path::PathBuf;

pub use server::{LociServer, Refused, ServerOptions};

/// What can stop the MCP server.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    /// A socket, pipe or file operation failed.
    #[error("{context}: {source}")]
    Io {
        /// What loci was doing (`binding 127.0.0.1:7000`).
        context: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The request to serve was refused (a non-loopback address without `--allow-remote`).
    #[error("{0}")]
    Refused(String),
    /// The MCP session could not start (the client never sent `initialize`, ...).
    #[error("mcp session: {0}")]
    Session(String),
}

impl McpError {
    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> McpError {
        McpError::Io {
            context: context.into(),
            source,
        }
    }
}

/// Which transport `loci mcp` serves.
#[derive(Clone, Debug)]
pub enum Transport {
    /// One client on stdin/stdout.
    Stdio,
    /// Streamable HTTP at `http://ADDR/mcp`, bearer token required.
    Http {
        /// The address to bind.
        addr: SocketAddr,
        /// Allow a non-loopback address (the token is still required).
        allow_remote: bool,
        /// Where the token lives (default `<root>/.loci/mcp-token`).
        token_file: Option<PathBuf>,
        /// Browser origins served besides this machine's (see [`http::origin_allowed`]).
        allowed_origins: Vec<String>,
    },
}

/// Serves `workspace` on `transport` until the client goes away (stdio) or the process
/// is interrupted (HTTP). Builds its own tokio runtime; blocks the calling thread. A
/// store that could not be opened ([`Refused`]) is served too: `initialize` and
/// `tools/list` are answered, and every tool call says why it cannot answer (see
/// [`LociServer::refused`]).
pub fn run(
    workspace: Result<loci_engine::Workspace, Refused>,
    transport: Transport,
    options: ServerOptions,
) -> Result<(), McpError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("loci-mcp")
        .build()
        .map_err(|e| McpError::io("starting the async runtime", e))?;
    let root = match &workspace {
        Ok(ws) => ws.root().to_path_buf(),
        Err(refused) => refused.root.clone(),
    };
    let new_server = move || match workspace {
        Ok(ws) => LociServer::new(ws, options),
        Err(refused) => LociServer::refused(refused, options),
    };
    let served = runtime.block_on(async move {
        match transport {
            Transport::Stdio => {
                let server = new_server();
                server.warm_up();
                server.start_team_listener();
                stdio::serve(server, tokio::io::stdin(), tokio::io::stdout()).await
            }
            Transport::Http {
                addr,
                allow_remote,
                token_file,
                allowed_origins,
            } => {
                let token_file = token_file
                    .unwrap_or_else(|| root.join(loci_engine::LOCI_DIR).join(http::TOKEN_FILE));
                let server = new_server();
                server.warm_up();
                server.start_team_listener();
                let listener = http::bind(addr, allow_remote).await?;
                let token = http::load_or_create_token(&token_file)?;
                tracing::info!(%addr, token_file = %token_file.display(), "serving MCP over HTTP");
                eprintln!(
                    "loci mcp: listening on http://{}/mcp (bearer token in {})",
                    listener
                        .local_addr()
                        .map_err(|e| McpError::io("reading the bound address", e))?,
                    token_file.display()
                );
                let access = http::Access {
                    token,
                    allow_remote,
                    allowed_origins,
                };
                http::serve(server, listener, access, shutdown_signal()).await
            }
        }
    });
    // Not `drop(runtime)`, which waits for every blocking task: a call or startup refresh
    // still running when the client went away (a full scan takes minutes on a large
    // tree) is abandoned with the process. Its writes are transactions, so the store
    // stays whole; an interrupted scan is finished by the next one.
    runtime.shutdown_timeout(SHUTDOWN_WAIT);
    served
}

/// How long the end of `loci mcp` waits for tasks still running once the session is over.
pub const SHUTDOWN_WAIT: std::time::Duration = std::time::Duration::from_millis(100);

/// Resolves on Ctrl-C (SIGINT) or, on Unix, SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {}
        _ = term => {}
    }
}
