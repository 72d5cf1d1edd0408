//! `loci`: the command-line door to the engine. Argument parsing, dispatch, and output
//! (human by default, the engine's envelope with `--json`); no logic of its own.
//!
//! Exit codes: 0 ok, 1 nothing found, 2 usage or environment error (message on stderr).
//! With `--json`, exits 1 and 2 print the envelope too, with `error: {kind, message}`;
//! clap's own parse errors (a missing or malformed argument) are clap's, on stderr only.

mod malloc;
mod output;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use loci_engine::{EngineError, Workspace};

/// loci: a live, verified memory of a codebase.
#[derive(Debug, Parser)]
#[command(name = "loci", version, about)]
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
    Init {
        /// Also wire AI coding agents to `loci mcp`: .mcp.json (Claude Code),
        /// .cursor/mcp.json, .vscode/mcp.json (comments kept), an operator guide in
        /// AGENTS.md and CLAUDE.md, and print the Codex snippet. Idempotent; existing
        /// content is preserved.
        #[arg(long)]
        agents: bool,
        /// With --agents, also write loci's entry into Codex's global configuration
        /// ($CODEX_HOME/config.toml, else ~/.codex/config.toml), keeping everything else in it.
        #[arg(long, requires = "agents")]
        global: bool,
        /// Also add git hooks (post-commit, post-merge, post-checkout, post-rewrite) that
        /// run `loci sync --quiet` after each commit, merge, checkout or rewrite, so memory
        /// follows commits made without an editor. An existing hook is kept (loci's block
        /// goes after its `#!` line); never fails the git command. Idempotent.
        #[arg(long, conflicts_with = "remove_git_hook")]
        git_hook: bool,
        /// Take loci's block out of the git hooks again (a hook holding nothing else is deleted).
        #[arg(long)]
        remove_git_hook: bool,
    },
    /// Serve the MCP tools to an AI agent: over stdio, or with --http over streamable HTTP
    /// (bearer token from .loci/mcp-token required).
    Mcp {
        /// Serve streamable HTTP at http://ADDR/mcp instead of stdio (e.g. 127.0.0.1:7077).
        #[arg(long, value_name = "ADDR")]
        http: Option<std::net::SocketAddr>,
        /// Allow --http on a non-loopback address (the bearer token is still required).
        #[arg(long, requires = "http")]
        allow_remote: bool,
        /// With --http, also serve requests from browser pages of this origin
        /// (`https://app.example.com:8443`; repeatable). Pages on this machine
        /// (`http://localhost:*`, `127.0.0.1`, `[::1]`) are always served; requests without an
        /// `Origin` header (not from a browser) too; any other origin gets 403.
        #[arg(long, value_name = "ORIGIN", requires = "http")]
        allow_origin: Vec<String>,
    },
    /// Walk and parse the workspace, updating the map incrementally.
    Scan {
        /// The workspace root to scan (default: the discovered root).
        path: Option<PathBuf>,
        /// After the scan, import this SCIP index (`rust-analyzer scip .`, `scip-python
        /// index`, `scip-typescript index`, `scip-java index` write one): its references
        /// become stated edges (confidence 1.0) for the files it covers, until they change.
        #[arg(long, value_name = "FILE")]
        scip: Option<PathBuf>,
    },
    /// Embed the code chunks that have no vector yet, with the model of `[embeddings] model`
    /// (or LOCI_EMBEDDINGS_MODEL): optional dense retrieval for `context`. Resumable.
    Embed,
    /// Find symbols by name, qualified name or key.
    Symbol {
        /// `login`, `AuthService.login` (or `AuthService::login`), or a key `path#name@kind`.
        name: String,
        /// List at most this many, by path and line (0: all); the rest are counted.
        #[arg(long, default_value_t = loci_engine::map::LIST_LIMIT, value_parser = whole::<u32>("rows", 0), allow_negative_numbers = true)]
        limit: u32,
    },
    /// List references to a name (or to a symbol key).
    Refs {
        /// A bare name or a symbol key.
        name: String,
        /// List at most this many, by path and line (0: all); the rest are counted.
        #[arg(long, default_value_t = loci_engine::map::LIST_LIMIT, value_parser = whole::<u32>("rows", 0), allow_negative_numbers = true)]
        limit: u32,
    },
    /// List the call sites resolved to a symbol.
    Callers {
        /// A name, qualified name (`Regex.new` or `Regex::new`) or key.
        symbol: String,
        /// List at most this many, the surest first, then by path and line (0: all); the
        /// rest are counted.
        #[arg(long, default_value_t = loci_engine::map::LIST_LIMIT, value_parser = whole::<u32>("rows", 0), allow_negative_numbers = true)]
        limit: u32,
        /// List only calls resolved at this confidence or more (0 to 1); weaker ones are
        /// counted. 0 lists every resolved call.
        #[arg(long, default_value_t = loci_engine::map::MIN_CONFIDENCE, value_parser = confidence, allow_negative_numbers = true)]
        min_confidence: f64,
    },
    /// List the calls written in a symbol's definition (its outgoing calls).
    Callees {
        /// A name, qualified name (`Regex.new`), dotted name as code spells it
        /// (`urllib.parse.urlsplit`) or key.
        symbol: String,
        /// List at most this many calls (0: all); the rest are counted.
        #[arg(long, default_value_t = loci_engine::map::LIST_LIMIT, value_parser = whole::<u32>("rows", 0), allow_negative_numbers = true)]
        limit: u32,
    },
    /// A file's definitions in document order, nested by depth.
    Outline {
        /// A repo-relative path.
        path: String,
        /// List at most this many definitions (0: all); the rest are counted.
        #[arg(long, default_value_t = loci_engine::map::LIST_LIMIT, value_parser = whole::<u32>("rows", 0), allow_negative_numbers = true)]
        limit: u32,
    },
    /// A symbol's source text, with the memory about it and whether that memory is stale.
    Source {
        /// A name, qualified name, dotted name or key (the first match is shown).
        name: String,
    },
    /// List memory pages (files, folders, topics, decisions, lessons) under a subject prefix.
    List {
        /// `src/auth` (it and what is under it), `topic:`, `decision:`, `lesson:` (default: all).
        #[arg(default_value = "")]
        prefix: String,
        /// Only these kinds: file, folder, root, topic, decision, lesson (repeatable).
        #[arg(long = "kind")]
        kinds: Vec<String>,
        /// List at most this many pages (0: all); the rest are counted.
        #[arg(long, default_value_t = 0, value_parser = whole::<u32>("pages", 0), allow_negative_numbers = true)]
        limit: u32,
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
        /// Hops to follow (at least 1).
        #[arg(long, default_value_t = 3, value_parser = whole::<u32>("hops", 1), allow_negative_numbers = true)]
        depth: u32,
        /// Follow only stated edges (proven by a parser: imports, names they bind, module
        /// paths), not derived ones.
        #[arg(long)]
        hard: bool,
        /// Follow only edges at this confidence or more (0 to 1); what only weaker ones
        /// reach is counted. 0 follows every resolved edge.
        #[arg(long, default_value_t = loci_engine::map::MIN_CONFIDENCE, value_parser = confidence, allow_negative_numbers = true)]
        min_confidence: f64,
        /// List at most this many dependents, the nearest first, then the surest (0: all);
        /// the rest are counted.
        #[arg(long, default_value_t = loci_engine::map::IMPACT_LIMIT, value_parser = whole::<u32>("dependents", 0), allow_negative_numbers = true)]
        limit: u32,
    },
    /// Show what the map holds, and the files it leaves out (skipped, degraded) with why.
    Stats,
    /// Run the language server on stdin/stdout (editors start this).
    Lsp,
    /// Write a new revision of a subject's memory page.
    Remember {
        /// A path (file or folder), `.`, `topic:NAME`, `decisions` or `lessons`.
        subject: String,
        /// Read the body from this file (`-` for stdin).
        #[arg(long, short = 'f', conflicts_with = "text")]
        file: Option<PathBuf>,
        /// The body as an argument.
        #[arg(long, short = 't')]
        text: Option<String>,
        #[command(flatten)]
        write: WriteArgs,
    },
    /// Append a decision to the decisions page.
    Decide {
        /// The decision.
        text: String,
        /// The file, folder or topic it is about.
        #[arg(long)]
        subject: Option<String>,
        #[command(flatten)]
        write: WriteArgs,
    },
    /// Append a lesson to the lessons page.
    Learn {
        /// The lesson.
        text: String,
        /// The file, folder or topic it is about.
        #[arg(long)]
        subject: Option<String>,
        #[command(flatten)]
        write: WriteArgs,
    },
    /// Show a page (its current revision, or --version N).
    Show {
        /// The subject.
        subject: String,
        /// A version number.
        #[arg(long, allow_negative_numbers = true)]
        version: Option<i64>,
    },
    /// List a page's revisions.
    History {
        /// The subject.
        subject: String,
    },
    /// Pin a page: it is never marked stale.
    Pin {
        /// The subject.
        subject: String,
        #[command(flatten)]
        write: WriteArgs,
    },
    /// Unpin a page.
    Unpin {
        /// The subject.
        subject: String,
        #[command(flatten)]
        write: WriteArgs,
    },
    /// Publish version N's body again as a new revision (history is kept).
    Rollback {
        /// The subject.
        subject: String,
        /// The version to restore.
        #[arg(allow_negative_numbers = true)]
        version: i64,
        #[command(flatten)]
        write: WriteArgs,
    },
    /// Memory as it stood at a date (2026-11-01) or time (2026-11-01T12:00:00Z).
    Asof {
        /// The moment.
        date: String,
        /// Also print this subject's revision current at that moment.
        #[arg(long)]
        show: Option<String>,
    },
    /// Which memory says this, who wrote it, when, in which session, after which commit.
    Why {
        /// PATH[:LINE] (one-based line), or text from a memory.
        target: String,
    },
    /// Re-snapshot a page's claims without rewriting it ("still true"); refused while the
    /// code contradicts one of them (see `loci lint`).
    Confirm {
        /// The subject.
        subject: String,
        #[command(flatten)]
        write: WriteArgs,
    },
    /// Hand-curated concept pages.
    Topic {
        #[command(subcommand)]
        command: TopicCommand,
    },
    /// Executable memory: a claim plus a command that demonstrates it.
    Fact {
        #[command(subcommand)]
        command: FactCommand,
    },
    /// The session diary.
    Session {
        #[command(subcommand)]
        command: SessionCommand,
    },
    /// Full-text search over memory, symbols and docs (any text is safe).
    Search {
        /// The query (it may start with `-`: `loci search -band`; `-` alone reads it from
        /// stdin).
        #[arg(allow_hyphen_values = true)]
        query: String,
        /// Only these kinds: memory, symbol, doc (repeatable).
        #[arg(long = "kind", value_enum)]
        kinds: Vec<KindArg>,
        /// Only this path or what is under it (`src/auth` takes `src/auth/…`, not
        /// `src/authz/…`).
        #[arg(long)]
        path: Option<String>,
        /// Hits per kind.
        #[arg(long, default_value_t = 10, value_parser = whole::<u32>("hits", 0), allow_negative_numbers = true)]
        limit: u32,
    },
    /// What to know before touching something: ranked memory, code and docs within a
    /// token budget, or an explicit "nothing relevant".
    Context {
        /// The question or task (may be left out when --open is given; it may start with
        /// `-`; `-` alone reads it from stdin).
        #[arg(default_value = "", allow_hyphen_values = true)]
        query: String,
        /// Files open or being worked on (repeatable).
        #[arg(long = "open")]
        open: Vec<String>,
        /// Token budget (tokens ≈ characters / 4).
        #[arg(
            long,
            value_parser = whole::<u64>("tokens", loci_engine::context::MIN_BUDGET),
            allow_negative_numbers = true
        )]
        budget: Option<u64>,
        /// Relevance floor below which the answer abstains (any finite number, negative
        /// ones too).
        #[arg(long, allow_hyphen_values = true)]
        floor: Option<f64>,
    },
    /// Evaluate retrieval on a case file: recall@k, MRR, nDCG@k, abstention.
    Eval {
        /// A JSONL case file (see docs/context.md).
        cases: PathBuf,
        /// The cutoff k.
        #[arg(long, default_value_t = 5, value_parser = whole::<usize>("ranks", 0), allow_negative_numbers = true)]
        k: usize,
    },
    /// Pick the abstention floor that best separates in-scope from out-of-scope cases.
    Calibrate {
        /// A JSONL case file.
        cases: PathBuf,
    },
    /// Check memory and the repository's docs against the code.
    Lint,
    /// The CI gate: lint, then exit 1 if open contradictions or stale pages exceed the
    /// [check] thresholds.
    Check {
        /// Print SARIF 2.1.0 (for code-scanning UIs) instead of text.
        #[arg(long, conflicts_with = "json")]
        sarif: bool,
    },
    /// Dismiss a contradiction for good (a human decision).
    Resolve {
        /// The contradiction id (from `loci lint`).
        #[arg(allow_negative_numbers = true)]
        id: i64,
        /// Why it is not a problem.
        #[arg(long)]
        notes: Option<String>,
        /// The session.
        #[arg(long, env = "LOCI_SESSION", allow_negative_numbers = true)]
        session: Option<i64>,
    },
    /// File changes observed by scans, and what they did to the knowledge.
    Drift {
        /// List entries after this scan revision (default: the last scan's).
        #[arg(long, allow_negative_numbers = true)]
        since: Option<i64>,
    },
    /// Record git history (or, without git, snapshots) into the event log.
    Sync {
        /// Read at most this many commits (default: [sync] max_commits in .loci/config.toml, 200).
        #[arg(long, value_parser = whole::<usize>("commits", 1), allow_negative_numbers = true)]
        limit: Option<usize>,
        /// Print nothing (errors still go to stderr and set the exit code): for git hooks.
        #[arg(long, short)]
        quiet: bool,
    },
    /// The last N sessions and what they changed.
    Recap {
        /// How many sessions.
        #[arg(default_value_t = 3, value_parser = whole::<u32>("sessions", 1), allow_negative_numbers = true)]
        n: u32,
    },
    /// First drafts of pages by the model command `[synthesis] command` names (off until
    /// it is set): `--plan` lists what is missing or behind the code, `--dry-run` prints
    /// the prompts, otherwise each answer becomes a revision authored `llm:MODEL`.
    Synthesize {
        /// Files or folders to write (default with --pending: the plan).
        paths: Vec<String>,
        /// List the pages to write and why; runs nothing.
        #[arg(long, conflicts_with_all = ["paths", "pending", "dry_run"])]
        plan: bool,
        /// Write the plan's pages, up to [synthesis] max_pages.
        #[arg(long, conflicts_with = "paths")]
        pending: bool,
        /// Print the exact prompts instead of running the command.
        #[arg(long)]
        dry_run: bool,
        /// The session these writes belong to.
        #[arg(long, env = "LOCI_SESSION", allow_negative_numbers = true)]
        session: Option<i64>,
    },
    /// Write authored memory (pages with every revision, decisions, lessons, topics, fact
    /// definitions; never fact outcomes) as JSON to stdout or to --output FILE.
    Export {
        /// Write the document to this file instead of stdout.
        #[arg(long, short = 'o', value_name = "FILE")]
        output: Option<PathBuf>,
        /// Write an Obsidian vault to DIR instead (one note per page, wikilinks along
        /// imports); exporting again updates it in place.
        #[arg(long, value_name = "DIR", conflicts_with = "output")]
        obsidian: Option<PathBuf>,
    },
    /// Import a `loci export` document (`-` for stdin). Importing it again changes nothing.
    Import {
        /// The export file.
        file: PathBuf,
    },
    /// Copy the database to a new file with SQLite's online backup API; other loci
    /// processes may keep writing meanwhile.
    Backup {
        /// The backup file to create (must not exist).
        path: PathBuf,
    },
    /// Replace the database with a backup after validating it (integrity, schema,
    /// tables); the replaced database is kept under .loci/backups/.
    Restore {
        /// The backup file.
        path: PathBuf,
    },
    /// Team memory on PostgreSQL: `[team] url` in .loci/config.toml or LOCI_TEAM_URL
    /// (docs/team.md).
    Team {
        #[command(subcommand)]
        command: TeamCommand,
    },
}

#[derive(Debug, Subcommand)]
enum TeamCommand {
    /// Create or migrate the server's schema (a newer one is refused untouched).
    Init,
    /// The server, its log head, this replica's high-water mark, pending writes and the
    /// last error.
    Status,
    /// Push the writes queued while the server was unreachable, then pull what others
    /// wrote.
    Sync,
    /// `sync`, as `context` and `search` start it in the background after answering from
    /// the replica (recorded, so they start one at most every 2 s).
    #[command(hide = true)]
    CatchUp,
    /// Upload this checkout's memory to the team (idempotent: a second join adds nothing).
    Join,
    /// Write the team's memory (pulled first) as a `loci export` document, for `loci
    /// import` into a standalone store.
    Export {
        /// Write the document to this file instead of stdout.
        #[arg(long, short = 'o', value_name = "FILE")]
        output: Option<PathBuf>,
    },
}

/// A search hit kind on the command line.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum KindArg {
    Memory,
    Symbol,
    Doc,
}

#[derive(Debug, Subcommand)]
enum TopicCommand {
    /// Add a member (a path or subject) to a topic.
    Add {
        /// `billing` or `topic:billing`.
        topic: String,
        /// The member.
        member: String,
    },
    /// Remove a member from a topic.
    Rm {
        /// The topic.
        topic: String,
        /// The member.
        member: String,
    },
    /// List topics and members.
    List,
}

#[derive(Debug, Subcommand)]
enum FactCommand {
    /// Record a fact.
    Add {
        /// The claim the command demonstrates.
        #[arg(long)]
        claim: String,
        /// The command line (split into arguments, never run by a shell).
        #[arg(long)]
        cmd: String,
        /// Expected substring of the output.
        #[arg(long)]
        expect: Option<String>,
        /// Expected exit code.
        #[arg(long, allow_negative_numbers = true)]
        exit: Option<i64>,
        #[command(flatten)]
        write: WriteArgs,
    },
    /// List facts and their last runs.
    List,
    /// Run facts (only when [facts] run = true in .loci/config.toml).
    Run {
        /// Run only this fact.
        #[arg(allow_negative_numbers = true)]
        id: Option<i64>,
    },
}

#[derive(Debug, Subcommand)]
enum SessionCommand {
    /// Begin a session; pass the printed id with --session or LOCI_SESSION.
    Begin {
        /// What the session sets out to do.
        #[arg(long)]
        task: Option<String>,
        /// Who runs it.
        #[arg(long)]
        author: Option<String>,
    },
    /// End a session with a summary.
    End {
        /// The session (default: $LOCI_SESSION).
        #[arg(long, env = "LOCI_SESSION", allow_negative_numbers = true)]
        session: i64,
        /// What was done.
        #[arg(long)]
        summary: Option<String>,
    },
}

/// Options of every memory write.
#[derive(Debug, clap::Args)]
struct WriteArgs {
    /// Who writes (`human:NAME`, `agent:NAME`, a model name; default $LOCI_AUTHOR or human:$USER).
    #[arg(long)]
    author: Option<String>,
    /// The session this write belongs to.
    #[arg(long, env = "LOCI_SESSION", allow_negative_numbers = true)]
    session: Option<i64>,
    /// One-line change summary.
    #[arg(long)]
    summary: Option<String>,
    /// Fail unless the page is at this version (0: must not exist yet).
    #[arg(long, allow_negative_numbers = true)]
    expect_version: Option<i64>,
    /// Idempotency key: an exact retry returns the original result.
    #[arg(long)]
    operation_id: Option<String>,
}

impl WriteArgs {
    fn options(&self) -> loci_engine::memory::WriteOptions {
        loci_engine::memory::WriteOptions {
            author: self.author.clone(),
            session: self.session,
            summary: self.summary.clone(),
            expect_version: self.expect_version,
            operation_id: self.operation_id.clone(),
        }
    }
}

/// The value parser of every count option (`--depth`, `--limit`, `--budget`, `--k`,
/// `recap N`): a whole number of `unit` from `min` up to `T`'s largest. clap prints the
/// message after "invalid value 'X' for '--OPTION'", so it names the unit and the range
/// instead of Rust's "invalid digit found in string" for `-5`. The minimum is the
/// engine's own where it has one (a budget of at least 50 tokens: "at least 0" had been
/// followed by the engine refusing 0 to 49); k = 0 is left to the engine, which names it.
fn whole<T>(
    unit: &'static str,
    min: u64,
) -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync + 'static
where
    T: TryFrom<u64> + Clone + Send + Sync + 'static,
{
    move |arg: &str| {
        let range = format!("a whole number of {unit}, at least {min}");
        let n: u64 = arg.trim().parse().map_err(|_| range.clone())?;
        if n < min {
            return Err(range);
        }
        T::try_from(n).map_err(|_| format!("{range}: {n} is too large"))
    }
}

/// Parses a confidence: a number from 0 to 1.
fn confidence(arg: &str) -> Result<f64, String> {
    let range = "a confidence from 0 (every edge) to 1 (stated only)";
    match arg.trim().parse::<f64>() {
        Ok(c) if (0.0..=1.0).contains(&c) => Ok(c),
        _ => Err(range.to_string()),
    }
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
            // found" (`pin`, `confirm` or `rollback` of a missing page or version had
            // exited 2 where `show` exits 1).
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
fn cli_error(kind: &'static str, message: String) -> anyhow::Error {
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
    // Logs go to stderr, never stdout (case B21); level from RUST_LOG, default warn.
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
}

/// Brings a built map up to the tree (an incremental scan) before `lint` and `check` judge
/// memory against it: they passed a page whose symbol had been renamed since the last
/// scan. An unscanned map is left to their own refusal, a read-only store as it is.
fn refresh_the_map(ws: &mut Workspace) -> anyhow::Result<()> {
    if ws.map_is_built()? && !ws.store().is_read_only() {
        ws.scan(&|_| {})?;
    }
    Ok(())
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

/// Runs one command; `opened` receives the workspace once it is open, so that a failure
/// after that can still report the store's state.
fn run(mut cli: Cli, opened: &mut Option<Workspace>) -> anyhow::Result<ExitCode> {
    // `-` reads the question from stdin: a command line holds at most 128 KiB per argument.
    // Any bytes are a question: invalid UTF-8 becomes U+FFFD, as any text is safe.
    if let Command::Context { query, .. } | Command::Search { query, .. } = &mut cli.command
        && query == "-"
    {
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut bytes)?;
        *query = String::from_utf8_lossy(&bytes).into_owned();
    }
    if let Command::Lsp = cli.command {
        // Roots come from the client's `initialize`, not from the current directory.
        return Ok(ExitCode::from(loci_lsp::run_stdio()?));
    }
    let cwd = std::env::current_dir()?;
    let root = match (&cli.command, &cli.root) {
        (Command::Scan { path: Some(p), .. }, _) => p.clone(),
        (_, Some(r)) => r.clone(),
        _ => loci_engine::discover_root(&cwd),
    };
    if !root.is_dir() {
        // `-C /nonexistent` had said "not a directory", as if something were there.
        let message = if root.exists() {
            format!("{}: not a directory", root.display())
        } else {
            format!("no such directory: {}", root.display())
        };
        return Err(cli_error("invalid_argument", message));
    }
    // `loci scan SUBDIR` of a workspace made a second store in SUBDIR/.loci, and every
    // command run below SUBDIR then used it: the workspace's memory looked lost there.
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
    let out = output::Output::new(cli.json);
    let mut root = root;
    let mut opening = Workspace::open(&root, cli.db.as_deref());
    // A store given from another directory answers for the tree it maps: `loci lint --db
    // STORE` run elsewhere had mapped that directory into the store and marked all of its
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
    let ws = match (opening, &cli.command) {
        // The way out a damaged database's message names: no connection can be opened on
        // it to restore into, so the backup takes its place (the damaged file is kept).
        (Err(EngineError::Store(e)), Command::Restore { path }) if e.is_damage() => {
            let (ws, env) = Workspace::restore_damaged(&root, cli.db.as_deref(), path)?;
            *opened = Some(ws);
            out.restored(&env)?;
            out.finish(None)?;
            return Ok(ExitCode::SUCCESS);
        }
        // `loci mcp` serves a store it cannot open too: it answers `initialize`, and each
        // tool call says what is wrong and the way out (an agent had seen a server that
        // died before `initialize`, with no reason; issue 37).
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
            return Ok(ExitCode::SUCCESS);
        }
        (ws, _) => opened.insert(ws?),
    };
    // What reports on the store, rewrites the map or imports into it first checks the
    // tables of memory; what writes one entry or lints, when a check is due (a scan the
    // engine runs for it checks when due too): a damaged page had passed `scan`, `stats`
    // and `remember` with exit 0 (issue 37). Reads do not pay for it, and `export` must
    // still save what reads.
    match cli.command {
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
    // Team memory: a command that reads memory first pulls what the team wrote (a write
    // syncs in the engine); an unreachable server is said, and the replica answers.
    // `context` and `search` — the questions an agent asks at every step — answer from
    // the replica at once, as a solo store would, and catch up after, in the background
    // (`team_catch_up_due`); their envelope says how far behind the replica may be.
    let catch_up = matches!(
        cli.command,
        Command::Context { .. } | Command::Search { .. }
    ) && ws.team_catch_up_due();
    if matches!(
        cli.command,
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
    let root = ws.root().to_path_buf();
    let db = cli.db.clone();
    let cwd = cwd.canonicalize().unwrap_or(cwd);
    // What an empty answer of a lookup says on stderr (exit 1 is "nothing found").
    let mut miss = match &cli.command {
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
            quoted(&from_cwd(path.clone(), &cwd, &root))
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
            let path = quoted(&from_cwd(path.clone(), &cwd, &root));
            Some(if *reverse {
                format!("nothing in the map imports `{path}`")
            } else {
                format!("`{path}` imports nothing the map records")
            })
        }
        Command::Impact { target, depth, .. } => Some(format!(
            "nothing depends on `{}` within depth {depth}",
            quoted(&from_cwd(target.clone(), &cwd, &root))
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
            quoted(&from_cwd(subject.clone(), &cwd, &root))
        )),
        Command::Asof { date, show: None } => {
            Some(format!("no memory was written by {}", quoted(date)))
        }
        Command::Asof {
            date,
            show: Some(subject),
        } => Some(format!(
            "`{}` had no revision by {}",
            quoted(&from_cwd(subject.clone(), &cwd, &root)),
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
    };
    let here = |arg: String| from_cwd(arg, &cwd, &root);
    // A symbol key's path from the current folder too (`message.py#Message.get@method`
    // in `email/`); a name is left as given.
    let key_here = |arg: String| match arg.split_once('#') {
        Some((path, rest)) => format!("{}#{rest}", from_cwd(path.to_string(), &cwd, &root)),
        None => arg,
    };
    let found = match cli.command {
        Command::Init {
            agents,
            global,
            git_hook,
            remove_git_hook,
        } => {
            let codex_config = match global {
                false => None,
                true => Some(loci_engine::init::codex_config_path().ok_or_else(|| {
                    cli_error(
                        "invalid_argument",
                        "--global: neither CODEX_HOME nor HOME is set, so Codex's config.toml cannot be found".into(),
                    )
                })?),
            };
            let env = ws.stats()?;
            let found = out.init(ws.root(), &env)?;
            // The envelope first, then the agents' report.
            out.finish(None)?;
            if agents {
                let options = loci_engine::init::AgentsOptions { codex_config };
                print_agents(
                    &loci_engine::init::wire_agents(ws.root(), &options)?,
                    cli.json,
                )?;
            }
            if git_hook {
                print_hooks(&loci_engine::init::hooks::install(ws.root())?, cli.json)?;
            } else if remove_git_hook {
                print_hooks(&loci_engine::init::hooks::remove(ws.root())?, cli.json)?;
            }
            found
        }
        Command::Mcp {
            http,
            allow_remote,
            allow_origin,
        } => {
            let transport = mcp_transport(http, allow_remote, allow_origin);
            // The server owns the workspace from here on.
            let Some(ws) = opened.take() else {
                return Err(cli_error("internal", "the workspace was not open".into()));
            };
            loci_mcp::run(Ok(ws), transport, loci_mcp::ServerOptions::default())?;
            return Ok(ExitCode::SUCCESS);
        }
        Command::Scan { scip, .. } => {
            let bar = output::ScanBar::new(cli.json);
            let env = ws.scan(&|p| bar.update(p))?;
            bar.finish();
            match scip {
                // The index is checked against the map the scan just made.
                Some(index) => {
                    let index = cwd.join(index);
                    let imported = ws.import_scip(&index, loci_engine::map::MAX_INDEX_BYTES)?;
                    out.scan_scip(&env, &imported)?
                }
                None => out.scan(&env)?,
            }
        }
        Command::Embed => {
            let bar = output::EmbedBar::new(cli.json);
            let env = ws.embed(&|p| {
                bar.update(p);
                std::ops::ControlFlow::Continue(())
            })?;
            bar.finish();
            out.embed(&env)?
        }
        Command::Symbol { name, limit } => {
            let env = ws.symbol(&key_here(name), limit)?;
            miss = unknown_symbol(&env).or(miss);
            out.symbols(&env)?
        }
        Command::Refs { name, limit } => {
            let env = ws.refs(&key_here(name), limit)?;
            miss = unknown_symbol(&env).or(miss);
            out.refs(&env)?
        }
        Command::Callees { symbol, limit } => {
            let env = ws.callees(&key_here(symbol), limit)?;
            miss = unknown_symbol(&env).or(miss);
            out.callees(&env)?
        }
        Command::Outline { path, limit } => match ws.outline(&here(path), limit) {
            Err(EngineError::NotFound(message)) => return map_not_found(&out, ws, &message),
            env => out.outline(&env?)?,
        },
        Command::Source { name } => match ws.source(&key_here(name)) {
            Err(EngineError::NotFound(message)) => return not_found(&out, ws, &message),
            env => out.source(&env?)?,
        },
        Command::List {
            prefix,
            kinds,
            limit,
        } => out.page_entries(&ws.memory_list(&here(prefix), &kinds, limit)?)?,
        Command::Callers {
            symbol,
            limit,
            min_confidence,
        } => {
            // A name that is no symbol is a typo, not dead code: say which.
            let typo = format!(
                "no symbol named `{}` in the map, so no callers (`loci symbol` finds names)",
                quoted(&symbol)
            );
            let weaker = format!(
                "no callers of `{}` at confidence {min_confidence:.2} or more",
                quoted(&symbol)
            );
            let env = ws.callers_with(&key_here(symbol), limit, min_confidence)?;
            if env.result.targets_total == 0 {
                miss = unknown_symbol(&env).or(Some(typo));
            } else if env.result.weaker > 0 {
                miss = Some(weaker);
            }
            out.callers(&env)?
        }
        Command::Deps { path, reverse } => match ws.deps(&here(path), reverse) {
            Err(EngineError::NotFound(message)) => return map_not_found(&out, ws, &message),
            env => out.deps(&env?)?,
        },
        Command::Impact {
            target,
            depth,
            hard,
            min_confidence,
            limit,
        } => match ws.impact_with(
            &here(target.clone()),
            depth,
            loci_engine::map::Edges {
                hard,
                min_confidence,
            },
            limit,
        ) {
            Err(EngineError::NotFound(message)) => return map_not_found(&out, ws, &message),
            Ok(env) => {
                if env.result.weaker > 0 {
                    miss = Some(format!(
                        "nothing depends on `{}` within depth {depth} through {}",
                        quoted(&target),
                        loci_engine::text::edges_followed(hard, min_confidence)
                    ));
                }
                out.impact(&env)?
            }
            Err(e) => return Err(e.into()),
        },
        Command::Stats => out.stats(&ws.stats()?)?,
        Command::Lsp => true,
        Command::Remember {
            subject,
            file,
            text,
            write,
        } => {
            let body = match (file, text) {
                (_, Some(t)) => t,
                (Some(f), None) if f.as_os_str() == "-" => {
                    let mut s = String::new();
                    std::io::Read::read_to_string(&mut std::io::stdin(), &mut s)?;
                    s
                }
                (Some(f), None) => std::fs::read_to_string(&f)
                    .map_err(|e| cli_error("io", format!("{}: {e}", f.display())))?,
                (None, None) => {
                    return Err(cli_error(
                        "invalid_argument",
                        "give the memory with --text TEXT, --file FILE, or --file - (stdin)".into(),
                    ));
                }
            };
            out.written(&ws.remember(&here(subject), &body, &write.options())?)?
        }
        Command::Decide {
            text,
            subject,
            write,
        } => out.written(&ws.decide(&text, subject.map(here).as_deref(), &write.options())?)?,
        Command::Learn {
            text,
            subject,
            write,
        } => out.written(&ws.learn(&text, subject.map(here).as_deref(), &write.options())?)?,
        Command::Show { subject, version } => match ws.show(&here(subject), version) {
            Err(EngineError::NotFound(m)) => return not_found(&out, ws, &m),
            env => out.shown(&env?)?,
        },
        Command::History { subject } => match ws.history(&here(subject)) {
            Err(EngineError::NotFound(m)) => return not_found(&out, ws, &m),
            env => out.history(&env?)?,
        },
        Command::Pin { subject, write } => {
            out.page(&ws.pin(&here(subject), true, &write.options())?)?
        }
        Command::Unpin { subject, write } => {
            out.page(&ws.pin(&here(subject), false, &write.options())?)?
        }
        Command::Rollback {
            subject,
            version,
            write,
        } => out.written(&ws.rollback(&here(subject), version, &write.options())?)?,
        Command::Asof { date, show } => match ws.asof(&date, show.as_deref()) {
            Err(EngineError::NotFound(m)) => return not_found(&out, ws, &m),
            env => out.asof(&env?)?,
        },
        Command::Why { target } => match ws.why(&from_cwd_with_line(target, &cwd, &root)) {
            Err(EngineError::NotFound(m)) => return not_found(&out, ws, &m),
            env => out.why(&env?)?,
        },
        Command::Confirm { subject, write } => {
            out.confirmed(&ws.confirm(&here(subject), &write.options())?)?
        }
        Command::Topic { command } => match command {
            TopicCommand::Add { topic, member } => {
                out.members(&ws.topic_set(&topic, &here(member), true, &Default::default())?)?
            }
            TopicCommand::Rm { topic, member } => {
                out.members(&ws.topic_set(&topic, &here(member), false, &Default::default())?)?
            }
            TopicCommand::List => out.topics(&ws.topics()?)?,
        },
        Command::Fact { command } => match command {
            FactCommand::Add {
                claim,
                cmd,
                expect,
                exit,
                write,
            } => out.facts(
                &ws.fact_add(&claim, &cmd, expect.as_deref(), exit, &write.options())?
                    .map(|f| vec![f]),
            )?,
            FactCommand::List => out.facts(&ws.fact_list()?)?,
            FactCommand::Run { id } => out.fact_runs(&ws.fact_run(id)?)?,
        },
        Command::Session { command } => match command {
            SessionCommand::Begin { task, author } => {
                out.session(&ws.session_begin(task.as_deref(), author.as_deref())?)?
            }
            SessionCommand::End { session, summary } => out.sessions(
                &ws.session_end(session, summary.as_deref())?
                    .map(|s| vec![s]),
            )?,
        },
        Command::Recap { n } => out.sessions(&ws.recap(n)?)?,
        Command::Search {
            query,
            kinds,
            path,
            limit,
        } => {
            use loci_engine::context::HitKind;
            let kinds = kinds
                .into_iter()
                .map(|k| match k {
                    KindArg::Memory => HitKind::Memory,
                    KindArg::Symbol => HitKind::Symbol,
                    KindArg::Doc => HitKind::Doc,
                })
                .collect();
            let options = loci_engine::context::SearchOptions {
                kinds,
                // From the current folder, as every path argument (`--path mime` in `email/`).
                path_prefix: path.map(here),
                limit: Some(limit),
            };
            out.search(&ws.search(&query, &options)?)?
        }
        Command::Context {
            query,
            open,
            budget,
            floor,
        } => {
            let req = loci_engine::context::ContextRequest {
                query,
                open_files: open.into_iter().map(here).collect(),
                budget,
                floor,
            };
            out.context(&ws.context(&req)?)?
        }
        Command::Eval { cases, k } => out.eval(&ws.eval(&cases, k)?)?,
        Command::Calibrate { cases } => out.calibration(&ws.calibrate(&cases)?)?,
        Command::Lint => {
            refresh_the_map(ws)?;
            out.lint(&ws.lint()?)?
        }
        Command::Check { sarif } => {
            refresh_the_map(ws)?;
            let env = ws.check()?;
            if sarif {
                out.sarif(&loci_engine::audit::to_sarif(ws, &env.result))?;
                out.check_verdict(&env.result);
            } else {
                out.check(&env)?;
            }
            env.result.passed
        }
        Command::Resolve { id, notes, session } => {
            match ws.resolve(id, notes.as_deref(), session) {
                Err(EngineError::NotFound(m)) => return not_found(&out, ws, &m),
                env => out.resolved(&env?)?,
            }
        }
        Command::Drift { since } => out.drift(&ws.drift(since)?)?,
        Command::Sync { limit, quiet } => {
            let env = ws.sync(limit)?;
            if quiet { true } else { out.sync(&env)? }
        }
        Command::Synthesize {
            paths,
            plan,
            pending,
            dry_run,
            session,
        } => {
            use loci_engine::memory::synthesis::Targets;
            let targets = if paths.is_empty() {
                Targets::Pending
            } else {
                Targets::Paths(paths.into_iter().map(here).collect())
            };
            if plan {
                out.synthesis_plan(&ws.synthesis_plan()?)?
            } else if !pending && matches!(targets, Targets::Pending) {
                return Err(cli_error(
                    "invalid_argument",
                    "name the files or folders to write, or --pending for the plan's pages \
                     (`loci synthesize --plan` lists them)"
                        .into(),
                ));
            } else if dry_run {
                out.synthesis_prompts(&ws.synthesis_prompts(&targets)?)?
            } else {
                let bar = output::SynthesisBar::new(cli.json);
                let report = ws.synthesize(&targets, session, &|p| bar.update(p));
                bar.finish();
                out.synthesis_report(&report?)?
            }
        }
        Command::Export {
            obsidian: Some(dir),
            ..
        } => out.vault(&ws.export_obsidian(&dir)?)?,
        Command::Export { output, .. } => out.exported(ws.export_memory()?, output.as_deref())?,
        Command::Import { file } => {
            let (text, source) = if file.as_os_str() == "-" {
                let mut s = String::new();
                std::io::Read::read_to_string(&mut std::io::stdin(), &mut s)?;
                (s, "-".to_string())
            } else {
                let text = std::fs::read_to_string(&file)
                    .map_err(|e| cli_error("io", format!("{}: {e}", file.display())))?;
                (text, file.display().to_string())
            };
            let doc = loci_engine::memory::parse_export(&text, &source)?;
            out.imported(&ws.import_memory(&doc, &source)?)?
        }
        Command::Backup { path } => out.backed_up(&ws.backup(&path)?)?,
        Command::Restore { path } => out.restored(&ws.restore(&path)?)?,
        Command::Team { command } => match command {
            TeamCommand::Init => out.team_init(&ws.team_init()?)?,
            TeamCommand::Status => out.team_status(&ws.team_status()?)?,
            TeamCommand::Sync => out.team_sync(&ws.team_sync()?)?,
            TeamCommand::CatchUp => out.team_sync(&ws.team_catch_up()?)?,
            TeamCommand::Join => out.team_join(&ws.team_join()?)?,
            TeamCommand::Export { output } => out.exported(ws.team_export()?, output.as_deref())?,
        },
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

/// Prints what `init --agents` did, and the Codex snippet.
fn print_agents(report: &loci_engine::init::AgentsReport, json: bool) -> anyhow::Result<()> {
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
fn print_hooks(report: &loci_engine::init::hooks::HooksReport, json: bool) -> anyhow::Result<()> {
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
/// it: "did you mean"), as the reason it exits 1.
fn unknown_symbol<T>(env: &loci_engine::Envelope<T>) -> Option<String> {
    env.capability
        .notes
        .iter()
        .find(|n| n.starts_with("no symbol named"))
        .cloned()
}

/// "Nothing found" is exit code 1 with the reason on stderr.
/// A user's argument as a message quotes it: whole up to [`QUOTED_CHARS`] characters, else
/// its start and `…` (a 10 KB question was echoed whole on stderr).
fn quoted(arg: &str) -> String {
    match arg.char_indices().nth(QUOTED_CHARS) {
        Some((cut, _)) => format!("{}…", &arg[..cut]),
        None => arg.to_string(),
    }
}

/// At most this many characters of an argument are quoted in a message.
const QUOTED_CHARS: usize = 80;

/// Exit 1 for a lookup the engine answered with `NotFound`: the envelope (with `--json`)
/// and the message on stderr.
fn not_found(out: &output::Output, ws: &Workspace, message: &str) -> anyhow::Result<ExitCode> {
    out.not_found(&ws.envelope((), Vec::new())?, message)?;
    eprintln!("loci: {message}");
    Ok(ExitCode::from(1))
}

/// [`not_found`] for a lookup in the map (`outline`, `deps`, `impact`): when the map
/// leaves files out (skipped as secrets, too large, …), a note says so, in the
/// envelope's notes and on stderr (issue 32).
fn map_not_found(out: &output::Output, ws: &Workspace, message: &str) -> anyhow::Result<ExitCode> {
    let mut env = ws.envelope((), Vec::new())?;
    if let Some(note) = ws.left_out_note()? {
        eprintln!("note: {note}");
        env.capability.notes.push(note);
    }
    out.not_found(&env, message)?;
    eprintln!("loci: {message}");
    Ok(ExitCode::from(1))
}

/// A path argument as the map names it. A path that exists relative to the current
/// directory, when that is a folder below the workspace root, becomes root-relative with
/// `/` separators (as git resolves `git log parse.py` in a subfolder); so does an absolute
/// path inside the workspace. Anything else (a root-relative path, a symbol name, a
/// subject such as `decisions` or `topic:billing`) is passed on as given. `..` and `.`
/// are resolved by name, not through symlinks, so a path keeps the name the map has.
fn from_cwd(arg: String, cwd: &Path, root: &Path) -> String {
    use std::path::Component;
    let given = Path::new(&arg);
    let joined = if given.is_absolute() {
        given.to_path_buf()
    } else {
        match cwd.strip_prefix(root) {
            Ok(below) if !below.as_os_str().is_empty() => cwd.join(given),
            _ => return arg,
        }
    };
    let Ok(inside) = joined.strip_prefix(root) else {
        return arg;
    };
    let mut parts: Vec<String> = Vec::new();
    for c in inside.components() {
        match c {
            Component::Normal(p) => parts.push(p.to_string_lossy().into_owned()),
            // `..` pops a name (in the guard); above the root it is not the map's.
            Component::ParentDir if parts.pop().is_none() => return arg,
            _ => {}
        }
    }
    let rel = parts.join("/");
    if rel.is_empty() || !root.join(&rel).exists() {
        return arg;
    }
    rel
}

/// `PATH:LINE` with its path as [`from_cwd`] names it (`why generator.py:71` in the
/// folder of `email/generator.py`); anything else as [`from_cwd`] takes it.
fn from_cwd_with_line(arg: String, cwd: &Path, root: &Path) -> String {
    if let Some((path, line)) = arg.rsplit_once(':')
        && !path.is_empty()
        && !line.is_empty()
        && line.bytes().all(|b| b.is_ascii_digit())
    {
        return format!("{}:{line}", from_cwd(path.to_string(), cwd, root));
    }
    from_cwd(arg, cwd, root)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_command_line_definition_is_consistent() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
