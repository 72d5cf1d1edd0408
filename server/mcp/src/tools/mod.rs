//! The tools: each takes its operation's request type from [`loci_engine::requests`]
//! (deriving `JsonSchema` with a doc comment per field, so `tools/list` is
//! self-describing; [`Paged`] adds the `cursor` of a paged answer), the tool table with
//! annotations, and the dispatch from a parsed call to one engine function.
//!
//! Rule (style.md 12): tools are thin. Each arm calls exactly one
//! [`loci_engine::Workspace`] operation and renders its typed result with the one
//! [`loci_engine::text`] renderer the CLI uses; the only adaptation is naming (argument
//! names in errors) and defaults a protocol needs (the author of an agent's write).

use std::io;
use std::sync::Arc;

use loci_engine::memory::Written;
use loci_engine::requests::*;
use loci_engine::text::{self, Out};
use loci_engine::{EngineError, Envelope, Workspace};
use rmcp::ErrorData;
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

mod call;
mod params;

pub use call::*;
pub use params::*;

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

/// Declares the tools (see the invocation below): [`TOOLS`], [`Call`] with its variants,
/// [`parse`], and [`Call::name`], [`Call::access`] and [`Call::cursor`].
macro_rules! tools {
    ($(
        $variant:ident($name:literal, $ty:ty, $how:ident) {
            title: $title:expr,
            description: $description:expr,
            access: $access:ident,
            idempotent: $idempotent:expr,
        },
    )*) => {
        /// The tools, in the order `tools/list` shows them.
        pub const TOOLS: &[ToolDef] = &[$(
            ToolDef {
                name: $name,
                title: $title,
                description: $description,
                access: Access::$access,
                idempotent: $idempotent,
                schema: schema::<$ty>,
            },
        )*];

        /// A parsed tool call.
        #[derive(Clone, Debug)]
        #[allow(missing_docs)]
        pub enum Call {
            $($variant($ty),)*
        }

        /// Parses `arguments` for tool `name`. An unknown tool is
        /// [`ParseError::UnknownTool`]; a missing or misspelled argument, or a value of the
        /// wrong type, is [`ParseError::Argument`] naming the argument.
        pub fn parse(name: &str, arguments: Option<JsonObject>) -> Result<Call, ParseError> {
            let args = Value::Object(arguments.unwrap_or_default());
            Ok(match name {
                $($name => Call::$variant(tools!(@parse $how, args).map_err(ParseError::Argument)?),)*
                other => return Err(call::unknown_tool(other)),
            })
        }

        impl Call {
            /// The tool's name.
            pub fn name(&self) -> &'static str {
                match self {
                    $(Call::$variant(_) => $name,)*
                }
            }

            /// Whether the call only reads (and may therefore be re-run after a refresh).
            pub fn access(&self) -> Access {
                match self {
                    $(Call::$variant(_) => Access::$access,)*
                }
            }

            /// The paging cursor, for reads.
            pub fn cursor(&self) -> Option<&str> {
                match self {
                    $(Call::$variant(p) => tools!(@cursor $how, p),)*
                }
            }
        }
    };
    (@parse paged, $args:ident) => { params::paged($args) };
    (@parse cursor, $args:ident) => { call::from_args($args) };
    (@parse plain, $args:ident) => { call::from_args($args) };
    (@cursor paged, $p:ident) => { $p.cursor.as_deref() };
    (@cursor cursor, $p:ident) => { $p.cursor.as_deref() };
    (@cursor plain, $p:ident) => {{
        let _ = $p;
        None
    }};
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

/// An input schema as a model needs it (every byte of `tools/list` may sit before the
/// model): no `$schema` (MCP's default dialect is JSON Schema 2020-12), and
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

// The tools, in the order `tools/list` shows them: each tool's name, its `Call` variant
// and argument type, how its arguments parse (`paged`: a request and the page's `cursor`;
// `cursor`: only a `cursor`; `plain`: a request), and its entry of `TOOLS`. Adding a tool
// is one entry here and one arm in `Call::run`.
tools! {
    SessionBegin("session_begin", SessionBeginArgs, plain) {
        title: "Begin a session",
        description: "Begin a work session at the start of a task. Pass the returned \
            `session_id` as `session` to every write.",
        access: Write,
        idempotent: false,
    },
    Recap("recap", Paged<RecapArgs>, paged) {
        title: "Recap recent sessions",
        description: "The last sessions, newest first, with what each changed. Read it \
            at the start of a task.",
        access: Read,
        idempotent: true,
    },
    Context("context", Paged<ContextArgs>, paged) {
        title: "Context for a task",
        description: "Start here before reading files: the memory, code and docs most \
            relevant to a question, ranked and packed under a token budget, with \
            provenance and staleness. Abstains when nothing is relevant enough.",
        access: Read,
        idempotent: true,
    },
    Search("search", Paged<SearchArgs>, paged) {
        title: "Search",
        description: "Full-text search over memory, symbols, docs and files.",
        access: Read,
        idempotent: true,
    },
    Symbol("symbol", Paged<SymbolArgs>, paged) {
        title: "Find a symbol",
        description: "Definitions matching a name: kind, path, line (0-based), \
            signature, doc, key.",
        access: Read,
        idempotent: true,
    },
    Source("source", Paged<SourceArgs>, paged) {
        title: "A symbol's source",
        description: "A definition's source from disk, with its memory and whether \
            that is stale.",
        access: Read,
        idempotent: true,
    },
    Outline("outline", Paged<OutlineArgs>, paged) {
        title: "A file's outline",
        description: "A file's definitions in order, nested, with signatures.",
        access: Read,
        idempotent: true,
    },
    References("references", Paged<ReferencesArgs>, paged) {
        title: "Find references",
        description: "Uses of a name or symbol (calls, imports, types) with the \
            enclosing definition, provenance and confidence.",
        access: Read,
        idempotent: true,
    },
    Callers("callers", Paged<CallersArgs>, paged) {
        title: "Find callers",
        description: "Incoming calls: call sites resolved to the symbols a name matches.",
        access: Read,
        idempotent: true,
    },
    Callees("callees", Paged<CalleesArgs>, paged) {
        title: "Find callees",
        description: "Outgoing calls of the definitions a name matches, with targets.",
        access: Read,
        idempotent: true,
    },
    Deps("deps", Paged<DepsArgs>, paged) {
        title: "File dependencies",
        description: "What a file imports, or with `reverse`, which files import it.",
        access: Read,
        idempotent: true,
    },
    Impact("impact", Paged<ImpactArgs>, paged) {
        title: "Blast radius",
        description: "What depends on a file or symbol, transitively, with the edge \
            reaching each.",
        access: Read,
        idempotent: true,
    },
    Why("why", Paged<WhyArgs>, paged) {
        title: "Why is this so",
        description: "The memory that explains a file, line or phrase, with its \
            provenance: revision, author, session, event.",
        access: Read,
        idempotent: true,
    },
    Show("show", Paged<ShowArgs>, paged) {
        title: "Show a memory page",
        description: "A memory page at its current or a given version, with its claims.",
        access: Read,
        idempotent: true,
    },
    History("history", Paged<HistoryArgs>, paged) {
        title: "Page history",
        description: "A page's revisions, oldest first.",
        access: Read,
        idempotent: true,
    },
    MemoryList("memory_list", Paged<MemoryListArgs>, paged) {
        title: "List memory",
        description: "Memory pages under a subject prefix (files, folders, topics, \
            decisions, lessons), each with its version and staleness.",
        access: Read,
        idempotent: true,
    },
    Topics("topics", CursorParams, cursor) {
        title: "List topics",
        description: "Topics (`topic:NAME`) and their members.",
        access: Read,
        idempotent: true,
    },
    Asof("asof", Paged<AsofArgs>, paged) {
        title: "Memory as of a date",
        description: "Which version of each page was current at a moment.",
        access: Read,
        idempotent: true,
    },
    Stats("stats", NoParams, plain) {
        title: "Index statistics",
        description: "The map's scan revision and time, row counts, files and lines by \
            language, and the files it left out.",
        access: Read,
        idempotent: true,
    },
    Remember("remember", RememberArgs, plain) {
        title: "Remember",
        description: "Write a new revision of a page of notes (a file, folder, topic or \
            `.`). `show` it first and pass `expect_version`. Fix any claim the answer \
            lists as failing.",
        access: Write,
        idempotent: false,
    },
    Decide("decide", DecideArgs, plain) {
        title: "Record a decision",
        description: "Record a decision and its reason as an entry `decision:N`.",
        access: Write,
        idempotent: false,
    },
    Learn("learn", LearnArgs, plain) {
        title: "Record a lesson",
        description: "Record a lesson (a pitfall and what to do instead) as an entry \
            `lesson:N`.",
        access: Write,
        idempotent: false,
    },
    Confirm("confirm", ConfirmArgs, plain) {
        title: "Confirm a page",
        description: "Mark a page as still true after its code changed (new snapshots \
            of its claims).",
        access: Write,
        idempotent: true,
    },
    Pin("pin", PinArgs, plain) {
        title: "Pin a page",
        description: "Pin (never mark stale) or unpin a page.",
        access: Write,
        idempotent: true,
    },
    Rollback("rollback", RollbackArgs, plain) {
        title: "Roll back a page",
        description: "Publish an earlier version's body again as a new revision.",
        access: Write,
        idempotent: false,
    },
    FactAdd("fact_add", FactAddArgs, plain) {
        title: "Add a fact",
        description: "Record a claim with a command that demonstrates it and the \
            expected output or exit code. Never runs it.",
        access: Write,
        idempotent: false,
    },
    FactList("fact_list", CursorParams, cursor) {
        title: "List facts",
        description: "Recorded facts with their last run.",
        access: Read,
        idempotent: true,
    },
    Drift("drift", Paged<DriftArgs>, paged) {
        title: "What changed",
        description: "File changes since a scan revision and the memory they made \
            stale or false.",
        access: Read,
        idempotent: true,
    },
    SynthesisPlan("synthesis_plan", NoParams, plain) {
        title: "Pages to write",
        description: "Memory pages a model could draft, and why: files without a page, \
            pages stale against the code, folder roll-ups. Runs nothing.",
        access: Read,
        idempotent: true,
    },
    Synthesize("synthesize", SynthesizeArgs, plain) {
        title: "Draft pages with the configured model",
        description: "Draft the plan's pages (or those of `paths`) with the configured \
            model command; each is stored as a revision and checked. Progress per page.",
        access: Write,
        idempotent: false,
    },
    Lint("lint", CursorParams, cursor) {
        title: "Check memory against the code",
        description: "Check memory and docs against the code: contradictions (with ids \
            for `resolve`) and stale pages.",
        access: Write,
        idempotent: true,
    },
    Check("check", CursorParams, cursor) {
        title: "CI gate",
        description: "`lint`, then whether the `[check]` thresholds hold (`passed`).",
        access: Write,
        idempotent: true,
    },
    Resolve("resolve", ResolveArgs, plain) {
        title: "Dismiss a finding",
        description: "Dismiss a contradiction `lint` reported as a false alarm, for good.",
        access: Write,
        idempotent: true,
    },
    Scan("scan", NoParams, plain) {
        title: "Rescan the workspace",
        description: "Update the map from the working tree. Other tools rescan changed \
            files first; use after large changes.",
        access: Index,
        idempotent: true,
    },
    Sync("sync", SyncArgs, plain) {
        title: "Record git history",
        description: "Record commits since the last sync into the audit log; memory \
            follows renamed files.",
        access: Write,
        idempotent: true,
    },
    SessionEnd("session_end", SessionEndArgs, plain) {
        title: "End a session",
        description: "End the session with a summary for the next `recap`.",
        access: Write,
        idempotent: false,
    },
}

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

#[cfg(test)]
mod tests {
    use super::*;

    /// The most bytes `tools/list`'s result may take as compact JSON, with descriptions cut
    /// to what a model needs (about 29,990 bytes for 36 tools, where 27 tools with longer
    /// descriptions took 34,095 bytes, 8,029 cl100k tokens; `bench/context_mcp_latency.py
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

    /// A parameter with a default declares it in the schema (`"default": 3`), never in
    /// prose or as `null`; no description carries a Rust doc link.
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
             callers.no_tests=false \
             callees.limit=1000 callees.min_confidence=0.5 deps.reverse=false impact.depth=3 \
             impact.hard=false \
             impact.limit=30 impact.min_confidence=0.5 impact.no_tests=false memory_list.kinds=[] \
             memory_list.limit=100 memory_list.prefix=\"\" pin.pinned=true \
             synthesize.dry_run=false synthesize.paths=[]"
        );
    }

    /// Fault: when the tools' parameters became the engine's request types, `cursor`
    /// (added by `Paged`) dropped out of the list of arguments an unknown argument's
    /// message names.
    #[test]
    fn fault_an_unknown_argument_of_a_paged_tool_did_not_list_cursor() {
        let message = |tool: &str, args: Value| match parse(tool, args.as_object().cloned()) {
            Err(ParseError::Argument(e)) => e.message,
            _ => "parsed".into(),
        };
        expect_test::expect!["invalid argument `nam`: unknown field `nam`, expected one of `name`, `limit`, `cursor` (the tool's inputSchema in tools/list names every argument)"].assert_eq(&message(
            "symbol",
            serde_json::json!({"nam": "main"}),
        ));
        expect_test::expect!["invalid argument `x`: unknown field `x`, expected one of `query`, `target`, `cursor` (the tool's inputSchema in tools/list names every argument)"].assert_eq(&message(
            "why",
            serde_json::json!({"target": "a", "x": 1}),
        ));
        expect_test::expect!["invalid argument `x`: unknown field `x`, expected `subject` or `cursor` (the tool's inputSchema in tools/list names every argument)"].assert_eq(&message(
            "history",
            serde_json::json!({"subject": "a", "x": 1}),
        ));
        expect_test::expect!["invalid argument `x`: unknown field `x`, expected `cursor` (the tool's inputSchema in tools/list names every argument)"].assert_eq(&message(
            "topics",
            serde_json::json!({"x": 1}),
        ));
        expect_test::expect!["invalid argument `x`: unknown field `x`, there are no fields (the tool's inputSchema in tools/list names every argument)"].assert_eq(&message(
            "stats",
            serde_json::json!({"x": 1}),
        ));
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
            (3, false, 0.5, loci_engine::requests::defaults::IMPACT_LIMIT)
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
