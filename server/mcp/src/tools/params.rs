//! The tools' parameter structs: one per tool, deriving `JsonSchema` with a doc comment
//! per field (the tool's schema in `tools/list`), and the defaults of their arguments.

use super::*;

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
            pub(crate) fn write_options(&self, default_author: Option<&str>) -> WriteOptions {
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
