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
use loci_engine::memory::synthesis::Targets;
use loci_engine::memory::{WriteOptions, Written};
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
            /// `session_id` from `session_begin`.
            #[serde(default)]
            pub session: Option<i64>,
            /// Who writes (unset: `$LOCI_AUTHOR`, else `agent:<client name>`).
            #[serde(default)]
            pub author: Option<String>,
            /// A one-line change summary.
            #[serde(default)]
            pub summary: Option<String>,
            /// Fail unless the page is at this version (0: must not exist yet).
            #[serde(default)]
            pub expect_version: Option<i64>,
            /// Idempotency key: a retry with it returns the first result.
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

/// Defaults of the tools' arguments: each is the `#[serde(default = ..)]` of its field, so
/// `tools/list` declares it as the field's `"default"` (schemars serializes it) and the
/// call uses the same value.
mod defaults {
    pub fn list_limit() -> u32 {
        loci_engine::map::LIST_LIMIT
    }
    pub fn impact_limit() -> u32 {
        super::IMPACT_LIMIT
    }
    pub fn min_confidence() -> f64 {
        loci_engine::map::MIN_CONFIDENCE
    }
    pub fn search_limit() -> u32 {
        10
    }
    pub fn depth() -> u32 {
        3
    }
    pub fn recap() -> u32 {
        3
    }
    pub fn memory_limit() -> u32 {
        super::MEMORY_LIMIT
    }
    pub fn yes() -> bool {
        true
    }
}

/// Pages a `memory_list` call lists when it names no `limit`.
pub const MEMORY_LIMIT: u32 = 100;

params! {
    /// Arguments of `context`.
    ContextParams {
        /// The question or task in words. May be left out when `open_files` is given.
        #[serde(default)]
        query: String,
        /// Files you are working on (repository-relative); they and their neighbours rank higher.
        #[serde(default)]
        open_files: Option<Vec<String>>,
        /// Token budget (tokens ≈ characters / 4); unset: `[context] budget` of `.loci/config.toml`.
        #[serde(default)]
        budget: Option<u64>,
        /// Relevance floor in points (a full-text hit is worth up to 30); below it loci abstains.
        /// Unset: `[context] floor` of `.loci/config.toml`; the answer names the floor used.
        #[serde(default)]
        floor: Option<f64>,
        /// `next_cursor` of the previous page.
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
        /// Words to find (BM25 full-text; punctuation is literal).
        query: String,
        /// Only these kinds of hits (unset: all).
        #[serde(default)]
        kinds: Option<Vec<SearchKind>>,
        /// Only hits in this file or folder (whole path components).
        #[serde(default)]
        path: Option<String>,
        /// Hits per kind.
        #[serde(default = "defaults::search_limit")]
        limit: u32,
        /// `next_cursor` of the previous page.
        #[serde(default)]
        cursor: Option<String>,
    }
}

params! {
    /// Arguments of `symbol`.
    SymbolParams {
        /// A name (`login`), qualified or dotted name as code spells it (`AuthService.login`,
        /// `urllib.parse.urlsplit`), or a key (`src/auth.py#AuthService.login@method`).
        name: String,
        /// Rows to list by path and line (0: all); `limits.omitted` counts the rest.
        #[serde(default = "defaults::list_limit")]
        limit: u32,
        /// `next_cursor` of the previous page.
        #[serde(default)]
        cursor: Option<String>,
    }
}

params! {
    /// Arguments of `references`.
    ReferencesParams {
        /// A bare name (every use), a qualified name (`Regex.new`: uses resolved to it or
        /// written on that qualifier) or a key (uses resolved to it).
        name: String,
        /// Rows to list by path and line (0: all); `limits.omitted` counts the rest.
        #[serde(default = "defaults::list_limit")]
        limit: u32,
        /// `next_cursor` of the previous page.
        #[serde(default)]
        cursor: Option<String>,
    }
}

params! {
    /// Arguments of `callers`.
    CallersParams {
        /// A name, qualified or dotted name, or key.
        symbol: String,
        /// Calls to list (0: all); `limits.omitted` counts the rest.
        #[serde(default = "defaults::list_limit")]
        limit: u32,
        /// Least confidence (0: all).
        #[serde(default = "defaults::min_confidence")]
        min_confidence: f64,
        /// `next_cursor` of the previous page.
        #[serde(default)]
        cursor: Option<String>,
    }
}

params! {
    /// Arguments of `callees`.
    CalleesParams {
        /// A name, qualified or dotted name, or key.
        symbol: String,
        /// Calls to list (0: all); `limits.omitted` counts the rest.
        #[serde(default = "defaults::list_limit")]
        limit: u32,
        /// `next_cursor` of the previous page.
        #[serde(default)]
        cursor: Option<String>,
    }
}

params! {
    /// Arguments of `outline`.
    OutlineParams {
        /// A repository-relative file path.
        path: String,
        /// Definitions to list in document order (0: all).
        #[serde(default = "defaults::list_limit")]
        limit: u32,
        /// `next_cursor` of the previous page.
        #[serde(default)]
        cursor: Option<String>,
    }
}

params! {
    /// Arguments of `source`.
    SourceParams {
        /// A name, qualified or dotted name, or key; the first match is shown, others named.
        name: String,
        /// `next_cursor` of the previous page.
        #[serde(default)]
        cursor: Option<String>,
    }
}

params! {
    /// Arguments of `deps`.
    DepsParams {
        /// A repository-relative file path.
        path: String,
        /// List the files that import `path` instead.
        #[serde(default)]
        reverse: bool,
        /// `next_cursor` of the previous page.
        #[serde(default)]
        cursor: Option<String>,
    }
}

params! {
    /// Arguments of `impact`.
    ImpactParams {
        /// A repository-relative path, or a symbol name or key.
        target: String,
        /// Dependency hops to follow.
        #[serde(default = "defaults::depth")]
        depth: u32,
        /// Follow only stated edges (proven by a parser).
        #[serde(default)]
        hard: bool,
        /// Least confidence (0: all).
        #[serde(default = "defaults::min_confidence")]
        min_confidence: f64,
        /// Dependents to list, nearest first (0: all); the counts are of the whole walk.
        #[serde(default = "defaults::impact_limit")]
        limit: u32,
        /// `next_cursor` of the previous page.
        #[serde(default)]
        cursor: Option<String>,
    }
}

params! {
    /// Arguments of `why`.
    WhyParams {
        /// `PATH[:LINE]` (one-based line) or text from a memory.
        #[serde(alias = "query")]
        target: String,
        /// `next_cursor` of the previous page.
        #[serde(default)]
        cursor: Option<String>,
    }
}

params! {
    /// Arguments of `show`.
    ShowParams {
        /// A path, `.`, `topic:NAME`, `decisions`, `lessons`, `decision:N` or `lesson:N`.
        subject: String,
        /// A version number (unset: the current revision).
        #[serde(default)]
        version: Option<i64>,
        /// `next_cursor` of the previous page.
        #[serde(default)]
        cursor: Option<String>,
    }
}

params! {
    /// Arguments of `history`.
    HistoryParams {
        /// A path, `.`, `topic:NAME`, `decisions` or `lessons`.
        subject: String,
        /// `next_cursor` of the previous page.
        #[serde(default)]
        cursor: Option<String>,
    }
}

params! {
    /// Arguments of `asof`.
    AsofParams {
        /// A date (`2026-11-01`: the end of that day, UTC) or RFC 3339 time.
        date: String,
        /// Also return this subject's revision at that moment.
        #[serde(default)]
        show: Option<String>,
        /// `next_cursor` of the previous page.
        #[serde(default)]
        cursor: Option<String>,
    }
}

params! {
    /// Arguments of `recap`.
    RecapParams {
        /// How many sessions, newest first.
        #[serde(default = "defaults::recap")]
        n: u32,
        /// `next_cursor` of the previous page.
        #[serde(default)]
        cursor: Option<String>,
    }
}

params! {
    /// Arguments of `memory_list`.
    MemoryListParams {
        /// Only pages whose subject is this or lies under it (`src/auth`, `topic:`,
        /// `decision:`, `lesson:`); empty: all.
        #[serde(default)]
        prefix: String,
        /// Only these kinds: `file`, `folder`, `root`, `topic`, `decision`, `lesson` (empty: all).
        #[serde(default)]
        kinds: Vec<String>,
        /// Pages to list (0: all); `limits.omitted` counts the rest.
        #[serde(default = "defaults::memory_limit")]
        limit: u32,
        /// `next_cursor` of the previous page.
        #[serde(default)]
        cursor: Option<String>,
    }
}

params! {
    /// Arguments of tools that take only a cursor.
    CursorParams {
        /// `next_cursor` of the previous page.
        #[serde(default)]
        cursor: Option<String>,
    }
}

params! {
    /// Arguments of tools that take none.
    NoParams {}
}

params! {
    /// Arguments of `sync`.
    SyncParams {
        /// Commits to read at most (unset: `[sync] max_commits` of `.loci/config.toml`).
        #[serde(default)]
        limit: Option<usize>,
    }
}

params! {
    /// Arguments of `resolve`.
    ResolveParams {
        /// The contradiction's id, as `lint` lists it.
        id: i64,
        /// Why the finding is not a problem.
        #[serde(default)]
        notes: Option<String>,
        /// `session_id` from `session_begin`.
        #[serde(default)]
        session: Option<i64>,
    }
}

params! {
    /// Arguments of `drift`.
    DriftParams {
        /// Changes after this scan revision (unset: since the one before the last scan).
        #[serde(default)]
        since: Option<i64>,
        /// `next_cursor` of the previous page.
        #[serde(default)]
        cursor: Option<String>,
    }
}

params! {
    /// Arguments of `remember`.
    RememberParams {
        /// A path, `.`, `topic:NAME`, `decision:N` or `lesson:N`.
        subject: String,
        /// The new body (markdown); replaces the current revision, history is kept.
        /// Backticked paths and `symbols()` become checked claims.
        body: String,
    } + write
}

params! {
    /// Arguments of `decide`.
    DecideParams {
        /// The decision and its reason, in a sentence or two.
        text: String,
        /// The file, folder or topic it is about.
        #[serde(default)]
        subject: Option<String>,
    } + write
}

params! {
    /// Arguments of `learn`.
    LearnParams {
        /// What went wrong or surprised, and what to do instead.
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
        /// The page.
        subject: String,
        /// `true` pins (never marked stale); `false` unpins.
        #[serde(default = "defaults::yes")]
        pinned: bool,
    } + write
}

params! {
    /// Arguments of `rollback`.
    RollbackParams {
        /// The page.
        subject: String,
        /// The version whose body is published again.
        version: i64,
    } + write
}

params! {
    /// Arguments of `fact_add`.
    FactAddParams {
        /// What the command demonstrates.
        claim: String,
        /// The command line (split with shell word rules, never run by a shell).
        cmd: String,
        /// Expected substring of its output.
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
        /// Who runs it (unset: `$LOCI_AUTHOR`, else `agent:<client name>`).
        #[serde(default)]
        author: Option<String>,
    }
}

params! {
    /// Arguments of `session_end`.
    SessionEndParams {
        /// `session_id` from `session_begin`.
        session: i64,
        /// What was done, for the next session's `recap`.
        #[serde(default)]
        summary: Option<String>,
    }
}

params! {
    /// Arguments of `synthesis_plan` (none).
    SynthesisPlanParams {}
}

params! {
    /// Arguments of `synthesize`.
    SynthesizeParams {
        /// Files or folders (empty: the plan's pages).
        #[serde(default)]
        paths: Vec<String>,
        /// Return the prompts; run nothing.
        #[serde(default)]
        dry_run: bool,
        /// `session_id` from `session_begin`.
        #[serde(default)]
        session: Option<i64>,
    }
}

/// How far a long call has come, for `notifications/progress`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Progress {
    /// Steps done.
    pub done: u64,
    /// Steps in all.
    pub total: u64,
    /// What the next step does.
    pub message: String,
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
    let schema = rmcp::handler::server::common::schema_for_input::<T>().unwrap_or_else(|message| {
        // Unreachable for derived structs (their root is an object); keep the server up.
        tracing::error!(%message, "tool input schema");
        rmcp::handler::server::common::schema_for_empty_input()
    });
    Arc::new(compact_schema((*schema).clone()))
}

/// An input schema as a model needs it (issue 31, item 5: every byte of `tools/list` may
/// sit before the model): no `$schema` (MCP's default dialect is JSON Schema 2020-12), and
/// an optional argument without a default is just its type (`"type": "string"`, not
/// `["string", "null"]` with `"default": null`): leaving it out is how a model says "none".
pub fn compact_schema(mut schema: JsonObject) -> JsonObject {
    schema.remove("$schema");
    // An enum of documented strings (`SearchKind`): its values, without a schema per value.
    if let Some(Value::Object(defs)) = schema.get_mut("$defs") {
        for def in defs.values_mut() {
            let Some(Value::Array(branches)) = def.get("oneOf") else {
                continue;
            };
            let values: Option<Vec<Value>> =
                branches.iter().map(|b| b.get("const").cloned()).collect();
            if let (Some(values), Value::Object(def)) = (values, def) {
                def.remove("oneOf");
                def.remove("description");
                def.insert("type".into(), Value::String("string".into()));
                def.insert("enum".into(), Value::Array(values));
            }
        }
    }
    if let Some(Value::Object(props)) = schema.get_mut("properties") {
        for prop in props.values_mut() {
            let Value::Object(prop) = prop else { continue };
            // `uint32`, `int64`: Rust's widths, which a model does not need.
            prop.remove("format");
            if prop.get("default") == Some(&Value::Null) {
                prop.remove("default");
            }
            if let Some(Value::Array(types)) = prop.get("type") {
                let types: Vec<Value> = types
                    .iter()
                    .filter(|t| t.as_str() != Some("null"))
                    .cloned()
                    .collect();
                if types.len() == 1 {
                    prop.insert("type".into(), types[0].clone());
                }
            }
            // `Option<Enum>`: `anyOf: [{$ref}, {type: null}]` becomes the `$ref`'s branch.
            if let Some(Value::Array(any)) = prop.get("anyOf") {
                let rest: Vec<Value> = any
                    .iter()
                    .filter(|b| b.get("type").and_then(Value::as_str) != Some("null"))
                    .cloned()
                    .collect();
                if rest.len() == 1
                    && let Value::Object(branch) = &rest[0]
                {
                    prop.remove("anyOf");
                    for (k, v) in branch {
                        prop.entry(k.clone()).or_insert_with(|| v.clone());
                    }
                }
            }
        }
    }
    schema
}

/// The tools, in the order `tools/list` shows them.
pub const TOOLS: &[ToolDef] = &[
    ToolDef {
        name: "session_begin",
        title: "Begin a session",
        description: "Begin a work session at the start of a task. Pass the returned \
            `session_id` as `session` to every write.",
        access: Access::Write,
        idempotent: false,
        schema: schema::<SessionBeginParams>,
    },
    ToolDef {
        name: "recap",
        title: "Recap recent sessions",
        description: "The last sessions, newest first, with what each changed. Read it \
            at the start of a task.",
        access: Access::Read,
        idempotent: true,
        schema: schema::<RecapParams>,
    },
    ToolDef {
        name: "context",
        title: "Context for a task",
        description: "Start here before reading files: the memory, code and docs most \
            relevant to a question, ranked and packed under a token budget, with \
            provenance and staleness. Abstains when nothing is relevant enough.",
        access: Access::Read,
        idempotent: true,
        schema: schema::<ContextParams>,
    },
    ToolDef {
        name: "search",
        title: "Search",
        description: "Full-text search over memory, symbols, docs and files.",
        access: Access::Read,
        idempotent: true,
        schema: schema::<SearchParams>,
    },
    ToolDef {
        name: "symbol",
        title: "Find a symbol",
        description: "Definitions matching a name: kind, path, line (0-based), \
            signature, doc, key.",
        access: Access::Read,
        idempotent: true,
        schema: schema::<SymbolParams>,
    },
    ToolDef {
        name: "source",
        title: "A symbol's source",
        description: "A definition's source from disk, with its memory and whether \
            that is stale.",
        access: Access::Read,
        idempotent: true,
        schema: schema::<SourceParams>,
    },
    ToolDef {
        name: "outline",
        title: "A file's outline",
        description: "A file's definitions in order, nested, with signatures.",
        access: Access::Read,
        idempotent: true,
        schema: schema::<OutlineParams>,
    },
    ToolDef {
        name: "references",
        title: "Find references",
        description: "Uses of a name or symbol (calls, imports, types) with the \
            enclosing definition, provenance and confidence.",
        access: Access::Read,
        idempotent: true,
        schema: schema::<ReferencesParams>,
    },
    ToolDef {
        name: "callers",
        title: "Find callers",
        description: "Incoming calls: call sites resolved to the symbols a name matches.",
        access: Access::Read,
        idempotent: true,
        schema: schema::<CallersParams>,
    },
    ToolDef {
        name: "callees",
        title: "Find callees",
        description: "Outgoing calls: the calls in the definitions a name matches, \
            each with its target.",
        access: Access::Read,
        idempotent: true,
        schema: schema::<CalleesParams>,
    },
    ToolDef {
        name: "deps",
        title: "File dependencies",
        description: "What a file imports, or with `reverse`, which files import it.",
        access: Access::Read,
        idempotent: true,
        schema: schema::<DepsParams>,
    },
    ToolDef {
        name: "impact",
        title: "Blast radius",
        description: "What depends on a file or symbol, transitively, with the edge \
            reaching each. Use before changing a widely used definition.",
        access: Access::Read,
        idempotent: true,
        schema: schema::<ImpactParams>,
    },
    ToolDef {
        name: "why",
        title: "Why is this so",
        description: "The memory that explains a file, line or phrase, with its \
            provenance: revision, author, session, event.",
        access: Access::Read,
        idempotent: true,
        schema: schema::<WhyParams>,
    },
    ToolDef {
        name: "show",
        title: "Show a memory page",
        description: "A memory page at its current or a given version, with its claims.",
        access: Access::Read,
        idempotent: true,
        schema: schema::<ShowParams>,
    },
    ToolDef {
        name: "history",
        title: "Page history",
        description: "A page's revisions, oldest first.",
        access: Access::Read,
        idempotent: true,
        schema: schema::<HistoryParams>,
    },
    ToolDef {
        name: "memory_list",
        title: "List memory",
        description: "Memory pages (files, folders, topics, decisions, lessons) under \
            a subject prefix, each with its version, first line and staleness.",
        access: Access::Read,
        idempotent: true,
        schema: schema::<MemoryListParams>,
    },
    ToolDef {
        name: "topics",
        title: "List topics",
        description: "Topics (`topic:NAME`) and their members.",
        access: Access::Read,
        idempotent: true,
        schema: schema::<CursorParams>,
    },
    ToolDef {
        name: "asof",
        title: "Memory as of a date",
        description: "Which version of each page was current at a moment.",
        access: Access::Read,
        idempotent: true,
        schema: schema::<AsofParams>,
    },
    ToolDef {
        name: "stats",
        title: "Index statistics",
        description: "The map's scan revision and time, counts of files, symbols, \
            references and memory, files and lines by language, and the files the map \
            leaves out: skipped (as secrets, too large, …) or degraded, up to 20 named.",
        access: Access::Read,
        idempotent: true,
        schema: schema::<NoParams>,
    },
    ToolDef {
        name: "remember",
        title: "Remember",
        description: "Write a new revision of a page of notes (a file, folder, topic or \
            `.`). `show` it first and pass `expect_version`. The answer lists the \
            claims found; fix any that fails.",
        access: Access::Write,
        idempotent: false,
        schema: schema::<RememberParams>,
    },
    ToolDef {
        name: "decide",
        title: "Record a decision",
        description: "Record a decision and its reason as an entry `decision:N`.",
        access: Access::Write,
        idempotent: false,
        schema: schema::<DecideParams>,
    },
    ToolDef {
        name: "learn",
        title: "Record a lesson",
        description: "Record a lesson (a pitfall and what to do instead) as an entry \
            `lesson:N`.",
        access: Access::Write,
        idempotent: false,
        schema: schema::<LearnParams>,
    },
    ToolDef {
        name: "confirm",
        title: "Confirm a page",
        description: "Mark a page as still true after its code changed (new snapshots \
            of its claims).",
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
        description: "Publish an earlier version's body again as a new revision.",
        access: Access::Write,
        idempotent: false,
        schema: schema::<RollbackParams>,
    },
    ToolDef {
        name: "fact_add",
        title: "Add a fact",
        description: "Record a claim with a command that demonstrates it and the \
            expected output or exit code. Never runs it.",
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
        schema: schema::<CursorParams>,
    },
    ToolDef {
        name: "drift",
        title: "What changed",
        description: "File changes since a scan revision and the memory they made \
            stale or false.",
        access: Access::Read,
        idempotent: true,
        schema: schema::<DriftParams>,
    },
    ToolDef {
        name: "synthesis_plan",
        title: "Pages to write",
        description: "Memory pages a model could draft, and why: files without a page \
            (most depended-on first), pages stale against the code, folder roll-ups. Runs \
            nothing.",
        access: Access::Read,
        idempotent: true,
        schema: schema::<SynthesisPlanParams>,
    },
    ToolDef {
        name: "synthesize",
        title: "Draft pages with the configured model",
        description: "Draft the plan's pages (or those of `paths`) with the configured \
            model command; each is stored as a revision and checked. Progress per page.",
        access: Access::Write,
        idempotent: false,
        schema: schema::<SynthesizeParams>,
    },
    ToolDef {
        name: "lint",
        title: "Check memory against the code",
        description: "Check memory and docs against the code: contradictions (with ids \
            for `resolve`) and stale pages.",
        access: Access::Write,
        idempotent: true,
        schema: schema::<CursorParams>,
    },
    ToolDef {
        name: "check",
        title: "CI gate",
        description: "`lint`, then whether the `[check]` thresholds hold (`passed`).",
        access: Access::Write,
        idempotent: true,
        schema: schema::<CursorParams>,
    },
    ToolDef {
        name: "resolve",
        title: "Dismiss a finding",
        description: "Dismiss a contradiction `lint` reported as a false alarm, for good.",
        access: Access::Write,
        idempotent: true,
        schema: schema::<ResolveParams>,
    },
    ToolDef {
        name: "scan",
        title: "Rescan the workspace",
        description: "Update the map from the working tree. Other tools rescan changed \
            files first; use after large changes.",
        access: Access::Index,
        idempotent: true,
        schema: schema::<NoParams>,
    },
    ToolDef {
        name: "sync",
        title: "Record git history",
        description: "Record commits since the last sync into the audit log; memory \
            follows renamed files.",
        access: Access::Write,
        idempotent: true,
        schema: schema::<SyncParams>,
    },
    ToolDef {
        name: "session_end",
        title: "End a session",
        description: "End the session with a summary for the next `recap`.",
        access: Access::Write,
        idempotent: false,
        schema: schema::<SessionEndParams>,
    },
];

impl ToolDef {
    /// The MCP tool definition with its schema and annotations. Writes are never
    /// destructive: memory is append-only, a rollback is a new revision.
    pub fn to_tool(&self) -> Tool {
        // Only hints that differ from the specification's defaults (readOnly false,
        // destructive true, idempotent false, openWorld true) are sent; `destructive` means
        // nothing for a read. Every tool's list entry costs a model tokens.
        let read = self.access == Access::Read;
        let mut annotations = ToolAnnotations::with_title(self.title).open_world(false);
        if read {
            annotations = annotations.read_only(true);
        } else {
            annotations = annotations.destructive(false);
        }
        if self.idempotent {
            annotations = annotations.idempotent(true);
        }
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
pub const LIST_TOOLS: &[&str] = &[
    "search",
    "symbol",
    "references",
    "recap",
    "fact_list",
    "memory_list",
    "topics",
];

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
    Callees(CalleesParams),
    Outline(OutlineParams),
    Source(SourceParams),
    Deps(DepsParams),
    Impact(ImpactParams),
    Why(WhyParams),
    Show(ShowParams),
    History(HistoryParams),
    Asof(AsofParams),
    Recap(RecapParams),
    MemoryList(MemoryListParams),
    Topics(CursorParams),
    Stats(NoParams),
    FactList(CursorParams),
    Drift(DriftParams),
    SynthesisPlan(SynthesisPlanParams),
    Synthesize(SynthesizeParams),
    Lint(CursorParams),
    Check(CursorParams),
    Resolve(ResolveParams),
    Scan(NoParams),
    Sync(SyncParams),
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
        "callees" => Call::Callees(from_args(args).map_err(arg)?),
        "outline" => Call::Outline(from_args(args).map_err(arg)?),
        "source" => Call::Source(from_args(args).map_err(arg)?),
        "memory_list" => Call::MemoryList(from_args(args).map_err(arg)?),
        "topics" => Call::Topics(from_args(args).map_err(arg)?),
        "stats" => Call::Stats(from_args(args).map_err(arg)?),
        "sync" => Call::Sync(from_args(args).map_err(arg)?),
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
        "synthesize" => Call::Synthesize(from_args(args).map_err(arg)?),
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
            | Call::Callees(_)
            | Call::Outline(_)
            | Call::Source(_)
            | Call::MemoryList(_)
            | Call::Topics(_)
            | Call::Stats(_)
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
            Call::Callees(p) => p.cursor.as_deref(),
            Call::Outline(p) => p.cursor.as_deref(),
            Call::Source(p) => p.cursor.as_deref(),
            Call::MemoryList(p) => p.cursor.as_deref(),
            Call::Topics(p) => p.cursor.as_deref(),
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
    /// none (`$LOCI_AUTHOR`, else `agent:<client name>`); `progress` hears how a long
    /// call advances (`synthesize`: a page's command starts).
    pub fn run(
        &self,
        ws: &mut Workspace,
        default_author: Option<&str>,
        progress: &dyn Fn(Progress),
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
                        limit: Some(p.limit),
                    },
                ),
                text::search_hit,
            ),
            Call::Symbol(p) => items(ws.symbol(&p.name, p.limit), text::symbol_hit),
            Call::References(p) => items(ws.refs(&p.name, p.limit), text::ref_hit),
            Call::Callers(p) => whole(
                ws.callers_with(&p.symbol, p.limit, p.min_confidence),
                false,
                |o, env| text::callers(o, &env.result),
            ),
            Call::Callees(p) => whole(ws.callees(&p.symbol, p.limit), false, |o, env| {
                text::callees(o, &env.result)
            }),
            Call::Outline(p) => whole(ws.outline(&p.path, p.limit), false, |o, env| {
                text::outline(o, &env.result)
            }),
            Call::Source(p) => whole(ws.source(&p.name), true, |o, env| {
                text::source(o, &env.result)
            }),
            Call::MemoryList(p) => items(
                ws.memory_list(&p.prefix, &p.kinds, p.limit),
                text::page_entry,
            ),
            Call::Topics(_) => items(ws.topics(), text::topic),
            Call::Stats(_) => whole(ws.stats(), false, text::stats),
            Call::Sync(p) => whole(ws.sync(p.limit), false, |o, env| text::sync(o, &env.result)),
            Call::Deps(p) => whole(ws.deps(&p.path, p.reverse), false, |o, env| {
                text::deps(o, &env.result)
            }),
            Call::Impact(p) => whole(
                ws.impact_with(
                    &p.target,
                    p.depth,
                    loci_engine::map::Edges {
                        hard: p.hard,
                        min_confidence: p.min_confidence,
                    },
                    p.limit,
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
            Call::Recap(p) => items(ws.recap(p.n), text::session_view),
            Call::FactList(_) => items(ws.fact_list(), text::fact),
            Call::Drift(p) => whole(ws.drift(p.since), false, |o, env| {
                text::drift(o, &env.result)
            }),
            Call::SynthesisPlan(_) => whole(ws.synthesis_plan(), false, |o, env| {
                text::synthesis_plan(o, &env.result)
            }),
            Call::Synthesize(p) => {
                let targets = if p.paths.is_empty() {
                    Targets::Pending
                } else {
                    Targets::Paths(p.paths.clone())
                };
                if p.dry_run {
                    whole(ws.synthesis_prompts(&targets), false, |o, env| {
                        text::synthesis_prompts(o, &env.result)
                    })
                } else {
                    let report = ws.synthesize(&targets, p.session, &|s| {
                        progress(Progress {
                            done: s.done as u64,
                            total: s.total as u64,
                            message: format!("writing the page of {}", s.subject),
                        })
                    });
                    whole(report, false, |o, env| {
                        text::synthesis_report(o, &env.result)
                    })
                }
            }
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
                ws.pin(&p.subject, p.pinned, &p.write_options(a)),
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The most bytes `tools/list`'s result may take as compact JSON (issue 31, item 5: it
    /// was 34,095 bytes, 8,029 cl100k tokens, for 27 tools before descriptions were cut to
    /// what a model needs; 29,338 for 34 tools after; `bench/context_mcp_latency.py
    /// --tools` measures it in tokens). A new tool or a longer description must fit.
    const TOOLS_LIST_BYTES: usize = 30_000;

    fn listing() -> Value {
        let tools: Vec<Tool> = TOOLS.iter().map(ToolDef::to_tool).collect();
        serde_json::json!({ "tools": tools })
    }

    #[test]
    fn the_tool_list_stays_under_its_bound() {
        let bytes = serde_json::to_string(&listing()).unwrap_or_default().len();
        assert!(
            bytes <= TOOLS_LIST_BYTES,
            "tools/list is {bytes} bytes, over the bound of {TOOLS_LIST_BYTES}: cut a description"
        );
    }

    /// Issue 31, item 5: a parameter with a default declares it in the schema (`"default":
    /// 3`), never in prose or as `null`; no description carries a Rust doc link.
    #[test]
    fn every_default_is_declared_in_the_schema() {
        let listing = listing();
        let mut defaults = Vec::new();
        for tool in listing["tools"].as_array().into_iter().flatten() {
            let name = tool["name"].as_str().unwrap_or_default();
            let description = tool["description"].as_str().unwrap_or_default();
            assert!(
                !description.contains("[`"),
                "{name}: a doc link in {description:?}"
            );
            let schema = &tool["inputSchema"];
            assert!(schema.get("$schema").is_none(), "{name}: $schema");
            for (arg, prop) in schema["properties"].as_object().into_iter().flatten() {
                let text = prop["description"].as_str().unwrap_or_default();
                assert!(!text.is_empty(), "{name}.{arg} has no description");
                assert!(!text.contains("[`"), "{name}.{arg}: a doc link in {text:?}");
                assert_ne!(prop.get("default"), Some(&Value::Null), "{name}.{arg}");
                assert!(
                    !prop["type"].is_array(),
                    "{name}.{arg}: a nullable type {}",
                    prop["type"]
                );
                assert!(
                    !text.to_lowercase().contains("default") || prop.get("default").is_some(),
                    "{name}.{arg} states a default in prose, not in the schema: {text:?}"
                );
                if let Some(d) = prop.get("default") {
                    defaults.push(format!("{name}.{arg}={d}"));
                }
            }
        }
        assert_eq!(
            defaults.join(" "),
            "recap.n=3 context.query=\"\" search.limit=10 symbol.limit=1000 outline.limit=1000 \
             references.limit=1000 callers.limit=1000 callers.min_confidence=0.5 \
             callees.limit=1000 deps.reverse=false impact.depth=3 impact.hard=false \
             impact.limit=30 impact.min_confidence=0.5 memory_list.kinds=[] \
             memory_list.limit=100 memory_list.prefix=\"\" pin.pinned=true \
             synthesize.dry_run=false synthesize.paths=[]"
        );
    }

    /// What a call leaves out is the schema's default.
    #[test]
    fn a_call_without_an_argument_gets_the_declared_default() {
        let Ok(Call::Impact(p)) = parse(
            "impact",
            serde_json::json!({"target": "a.rs"}).as_object().cloned(),
        ) else {
            panic!("impact parses");
        };
        assert_eq!(
            (p.depth, p.hard, p.min_confidence, p.limit),
            (3, false, 0.5, IMPACT_LIMIT)
        );
        let Ok(Call::Pin(p)) = parse(
            "pin",
            serde_json::json!({"subject": "a"}).as_object().cloned(),
        ) else {
            panic!("pin parses");
        };
        assert!(p.pinned);
    }
}
