//! The command line: every subcommand and option of `loci` (clap derive), and the value
//! parsers of counts and confidences.
//!
//! A subcommand of an operation maps onto its engine request
//! ([`loci_engine::requests`]) in `commands/`, and its flags' defaults are the requests'
//! (`requests::defaults`), except two lists the CLI prints longer than an MCP page holds:
//! `impact --limit` ([`loci_engine::map::IMPACT_LIMIT`]) and `list --limit` (0: all).

use std::path::PathBuf;

use clap::{Parser, Subcommand};

/// loci: a live, verified memory of a codebase.
#[derive(Debug, Parser)]
#[command(name = "loci", version, about)]
pub(crate) struct Cli {
    /// Print the engine's JSON envelope instead of human output.
    #[arg(long, global = true)]
    pub(crate) json: bool,
    /// The database file (default: <root>/.loci/loci.db).
    #[arg(long, global = true, env = "LOCI_DB", value_name = "FILE")]
    pub(crate) db: Option<PathBuf>,
    /// The workspace root (default: the nearest ancestor with .loci/ or .git, else the
    /// current directory).
    #[arg(short = 'C', long = "root", global = true, value_name = "DIR")]
    pub(crate) root: Option<PathBuf>,
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
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
        /// Leave out calls written in test, example and vendored code; they are counted.
        #[arg(long)]
        no_tests: bool,
    },
    /// List the calls written in a symbol's definition (its outgoing calls).
    Callees {
        /// A name, qualified name (`Regex.new`), dotted name as code spells it
        /// (`urllib.parse.urlsplit`) or key.
        symbol: String,
        /// List at most this many calls (0: all); the rest are counted.
        #[arg(long, default_value_t = loci_engine::map::LIST_LIMIT, value_parser = whole::<u32>("rows", 0), allow_negative_numbers = true)]
        limit: u32,
        /// Show a call's target only when resolved at this confidence or more (0 to 1);
        /// weaker guesses are shown unresolved and counted. 0 shows every guess.
        #[arg(long, default_value_t = loci_engine::map::MIN_CONFIDENCE, value_parser = confidence, allow_negative_numbers = true)]
        min_confidence: f64,
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
        #[arg(long, default_value_t = loci_engine::requests::defaults::DEPTH, value_parser = whole::<u32>("hops", 1), allow_negative_numbers = true)]
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
        /// Leave out test, example and vendored code: such files are neither listed nor
        /// walked through (what depends on a test is tests), and are counted.
        #[arg(long)]
        no_tests: bool,
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
        #[arg(long, default_value_t = loci_engine::requests::defaults::SEARCH_LIMIT, value_parser = whole::<u32>("hits", 0), allow_negative_numbers = true)]
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
        #[arg(default_value_t = loci_engine::requests::defaults::RECAP, value_parser = whole::<u32>("sessions", 1), allow_negative_numbers = true)]
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
pub(crate) enum TeamCommand {
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
pub(crate) enum KindArg {
    Memory,
    Symbol,
    Doc,
}

#[derive(Debug, Subcommand)]
pub(crate) enum TopicCommand {
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
pub(crate) enum FactCommand {
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
pub(crate) enum SessionCommand {
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
pub(crate) struct WriteArgs {
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
    pub(crate) fn options(&self) -> loci_engine::memory::WriteOptions {
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
/// engine's own where it has one (a budget of at least 50 tokens, so that no value the
/// parser takes is one the engine refuses); k = 0 is left to the engine, which names it.
pub(crate) fn whole<T>(
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
pub(crate) fn confidence(arg: &str) -> Result<f64, String> {
    let range = "a confidence from 0 (every edge) to 1 (stated only)";
    match arg.trim().parse::<f64>() {
        Ok(c) if (0.0..=1.0).contains(&c) => Ok(c),
        _ => Err(range.to_string()),
    }
}
