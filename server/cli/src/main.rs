//! `loci`: the command-line door to the engine. Argument parsing, dispatch, and output
//! (human by default, the engine's envelope with `--json`); no logic of its own.
//!
//! Exit codes: 0 ok, 1 nothing found, 2 usage or environment error (message on stderr).

mod output;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use loci_engine::{EngineError, Workspace};

/// loci: a live, verified memory of a codebase.
#[derive(Debug, Parser)]
#[command(name = "loci", version, about, propagate_version = true)]
struct Cli {
    /// Print the engine's JSON envelope instead of human output.
    #[arg(long, global = true)]
    json: bool,
    /// The database file (default: <root>/.loci/loci.db).
    #[arg(long, global = true, env = "LOCI_DB", value_name = "FILE")]
    db: Option<PathBuf>,
    /// The workspace root (default: the nearest ancestor with .loci/ or .git, else the
    /// current directory).
    #[arg(short = 'C', long = "root", global = true, value_name = "DIR")]
    root: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Create .loci/ (database, .gitignore) in the workspace root.
    Init,
    /// Walk and parse the workspace, updating the map incrementally.
    Scan {
        /// The workspace root to scan (default: the discovered root).
        path: Option<PathBuf>,
    },
    /// Find symbols by name, qualified name or key.
    Symbol {
        /// `login`, `AuthService.login`, or a key `path#name@kind`.
        name: String,
    },
    /// List references to a name (or to a symbol key).
    Refs {
        /// A bare name or a symbol key.
        name: String,
    },
    /// List the call sites resolved to a symbol.
    Callers {
        /// A name, qualified name or key.
        symbol: String,
    },
    /// List a file's imports, or with --reverse, the files importing it.
    Deps {
        /// A repo-relative path.
        path: String,
        /// Show the files that import PATH instead.
        #[arg(long)]
        reverse: bool,
    },
    /// The reverse-dependency blast radius of a file or symbol.
    Impact {
        /// A repo-relative path or a symbol name/key.
        target: String,
        /// Hops to follow.
        #[arg(long, default_value_t = 3)]
        depth: u32,
        /// Follow only stated edges (proven by a parser), not derived ones.
        #[arg(long)]
        hard: bool,
    },
    /// Show what the map holds.
    Stats,
    /// Run the language server on stdin/stdout (editors start this).
    Lsp,
}

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
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("loci: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn init_tracing() {
    // Logs go to stderr, never stdout (case B21); level from RUST_LOG, default warn.
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    if let Command::Lsp = cli.command {
        // Roots come from the client's `initialize`, not from the current directory.
        loci_lsp::run_stdio()?;
        return Ok(ExitCode::SUCCESS);
    }
    let cwd = std::env::current_dir()?;
    let root = match (&cli.command, &cli.root) {
        (Command::Scan { path: Some(p) }, _) => p.clone(),
        (_, Some(r)) => r.clone(),
        _ => loci_engine::discover_root(&cwd),
    };
    if !root.is_dir() {
        anyhow::bail!("{}: not a directory", root.display());
    }
    let mut ws = Workspace::open(&root, cli.db.as_deref())?;
    let out = output::Output::new(cli.json);
    let found = match cli.command {
        Command::Init => {
            let env = ws.stats()?;
            out.init(ws.root(), &env)?
        }
        Command::Scan { .. } => {
            let bar = output::ScanBar::new(cli.json);
            let env = ws.scan(&|p| bar.update(p))?;
            bar.finish();
            out.scan(&env)?
        }
        Command::Symbol { name } => out.symbols(&ws.symbol(&name)?)?,
        Command::Refs { name } => out.refs(&ws.refs(&name)?)?,
        Command::Callers { symbol } => out.callers(&ws.callers(&symbol)?)?,
        Command::Deps { path, reverse } => match ws.deps(&path, reverse) {
            Err(EngineError::NotFound(message)) => return not_found(&message),
            env => out.deps(&env?)?,
        },
        Command::Impact {
            target,
            depth,
            hard,
        } => match ws.impact(&target, depth, hard) {
            Err(EngineError::NotFound(message)) => return not_found(&message),
            env => out.impact(&env?)?,
        },
        Command::Stats => out.stats(&ws.stats()?)?,
        Command::Lsp => true,
    };
    Ok(if found {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// "Nothing found" is exit code 1 with the reason on stderr.
fn not_found(message: &str) -> anyhow::Result<ExitCode> {
    eprintln!("loci: {message}");
    Ok(ExitCode::from(1))
}
