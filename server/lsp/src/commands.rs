//! `workspace/executeCommand`: loci's commands, their one-object argument, validation,
//! errors, and the markdown rendering added to every result.
//!
//! Every command takes exactly one argument, a JSON object (`arguments: [{...}]`; an empty
//! array stands for an empty object, as Lua's `{}` is encoded). A missing or malformed
//! argument gets `-32602` (invalid params) naming it and the server stays up. Unknown keys
//! are refused too, so a typo is not silently ignored.
//!
//! A command run without the keys that say *where* (Helix's command picker sends no
//! argument at all) takes them from the editor's cursor as last reported to the server
//! ([`Cursor`]: the last hover, code action or edit): `loci.why` the cursor's `path:line`,
//! `loci.impact` the symbol around it (else its file), `loci.remember` and `loci.confirm`
//! its file. Results are the engine's envelope as JSON plus a `markdown` field for editors
//! that just show text, rendered by the engine ([`loci_engine::text::markdown`]).
//!
//! Error codes outside JSON-RPC's and LSP's reserved ranges:
//! [`NOT_FOUND`], [`NOT_AVAILABLE`], [`NO_WORKSPACE`], [`FAILED`].

use std::borrow::Cow;

use loci_engine::requests::{
    ConfirmArgs, ContextArgs, DecideArgs, ImpactArgs, Key, KeyType, LearnArgs, RecapArgs,
    RememberArgs, ResolveArgs, SyncArgs, SynthesizeArgs, WhyArgs, keys,
};
use loci_engine::{EngineError, Envelope};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use tower_lsp_server::jsonrpc::{Error, ErrorCode};

/// The target of the command is not in the map (a path or symbol that does not exist).
pub const NOT_FOUND: i64 = 1001;
/// The command's engine operation does not exist yet (memory and audit operations).
pub const NOT_AVAILABLE: i64 = 1002;
/// The command needs a workspace root and the server runs in single-file mode.
pub const NO_WORKSPACE: i64 = 1003;
/// The operation failed for a reason `data.kind` names, the kinds the CLI's JSON and the
/// MCP tools name (`corrupt`, `newer_schema`, `not_a_database`, `read_only`, `busy`,
/// `io`, ...), with `data.message` and `data.retryable` ([`failure`]).
pub const FAILED: i64 = 1004;

/// The JSON type an argument must have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgType {
    /// A non-empty string.
    String,
    /// A non-negative integer.
    Integer,
    /// A number (JSON has no NaN or infinity).
    Number,
    /// `true` or `false`.
    Bool,
    /// An array of strings.
    StringList,
    /// Any value: the request's deserialization checks it.
    Any,
}

impl ArgType {
    fn describe(self) -> &'static str {
        match self {
            ArgType::String => "a non-empty string",
            ArgType::Integer => "a non-negative integer",
            ArgType::Number => "a number",
            ArgType::Bool => "a boolean",
            ArgType::StringList => "an array of strings",
            ArgType::Any => "a value",
        }
    }

    fn accepts(self, v: &Value) -> bool {
        match self {
            ArgType::String => v.as_str().is_some_and(|s| !s.trim().is_empty()),
            ArgType::Integer => v.as_u64().is_some(),
            ArgType::Number => v.is_number(),
            ArgType::Bool => v.is_boolean(),
            ArgType::StringList => v
                .as_array()
                .is_some_and(|a| a.iter().all(|x| x.is_string())),
            ArgType::Any => true,
        }
    }
}

/// One argument key of a command.
#[derive(Clone, Copy, Debug)]
pub struct ArgSpec {
    /// The key in the argument object.
    pub name: &'static str,
    /// Its type.
    pub ty: ArgType,
    /// Whether it must be present.
    pub required: bool,
    /// The largest integer the request holds: a larger one is taken as this (a depth of
    /// 2^40 is a depth of `u32::MAX`).
    pub max: u64,
}

const fn opt(name: &'static str, ty: ArgType) -> ArgSpec {
    ArgSpec {
        name,
        ty,
        required: false,
        max: u64::MAX,
    }
}

const fn req(name: &'static str, ty: ArgType) -> ArgSpec {
    ArgSpec {
        required: true,
        ..opt(name, ty)
    }
}

/// A command: its name, the request its argument object deserializes into, and whether
/// the engine can serve it yet.
#[derive(Clone, Copy, Debug)]
pub struct CommandSpec {
    /// `loci.impact`, ...
    pub name: &'static str,
    /// The keys of the engine request ([`loci_engine::requests`]) its argument object
    /// deserializes into ([`Args::request`]), if it has one: its checks are read from the
    /// request's type.
    request: Option<fn() -> Vec<Key>>,
    /// The command's own keys, after the request's (`replace` of `loci.remember`, the keys
    /// of `loci.debug.text`).
    own: &'static [ArgSpec],
    /// Request keys the command spells its own way: `(command's key, request's key)`.
    renamed: &'static [(&'static str, &'static str)],
    /// An example argument, for error messages.
    pub example: &'static str,
    /// False while the engine operation does not exist (the command answers
    /// [`NOT_AVAILABLE`] after validating its argument).
    pub available: bool,
}

impl CommandSpec {
    /// A command taking request `keys` (a [`loci_engine::requests::keys`]), or none.
    const fn new(
        name: &'static str,
        request: Option<fn() -> Vec<Key>>,
        example: &'static str,
    ) -> CommandSpec {
        CommandSpec {
            name,
            request,
            own: &[],
            renamed: &[],
            example,
            available: true,
        }
    }

    /// With keys of its own besides the request's.
    const fn own(self, own: &'static [ArgSpec]) -> CommandSpec {
        CommandSpec { own, ..self }
    }

    /// With request keys spelled its own way.
    const fn renamed(self, renamed: &'static [(&'static str, &'static str)]) -> CommandSpec {
        CommandSpec { renamed, ..self }
    }

    /// The keys of its argument object, in order: the request's (with the command's
    /// names), then its own. Every command also takes an optional `root` (a workspace root
    /// path) or `uri` (a document; its root is used) to pick the workspace.
    pub fn args(&self) -> Vec<ArgSpec> {
        let request = self.request.map(|keys| keys()).unwrap_or_default();
        request
            .into_iter()
            .map(|k| {
                let name = self
                    .renamed
                    .iter()
                    .find(|(_, r)| *r == k.name)
                    .map_or(k.name, |(c, _)| c);
                let (ty, max) = match k.ty {
                    KeyType::String => (ArgType::String, u64::MAX),
                    KeyType::Integer { max } => (ArgType::Integer, max),
                    KeyType::Number => (ArgType::Number, u64::MAX),
                    KeyType::Bool => (ArgType::Bool, u64::MAX),
                    KeyType::StringList => (ArgType::StringList, u64::MAX),
                    KeyType::Other => (ArgType::Any, u64::MAX),
                };
                ArgSpec {
                    name,
                    ty,
                    required: k.required,
                    max,
                }
            })
            .chain(self.own.iter().copied())
            .collect()
    }
}

use ArgType::{Bool, String as Str};

/// Every command, in the order `executeCommandProvider.commands` lists them.
pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec::new(
        "loci.context",
        Some(keys::<ContextArgs>),
        r#"{"query": "how does login work", "budget": 4000}"#,
    ),
    CommandSpec::new(
        "loci.why",
        Some(keys::<WhyArgs>),
        r#"{"target": "src/auth.py:12"}"#,
    ),
    CommandSpec::new(
        "loci.impact",
        Some(keys::<ImpactArgs>),
        r#"{"target": "src/auth.py", "depth": 3}"#,
    ),
    // A note is added to the page (`remember_append`); `replace` replaces it.
    CommandSpec::new(
        "loci.remember",
        Some(keys::<RememberArgs>),
        r#"{"subject": "src/auth.py", "body": "login retries twice"}"#,
    )
    .own(&[opt("replace", Bool)]),
    CommandSpec::new(
        "loci.decide",
        Some(keys::<DecideArgs>),
        r#"{"text": "use WAL: several processes share the DB", "subject": "server/store"}"#,
    ),
    CommandSpec::new(
        "loci.learn",
        Some(keys::<LearnArgs>),
        r#"{"text": "tree-sitter points count only \\n as a line end"}"#,
    ),
    CommandSpec::new(
        "loci.confirm",
        Some(keys::<ConfirmArgs>),
        r#"{"subject": "src/auth.py"}"#,
    ),
    CommandSpec::new(
        "loci.resolve",
        Some(keys::<ResolveArgs>),
        r#"{"contradiction": 12, "note": "renamed on purpose"}"#,
    )
    .renamed(&[("contradiction", "id"), ("note", "notes")]),
    CommandSpec::new("loci.recap", Some(keys::<RecapArgs>), r#"{"n": 3}"#),
    CommandSpec::new("loci.scan", None, r#"{"root": "/path/to/repo"}"#),
    CommandSpec::new("loci.sync", Some(keys::<SyncArgs>), r#"{"limit": 100}"#),
    CommandSpec::new(
        "loci.synthesize",
        Some(keys::<SynthesizeArgs>),
        r#"{"paths": ["src/auth.py"]}"#,
    ),
    CommandSpec::new(
        "loci.debug.text",
        None,
        r#"{"uri": "file:///path/to/a.rs", "tree": true}"#,
    )
    .own(&[req("uri", Str), opt("tree", Bool)]),
];

/// Enabled by `initializationOptions.debugCommands`: panics, to prove the server survives.
pub const DEBUG_PANIC: CommandSpec = CommandSpec::new("loci.debug.panic", None, "{}");

/// The keys every command accepts to pick the workspace.
const ROUTING: &[ArgSpec] = &[opt("root", Str), opt("uri", Str)];

/// A command's validated argument object.
#[derive(Debug)]
pub struct Args {
    /// The command.
    pub spec: &'static CommandSpec,
    map: Map<String, Value>,
}

impl Args {
    /// A string argument (validated as non-empty when present).
    pub fn str(&self, name: &str) -> Option<&str> {
        self.map.get(name).and_then(Value::as_str)
    }

    /// A boolean argument.
    pub fn bool(&self, name: &str) -> Option<bool> {
        self.map.get(name).and_then(Value::as_bool)
    }

    /// Whether the argument object has `name`.
    pub fn has(&self, name: &str) -> bool {
        self.map.contains_key(name)
    }

    /// The argument object as the command's engine request: without the keys that pick
    /// the workspace and the command's own, its renamed keys under the request's names,
    /// integers above what a field holds taken as its largest. The object was checked
    /// against the request's keys ([`parse`]); what serde still refuses is `-32602`.
    pub fn request<R: DeserializeOwned>(&self) -> Result<R, Error> {
        let spec = self.spec;
        let args = spec.args();
        let mut object = Map::new();
        for (key, value) in &self.map {
            if ROUTING.iter().chain(spec.own).any(|a| a.name == key) {
                continue;
            }
            let name = spec
                .renamed
                .iter()
                .find(|(c, _)| c == key)
                .map_or(key.as_str(), |(_, r)| r);
            let value = match (args.iter().find(|a| a.name == key), value.as_u64()) {
                (Some(a), Some(n)) if a.ty == ArgType::Integer && n > a.max => Value::from(a.max),
                _ => value.clone(),
            };
            object.insert(name.to_string(), value);
        }
        serde_json::from_value(Value::Object(object))
            .map_err(|e| invalid(format!("{}: invalid arguments: {e}", spec.name)))
    }
}

/// The spec of `command`, including `loci.debug.panic` when `debug` is on.
pub fn spec(command: &str, debug: bool) -> Option<&'static CommandSpec> {
    COMMANDS
        .iter()
        .find(|c| c.name == command)
        .or_else(|| (debug && command == DEBUG_PANIC.name).then_some(&DEBUG_PANIC))
}

/// Where the editor's cursor was, as last reported to the server (a hover, a code action,
/// an edit): what a command run without its target takes (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cursor {
    /// The document's URI.
    pub uri: String,
    /// Its path from the workspace root, `/`-separated.
    pub path: String,
    /// One-based line.
    pub line: u32,
    /// Key of the innermost definition around the cursor, if any.
    pub symbol: Option<String>,
}

/// The key of `command` that the cursor can supply, and what it supplies.
fn from_cursor(command: &str, key: &str, cursor: &Cursor) -> Option<Value> {
    let value = match (command, key) {
        ("loci.why", "target") => format!("{}:{}", cursor.path, cursor.line),
        ("loci.impact", "target") => cursor.symbol.clone().unwrap_or_else(|| cursor.path.clone()),
        ("loci.remember" | "loci.confirm", "subject") => cursor.path.clone(),
        _ => return None,
    };
    Some(Value::String(value))
}

/// Whether `command` run with `arguments` lacks a key the cursor could supply (the server
/// then works out the [`Cursor`] before [`parse`]).
pub fn wants_cursor(command: &str, arguments: &[Value]) -> bool {
    let keys: &[&str] = match command {
        "loci.why" | "loci.impact" => &["target"],
        "loci.remember" | "loci.confirm" => &["subject"],
        _ => return false,
    };
    match arguments {
        [] => true,
        [Value::Array(a)] => a.is_empty(),
        [Value::Object(map)] => keys.iter().any(|k| !map.contains_key(*k)),
        _ => false,
    }
}

/// Validates `arguments` for `command`: exactly one object (or an empty array, Lua's `{}`),
/// every key known and of the right type, required keys present — those the `cursor` can
/// supply are taken from it when absent, with `uri` (the workspace) too. Errors are
/// `-32602` naming the argument.
pub fn parse(
    command: &str,
    arguments: &[Value],
    debug: bool,
    cursor: Option<&Cursor>,
) -> Result<Args, Error> {
    let Some(spec) = spec(command, debug) else {
        let names: Vec<&str> = COMMANDS.iter().map(|c| c.name).collect();
        return Err(invalid(format!(
            "unknown command `{command}`; loci's commands are {}",
            names.join(", ")
        )));
    };
    let empty = Map::new();
    let object = match arguments {
        [] => &empty,
        [Value::Object(map)] => map,
        [Value::Array(a)] if a.is_empty() => &empty,
        [other] => {
            return Err(invalid(format!(
                "{command}: invalid argument `arguments[0]`: expected an object like {}, got {}",
                spec.example,
                json_type(other)
            )));
        }
        more => {
            return Err(invalid(format!(
                "{command}: invalid argument `arguments`: expected exactly one object, got {} values",
                more.len()
            )));
        }
    };
    let args = spec.args();
    for (key, value) in object {
        let Some(arg) = args.iter().chain(ROUTING).find(|a| a.name == key) else {
            let known: Vec<&str> = args.iter().chain(ROUTING).map(|a| a.name).collect();
            return Err(invalid(format!(
                "{command}: unknown argument `{key}`; expected {}",
                known.join(", ")
            )));
        };
        if !arg.ty.accepts(value) {
            return Err(invalid(format!(
                "{command}: invalid argument `{key}`: expected {}, got {}",
                arg.ty.describe(),
                json_type(value)
            )));
        }
    }
    let mut map = object.clone();
    if let Some(cursor) = cursor {
        let mut filled = false;
        for arg in &args {
            if !map.contains_key(arg.name)
                && let Some(value) = from_cursor(command, arg.name, cursor)
            {
                map.insert(arg.name.into(), value);
                filled = true;
            }
        }
        if filled && !map.contains_key("root") && !map.contains_key("uri") {
            map.insert("uri".into(), Value::String(cursor.uri.clone()));
        }
    }
    if let Some(missing) = args
        .iter()
        .find(|a| a.required && !map.contains_key(a.name))
    {
        let hint = if from_cursor(command, missing.name, &Cursor::NONE).is_some() {
            " (or run it after a hover, code action or edit in a workspace file: it then takes \
             the cursor's place)"
        } else {
            ""
        };
        if matches!(arguments, [] | [Value::Array(_)]) {
            return Err(invalid(format!(
                "{command}: missing argument `arguments[0]`: expected one object like {}{hint}",
                spec.example
            )));
        }
        return Err(invalid(format!(
            "{command}: missing argument `{}` ({}), e.g. {}{hint}",
            missing.name,
            missing.ty.describe(),
            spec.example
        )));
    }
    Ok(Args { spec, map })
}

impl Cursor {
    /// A placeholder, to ask [`from_cursor`] whether a key can come from a cursor.
    const NONE: Cursor = Cursor {
        uri: String::new(),
        path: String::new(),
        line: 0,
        symbol: None,
    };
}

fn json_type(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("{b}"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) if s.trim().is_empty() => "an empty string".into(),
        Value::String(_) => "a string".into(),
        Value::Array(_) => "an array".into(),
        Value::Object(_) => "an object".into(),
    }
}

/// `-32602` with `message`.
pub fn invalid(message: String) -> Error {
    Error {
        code: ErrorCode::InvalidParams,
        message: Cow::Owned(message),
        data: None,
    }
}

/// An error with one of this module's codes.
pub fn error(code: i64, message: String) -> Error {
    Error {
        code: ErrorCode::ServerError(code),
        message: Cow::Owned(message),
        data: None,
    }
}

/// `-32603` with `message`.
pub fn internal(message: String) -> Error {
    Error {
        code: ErrorCode::InternalError,
        message: Cow::Owned(message),
        data: None,
    }
}

/// The answer of a command whose engine operation does not exist yet.
pub fn not_available(spec: &CommandSpec) -> Error {
    error(
        NOT_AVAILABLE,
        format!(
            "{} is not available yet: the engine has no `{}` operation in this build",
            spec.name,
            spec.name.trim_start_matches("loci.")
        ),
    )
}

/// An engine error at the boundary: invalid arguments are `-32602`, "not found" is
/// [`NOT_FOUND`], a bug `-32603`, any other failure [`FAILED`] with its kind
/// ([`failure`]): a damaged or newer store is a failure, not `-32603` "internal error".
pub fn engine_error(command: &str, e: EngineError) -> Error {
    match e {
        EngineError::InvalidArgument { .. } => invalid(format!("{command}: {e}")),
        EngineError::NotFound(message) => error(NOT_FOUND, format!("{command}: {message}")),
        EngineError::Internal(_) => internal(format!("{command}: {e}")),
        other => failure(command, other.kind(), &other.to_string()),
    }
}

/// [`FAILED`]: `COMMAND: MESSAGE`, and `data: {kind, message, retryable}` as the MCP
/// tools' error results say it (only `busy` is worth retrying as it is).
pub fn failure(command: &str, kind: &str, message: &str) -> Error {
    Error {
        code: ErrorCode::ServerError(FAILED),
        message: Cow::Owned(format!("{command}: {message}")),
        data: Some(serde_json::json!({
            "kind": kind,
            "message": message,
            "retryable": kind == "busy",
        })),
    }
}

/// The envelope as JSON with `markdown` added, and `notes` appended to
/// `capability.notes` (what the language server knows that the engine does not, such as
/// a scan in progress).
pub fn with_markdown<T: Serialize>(env: &Envelope<T>, markdown: String, notes: &[String]) -> Value {
    let mut value = serde_json::to_value(env).unwrap_or(Value::Null);
    if let Some(list) = value
        .pointer_mut("/capability/notes")
        .and_then(Value::as_array_mut)
    {
        list.extend(notes.iter().cloned().map(Value::String));
    }
    if let Value::Object(map) = &mut value {
        map.insert("markdown".into(), Value::String(markdown));
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn message(r: Result<Args, Error>) -> String {
        match r {
            Ok(_) => "ok".into(),
            Err(e) => format!("{} {}", e.code.code(), e.message),
        }
    }

    #[test]
    fn arguments_are_validated_and_named() {
        let check = |command: &str, args: Value| {
            let args: Vec<Value> = serde_json::from_value(args).unwrap();
            message(parse(command, &args, false, None))
        };
        expect_test::expect![[r#"-32602 loci.impact: missing argument `arguments[0]`: expected one object like {"target": "src/auth.py", "depth": 3} (or run it after a hover, code action or edit in a workspace file: it then takes the cursor's place)"#]]
            .assert_eq(&check("loci.impact", json!([])));
        expect_test::expect![[r#"-32602 loci.impact: invalid argument `arguments[0]`: expected an object like {"target": "src/auth.py", "depth": 3}, got the number 42"#]]
            .assert_eq(&check("loci.impact", json!([42])));
        expect_test::expect![[r#"-32602 loci.impact: missing argument `target` (a non-empty string), e.g. {"target": "src/auth.py", "depth": 3} (or run it after a hover, code action or edit in a workspace file: it then takes the cursor's place)"#]]
            .assert_eq(&check("loci.impact", json!([{}])));
        expect_test::expect!["-32602 loci.impact: invalid argument `depth`: expected a non-negative integer, got a string"]
            .assert_eq(&check("loci.impact", json!([{"target": "a", "depth": "3"}])));
        expect_test::expect![
            "-32602 loci.impact: unknown argument `deph`; expected target, depth, hard, min_confidence, limit, no_tests, root, uri"
        ]
        .assert_eq(&check("loci.impact", json!([{"target": "a", "deph": 3}])));
        expect_test::expect!["-32602 loci.impact: invalid argument `arguments`: expected exactly one object, got 2 values"]
            .assert_eq(&check("loci.impact", json!([{}, {}])));
        expect_test::expect!["ok"].assert_eq(&check("loci.scan", json!([])));
        expect_test::expect!["ok"].assert_eq(&check(
            "loci.impact",
            json!([{"target": "a", "hard": true}]),
        ));
        expect_test::expect!["-32602 unknown command `loci.debug.panic`; loci's commands are loci.context, loci.why, loci.impact, loci.remember, loci.decide, loci.learn, loci.confirm, loci.resolve, loci.recap, loci.scan, loci.sync, loci.synthesize, loci.debug.text"]
            .assert_eq(&check("loci.debug.panic", json!([])));
        expect_test::expect!["-32602 loci.remember: invalid argument `expect_version`: expected a non-negative integer, got the number -1"]
            .assert_eq(&check("loci.remember", json!([{"subject": "a", "body": "b", "expect_version": -1}])));
        expect_test::expect!["ok"].assert_eq(&check(
            "loci.decide",
            json!([{"text": "t", "author": "agent:x"}]),
        ));
    }

    fn filled(command: &str, args: Value, cursor: Option<&Cursor>) -> String {
        let args: Vec<Value> = serde_json::from_value(args).unwrap();
        match parse(command, &args, false, cursor) {
            Ok(a) => Value::Object(a.map).to_string(),
            Err(e) => format!("{} {}", e.code.code(), e.message),
        }
    }

    #[test]
    fn fault_lua_empty_table_was_rejected_as_an_array() {
        // Neovim encodes `{}` as `[]`: it is the empty object.
        expect_test::expect!["{}"].assert_eq(&filled("loci.scan", json!([[]]), None));
        expect_test::expect![[r#"{"n":2}"#]].assert_eq(&filled(
            "loci.recap",
            json!([{"n": 2}]),
            None,
        ));
        expect_test::expect!["-32602 loci.scan: invalid argument `arguments[0]`: expected an object like {\"root\": \"/path/to/repo\"}, got an array"]
            .assert_eq(&filled("loci.scan", json!([[1]]), None));
    }

    #[test]
    fn fault_a_command_without_arguments_failed_instead_of_taking_the_cursor() {
        let cursor = Cursor {
            uri: "file:///r/src/store.rs".into(),
            path: "src/store.rs".into(),
            line: 26,
            symbol: Some("src/store.rs#Store.open@method".into()),
        };
        let at = Some(&cursor);
        expect_test::expect![[r#"{"target":"src/store.rs:26","uri":"file:///r/src/store.rs"}"#]]
            .assert_eq(&filled("loci.why", json!([]), at));
        expect_test::expect![[
            r#"{"target":"src/store.rs#Store.open@method","uri":"file:///r/src/store.rs"}"#
        ]]
        .assert_eq(&filled("loci.impact", json!([[]]), at));
        // Given keys win; only the missing ones come from the cursor.
        expect_test::expect![[r#"{"depth":1,"target":"src/store.rs#Store.open@method","uri":"file:///r/src/store.rs"}"#]]
            .assert_eq(&filled("loci.impact", json!([{"depth": 1}]), at));
        expect_test::expect![[r#"{"target":"lib.rs"}"#]].assert_eq(&filled(
            "loci.why",
            json!([{"target": "lib.rs"}]),
            at,
        ));
        expect_test::expect![[r#"{"subject":"src/store.rs","uri":"file:///r/src/store.rs"}"#]]
            .assert_eq(&filled("loci.confirm", json!([]), at));
        // A body is never guessed.
        expect_test::expect![[r#"-32602 loci.remember: missing argument `arguments[0]`: expected one object like {"subject": "src/auth.py", "body": "login retries twice"}"#]]
            .assert_eq(&filled("loci.remember", json!([]), at));
        expect_test::expect![[
            r#"{"body":"starts empty","subject":"src/store.rs","uri":"file:///r/src/store.rs"}"#
        ]]
        .assert_eq(&filled(
            "loci.remember",
            json!([{"body": "starts empty"}]),
            at,
        ));
        // The file when no definition is around the cursor.
        let file_only = Cursor {
            symbol: None,
            ..cursor.clone()
        };
        expect_test::expect![[r#"{"target":"src/store.rs","uri":"file:///r/src/store.rs"}"#]]
            .assert_eq(&filled("loci.impact", json!([]), Some(&file_only)));
        assert!(wants_cursor("loci.why", &[]));
        assert!(!wants_cursor("loci.why", &[json!({"target": "a"})]));
        assert!(!wants_cursor("loci.recap", &[]));
    }
}
