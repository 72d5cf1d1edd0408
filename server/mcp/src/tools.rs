//! The tools: one typed parameter struct per tool (deriving `JsonSchema` with a doc comment
//! per field, so `tools/list` is self-describing), the tool table with annotations, and
//! the dispatch from a parsed call to one engine function.
//!
//! Rule (style.md 12): tools are thin. Each arm calls exactly one
//! [`loci_engine::Workspace`] operation and renders its typed result with the one
//! [`loci_engine::text`] renderer the CLI uses; the only adaptation is naming (argument
//! names in errors) and defaults a protocol needs (the author of an agent's write).

use std::io;
use std::sync::Arc;

use loci_engine::context::{ContextRequest, HitKind, SearchOptions};
use loci_engine::memory::{WriteOptions, Written};
use loci_engine::query::LIST_LIMIT;
use loci_engine::text::{self, Out};
use loci_engine::{EngineError, Envelope, Workspace};
use rmcp::ErrorData;
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Dependents an `impact` call lists when it names no `limit`: 30, so that the answer fits
/// one page of [`crate::render::PAGE_BYTES`] (the CLI's 100 made 39 KB for a widely
/// imported stdlib file, and the page held a preview of 17).
pub const IMPACT_LIMIT: u32 = 30;

/// Declares a parameter struct: `Deserialize` (unknown arguments refused, so a misspelled
/// argument is named in the error), `JsonSchema`. With `+ write`, the options every
/// memory write accepts are appended.
macro_rules! params {
    (
        $(#[$meta:meta])*
        $name:ident { $($(#[$fmeta:meta])* $field:ident : $ty:ty),* $(,)? }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            $($(#[$fmeta])* pub $field: $ty,)*
        }
    };
    (
        $(#[$meta:meta])*
        $name:ident { $($(#[$fmeta:meta])* $field:ident : $ty:ty),* $(,)? } + write
    ) => {
        $(#[$meta])*
        #[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            $($(#[$fmeta])* pub $field: $ty,)*
            /// The session this write belongs to: the `session_id` returned by `session_begin`.
            #[serde(default)]
            pub session: Option<i64>,
            /// Who writes: `agent:NAME`, `human:NAME` or a model name. Default: `$LOCI_AUTHOR`,
            /// else `agent:<client name>`.
            #[serde(default)]
            pub author: Option<String>,
            /// A one-line change summary.
            #[serde(default)]
            pub summary: Option<String>,
            /// Optimistic concurrency: fail with a conflict unless the page is at this version
            /// (0 = the page must not exist yet). Read the version with `show` or `history`.
            #[serde(default)]
            pub expect_version: Option<i64>,
            /// Idempotency key: retrying with the same id returns the original result instead
            /// of writing twice; reusing it for a different request is an error.
            #[serde(default)]
            pub operation_id: Option<String>,
        }

        impl $name {
            fn write_options(&self, default_author: Option<&str>) -> WriteOptions {
                WriteOptions {
                    author: self.author.clone().or_else(|| default_author.map(str::to_string)),
                    session: self.session,
                    summary: self.summary.clone(),
                    expect_version: self.expect_version,
                    operation_id: self.operation_id.clone(),
                }
            }
        }
    };
}

params! {
    /// Arguments of `context`.
    ContextParams {
        /// The question or task, in words (`how does login retry`, `add a billing export`).
        /// May be left out when `open_files` is given (then the answer is about those
        /// files); one of the two is required.
        #[serde(default)]
        query: String,
        /// Files you have open or are working on (repository-relative): they and their
        /// neighbours rank higher.
        #[serde(default)]
        open_files: Option<Vec<String>>,
        /// Token budget for the answer (tokens ≈ characters / 4); default from
        /// `.loci/config.toml` `[context] budget`.
        #[serde(default)]
        budget: Option<u64>,
        /// Relevance floor in points (the scoring of docs/context.md: a full-text hit is
        /// worth up to 30) below which loci abstains rather than guess; default
        /// `[context] floor` of the workspace's config (`loci calibrate` picks one); the
        /// answer says which floor it used.
        #[serde(default)]
        floor: Option<f64>,
        /// Paging: the `next_cursor` of a previous answer to the same question.
        #[serde(default)]
        cursor: Option<String>,
    }
}

/// What `search` may return.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SearchKind {
    /// Memory pages (their current revision).
    Memory,
    /// Symbol definitions.
    Symbol,
    /// Sections of the repository's documentation.
    Doc,
    /// Code files.
    File,
}

impl From<SearchKind> for HitKind {
    fn from(k: SearchKind) -> HitKind {
        match k {
            SearchKind::Memory => HitKind::Memory,
            SearchKind::Symbol => HitKind::Symbol,
            SearchKind::Doc => HitKind::Doc,
            SearchKind::File => HitKind::File,
        }
    }
}

params! {
    /// Arguments of `search`.
    SearchParams {
        /// Words to find (full-text, BM25-ranked; punctuation is taken literally).
        query: String,
        /// Only these kinds of hits (default: all).
        #[serde(default)]
        kinds: Option<Vec<SearchKind>>,
        /// Only hits in this repository-relative file or folder (whole path components: `src/au` does not match `src/auth`).
        #[serde(default)]
        path: Option<String>,
        /// Hits per kind (default 10).
        #[serde(default)]
        limit: Option<u32>,
        /// Paging: the `next_cursor` of a previous answer to the same question.
        #[serde(default)]
        cursor: Option<String>,
    }
}

params! {
    /// Arguments of `symbol`.
    SymbolParams {
        /// A name (`login`), qualified name (`AuthService.login`) or symbol key
        /// (`src/auth.py#AuthService.login@method`).
        name: String,
        /// Rows to list, by path and line (default 1,000; 0: all). `limits.omitted` says
        /// how many more there are; `next_cursor` pages through the rows listed.
        #[serde(default)]
        limit: Option<u32>,
        /// Paging: the `next_cursor` of a previous answer to the same question.
        #[serde(default)]
        cursor: Option<String>,
    }
}

params! {
    /// Arguments of `references`.
    ReferencesParams {
        /// A bare name (every use of it), a qualified name (`Regex.new`: uses resolved
        /// to it, or written on that qualifier) or a symbol key (uses resolved to it).
        name: String,
        /// Rows to list, by path and line (default 1,000; 0: all). `limits.omitted` says
        /// how many more there are; `next_cursor` pages through the rows listed.
        #[serde(default)]
        limit: Option<u32>,
        /// Paging: the `next_cursor` of a previous answer to the same question.
        #[serde(default)]
        cursor: Option<String>,
    }
}

params! {
    /// Arguments of `callers`.
    CallersParams {
        /// A name, qualified name or symbol key.
        symbol: String,
        /// Rows to list, by path and line (default 1,000; 0: all). `limits.omitted` says
        /// how many more there are; `next_cursor` pages through the rows listed.
        #[serde(default)]
        limit: Option<u32>,
        /// Paging: the `next_cursor` of a previous answer to the same question.
        #[serde(default)]
        cursor: Option<String>,
    }
}

params! {
    /// Arguments of `deps`.
    DepsParams {
        /// A repository-relative file path.
        path: String,
        /// List the files that import `path` instead of what `path` imports.
        #[serde(default)]
        reverse: Option<bool>,
        /// Paging: the `next_cursor` of a previous answer to the same question.
        #[serde(default)]
        cursor: Option<String>,
    }
}

params! {
    /// Arguments of `impact`.
    ImpactParams {
        /// A repository-relative path, or a symbol name, qualified name or key.
        target: String,
        /// Dependency hops to follow (default 3).
        #[serde(default)]
        depth: Option<u32>,
        /// Follow only stated edges (proven by a parser), not derived ones (name-matched calls).
        #[serde(default)]
        hard: Option<bool>,
        /// Dependents to list, nearest first (default [`IMPACT_LIMIT`], 30; 0 lists all). The counts
        /// (`dependents`, `by_depth`) are always of the whole walk; `limits.omitted` says
        /// how many were not listed.
        #[serde(default)]
        limit: Option<u32>,
        /// Paging: the `next_cursor` of a previous answer to the same question.
        #[serde(default)]
        cursor: Option<String>,
    }
}

params! {
    /// Arguments of `why`.
    WhyParams {
        /// `PATH[:LINE]` (one-based line: the memory about that file or the symbol at that
        /// line), or any text from a memory. The name the language server's `loci.why`
        /// and `impact` use; `query`, its old name here, is still accepted.
        #[serde(alias = "query")]
        target: String,
        /// Paging: the `next_cursor` of a previous answer to the same question.
        #[serde(default)]
        cursor: Option<String>,
    }
}

params! {
    /// Arguments of `show`.
    ShowParams {
        /// A path (file or folder), `.`, `topic:NAME`, `decisions` or `lessons`.
        subject: String,
        /// A version number (default: the current revision).
        #[serde(default)]
        version: Option<i64>,
        /// Paging: the `next_cursor` of a previous answer to the same question.
        #[serde(default)]
        cursor: Option<String>,
    }
}

params! {
    /// Arguments of `history`.
    HistoryParams {
        /// A path (file or folder), `.`, `topic:NAME`, `decisions` or `lessons`.
        subject: String,
        /// Paging: the `next_cursor` of a previous answer to the same question.
        #[serde(default)]
        cursor: Option<String>,
    }
}

params! {
    /// Arguments of `asof`.
    AsofParams {
        /// A date (`2026-11-01`, meaning the end of that day, UTC) or an RFC 3339 time
        /// (`2026-11-01T12:00:00Z`).
        date: String,
        /// Also return this subject's revision current at that moment.
        #[serde(default)]
        show: Option<String>,
        /// Paging: the `next_cursor` of a previous answer to the same question.
        #[serde(default)]
        cursor: Option<String>,
    }
}

params! {
    /// Arguments of `recap`.
    RecapParams {
        /// How many sessions, newest first (default 3).
        #[serde(default)]
        n: Option<u32>,
        /// Paging: the `next_cursor` of a previous answer to the same question.
        #[serde(default)]
        cursor: Option<String>,
    }
}

params! {
    /// Arguments of `fact_list`.
    FactListParams {
        /// Paging: the `next_cursor` of a previous answer to the same question.
        #[serde(default)]
        cursor: Option<String>,
    }
}

params! {
    /// Arguments of `scan`.
    ScanParams {}
}

params! {
    /// Arguments of `lint`.
    LintParams {
        /// Paging: the `next_cursor` of a previous answer to the same question.
        #[serde(default)]
        cursor: Option<String>,
    }
}

params! {
    /// Arguments of `check`.
    CheckParams {
        /// Paging: the `next_cursor` of a previous answer to the same question.
        #[serde(default)]
        cursor: Option<String>,
    }
}

params! {
    /// Arguments of `resolve`.
    ResolveParams {
        /// The contradiction's id, as `lint` lists it.
        id: i64,
        /// Why the finding is not a problem; kept with the dismissal.
        #[serde(default)]
        notes: Option<String>,
        /// The session this dismissal belongs to: the `session_id` returned by `session_begin`.
        #[serde(default)]
        session: Option<i64>,
    }
}

params! {
    /// Arguments of `drift`.
    DriftParams {
        /// Show changes after this scan revision (default: the one before the last scan).
        /// The envelope's `index.revision` is the current one.
        #[serde(default)]
        since: Option<i64>,
        /// Paging: the `next_cursor` of a previous answer to the same question.
        #[serde(default)]
        cursor: Option<String>,
    }
}

params! {
    /// Arguments of `remember`.
    RememberParams {
        /// What the memory is about: a path (file or folder), `.` (the repository),
        /// `topic:NAME`, or one decision or lesson (`decision:N`, `lesson:N`).
        subject: String,
        /// The page's new body (markdown). It replaces the current revision; earlier
        /// revisions are kept. Backticked paths and `symbols()` become checked claims.
        body: String,
    } + write
}

params! {
    /// Arguments of `decide`.
    DecideParams {
        /// The decision and its reason, in one or two sentences.
        text: String,
        /// The file, folder or topic it is about.
        #[serde(default)]
        subject: Option<String>,
    } + write
}

params! {
    /// Arguments of `learn`.
    LearnParams {
        /// The lesson: what went wrong or surprised, and what to do instead.
        text: String,
        /// The file, folder or topic it is about.
        #[serde(default)]
        subject: Option<String>,
    } + write
}

params! {
    /// Arguments of `confirm`.
    ConfirmParams {
        /// The page whose current revision is still true.
        subject: String,
    } + write
}

params! {
    /// Arguments of `pin`.
    PinParams {
        /// The page to pin or unpin.
        subject: String,
        /// `true` (default) pins: the page is never marked stale; `false` unpins.
        #[serde(default)]
        pinned: Option<bool>,
    } + write
}

params! {
    /// Arguments of `rollback`.
    RollbackParams {
        /// The page.
        subject: String,
        /// The version whose body is published again as a new revision.
        version: i64,
    } + write
}

params! {
    /// Arguments of `fact_add`.
    FactAddParams {
        /// The claim the command demonstrates (`the tests pass on Python 3.11`).
        claim: String,
        /// The command line, split into arguments with shell word rules and never run by a
        /// shell. Facts only run when `.loci/config.toml` sets `[facts] run = true`.
        cmd: String,
        /// Expected substring of the command's output.
        #[serde(default)]
        expect_output: Option<String>,
        /// Expected exit code.
        #[serde(default)]
        expect_exit: Option<i64>,
    } + write
}

params! {
    /// Arguments of `session_begin`.
    SessionBeginParams {
        /// What the session sets out to do.
        #[serde(default)]
        task: Option<String>,
        /// Who runs it (default `$LOCI_AUTHOR`, else `agent:<client name>`).
        #[serde(default)]
        author: Option<String>,
    }
}

params! {
    /// Arguments of `session_end`.
    SessionEndParams {
        /// The `session_id` returned by `session_begin`.
        session: i64,
        /// What was done, in a paragraph: shown by `recap` to the next session.
        #[serde(default)]
        summary: Option<String>,
    }
}

params! {
    /// Arguments of `synthesis_plan` (none).
    SynthesisPlanParams {}
}

/// Whether a tool only reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Reads memory and the map (the map may be refreshed from disk first).
    Read,
    /// Writes authored memory (append-only: nothing is destroyed).
    Write,
    /// Rebuilds derived data (the map) from the working tree.
    Index,
}

/// One entry of the tool table.
pub struct ToolDef {
    /// The tool's name.
    pub name: &'static str,
    /// A short human title.
    pub title: &'static str,
    /// What it does and when to use it.
    pub description: &'static str,
    /// Read, write or index.
    pub access: Access,
    /// Whether repeating the same call has no further effect.
    pub idempotent: bool,
    /// The input schema.
    schema: fn() -> Arc<JsonObject>,
}

fn schema<T: JsonSchema + 'static>() -> Arc<JsonObject> {
    rmcp::handler::server::common::schema_for_input::<T>().unwrap_or_else(|message| {
        // Unreachable for derived structs (their root is an object); keep the server up.
        tracing::error!(%message, "tool input schema");
        rmcp::handler::server::common::schema_for_empty_input()
    })
}

/// The tools, in the order `tools/list` shows them.
pub const TOOLS: &[ToolDef] = &[
    ToolDef {
        name: "session_begin",
        title: "Begin a session",
        description: "Begin a work session (call once at the start of a task). Returns \
            `session_id`: pass it as `session` to every write so the session's digest and \
            the next agent's `recap` show what you did.",
        access: Access::Write,
        idempotent: false,
        schema: schema::<SessionBeginParams>,
    },
    ToolDef {
        name: "recap",
        title: "Recap recent sessions",
        description: "The last N sessions, newest first, each with what it changed (pages \
            written, decisions, lessons, commits). Read it at the start of a task.",
        access: Access::Read,
        idempotent: true,
        schema: schema::<RecapParams>,
    },
    ToolDef {
        name: "context",
        title: "Context for a task",
        description: "Start here before reading files: the memory, symbols, docs and \
            files most relevant to a question or task, ranked and packed under a token \
            budget (full text for the best items, digests and one-line index entries for \
            the rest), each with provenance and staleness. Abstains, saying so, when \
            nothing is relevant enough.",
        access: Access::Read,
        idempotent: true,
        schema: schema::<ContextParams>,
    },
    ToolDef {
        name: "search",
        title: "Search",
        description: "Full-text search (BM25) over memory pages, symbols, docs and files, \
            with a snippet and provenance per hit.",
        access: Access::Read,
        idempotent: true,
        schema: schema::<SearchParams>,
    },
    ToolDef {
        name: "symbol",
        title: "Find a symbol",
        description: "Definitions whose name, qualified name or key matches: kind, \
            `path`, zero-based `line`/`column`, signature and doc comment. Files changed \
            on disk are rescanned first, so lines are current.",
        access: Access::Read,
        idempotent: true,
        schema: schema::<SymbolParams>,
    },
    ToolDef {
        name: "references",
        title: "Find references",
        description: "Uses of a name (or of one symbol, given its key): calls, imports, \
            type uses, with the enclosing definition, provenance (`stated` by a parser or \
            `derived` by name matching) and confidence.",
        access: Access::Read,
        idempotent: true,
        schema: schema::<ReferencesParams>,
    },
    ToolDef {
        name: "callers",
        title: "Find callers",
        description: "Call sites resolved to the symbols matching a name.",
        access: Access::Read,
        idempotent: true,
        schema: schema::<CallersParams>,
    },
    ToolDef {
        name: "deps",
        title: "File dependencies",
        description: "What a file imports (resolved to files where possible, unresolved \
            imports kept), or with `reverse`, which files import it.",
        access: Access::Read,
        idempotent: true,
        schema: schema::<DepsParams>,
    },
    ToolDef {
        name: "impact",
        title: "Blast radius",
        description: "Everything that depends on a file or symbol, transitively to \
            `depth` hops, each with the edge that reached it (`path:line`, provenance, \
            confidence), the nearest `limit` listed and all counted. Use before changing \
            a widely used definition.",
        access: Access::Read,
        idempotent: true,
        schema: schema::<ImpactParams>,
    },
    ToolDef {
        name: "why",
        title: "Why is this so",
        description: "The memory that explains a file, a line (`PATH:LINE`) or a phrase, \
            with its provenance chain: revision, author, session, triggering event. \
            `stale_warnings` say when the code it talks about changed since.",
        access: Access::Read,
        idempotent: true,
        schema: schema::<WhyParams>,
    },
    ToolDef {
        name: "show",
        title: "Show a memory page",
        description: "A memory page (a file's or folder's notes, `.`, `topic:NAME`, \
            `decisions`, `lessons`) at its current revision or a given version, with its \
            claims.",
        access: Access::Read,
        idempotent: true,
        schema: schema::<ShowParams>,
    },
    ToolDef {
        name: "history",
        title: "Page history",
        description: "A page's revisions, oldest first: version, author, time, summary, \
            session and triggering event.",
        access: Access::Read,
        idempotent: true,
        schema: schema::<HistoryParams>,
    },
    ToolDef {
        name: "asof",
        title: "Memory as of a date",
        description: "Which version of each page was current at a moment, and optionally \
            one page's revision at that moment.",
        access: Access::Read,
        idempotent: true,
        schema: schema::<AsofParams>,
    },
    ToolDef {
        name: "remember",
        title: "Remember",
        description: "Write a new revision of a subject's memory page (notes about a file, \
            folder, topic or the repository). Replaces the page's body; history is kept. \
            Read the page with `show` first and pass `expect_version` to avoid \
            overwriting another writer. The answer lists the claims found in the text; a \
            claim that fails (a path or symbol the code lacks) carries the `finding` lint \
            will report, with the nearest match: fix the text while you are here.",
        access: Access::Write,
        idempotent: false,
        schema: schema::<RememberParams>,
    },
    ToolDef {
        name: "decide",
        title: "Record a decision",
        description: "Record a decision (what was decided and why) as an entry of its own \
            (`decision:N`); `show decisions` lists them.",
        access: Access::Write,
        idempotent: false,
        schema: schema::<DecideParams>,
    },
    ToolDef {
        name: "learn",
        title: "Record a lesson",
        description: "Record a lesson (a pitfall, a surprise, what to do instead) as an \
            entry of its own (`lesson:N`); `show lessons` lists them.",
        access: Access::Write,
        idempotent: false,
        schema: schema::<LearnParams>,
    },
    ToolDef {
        name: "confirm",
        title: "Confirm a page",
        description: "Mark a page's current revision as still true after its code changed: \
            takes new snapshots of its claims without rewriting it.",
        access: Access::Write,
        idempotent: true,
        schema: schema::<ConfirmParams>,
    },
    ToolDef {
        name: "pin",
        title: "Pin a page",
        description: "Pin (never mark stale) or unpin a page.",
        access: Access::Write,
        idempotent: true,
        schema: schema::<PinParams>,
    },
    ToolDef {
        name: "rollback",
        title: "Roll back a page",
        description: "Publish an earlier version's body again as a new revision. \
            Nothing is deleted: history keeps every revision.",
        access: Access::Write,
        idempotent: false,
        schema: schema::<RollbackParams>,
    },
    ToolDef {
        name: "fact_add",
        title: "Add a fact",
        description: "Record executable memory: a claim plus a command demonstrating it \
            and the expected output substring and/or exit code. Never run by this tool.",
        access: Access::Write,
        idempotent: false,
        schema: schema::<FactAddParams>,
    },
    ToolDef {
        name: "fact_list",
        title: "List facts",
        description: "Recorded facts with their last run.",
        access: Access::Read,
        idempotent: true,
        schema: schema::<FactListParams>,
    },
    ToolDef {
        name: "drift",
        title: "What changed",
        description: "File changes since a scan revision (added, modified, deleted, \
            renamed, signature changes) and what they did to memory: which pages became \
            stale or false, or stopped being so.",
        access: Access::Read,
        idempotent: true,
        schema: schema::<DriftParams>,
    },
    ToolDef {
        name: "synthesis_plan",
        title: "Pages to write",
        description: "The memory pages page synthesis would write and why (files with \
            symbols but no page, largest fan-in first; pages stale against the code, with \
            the changed symbols; folder roll-ups). Runs nothing; `loci synthesize` runs \
            the model command `[synthesis] command` names.",
        access: Access::Read,
        idempotent: true,
        schema: schema::<SynthesisPlanParams>,
    },
    ToolDef {
        name: "lint",
        title: "Check memory against the code",
        description: "Check every memory claim and the repository's docs against the map \
            and manifests: contradictions (missing paths or symbols, version mismatches) \
            and stale memory, with ids for `resolve`. Records its findings (audit data); \
            changes no memory.",
        access: Access::Write,
        idempotent: true,
        schema: schema::<LintParams>,
    },
    ToolDef {
        name: "check",
        title: "CI gate",
        description: "`lint`, then compare open contradictions and stale pages with the \
            `[check]` thresholds of `.loci/config.toml`; `passed` says whether they hold.",
        access: Access::Write,
        idempotent: true,
        schema: schema::<CheckParams>,
    },
    ToolDef {
        name: "resolve",
        title: "Dismiss a finding",
        description: "Dismiss a contradiction `lint` reported (a false alarm): it is \
            closed and that claim is never reported again. Say why in `notes`.",
        access: Access::Write,
        idempotent: true,
        schema: schema::<ResolveParams>,
    },
    ToolDef {
        name: "scan",
        title: "Rescan the workspace",
        description: "Walk and parse the working tree, updating the map incrementally \
            (added, modified, deleted, renamed files). Other tools already rescan files \
            changed on disk before answering; use this after large changes.",
        access: Access::Index,
        idempotent: true,
        schema: schema::<ScanParams>,
    },
    ToolDef {
        name: "session_end",
        title: "End a session",
        description: "End the session with a summary of what was done; stores its digest \
            for the next `recap`.",
        access: Access::Write,
        idempotent: false,
        schema: schema::<SessionEndParams>,
    },
];

impl ToolDef {
    /// The MCP tool definition with its schema and annotations. Writes are never
    /// destructive: memory is append-only, a rollback is a new revision.
    pub fn to_tool(&self) -> Tool {
        let annotations = ToolAnnotations::with_title(self.title)
            .read_only(self.access == Access::Read)
            .destructive(false)
            .idempotent(self.idempotent)
            .open_world(false);
        Tool::new(self.name, self.description, (self.schema)())
            .annotate(annotations)
            .with_raw_output_schema(Arc::new(output_schema(self.lists())))
    }

    /// Whether the tool's `result` is a list (paged by items) rather than one object.
    pub fn lists(&self) -> bool {
        LIST_TOOLS.contains(&self.name)
    }
}

/// The tools whose `result` is a list: paged by items (`item:N` cursors).
pub const LIST_TOOLS: &[&str] = &["search", "symbol", "references", "recap", "fact_list"];

/// The `outputSchema` of every tool: the structured content is loci's envelope, as
/// `loci --json` prints it (`result`, zero-based lines, and beside it `index`,
/// `capability`, `stale_warnings`, `freshness`, `limits`), with `page` when the answer is
/// paged; or, in a result with `isError: true`, `error` (`kind`, `message`, `retryable`).
/// MCP 2025-06-18 asks a tool with an output schema to return structured content that
/// conforms to it. Only the top level is declared: with the envelope's fields described,
/// `tools/list` grew by 25 KB (27 tools), which a client may put before the model.
pub fn output_schema(list: bool) -> JsonObject {
    let schema = serde_json::json!({
        "type": "object",
        "properties": {
            "result": {"type": if list { "array" } else { "object" }},
            "page": {"type": "object"},
            "error": {"type": "object"}
        },
        "anyOf": [{"required": ["result"]}, {"required": ["error"]}]
    });
    match schema {
        serde_json::Value::Object(o) => o,
        _ => JsonObject::new(),
    }
}

/// Finds a tool by name.
pub fn find(name: &str) -> Option<&'static ToolDef> {
    TOOLS.iter().find(|t| t.name == name)
}

/// A parsed tool call.
#[derive(Clone, Debug)]
#[allow(missing_docs)]
pub enum Call {
    Context(ContextParams),
    Search(SearchParams),
    Symbol(SymbolParams),
    References(ReferencesParams),
    Callers(CallersParams),
    Deps(DepsParams),
    Impact(ImpactParams),
    Why(WhyParams),
    Show(ShowParams),
    History(HistoryParams),
    Asof(AsofParams),
    Recap(RecapParams),
    FactList(FactListParams),
    Drift(DriftParams),
    SynthesisPlan(SynthesisPlanParams),
    Lint(LintParams),
    Check(CheckParams),
    Resolve(ResolveParams),
    Scan(ScanParams),
    Remember(RememberParams),
    Decide(DecideParams),
    Learn(LearnParams),
    Confirm(ConfirmParams),
    Pin(PinParams),
    Rollback(RollbackParams),
    FactAdd(FactAddParams),
    SessionBegin(SessionBeginParams),
    SessionEnd(SessionEndParams),
}

/// Why a call could not be parsed.
#[derive(Debug)]
pub enum ParseError {
    /// No tool of that name: a protocol error (`-32602`), as the MCP specification
    /// classes an unknown tool.
    UnknownTool(ErrorData),
    /// An argument is missing, misspelled or of the wrong type: a tool result with
    /// `isError: true`, so that the model reads it and calls again.
    Argument(ArgumentError),
}

/// Parses `arguments` for tool `name`. An unknown tool is [`ParseError::UnknownTool`]; a
/// missing or misspelled argument, or a value of the wrong type, is
/// [`ParseError::Argument`] naming the argument.
pub fn parse(name: &str, arguments: Option<JsonObject>) -> Result<Call, ParseError> {
    let args = Value::Object(arguments.unwrap_or_default());
    let arg = ParseError::Argument;
    Ok(match name {
        "context" => Call::Context(from_args(args).map_err(arg)?),
        "search" => Call::Search(from_args(args).map_err(arg)?),
        "symbol" => Call::Symbol(from_args(args).map_err(arg)?),
        "references" => Call::References(from_args(args).map_err(arg)?),
        "callers" => Call::Callers(from_args(args).map_err(arg)?),
        "deps" => Call::Deps(from_args(args).map_err(arg)?),
        "impact" => Call::Impact(from_args(args).map_err(arg)?),
        "why" => Call::Why(from_args(args).map_err(arg)?),
        "show" => Call::Show(from_args(args).map_err(arg)?),
        "history" => Call::History(from_args(args).map_err(arg)?),
        "asof" => Call::Asof(from_args(args).map_err(arg)?),
        "recap" => Call::Recap(from_args(args).map_err(arg)?),
        "fact_list" => Call::FactList(from_args(args).map_err(arg)?),
        "drift" => Call::Drift(from_args(args).map_err(arg)?),
        "synthesis_plan" => Call::SynthesisPlan(from_args(args).map_err(arg)?),
        "lint" => Call::Lint(from_args(args).map_err(arg)?),
        "check" => Call::Check(from_args(args).map_err(arg)?),
        "resolve" => Call::Resolve(from_args(args).map_err(arg)?),
        "scan" => Call::Scan(from_args(args).map_err(arg)?),
        "remember" => Call::Remember(from_args(args).map_err(arg)?),
        "decide" => Call::Decide(from_args(args).map_err(arg)?),
        "learn" => Call::Learn(from_args(args).map_err(arg)?),
        "confirm" => Call::Confirm(from_args(args).map_err(arg)?),
        "pin" => Call::Pin(from_args(args).map_err(arg)?),
        "rollback" => Call::Rollback(from_args(args).map_err(arg)?),
        "fact_add" => Call::FactAdd(from_args(args).map_err(arg)?),
        "session_begin" => Call::SessionBegin(from_args(args).map_err(arg)?),
        "session_end" => Call::SessionEnd(from_args(args).map_err(arg)?),
        other => {
            return Err(ParseError::UnknownTool(ErrorData::invalid_params(
                format!("unknown tool `{other}`; call tools/list for the available tools"),
                Some(serde_json::json!({ "argument": "name" })),
            )));
        }
    })
}

/// Deserializes tool arguments, naming the offending argument on error.
fn from_args<T: DeserializeOwned>(args: Value) -> Result<T, ArgumentError> {
    serde_path_to_error::deserialize(args).map_err(|e| {
        let path = e.path().to_string();
        let message = e.into_inner().to_string();
        let argument = if path == "." || path.is_empty() {
            backticked(&message).unwrap_or_default()
        } else {
            path
        };
        invalid_argument(
            &argument,
            &format!("{message} (the tool's inputSchema in tools/list names every argument)"),
        )
    })
}

/// The first `` `name` `` in a serde message (`missing field `name``).
fn backticked(message: &str) -> Option<String> {
    let start = message.find('`')? + 1;
    let len = message[start..].find('`')?;
    Some(message[start..start + len].to_string())
}

/// An argument the call cannot use, and why: answered as a tool result with `isError:
/// true` (MCP 2025-11-25, "Error Handling": input validation errors are tool execution
/// errors, so the model can correct the call), never as a JSON-RPC error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArgumentError {
    /// The argument's name (empty when the arguments as a whole are wrong).
    pub argument: String,
    /// `invalid argument `NAME`: what is wrong`.
    pub message: String,
}

/// An [`ArgumentError`] naming `argument`.
pub fn invalid_argument(argument: &str, message: &str) -> ArgumentError {
    let message = if argument.is_empty() {
        format!("invalid arguments: {message}")
    } else {
        format!("invalid argument `{argument}`: {message}")
    };
    ArgumentError {
        argument: argument.to_string(),
        message,
    }
}

/// An answer: the envelope as JSON (the structured content) and its text as the CLI
/// prints it (the text content), rendered by [`loci_engine::text`] from the typed result.
#[derive(Clone, Debug)]
pub struct Answer {
    /// The envelope, its result as JSON.
    pub env: Envelope<Value>,
    /// The text of the result.
    pub text: Text,
    /// Whether the text says itself what was cut (`context`, `impact`, `lint`), so no
    /// truncation line follows it.
    pub says_what_was_cut: bool,
}

/// The text of a result: whole, or for a list one piece per item (so that a page of
/// items carries the text of those items).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Text {
    /// The whole text.
    Whole(String),
    /// The text of each item, in order.
    Items(Vec<String>),
}

/// An answer whose text `render` writes from the typed envelope.
fn whole<T: Serialize>(
    env: Result<Envelope<T>, EngineError>,
    says_what_was_cut: bool,
    render: impl FnOnce(Out, &Envelope<T>) -> io::Result<()>,
) -> Result<Answer, EngineError> {
    let env = env?;
    let text = text::to_string(|o| render(o, &env));
    Ok(Answer {
        env: json(Ok(env))?,
        text: Text::Whole(text),
        says_what_was_cut,
    })
}

/// An answer that is a list, `render` writing one item's text.
fn items<T: Serialize>(
    env: Result<Envelope<Vec<T>>, EngineError>,
    render: fn(Out, &T) -> io::Result<()>,
) -> Result<Answer, EngineError> {
    let env = env?;
    let texts = env
        .result
        .iter()
        .map(|item| text::to_string(|o| render(o, item)))
        .collect();
    Ok(Answer {
        env: json(Ok(env))?,
        text: Text::Items(texts),
        says_what_was_cut: false,
    })
}

impl Call {
    /// Whether the call only reads (and may therefore be re-run after a refresh).
    pub fn access(&self) -> Access {
        match self {
            Call::Context(_)
            | Call::Search(_)
            | Call::Symbol(_)
            | Call::References(_)
            | Call::Callers(_)
            | Call::Deps(_)
            | Call::Impact(_)
            | Call::Why(_)
            | Call::Show(_)
            | Call::History(_)
            | Call::Asof(_)
            | Call::Recap(_)
            | Call::FactList(_)
            | Call::Drift(_)
            | Call::SynthesisPlan(_) => Access::Read,
            Call::Scan(_) => Access::Index,
            _ => Access::Write,
        }
    }

    /// Whether the map must be refreshed before this call regardless of the refresh
    /// interval: writes (claims resolve against the map) and questions about what changed.
    pub fn refresh_first(&self) -> bool {
        self.access() == Access::Write || matches!(self, Call::Drift(_))
    }

    /// The paging cursor, for reads.
    pub fn cursor(&self) -> Option<&str> {
        match self {
            Call::Context(p) => p.cursor.as_deref(),
            Call::Search(p) => p.cursor.as_deref(),
            Call::Symbol(p) => p.cursor.as_deref(),
            Call::References(p) => p.cursor.as_deref(),
            Call::Callers(p) => p.cursor.as_deref(),
            Call::Deps(p) => p.cursor.as_deref(),
            Call::Impact(p) => p.cursor.as_deref(),
            Call::Why(p) => p.cursor.as_deref(),
            Call::Show(p) => p.cursor.as_deref(),
            Call::History(p) => p.cursor.as_deref(),
            Call::Asof(p) => p.cursor.as_deref(),
            Call::Recap(p) => p.cursor.as_deref(),
            Call::FactList(p) => p.cursor.as_deref(),
            Call::Drift(p) => p.cursor.as_deref(),
            Call::Lint(p) => p.cursor.as_deref(),
            Call::Check(p) => p.cursor.as_deref(),
            _ => None,
        }
    }

    /// Runs the call on the workspace. `default_author` is the author of writes that name
    /// none (`$LOCI_AUTHOR`, else `agent:<client name>`).
    pub fn run(
        &self,
        ws: &mut Workspace,
        default_author: Option<&str>,
    ) -> Result<Answer, EngineError> {
        let a = default_author;
        match self {
            Call::Context(p) => whole(
                ws.context(&ContextRequest {
                    query: p.query.clone(),
                    open_files: p.open_files.clone().unwrap_or_default(),
                    budget: p.budget,
                    floor: p.floor,
                }),
                true,
                |o, env| text::context(o, &env.result),
            ),
            Call::Search(p) => items(
                ws.search(
                    &p.query,
                    &SearchOptions {
                        kinds: p
                            .kinds
                            .iter()
                            .flatten()
                            .map(|k| HitKind::from(*k))
                            .collect(),
                        path_prefix: p.path.clone(),
                        limit: p.limit,
                    },
                ),
                text::search_hit,
            ),
            Call::Symbol(p) => items(
                ws.symbol(&p.name, p.limit.unwrap_or(LIST_LIMIT)),
                text::symbol_hit,
            ),
            Call::References(p) => items(
                ws.refs(&p.name, p.limit.unwrap_or(LIST_LIMIT)),
                text::ref_hit,
            ),
            Call::Callers(p) => whole(
                ws.callers(&p.symbol, p.limit.unwrap_or(LIST_LIMIT)),
                false,
                |o, env| text::callers(o, &env.result),
            ),
            Call::Deps(p) => whole(
                ws.deps(&p.path, p.reverse.unwrap_or(false)),
                false,
                |o, env| text::deps(o, &env.result),
            ),
            Call::Impact(p) => whole(
                ws.impact_limited(
                    &p.target,
                    p.depth.unwrap_or(3),
                    p.hard.unwrap_or(false),
                    p.limit.unwrap_or(IMPACT_LIMIT),
                ),
                true,
                text::impact,
            ),
            Call::Why(p) => whole(ws.why(&p.target), false, |o, env| text::why(o, &env.result)),
            Call::Show(p) => whole(ws.show(&p.subject, p.version), false, |o, env| {
                text::shown(o, &env.result)
            }),
            Call::History(p) => whole(ws.history(&p.subject), false, |o, env| {
                text::history(o, &env.result)
            }),
            Call::Asof(p) => whole(ws.asof(&p.date, p.show.as_deref()), false, |o, env| {
                text::asof(o, &env.result)
            }),
            Call::Recap(p) => items(ws.recap(p.n.unwrap_or(3)), text::session_view),
            Call::FactList(_) => items(ws.fact_list(), text::fact),
            Call::Drift(p) => whole(ws.drift(p.since), false, |o, env| {
                text::drift(o, &env.result)
            }),
            Call::SynthesisPlan(_) => whole(ws.synthesis_plan(), false, |o, env| {
                text::synthesis_plan(o, &env.result)
            }),
            Call::Lint(_) => whole(ws.lint(), true, |o, env| {
                text::lint(o, &env.result, LIST_CAP)
            })
            .map(|answer| cap_lists(answer, "`loci lint --json`")),
            Call::Check(_) => whole(ws.check(), true, |o, env| {
                text::check(o, &env.result, LIST_CAP)
            })
            .map(|answer| cap_lists(answer, "`loci check --json`")),
            Call::Resolve(p) => whole(
                ws.resolve(p.id, p.notes.as_deref(), p.session),
                false,
                |o, env| text::resolved(o, &env.result),
            ),
            Call::Scan(_) => whole(ws.scan(&|_| {}), false, |o, env| text::scan(o, &env.result))
                .map(|answer| cap_lists(answer, "`loci scan --json`")),
            Call::Remember(p) => whole(
                bounded_written(ws.remember(&p.subject, &p.body, &p.write_options(a))),
                false,
                |o, env| text::written(o, &env.result),
            ),
            Call::Decide(p) => whole(
                bounded_written(ws.decide(&p.text, p.subject.as_deref(), &p.write_options(a))),
                false,
                |o, env| text::written(o, &env.result),
            ),
            Call::Learn(p) => whole(
                bounded_written(ws.learn(&p.text, p.subject.as_deref(), &p.write_options(a))),
                false,
                |o, env| text::written(o, &env.result),
            ),
            Call::Confirm(p) => whole(
                ws.confirm(&p.subject, &p.write_options(a)),
                false,
                |o, env| text::confirmed(o, &env.result),
            ),
            Call::Pin(p) => whole(
                ws.pin(&p.subject, p.pinned.unwrap_or(true), &p.write_options(a)),
                false,
                |o, env| text::page(o, &env.result),
            ),
            Call::Rollback(p) => whole(
                bounded_written(ws.rollback(&p.subject, p.version, &p.write_options(a))),
                false,
                |o, env| text::written(o, &env.result),
            ),
            Call::FactAdd(p) => whole(
                ws.fact_add(
                    &p.claim,
                    &p.cmd,
                    p.expect_output.as_deref(),
                    p.expect_exit,
                    &p.write_options(a),
                ),
                false,
                |o, env| text::fact(o, &env.result),
            )
            .map_err(|e| rename_argument(e, "expect", "expect_output")),
            Call::SessionBegin(p) => whole(
                ws.session_begin(p.task.as_deref(), p.author.as_deref().or(a)),
                false,
                |o, env| text::session_begun(o, &env.result),
            ),
            Call::SessionEnd(p) => whole(
                ws.session_end(p.session, p.summary.as_deref()),
                false,
                |o, env| text::session_view(o, &env.result),
            ),
        }
    }
}

/// The engine names some arguments after CLI flags; say the tool's name instead.
fn rename_argument(e: EngineError, from: &str, to: &str) -> EngineError {
    match e {
        EngineError::InvalidArgument { name, message } if name == from => {
            EngineError::InvalidArgument {
                name: to.into(),
                message: message
                    .replace("(--expect)", "(expect_output)")
                    .replace("(--exit)", "(expect_exit)"),
            }
        }
        other => other,
    }
}

/// Entries a `scan`, `lint` or `check` answer lists per list; the counts are whole.
pub const LIST_CAP: usize = 50;

/// The most bytes of a written body a write's answer carries back (cut at a character
/// boundary).
pub const BODY_EXCERPT_BYTES: usize = 200;

/// A write's answer (`remember`, `decide`, `learn`, `rollback`) says what was written —
/// the subject, version, author, and the claims with their findings — with at most
/// [`BODY_EXCERPT_BYTES`] of the body in `revision.body` and [`LIST_CAP`] claims, each
/// cut with a note: an answer does not echo unbounded input back (issue 31: a 1 MiB
/// body came back whole). `show` returns the body and every claim.
fn bounded_written(
    env: Result<Envelope<Written>, EngineError>,
) -> Result<Envelope<Written>, EngineError> {
    let mut env = env?;
    let subject = env.result.page.subject.clone();
    let version = env.result.revision.version;
    let body = &mut env.result.revision.body;
    let whole = body.len();
    if whole > BODY_EXCERPT_BYTES {
        let mut end = BODY_EXCERPT_BYTES;
        while !body.is_char_boundary(end) {
            end -= 1;
        }
        body.truncate(end);
        env.capability.notes.push(format!(
            "the body written is {whole} bytes; `revision.body` holds its first {end} (`show` with subject `{subject}` and version {version} returns it whole)"
        ));
    }
    let claims = env.result.claims.len();
    if claims > LIST_CAP {
        env.result.claims.truncate(LIST_CAP);
        env.capability.notes.push(format!(
            "the body makes {claims} claims; the first {LIST_CAP} are listed (`show` lists every one)"
        ));
    }
    Ok(env)
}

/// An answer's lists (at its top level, and one object down: `check`'s `lint`) cut to
/// [`LIST_CAP`] entries each, with a note giving the whole counts and where to get
/// every entry (`whole`). These answers are not to page: calling `scan` again scans again,
/// and each page of a `lint` ran the whole lint again (a second trial: 585 pages of raw
/// JSON for 20,011 findings, 3.8 s each).
fn cap_lists(mut answer: Answer, whole: &str) -> Answer {
    fn cap(value: &mut Value, prefix: &str, depth: u32, cut: &mut Vec<String>) {
        let Value::Object(fields) = value else {
            return;
        };
        for (name, field) in fields.iter_mut() {
            match field {
                Value::Array(items) if items.len() > LIST_CAP => {
                    cut.push(format!("{prefix}{name} {}", items.len()));
                    items.truncate(LIST_CAP);
                }
                Value::Object(_) if depth > 0 => {
                    cap(field, &format!("{prefix}{name}."), depth - 1, cut)
                }
                _ => {}
            }
        }
    }
    let mut cut = Vec::new();
    cap(&mut answer.env.result, "", 1, &mut cut);
    if !cut.is_empty() {
        answer.env.capability.notes.push(format!(
            "lists cut to their first {LIST_CAP} entries; whole counts: {} ({whole} lists every entry)",
            cut.join(", ")
        ));
    }
    answer
}

/// An envelope with its result as JSON.
fn json<T: Serialize>(
    env: Result<Envelope<T>, EngineError>,
) -> Result<Envelope<Value>, EngineError> {
    let env = env?;
    let value =
        serde_json::to_value(&env.result).map_err(|e| EngineError::Internal(e.to_string()))?;
    Ok(env.map(|_| value))
}
