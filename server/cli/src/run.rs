//! One command's run, in its phases: the question from stdin, the workspace's root and
//! store (and the refusals before either is used), the memory check and team sync due
//! before the command, the command itself ([`crate::commands`]), and its exit: 0 found,
//! 1 nothing found (the reason on stderr, and in the envelope with `--json`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use loci_engine::{EngineError, Workspace};

use crate::args::{Cli, Command, FactCommand, TopicCommand};
use crate::commands::{self, Answer, Ctx, quoted};
use crate::paths::from_cwd;
use crate::{cli_error, output};

/// Runs one command; `opened` receives the workspace once it is open, so that a failure
/// after that can still report the store's state.
pub(crate) fn run(mut cli: Cli, opened: &mut Option<Workspace>) -> anyhow::Result<ExitCode> {
    read_question_from_stdin(&mut cli.command)?;
    if let Command::Lsp = cli.command {
        // Roots come from the client's `initialize`, not from the current directory.
        return Ok(ExitCode::from(loci_lsp::run_stdio()?));
    }
    let cwd = std::env::current_dir()?;
    let root = workspace_root(&cli, &cwd)?;
    let out = output::Output::new(cli.json);
    if let Some(code) = open_workspace(&cli, root, &out, opened)? {
        return Ok(code);
    }
    if let Command::Mcp {
        http,
        allow_remote,
        allow_origin,
    } = &cli.command
    {
        let transport = mcp_transport(*http, *allow_remote, allow_origin.clone());
        // The server owns the workspace from here on.
        let Some(ws) = opened.take() else {
            return Err(cli_error("internal", "the workspace was not open".into()));
        };
        loci_mcp::run(Ok(ws), transport, loci_mcp::ServerOptions::default())?;
        return Ok(ExitCode::SUCCESS);
    }
    let Some(ws) = opened.as_mut() else {
        return Err(cli_error("internal", "the workspace was not open".into()));
    };
    check_memory_before(&cli.command, ws)?;
    // Team memory: `context` and `search` — the questions an agent asks at every step —
    // answer from the replica at once, as a solo store would, and catch up after, in the
    // background (`team_catch_up_due`); their envelope says how far behind the replica
    // may be.
    let catch_up = matches!(
        cli.command,
        Command::Context { .. } | Command::Search { .. }
    ) && ws.team_catch_up_due();
    sync_before_read(&cli.command, ws);
    let root = ws.root().to_path_buf();
    let db = cli.db.clone();
    let cwd = cwd.canonicalize().unwrap_or(cwd);
    let mut miss = miss_message(&cli.command, &cwd, &root);
    let ctx = Ctx {
        out: &out,
        cwd: &cwd,
        root: &root,
        json: cli.json,
    };
    let found = match commands::dispatch(cli.command, ws, &ctx, &mut miss)? {
        Answer::Found(found) => found,
        Answer::Exit(code) => return Ok(code),
    };
    if found {
        out.finish(None)?;
        if catch_up {
            start_catch_up(&root, db.as_deref());
        }
        return Ok(ExitCode::SUCCESS);
    }
    // Exit 1 says why, the same way for every command: on stderr, and with `--json` in
    // the envelope's `error` (the renderer's reason when it has one: lint's findings, a
    // failed check; else the lookup's).
    let (kind, message) = out
        .verdict()
        .or_else(|| miss.map(|m| ("not_found", m)))
        .unwrap_or_else(|| ("not_found", "nothing found".to_string()));
    out.finish(Some((kind, &message)))?;
    eprintln!("loci: {message}");
    if catch_up {
        start_catch_up(&root, db.as_deref());
    }
    Ok(ExitCode::from(1))
}

/// `-` as the question of `context` or `search` reads it from stdin: a command line holds
/// at most 128 KiB per argument. Any bytes are a question: invalid UTF-8 becomes U+FFFD,
/// as any text is safe.
fn read_question_from_stdin(command: &mut Command) -> anyhow::Result<()> {
    if let Command::Context { query, .. } | Command::Search { query, .. } = command
        && query == "-"
    {
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut bytes)?;
        *query = String::from_utf8_lossy(&bytes).into_owned();
    }
    Ok(())
}

/// The workspace root: `scan PATH`'s path, else `-C DIR`, else the one `cwd` is in
/// ([`loci_engine::discover_root`]). Refused when it is no directory, and (without
/// `--db`) when `scan PATH` names a folder inside another workspace.
fn workspace_root(cli: &Cli, cwd: &Path) -> anyhow::Result<PathBuf> {
    let root = match (&cli.command, &cli.root) {
        (Command::Scan { path: Some(p), .. }, _) => p.clone(),
        (_, Some(r)) => r.clone(),
        _ => loci_engine::discover_root(cwd),
    };
    if !root.is_dir() {
        // A path that does not exist is said so, not called "not a directory" as if
        // something were there.
        let message = if root.exists() {
            format!("{}: not a directory", root.display())
        } else {
            format!("no such directory: {}", root.display())
        };
        return Err(cli_error("invalid_argument", message));
    }
    // `loci scan SUBDIR` of a workspace would make a second store in SUBDIR/.loci, which
    // every command run below SUBDIR would then use: the workspace's memory would look
    // lost there.
    if let (Command::Scan { path: Some(p), .. }, None) = (&cli.command, &cli.db)
        && let Some(outer) = enclosing_workspace(p)
    {
        return Err(cli_error(
            "invalid_argument",
            format!(
                "{} is inside the workspace {} (its .loci/ holds the map and the memory): run `loci scan` there, or `loci -C {} init` to make it a workspace of its own",
                p.display(),
                outer.display(),
                p.display()
            ),
        ));
    }
    Ok(root)
}

/// Opens the workspace at `root` into `opened`. Returns an exit code when the command
/// ended there: `restore` into a damaged store, or `loci mcp` serving a store it cannot
/// open.
fn open_workspace(
    cli: &Cli,
    root: PathBuf,
    out: &output::Output,
    opened: &mut Option<Workspace>,
) -> anyhow::Result<Option<ExitCode>> {
    // A command that only reads never creates a store: at a mistyped `--db` it would
    // answer from an empty one (and `check` would pass).
    let reads_only = matches!(
        cli.command,
        Command::Symbol { .. }
            | Command::Refs { .. }
            | Command::Callers { .. }
            | Command::Callees { .. }
            | Command::Outline { .. }
            | Command::Source { .. }
            | Command::List { .. }
            | Command::Deps { .. }
            | Command::Impact { .. }
            | Command::Stats
            | Command::Show { .. }
            | Command::History { .. }
            | Command::Asof { .. }
            | Command::Why { .. }
            | Command::Search { .. }
            | Command::Context { .. }
            | Command::Check { .. }
            | Command::Lint
            | Command::Drift { .. }
            | Command::Recap { .. }
            | Command::Export { .. }
            | Command::Backup { .. }
            | Command::Synthesize { plan: true, .. }
            | Command::Synthesize { dry_run: true, .. }
    );
    if reads_only {
        refuse_missing_store(&root, cli.db.as_deref())?;
    }
    let mut root = root;
    let mut opening = Workspace::open(&root, cli.db.as_deref());
    // A store given from another directory answers for the tree it maps: run elsewhere,
    // `loci lint --db STORE` would map that directory into the store and mark all of its
    // memory false. A root given (`-C`, `scan PATH`) that is not the store's is refused.
    let root_given =
        cli.root.is_some() || matches!(cli.command, Command::Scan { path: Some(_), .. });
    if let (Err(EngineError::OtherRoot { db, mapped, .. }), false) = (&opening, root_given) {
        eprintln!(
            "note: {} is the store of {}: answering for {}",
            db.display(),
            mapped.display(),
            mapped.display()
        );
        root = mapped.clone();
        opening = Workspace::open(&root, cli.db.as_deref());
    }
    match (opening, &cli.command) {
        // The way out a damaged database's message names: no connection can be opened on
        // it to restore into, so the backup takes its place (the damaged file is kept).
        (Err(EngineError::Store(e)), Command::Restore { path }) if e.is_damage() => {
            let (ws, env) = Workspace::restore_damaged(&root, cli.db.as_deref(), path)?;
            *opened = Some(ws);
            out.restored(&env)?;
            out.finish(None)?;
            Ok(Some(ExitCode::SUCCESS))
        }
        // `loci mcp` serves a store it cannot open too: it answers `initialize`, and each
        // tool call says what is wrong and the way out (a server that died before
        // `initialize` would leave an agent with no reason).
        (
            Err(error),
            Command::Mcp {
                http,
                allow_remote,
                allow_origin,
            },
        ) => {
            let refused = loci_mcp::Refused {
                root: root.canonicalize().unwrap_or(root),
                db: cli.db.clone(),
                error,
            };
            let transport = mcp_transport(*http, *allow_remote, allow_origin.clone());
            loci_mcp::run(Err(refused), transport, loci_mcp::ServerOptions::default())?;
            Ok(Some(ExitCode::SUCCESS))
        }
        (ws, _) => {
            *opened = Some(ws?);
            Ok(None)
        }
    }
}

/// What reports on the store, rewrites the map or imports into it first checks the tables
/// of memory; what writes one entry or lints, when a check is due (a scan the engine runs
/// for it checks when due too): a damaged page must not pass `scan`, `stats` or
/// `remember` with exit 0. Reads do not pay for it, and `export` must still save what
/// reads.
fn check_memory_before(command: &Command, ws: &mut Workspace) -> anyhow::Result<()> {
    match command {
        Command::Stats | Command::Scan { .. } | Command::Import { .. } | Command::Check { .. } => {
            ws.check_memory_within(std::time::Duration::ZERO)?
        }
        Command::Remember { .. }
        | Command::Decide { .. }
        | Command::Learn { .. }
        | Command::Pin { .. }
        | Command::Unpin { .. }
        | Command::Rollback { .. }
        | Command::Confirm { .. }
        | Command::Lint => ws.check_memory_within(loci_engine::MEMORY_CHECK_INTERVAL)?,
        _ => {}
    }
    Ok(())
}

/// Team memory: a command that reads memory first pulls what the team wrote (a write
/// syncs in the engine); an unreachable server is said, and the replica answers.
/// `context` and `search` catch up after instead (see [`run`]).
fn sync_before_read(command: &Command, ws: &mut Workspace) {
    if matches!(
        command,
        Command::Show { .. }
            | Command::History { .. }
            | Command::Asof { .. }
            | Command::Why { .. }
            | Command::Lint
            | Command::Check { .. }
            | Command::Recap { .. }
            | Command::Export { .. }
            | Command::Topic { .. }
            | Command::Fact { .. }
            | Command::Stats
    ) && let Some(note) = ws.team_sync_before_read()
    {
        eprintln!("note: {note}");
    }
}

/// What an empty answer of a lookup says on stderr (exit 1 is "nothing found").
fn miss_message(command: &Command, cwd: &Path, root: &Path) -> Option<String> {
    match command {
        Command::Symbol { name, .. } => {
            Some(format!("no symbol named `{}` in the map", quoted(name)))
        }
        Command::Refs { name, .. } => {
            Some(format!("no references to `{}` in the map", quoted(name)))
        }
        Command::Callers { symbol, .. } => {
            Some(format!("no callers of `{}` in the map", quoted(symbol)))
        }
        Command::Callees { symbol, .. } => Some(format!(
            "`{}` calls nothing the map records",
            quoted(symbol)
        )),
        Command::Outline { path, .. } => Some(format!(
            "`{}` defines nothing the map records",
            quoted(&from_cwd(path.clone(), cwd, root))
        )),
        Command::List { prefix, .. } if prefix.is_empty() => {
            Some("no memory yet: `loci remember`, `loci decide` and `loci learn` write some".into())
        }
        Command::List { prefix, .. } => Some(format!("no memory under `{}`", quoted(prefix))),
        // A blank question is answered empty by search and context alike (exit 1).
        Command::Search { query, .. } if query.trim().is_empty() => {
            Some("the query is empty: there is nothing to search for".into())
        }
        Command::Search { query, .. } => Some(format!("nothing matches `{}`", quoted(query))),
        Command::Deps { path, reverse } => {
            let path = quoted(&from_cwd(path.clone(), cwd, root));
            Some(if *reverse {
                format!("nothing in the map imports `{path}`")
            } else {
                format!("`{path}` imports nothing the map records")
            })
        }
        Command::Impact { target, depth, .. } => Some(format!(
            "nothing depends on `{}` within depth {depth}",
            quoted(&from_cwd(target.clone(), cwd, root))
        )),
        Command::Context { query, open, .. } if query.trim().is_empty() && open.is_empty() => {
            Some(loci_engine::context::EMPTY_QUESTION.into())
        }
        Command::Context { query, .. } if query.trim().is_empty() => Some(
            "nothing relevant to the open files cleared the floor (the answer abstained)".into(),
        ),
        Command::Context { query, .. } => Some(format!(
            "nothing relevant to `{}` cleared the floor (the answer abstained)",
            quoted(query)
        )),
        Command::History { subject } => Some(format!(
            "no revisions of `{}` yet",
            quoted(&from_cwd(subject.clone(), cwd, root))
        )),
        Command::Asof { date, show: None } => {
            Some(format!("no memory was written by {}", quoted(date)))
        }
        Command::Asof {
            date,
            show: Some(subject),
        } => Some(format!(
            "`{}` had no revision by {}",
            quoted(&from_cwd(subject.clone(), cwd, root)),
            quoted(date)
        )),
        Command::Topic {
            command: TopicCommand::List,
        } => Some("no topics yet; `loci topic add TOPIC MEMBER` makes one".into()),
        Command::Fact {
            command: FactCommand::List,
        } => Some("no facts yet; `loci fact add --claim TEXT --cmd COMMAND` records one".into()),
        Command::Recap { .. } => Some("no sessions yet; `loci session begin` starts one".into()),
        _ => None,
    }
}

/// The nearest proper ancestor of `dir` holding `.loci/`, when `dir` holds neither a
/// `.loci/` nor a `.git` itself (a repository of its own is a workspace of its own).
fn enclosing_workspace(dir: &std::path::Path) -> Option<std::path::PathBuf> {
    let dir = dir.canonicalize().ok()?;
    if dir.join(loci_engine::LOCI_DIR).is_dir() || dir.join(".git").exists() {
        return None;
    }
    dir.ancestors()
        .skip(1)
        .find(|a| a.join(loci_engine::LOCI_DIR).is_dir())
        .map(std::path::Path::to_path_buf)
}

/// The transport `loci mcp` serves: stdio, or HTTP at `--http ADDR`.
fn mcp_transport(
    http: Option<std::net::SocketAddr>,
    allow_remote: bool,
    allowed_origins: Vec<String>,
) -> loci_mcp::Transport {
    match http {
        None => loci_mcp::Transport::Stdio,
        Some(addr) => loci_mcp::Transport::Http {
            addr,
            allow_remote,
            token_file: None,
            allowed_origins,
        },
    }
}

/// Starts `loci team catch-up` for the checkout at `root` (its store at `db`) in a process
/// of its own that outlives this one: no stdin, stdout or stderr (a caller reading this
/// process's output to its end does not wait for it), in a process group of its own (a
/// terminal's Ctrl-C to this command does not stop it). git's `gc --auto` detaches the
/// same way. A failure to start is only logged: the next answer tries again.
fn start_catch_up(root: &Path, db: Option<&Path>) {
    use std::process::Stdio;
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => {
            tracing::debug!("team catch-up not started: {e}");
            return;
        }
    };
    let mut cmd = std::process::Command::new(exe);
    cmd.arg("--root").arg(root);
    if let Some(db) = db {
        cmd.arg("--db").arg(db);
    }
    cmd.args(["team", "catch-up"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
    // Not waited for: it is reparented when this process exits.
    match cmd.spawn() {
        Ok(child) => tracing::debug!(pid = child.id(), "team catch-up started"),
        Err(e) => tracing::debug!("team catch-up not started: {e}"),
    }
}

/// The one check before a read-only command opens its store, at `--db` (`given`) or at the
/// default `<root>/.loci/loci.db`: no file there, or an empty one (SQLite takes an empty
/// file for a new database, so a read would write a schema in it), is an error that says
/// which command creates the store. Nothing is created either way.
fn refuse_missing_store(root: &Path, given: Option<&Path>) -> anyhow::Result<()> {
    let default = root.join(loci_engine::LOCI_DIR).join("loci.db");
    if let Some(db) = given {
        // A folder that does not exist is the first thing to fix: `loci scan --db` there
        // is refused too.
        loci_engine::check_db_folder(root, db)?;
    }
    let db = given.unwrap_or(&default);
    let empty = match std::fs::metadata(db) {
        Err(_) => false,
        Ok(meta) if meta.is_file() && meta.len() == 0 => true,
        Ok(_) => return Ok(()),
    };
    let scan = match given {
        Some(db) => format!("`loci scan --db {}`", db.display()),
        None => "`loci scan`".to_string(),
    };
    let message = if empty {
        format!(
            "{}: an empty file, not a loci database; {scan} makes it one",
            db.display()
        )
    } else {
        match given {
            Some(db) => format!("{}: no such database; {scan} creates it", db.display()),
            None => format!(
                "no database yet at {}; run {scan} (or `loci init`) to create it",
                db.display()
            ),
        }
    };
    Err(cli_error("missing_store", message))
}
