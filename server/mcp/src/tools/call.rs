//! A parsed tool call ([`Call`]): parsing its arguments, the access it needs, and its run
//! on the workspace, one engine operation rendered with the CLI's renderer (bounded
//! lists and excerpts included).

use super::*;

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

/// The error of a call to no tool: a protocol error, as the MCP specification classes it.
pub(super) fn unknown_tool(name: &str) -> ParseError {
    ParseError::UnknownTool(ErrorData::invalid_params(
        format!("unknown tool `{name}`; call tools/list for the available tools"),
        Some(serde_json::json!({ "argument": "name" })),
    ))
}

/// Deserializes tool arguments, naming the offending argument on error.
pub(super) fn from_args<T: DeserializeOwned>(args: Value) -> Result<T, ArgumentError> {
    from_args_also(args, &[])
}

/// [`from_args`] for a type that takes arguments `also` besides its own fields (taken out
/// of `args` before): an unknown argument's message lists them after its fields, as the
/// tool's schema does.
pub(super) fn from_args_also<T: DeserializeOwned>(
    args: Value,
    also: &[&str],
) -> Result<T, ArgumentError> {
    serde_path_to_error::deserialize(args).map_err(|e| {
        let path = e.path().to_string();
        let message = expected_also(e.into_inner().to_string(), also);
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

/// serde's message of an unknown field (`unknown field `x`, expected `a` or `b``) with
/// the arguments `also` added after the fields it lists, in serde's words for that many.
fn expected_also(message: String, also: &[&str]) -> String {
    if also.is_empty() {
        return message;
    }
    let Some((field, tail)) = message
        .strip_prefix("unknown field `")
        .and_then(|rest| rest.split_once("`, "))
    else {
        return message;
    };
    let mut names: Vec<&str> = match tail.strip_prefix("expected ") {
        Some(list) => list.split('`').skip(1).step_by(2).collect(),
        None if tail == "there are no fields" => Vec::new(),
        None => return message,
    };
    names.extend(also);
    let names: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    let expected = match names.as_slice() {
        [one] => one.clone(),
        [a, b] => format!("{a} or {b}"),
        _ => format!("one of {}", names.join(", ")),
    };
    format!("unknown field `{field}`, expected {expected}")
}

/// The first `` `name` `` in a serde message (`missing field `name``).
pub(super) fn backticked(message: &str) -> Option<String> {
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
pub(super) fn whole<T: Serialize>(
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
pub(super) fn items<T: Serialize>(
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
    /// Whether the map must be refreshed before this call regardless of the refresh
    /// interval: writes (claims resolve against the map) and questions about what changed.
    pub fn refresh_first(&self) -> bool {
        self.access() == Access::Write || matches!(self, Call::Drift(_))
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
        match self {
            Call::Symbol(_)
            | Call::References(_)
            | Call::Callers(_)
            | Call::Callees(_)
            | Call::Outline(_)
            | Call::Source(_)
            | Call::Stats(_)
            | Call::Sync(_)
            | Call::Deps(_)
            | Call::Impact(_)
            | Call::Scan(_) => self.run_map(ws),
            Call::MemoryList(_)
            | Call::Topics(_)
            | Call::Show(_)
            | Call::History(_)
            | Call::Asof(_)
            | Call::Recap(_)
            | Call::FactList(_)
            | Call::Remember(_)
            | Call::Decide(_)
            | Call::Learn(_)
            | Call::Confirm(_)
            | Call::Pin(_)
            | Call::Rollback(_)
            | Call::FactAdd(_)
            | Call::SessionBegin(_)
            | Call::SessionEnd(_) => self.run_memory(ws, default_author),
            Call::Context(_)
            | Call::Search(_)
            | Call::Why(_)
            | Call::Drift(_)
            | Call::Lint(_)
            | Call::Check(_)
            | Call::Resolve(_)
            | Call::SynthesisPlan(_)
            | Call::Synthesize(_) => self.run_answers(ws, progress),
        }
    }

    /// Runs one of the map's tools (structure, `stats`, `sync`, `scan`).
    fn run_map(&self, ws: &mut Workspace) -> Result<Answer, EngineError> {
        match self {
            Call::Symbol(p) => items(p.run(ws), text::symbol_hit),
            Call::References(p) => items(p.run(ws), text::ref_hit),
            Call::Callers(p) => whole(p.run(ws), false, |o, env| text::callers(o, &env.result)),
            Call::Callees(p) => whole(p.run(ws), false, |o, env| text::callees(o, &env.result)),
            Call::Outline(p) => whole(p.run(ws), false, |o, env| text::outline(o, &env.result)),
            Call::Source(p) => whole(p.run(ws), true, |o, env| text::source(o, &env.result)),
            Call::Stats(_) => whole(ws.stats(), false, text::stats),
            Call::Sync(p) => whole(p.run(ws), false, |o, env| text::sync(o, &env.result)),
            Call::Deps(p) => whole(p.run(ws), false, |o, env| text::deps(o, &env.result)),
            Call::Impact(p) => whole(p.run(ws), true, text::impact),
            Call::Scan(_) => whole(ws.scan(&|_| {}), false, |o, env| text::scan(o, &env.result))
                .map(|answer| cap_lists(answer, "`loci scan --json`")),
            _ => unreachable!("not one of the map tools: routed by Call::run"),
        }
    }

    /// Runs one of memory's tools (reads and writes); `default_author` as for [`Call::run`].
    fn run_memory(&self, ws: &mut Workspace, a: Option<&str>) -> Result<Answer, EngineError> {
        match self {
            Call::MemoryList(p) => items(p.run(ws), text::page_entry),
            Call::Topics(_) => items(ws.topics(), text::topic),
            Call::Show(p) => whole(p.run(ws), false, |o, env| text::shown(o, &env.result)),
            Call::History(p) => whole(p.run(ws), false, |o, env| text::history(o, &env.result)),
            Call::Asof(p) => whole(p.run(ws), false, |o, env| text::asof(o, &env.result)),
            Call::Recap(p) => items(p.run(ws), text::session_view),
            Call::FactList(_) => items(ws.fact_list(), text::fact),
            Call::Remember(p) => whole(bounded_written(p.run(ws, a)), false, |o, env| {
                text::written(o, &env.result)
            }),
            Call::Decide(p) => whole(bounded_written(p.run(ws, a)), false, |o, env| {
                text::written(o, &env.result)
            }),
            Call::Learn(p) => whole(bounded_written(p.run(ws, a)), false, |o, env| {
                text::written(o, &env.result)
            }),
            Call::Confirm(p) => whole(p.run(ws, a), false, |o, env| {
                text::confirmed(o, &env.result)
            }),
            Call::Pin(p) => whole(p.run(ws, a), false, |o, env| text::page(o, &env.result)),
            Call::Rollback(p) => whole(bounded_written(p.run(ws, a)), false, |o, env| {
                text::written(o, &env.result)
            }),
            Call::FactAdd(p) => whole(p.run(ws, a), false, |o, env| text::fact(o, &env.result))
                .map_err(|e| rename_argument(e, "expect", "expect_output")),
            Call::SessionBegin(p) => whole(p.run(ws, a), false, |o, env| {
                text::session_begun(o, &env.result)
            }),
            Call::SessionEnd(p) => whole(p.run(ws), false, |o, env| {
                text::session_view(o, &env.result)
            }),
            _ => unreachable!("not one of the memory tools: routed by Call::run"),
        }
    }

    /// Runs one of the questions and the audit (`context`, `search`, `why`, `drift`, `lint`, `check`, `resolve`) and page synthesis; `progress` as for [`Call::run`].
    fn run_answers(
        &self,
        ws: &mut Workspace,
        progress: &dyn Fn(Progress),
    ) -> Result<Answer, EngineError> {
        match self {
            Call::Context(p) => whole(p.run(ws), true, |o, env| text::context(o, &env.result)),
            Call::Search(p) => items(p.run(ws), text::search_hit),
            Call::Why(p) => whole(p.run(ws), false, |o, env| text::why(o, &env.result)),
            Call::Drift(p) => whole(p.run(ws), false, |o, env| text::drift(o, &env.result)),
            Call::Lint(_) => whole(ws.lint(), true, |o, env| {
                text::lint(o, &env.result, LIST_CAP)
            })
            .map(|answer| cap_lists(answer, "`loci lint --json`")),
            Call::Check(_) => whole(ws.check(), true, |o, env| {
                text::check(o, &env.result, LIST_CAP)
            })
            .map(|answer| cap_lists(answer, "`loci check --json`")),
            Call::Resolve(p) => whole(p.run(ws), false, |o, env| text::resolved(o, &env.result)),
            Call::SynthesisPlan(_) => whole(ws.synthesis_plan(), false, |o, env| {
                text::synthesis_plan(o, &env.result)
            }),
            Call::Synthesize(p) => {
                let targets = p.targets();
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
            _ => unreachable!("not one of the answers tools: routed by Call::run"),
        }
    }
}

/// The engine names some arguments after CLI flags; say the tool's name instead.
pub(super) fn rename_argument(e: EngineError, from: &str, to: &str) -> EngineError {
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
/// cut with a note: an answer does not echo unbounded input back (a 1 MiB body would
/// come back whole). `show` returns the body and every claim.
pub(super) fn bounded_written(
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
/// [`LIST_CAP`] entries each, with a note giving the whole counts and where to get every
/// entry (`whole`). These answers are not to page: calling `scan` again scans again, and
/// each page of a `lint` would run the whole lint again (585 pages of raw JSON for 20,011
/// findings, 3.8 s each).
pub(super) fn cap_lists(mut answer: Answer, whole: &str) -> Answer {
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
pub(super) fn json<T: Serialize>(
    env: Result<Envelope<T>, EngineError>,
) -> Result<Envelope<Value>, EngineError> {
    let env = env?;
    let value =
        serde_json::to_value(&env.result).map_err(|e| EngineError::Internal(e.to_string()))?;
    Ok(env.map(|_| value))
}
