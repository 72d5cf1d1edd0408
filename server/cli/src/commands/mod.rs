//! The commands once the workspace is open, one module per layer of the engine they
//! call: [`map`], [`memory`], [`questions`], [`audit`], [`store`]. Each runs one
//! `Workspace` operation and renders its envelope with [`crate::output`].

mod audit;
mod map;
mod memory;
mod questions;
mod store;

use std::path::Path;
use std::process::ExitCode;

use loci_engine::{EngineError, Workspace};

use crate::args::{Command, FactCommand, KindArg, SessionCommand, TeamCommand, TopicCommand};
use crate::paths::{from_cwd, from_cwd_with_line};
use crate::{cli_error, output};

/// What a command's run ends in.
pub(crate) enum Answer {
    /// It answered: whether it found something (exit 0) or not (exit 1, the reason on
    /// stderr).
    Found(bool),
    /// It answered and exited itself, with this code (a lookup the engine did not find).
    Exit(ExitCode),
}

/// What every command reads beside its arguments.
pub(crate) struct Ctx<'a> {
    /// The renderer (human or `--json`).
    pub(crate) out: &'a output::Output,
    /// The current directory, canonical: path arguments are relative to it.
    pub(crate) cwd: &'a Path,
    /// The workspace root.
    pub(crate) root: &'a Path,
    /// `--json`.
    pub(crate) json: bool,
}

/// Runs `command` on the open workspace. `miss` is what an empty answer says on stderr;
/// a lookup that knows better (a name that is no symbol, weaker edges left out) replaces
/// it. `loci lsp` and `loci mcp` are run before a workspace is open here.
pub(crate) fn dispatch(
    command: Command,
    ws: &mut Workspace,
    ctx: &Ctx<'_>,
    miss: &mut Option<String>,
) -> anyhow::Result<Answer> {
    match command {
        c @ (Command::Scan { .. }
        | Command::Embed
        | Command::Symbol { .. }
        | Command::Refs { .. }
        | Command::Callees { .. }
        | Command::Outline { .. }
        | Command::Source { .. }
        | Command::Callers { .. }
        | Command::Deps { .. }
        | Command::Impact { .. }
        | Command::Stats
        | Command::Sync { .. }) => map::run(c, ws, ctx, miss),
        c @ (Command::List { .. }
        | Command::Remember { .. }
        | Command::Decide { .. }
        | Command::Learn { .. }
        | Command::Show { .. }
        | Command::History { .. }
        | Command::Pin { .. }
        | Command::Unpin { .. }
        | Command::Rollback { .. }
        | Command::Asof { .. }
        | Command::Confirm { .. }
        | Command::Topic { .. }
        | Command::Fact { .. }
        | Command::Session { .. }
        | Command::Recap { .. }
        | Command::Synthesize { .. }) => memory::run(c, ws, ctx),
        c @ (Command::Why { .. }
        | Command::Search { .. }
        | Command::Context { .. }
        | Command::Eval { .. }
        | Command::Calibrate { .. }) => questions::run(c, ws, ctx),
        c @ (Command::Lint
        | Command::Check { .. }
        | Command::Resolve { .. }
        | Command::Drift { .. }) => audit::run(c, ws, ctx),
        c @ (Command::Init { .. }
        | Command::Export { .. }
        | Command::Import { .. }
        | Command::Backup { .. }
        | Command::Restore { .. }
        | Command::Team { .. }) => store::run(c, ws, ctx),
        Command::Lsp => Ok(Answer::Found(true)),
        Command::Mcp { .. } => unreachable!("`loci mcp` is served by run, before dispatch"),
    }
}

/// Brings a built map up to the tree (an incremental scan) before `lint` and `check` judge
/// memory against it, so that a page whose symbol was renamed since the last scan does
/// not pass. An unscanned map is left to their own refusal, a read-only store as it is.
pub(crate) fn refresh_the_map(ws: &mut Workspace) -> anyhow::Result<()> {
    if ws.map_is_built()? && !ws.store().is_read_only() {
        ws.scan(&|_| {})?;
    }
    Ok(())
}

/// Prints what `init --agents` did, and the Codex snippet.
pub(crate) fn print_agents(
    report: &loci_engine::init::AgentsReport,
    json: bool,
) -> anyhow::Result<()> {
    use std::io::Write;
    let stdout = std::io::stdout();
    let mut o = stdout.lock();
    if json {
        serde_json::to_writer_pretty(&mut o, report)?;
        writeln!(o)?;
        return Ok(());
    }
    for f in &report.files {
        let action = serde_json::to_value(f.action)?;
        write!(
            o,
            "{:<9} {} ({})",
            action.as_str().unwrap_or(""),
            f.path,
            f.agent
        )?;
        match &f.note {
            Some(note) => writeln!(o, ": {note}")?,
            None => writeln!(o)?,
        }
    }
    if !report.codex_written {
        writeln!(
            o,
            "\nCodex reads MCP servers from {}; add (or run `loci init --agents --global`):\n",
            report.codex_config
        )?;
        write!(o, "{}", report.codex_snippet)?;
    }
    Ok(())
}

/// Prints what `init --git-hook` (or `--remove-git-hook`) did, one line per hook.
pub(crate) fn print_hooks(
    report: &loci_engine::init::hooks::HooksReport,
    json: bool,
) -> anyhow::Result<()> {
    use std::io::Write;
    let stdout = std::io::stdout();
    let mut o = stdout.lock();
    if json {
        serde_json::to_writer_pretty(&mut o, report)?;
        writeln!(o)?;
        return Ok(());
    }
    for h in &report.hooks {
        let action = serde_json::to_value(h.action)?;
        write!(
            o,
            "{:<9} {}",
            action.as_str().unwrap_or(""),
            h.path.display()
        )?;
        match &h.note {
            Some(note) => writeln!(o, ": {note}")?,
            None => writeln!(o)?,
        }
    }
    Ok(())
}

/// The note of an answer that found no symbol of the name asked (with the names nearest
/// it: "did you mean"), or no reference to a module (whose importers are dependencies), as
/// the reason it exits 1.
pub(crate) fn unknown_symbol<T>(env: &loci_engine::Envelope<T>) -> Option<String> {
    env.capability
        .notes
        .iter()
        .find(|n| n.starts_with("no symbol named") || n.starts_with("no references to"))
        .cloned()
}

/// "Nothing found" is exit code 1 with the reason on stderr.
/// A user's argument as a message quotes it: whole up to [`QUOTED_CHARS`] characters, else
/// its start and `…` (a 10 KB question is not echoed whole on stderr).
pub(crate) fn quoted(arg: &str) -> String {
    match arg.char_indices().nth(QUOTED_CHARS) {
        Some((cut, _)) => format!("{}…", &arg[..cut]),
        None => arg.to_string(),
    }
}

/// At most this many characters of an argument are quoted in a message.
pub(crate) const QUOTED_CHARS: usize = 80;

/// Exit 1 for a lookup the engine answered with `NotFound`: the envelope (with `--json`)
/// and the message on stderr.
pub(crate) fn not_found(
    out: &output::Output,
    ws: &Workspace,
    message: &str,
) -> anyhow::Result<ExitCode> {
    out.not_found(&ws.envelope((), Vec::new())?, message)?;
    eprintln!("loci: {message}");
    Ok(ExitCode::from(1))
}

/// [`not_found`] for a lookup in the map (`outline`, `deps`, `impact`): when the map
/// leaves files out (skipped as secrets, too large, …), a note says so, in the
/// envelope's notes and on stderr.
pub(crate) fn map_not_found(
    out: &output::Output,
    ws: &Workspace,
    message: &str,
) -> anyhow::Result<ExitCode> {
    let mut env = ws.envelope((), Vec::new())?;
    if let Some(note) = ws.left_out_note()? {
        eprintln!("note: {note}");
        env.capability.notes.push(note);
    }
    out.not_found(&env, message)?;
    eprintln!("loci: {message}");
    Ok(ExitCode::from(1))
}
