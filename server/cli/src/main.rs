//! `loci`: the command-line door to the engine. Argument parsing, dispatch, and output
//! (human by default, the engine's envelope with `--json`); no logic of its own.
//!
//! Exit codes: 0 ok, 1 nothing found, 2 usage or environment error (message on stderr).
//! With `--json`, exits 1 and 2 print the envelope too, with `error: {kind, message}`;
//! clap's own parse errors (a missing or malformed argument) are clap's, on stderr only.

mod args;
mod commands;
mod malloc;
mod output;
mod paths;
mod run;

use std::process::ExitCode;

use clap::Parser;
use loci_engine::{EngineError, Workspace};

use args::{Cli, Command};
use run::run;

fn main() -> ExitCode {
    init_tracing();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    if matches!(cli.command, Command::Lsp | Command::Mcp { .. }) {
        // Long-running servers: bound malloc's arenas (re-executes once; see malloc.rs).
        malloc::bound_arenas();
    }
    let json = cli.json;
    let mut opened = None;
    match run(cli, &mut opened) {
        Ok(code) => {
            // A process that wrote nothing owes the database nothing at close (no
            // checkpoint, no journal to remove), and closing unmaps the store's memory map
            // page by page: about 0.35 ms of a 7 ms `loci context` on the stdlib. The OS
            // releases it at exit.
            if let Some(ws) = opened.take()
                && ws.store().conn().total_changes() == 0
            {
                std::mem::forget(ws);
            }
            code
        }
        // `loci ... | head` closing the pipe early is not an error.
        Err(e)
            if e.chain().any(|c| {
                c.downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            }) =>
        {
            ExitCode::SUCCESS
        }
        Err(e) => {
            let e = name_damage(e, opened.as_ref());
            let message = error_chain(&e);
            if json {
                print_failure(opened.as_ref(), error_kind(&e), &message);
            }
            eprintln!("loci: {message}");
            // Whatever the command, a lookup of something that is not there is "nothing
            // found", exit 1: `pin`, `confirm` or `rollback` of a missing page or version
            // exits as `show` of it does.
            ExitCode::from(if error_kind(&e) == "not_found" { 1 } else { 2 })
        }
    }
}

/// An error the CLI detects itself (not the engine's), with the `error.kind` its JSON
/// envelope names.
#[derive(Debug)]
struct CliError {
    kind: &'static str,
    message: String,
}

impl std::fmt::Display for CliError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CliError {}

/// A [`CliError`] as an `anyhow::Error`.
pub(crate) fn cli_error(kind: &'static str, message: String) -> anyhow::Error {
    CliError { kind, message }.into()
}

/// The `error.kind` of an exit-2 failure: the CLI's own kind ([`CliError`]), the engine's
/// or the store's ([`EngineError::kind`]), `io` for an I/O error, else `error`.
fn error_kind(e: &anyhow::Error) -> &'static str {
    for cause in e.chain() {
        if let Some(c) = cause.downcast_ref::<CliError>() {
            return c.kind;
        }
        if let Some(c) = cause.downcast_ref::<EngineError>() {
            return c.kind();
        }
        if let Some(c) = cause.downcast_ref::<loci_engine::StoreError>() {
            return c.kind();
        }
        if cause.is::<std::io::Error>() {
            return "io";
        }
    }
    "error"
}

/// With `--json`, an exit-2 failure still answers with an envelope, `error: {kind,
/// message}` beside it: the store's state when the workspace was opened, else an empty
/// one that says no store was read. (clap's own parse errors happen before any of this
/// and are printed by clap, on stderr only.)
fn print_failure(ws: Option<&Workspace>, kind: &str, message: &str) {
    let env = ws
        .and_then(|ws| ws.envelope((), Vec::new()).ok())
        .unwrap_or_else(|| {
            loci_engine::Envelope::without_store(
                (),
                "no store was read: the command failed before one was open",
            )
        });
    // Stdout may be closed; the message still goes to stderr.
    let _ = output::Output::new(true).failed(&env, kind, message);
}

/// A damaged database found after the store was opened (a truncated file reads until a
/// query reaches a missing page) as [`loci_engine::StoreError::Damaged`]: the database's
/// path and the way out, as when opening finds it ([`Workspace::named_damage`], which the
/// language and MCP servers use too). Any other error as it is.
fn name_damage(e: anyhow::Error, ws: Option<&Workspace>) -> anyhow::Error {
    use loci_engine::StoreError;
    let Some(ws) = ws else {
        return e;
    };
    let named = e.chain().find_map(|c| {
        c.downcast_ref::<StoreError>()
            .or_else(|| match c.downcast_ref() {
                Some(EngineError::Store(s)) => Some(s),
                _ => None,
            })
            .and_then(|s| ws.named_damage(s))
    });
    named.map_or(e, Into::into)
}

/// An error and its causes, `: `-joined, leaving out a cause whose text an outer message
/// already carries (thiserror's `"{path}: {source}"` messages include their source, which
/// anyhow's `{:#}` would print a second time).
fn error_chain(e: &anyhow::Error) -> String {
    let mut message = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if message.contains(&text) {
            continue;
        }
        if !message.is_empty() {
            message.push_str(": ");
        }
        message.push_str(&text);
    }
    message
}

fn init_tracing() {
    // Logs go to stderr, never stdout (stdout belongs to the protocol in `loci lsp` and
    // `loci mcp`, and to the answer otherwise); level from RUST_LOG, default warn.
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        // A span's close logs its time: `RUST_LOG=loci_engine::context=debug` times each
        // phase of an answer.
        .with_span_events(tracing_subscriber::fmt::format::FmtSpan::CLOSE)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_command_line_definition_is_consistent() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
