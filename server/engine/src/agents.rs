//! `loci init --agents`: wires AI coding agents to `loci mcp` — MCP configuration for
//! Claude Code (`.mcp.json`), Cursor (`.cursor/mcp.json`) and VS Code (`.vscode/mcp.json`,
//! whose schema says `"servers"` where the others say `"mcpServers"`), the snippet for
//! Codex's global `~/.codex/config.toml`, and an operator guide in `AGENTS.md` and
//! `CLAUDE.md` between `<!-- loci:begin -->` and `<!-- loci:end -->`.
//!
//! Rules: idempotent (a second run changes no byte); content outside the markers and
//! other servers in existing JSON files are preserved, in their order; an existing `loci`
//! server entry is kept as the user left it; a file loci cannot parse (JSON with
//! comments, a begin marker without an end) is reported and left untouched, never
//! clobbered. Writes go through a temporary file and a rename.

use std::path::Path;

use serde::Serialize;

use crate::{EngineError, Result};

/// The marker that opens loci's section of a markdown file.
pub const BEGIN_MARKER: &str = "<!-- loci:begin -->";
/// The marker that closes it.
pub const END_MARKER: &str = "<!-- loci:end -->";

/// The operator guide placed between the markers (without the markers).
pub const GUIDE: &str = "\
## loci: this repository's memory

This repository is wired to **loci** (`loci mcp`), a live, verified memory of the code: a
structural map (symbols, references, imports) checked against the files on disk, and
notes, decisions and lessons with provenance. Use its MCP tools:

1. **Start** with `session_begin` (your task); keep the `session_id` and pass it as `session`
   to every write. `recap` shows what earlier sessions did.
2. **Ask before reading files**: `context` with your question or task (ranked memory, code
   and docs under a token budget), `search` for words; `symbol`, `references`, `callers`,
   `impact` for structure; `why`, `show`, `history` for what was written about a file or line.
3. **Record as you go**: `remember` (notes on a file, folder or `topic:NAME`), `decide` (a
   decision and its reason), `learn` (a pitfall and what to do instead).
4. **Heed `stale_warnings`**: memory about code that changed may be wrong; `confirm` it if it
   is still true, or `remember` a correction. `drift` shows what changed since the last scan;
   `lint` lists memory the code contradicts (`resolve` dismisses a false alarm).
5. **Finish** with `session_end` and a short summary.

Without MCP the same operations are commands: `loci symbol NAME`, `loci why PATH:LINE`,
`loci remember PATH --text ...`, `loci decide \"...\"`, `loci session begin --task ...`.
";

/// What happened to one file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// The file did not exist and was written.
    Created,
    /// loci's entry or section was added or refreshed.
    Updated,
    /// Already up to date: nothing written.
    Unchanged,
    /// A `loci` server entry already exists and differs; kept as the user left it.
    Kept,
    /// The file could not be read safely; left untouched (see `note`).
    Skipped,
}

/// One file `init --agents` looked at.
#[derive(Clone, Debug, Serialize)]
pub struct WiredFile {
    /// Repository-relative path.
    pub path: String,
    /// Who reads it (`claude-code`, `cursor`, `vscode`, `agents`).
    pub agent: &'static str,
    /// What was done.
    pub action: Action,
    /// Why a file was kept or skipped, and what to do.
    pub note: Option<String>,
}

/// The outcome of `init --agents`.
#[derive(Clone, Debug, Serialize)]
pub struct AgentsReport {
    /// The files looked at, in a fixed order.
    pub files: Vec<WiredFile>,
    /// Where Codex reads MCP servers from (global, so loci only prints the snippet).
    pub codex_config: String,
    /// The TOML to add there.
    pub codex_snippet: String,
}

/// One JSON configuration file and the server entry loci adds to it.
struct JsonTarget {
    path: &'static str,
    agent: &'static str,
    servers_key: &'static str,
    entry: &'static str,
}

const JSON_TARGETS: &[JsonTarget] = &[
    // Claude Code starts project servers in the project root.
    JsonTarget {
        path: ".mcp.json",
        agent: "claude-code",
        servers_key: "mcpServers",
        entry: r#"{"type": "stdio", "command": "loci", "args": ["mcp"]}"#,
    },
    JsonTarget {
        path: ".cursor/mcp.json",
        agent: "cursor",
        servers_key: "mcpServers",
        entry: r#"{"command": "loci", "args": ["-C", "${workspaceFolder}", "mcp"]}"#,
    },
    JsonTarget {
        path: ".vscode/mcp.json",
        agent: "vscode",
        servers_key: "servers",
        entry: r#"{"type": "stdio", "command": "loci", "args": ["-C", "${workspaceFolder}", "mcp"]}"#,
    },
];

const GUIDE_FILES: &[&str] = &["AGENTS.md", "CLAUDE.md"];

/// Writes (or refreshes) the agents' MCP configuration and the operator guide under
/// `root`, and returns what it did plus the Codex snippet.
pub fn wire_agents(root: &Path) -> Result<AgentsReport> {
    let mut files = Vec::new();
    for t in JSON_TARGETS {
        files.push(wire_json(root, t)?);
    }
    for name in GUIDE_FILES {
        files.push(wire_guide(root, name)?);
    }
    Ok(AgentsReport {
        files,
        codex_config: "~/.codex/config.toml".into(),
        codex_snippet: codex_snippet(root),
    })
}

/// The `[mcp_servers.loci]` table for Codex, serving the checkout at `root`.
pub fn codex_snippet(root: &Path) -> String {
    let root = root.display().to_string();
    let quoted = toml_string(&root);
    format!(
        "# loci serves the checkout at {root}; drop the \"-C\", <path> arguments to serve\n\
         # whichever repository Codex is started in.\n\
         [mcp_servers.loci]\n\
         command = \"loci\"\n\
         args = [\"-C\", {quoted}, \"mcp\"]\n"
    )
}

fn toml_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn wire_json(root: &Path, t: &JsonTarget) -> Result<WiredFile> {
    let path = root.join(t.path);
    let entry: Json = serde_json::from_str(t.entry)
        .map_err(|e| EngineError::Internal(format!("built-in MCP entry: {e}")))?;
    let done = |action, note: Option<String>| WiredFile {
        path: t.path.into(),
        agent: t.agent,
        action,
        note,
    };
    if let Some(link) = crate::boundary::escapes(root, t.path) {
        return Ok(done(Action::Skipped, Some(link_note(&link))));
    }
    let existing = match std::fs::read_to_string(&path) {
        Ok(s) => Some(s),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(source) => return Err(EngineError::Io { path, source }),
    };
    let snippet = format!(
        "\"{}\": {{ \"loci\": {} }}",
        t.servers_key,
        serde_json::to_string(&entry).unwrap_or_default()
    );
    let mut doc = match &existing {
        None => Json::Object(Vec::new()),
        Some(s) if s.trim().is_empty() => Json::Object(Vec::new()),
        Some(s) => match serde_json::from_str::<Json>(s) {
            Ok(doc @ Json::Object(_)) => doc,
            Ok(_) => {
                return Ok(done(
                    Action::Skipped,
                    Some(format!("not a JSON object; add {snippet} to it by hand")),
                ));
            }
            Err(e) => {
                return Ok(done(
                    Action::Skipped,
                    Some(format!(
                        "cannot parse it as JSON ({e}; comments are not supported); \
                         add {snippet} to it by hand"
                    )),
                ));
            }
        },
    };
    let Json::Object(top) = &mut doc else {
        return Err(EngineError::Internal("not an object".into()));
    };
    let servers = match top.iter_mut().find(|(k, _)| k == t.servers_key) {
        Some((_, v)) => v,
        None => {
            top.push((t.servers_key.into(), Json::Object(Vec::new())));
            let last = top.len() - 1;
            &mut top[last].1
        }
    };
    let Json::Object(servers) = servers else {
        return Ok(done(
            Action::Skipped,
            Some(format!(
                "`{}` is not an object; add {snippet} to it by hand",
                t.servers_key
            )),
        ));
    };
    match servers.iter().find(|(k, _)| k == "loci") {
        Some((_, current)) if *current == entry => return Ok(done(Action::Unchanged, None)),
        Some(_) => {
            return Ok(done(
                Action::Kept,
                Some(format!(
                    "it already configures a `loci` server; kept as is (loci's default: {})",
                    serde_json::to_string(&entry).unwrap_or_default()
                )),
            ));
        }
        None => servers.push(("loci".into(), entry)),
    }
    let mut text = serde_json::to_string_pretty(&doc)
        .map_err(|e| EngineError::Internal(format!("serializing {}: {e}", t.path)))?;
    text.push('\n');
    write_atomically(&path, &text)?;
    Ok(done(
        if existing.is_some() {
            Action::Updated
        } else {
            Action::Created
        },
        None,
    ))
}

fn wire_guide(root: &Path, name: &'static str) -> Result<WiredFile> {
    let path = root.join(name);
    let done = |action, note: Option<String>| WiredFile {
        path: name.into(),
        agent: "agents",
        action,
        note,
    };
    if let Some(link) = crate::boundary::escapes(root, name) {
        return Ok(done(Action::Skipped, Some(link_note(&link))));
    }
    let existing = match std::fs::read_to_string(&path) {
        Ok(s) => Some(s),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(source) => return Err(EngineError::Io { path, source }),
    };
    let crlf = existing.as_deref().is_some_and(|s| s.contains("\r\n"));
    let mut section = format!("{BEGIN_MARKER}\n{GUIDE}{END_MARKER}");
    if crlf {
        section = section.replace('\n', "\r\n");
    }
    let newline = if crlf { "\r\n" } else { "\n" };
    let updated = match &existing {
        None => format!("{section}{newline}"),
        Some(text) => match (text.find(BEGIN_MARKER), text.find(END_MARKER)) {
            (Some(b), Some(e)) if e > b => {
                let end = e + END_MARKER.len();
                format!("{}{section}{}", &text[..b], &text[end..])
            }
            (None, None) => {
                let mut out = text.clone();
                if !out.is_empty() {
                    if !out.ends_with('\n') {
                        out.push_str(newline);
                    }
                    out.push_str(newline);
                }
                out.push_str(&section);
                out.push_str(newline);
                out
            }
            _ => {
                return Ok(done(
                    Action::Skipped,
                    Some(format!(
                        "its {BEGIN_MARKER} / {END_MARKER} markers are unbalanced; fix them by hand"
                    )),
                ));
            }
        },
    };
    if existing.as_deref() == Some(updated.as_str()) {
        return Ok(done(Action::Unchanged, None));
    }
    write_atomically(&path, &updated)?;
    Ok(done(
        if existing.is_some() {
            Action::Updated
        } else {
            Action::Created
        },
        None,
    ))
}

/// Why a file behind a symbolic link out of the workspace is left alone.
fn link_note(link: &str) -> String {
    format!(
        "`{link}` is a symbolic link out of the workspace; loci does not read or write through it"
    )
}

fn write_atomically(path: &Path, text: &str) -> Result<()> {
    let io = |source| EngineError::Io {
        path: path.to_path_buf(),
        source,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    let tmp = path.with_extension("loci-tmp");
    std::fs::write(&tmp, text).map_err(io)?;
    std::fs::rename(&tmp, path).map_err(io)
}

/// A JSON value whose objects keep their keys in file order (serde_json's `Value` sorts
/// them unless a crate-wide feature is switched on), so merging into a user's file keeps
/// its layout.
#[derive(Clone, Debug, PartialEq)]
enum Json {
    Null,
    Bool(bool),
    Number(serde_json::Number),
    String(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

impl Serialize for Json {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        match self {
            Json::Null => s.serialize_unit(),
            Json::Bool(b) => s.serialize_bool(*b),
            Json::Number(n) => n.serialize(s),
            Json::String(v) => s.serialize_str(v),
            Json::Array(a) => {
                let mut seq = s.serialize_seq(Some(a.len()))?;
                for x in a {
                    seq.serialize_element(x)?;
                }
                seq.end()
            }
            Json::Object(o) => {
                let mut map = s.serialize_map(Some(o.len()))?;
                for (k, v) in o {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

impl<'de> serde::Deserialize<'de> for Json {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Json, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Json;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_unit<E>(self) -> std::result::Result<Json, E> {
                Ok(Json::Null)
            }
            fn visit_none<E>(self) -> std::result::Result<Json, E> {
                Ok(Json::Null)
            }
            fn visit_bool<E>(self, b: bool) -> std::result::Result<Json, E> {
                Ok(Json::Bool(b))
            }
            fn visit_i64<E>(self, n: i64) -> std::result::Result<Json, E> {
                Ok(Json::Number(n.into()))
            }
            fn visit_u64<E>(self, n: u64) -> std::result::Result<Json, E> {
                Ok(Json::Number(n.into()))
            }
            fn visit_f64<E: serde::de::Error>(self, n: f64) -> std::result::Result<Json, E> {
                serde_json::Number::from_f64(n)
                    .map(Json::Number)
                    .ok_or_else(|| E::custom("a non-finite number"))
            }
            fn visit_str<E>(self, s: &str) -> std::result::Result<Json, E> {
                Ok(Json::String(s.to_string()))
            }
            fn visit_string<E>(self, s: String) -> std::result::Result<Json, E> {
                Ok(Json::String(s))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut a: A,
            ) -> std::result::Result<Json, A::Error> {
                let mut out = Vec::new();
                while let Some(x) = a.next_element()? {
                    out.push(x);
                }
                Ok(Json::Array(out))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut a: A,
            ) -> std::result::Result<Json, A::Error> {
                let mut out: Vec<(String, Json)> = Vec::new();
                while let Some((k, v)) = a.next_entry::<String, Json>()? {
                    // A duplicate key: the last one wins, as in most JSON readers.
                    out.retain(|(x, _)| *x != k);
                    out.push((k, v));
                }
                Ok(Json::Object(out))
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_keeps_key_order_and_values() {
        let text = r#"{"z": 1, "a": {"y": [true, null, 2.5], "b": "x"}}"#;
        let j: Json = serde_json::from_str(text).unwrap_or(Json::Null);
        assert_eq!(
            serde_json::to_string(&j).unwrap_or_default(),
            r#"{"z":1,"a":{"y":[true,null,2.5],"b":"x"}}"#
        );
    }

    #[test]
    fn codex_snippet_quotes_the_root() {
        let s = codex_snippet(Path::new("/tmp/a \"b\""));
        assert!(s.contains(r#"args = ["-C", "/tmp/a \"b\"", "mcp"]"#), "{s}");
    }
}
