//! `loci init --agents`: wires AI coding agents to `loci mcp` — MCP configuration for
//! Claude Code (`.mcp.json`), Cursor (`.cursor/mcp.json`) and VS Code (`.vscode/mcp.json`,
//! whose schema says `"servers"` where the others say `"mcpServers"`), Codex's global
//! `~/.codex/config.toml` (written only with the user's consent, `--global`; else its
//! snippet is printed), and an operator guide in `AGENTS.md` and `CLAUDE.md` between
//! `<!-- loci:begin -->` and `<!-- loci:end -->`.
//!
//! Rules: idempotent (a second run changes no byte); content outside the markers, other
//! servers, other tables, comments and formatting in existing files are preserved, in
//! their order: JSON files are edited as JSONC (VS Code accepts comments and trailing
//! commas) through `jsonc-parser`'s concrete syntax tree, Codex's TOML through
//! `toml_edit`; an existing `loci` server entry is kept as the user left it; a file loci
//! cannot parse (broken JSON or TOML, a begin marker without an end) is reported and left
//! untouched, never clobbered. Writes go through a temporary file and a rename.

use std::path::{Path, PathBuf};

use jsonc_parser::cst::{CstContainerNode, CstInputValue, CstNode, CstRootNode};
use serde::Serialize;
use serde_json::Value as Json;

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
   and docs under a token budget), `search` for words; `symbol`, `source`, `outline`,
   `references`, `callers`, `callees`, `impact` for structure; `why`, `show`, `history`,
   `memory_list` for what was written about a file or line.
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
    /// Repository-relative path (absolute for Codex's global configuration).
    pub path: String,
    /// Who reads it (`claude-code`, `cursor`, `vscode`, `codex`, `agents`).
    pub agent: &'static str,
    /// What was done.
    pub action: Action,
    /// Why a file was kept or skipped, and what to do.
    pub note: Option<String>,
}

/// The outcome of `init --agents`.
#[derive(Clone, Debug, Serialize)]
pub struct AgentsReport {
    /// The files looked at, in a fixed order (Codex's last, when it was written).
    pub files: Vec<WiredFile>,
    /// Where Codex reads MCP servers from.
    pub codex_config: String,
    /// Whether loci wrote its entry there (with consent: `--global`); else the snippet is
    /// for the user to add.
    pub codex_written: bool,
    /// The TOML of loci's entry.
    pub codex_snippet: String,
}

/// What `init --agents` may touch beyond the workspace.
#[derive(Clone, Debug, Default)]
pub struct AgentsOptions {
    /// Codex's configuration file to write loci's entry into (the user consented:
    /// `--global`); `None` prints the snippet only.
    pub codex_config: Option<PathBuf>,
}

/// Where Codex reads its configuration: `$CODEX_HOME/config.toml`, else
/// `$HOME/.codex/config.toml` (Codex's own rule); `None` without either variable.
pub fn codex_config_path() -> Option<PathBuf> {
    let nonempty = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    nonempty("CODEX_HOME")
        .or_else(|| nonempty("HOME").map(|h| h.join(".codex")))
        .map(|dir| dir.join("config.toml"))
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
/// `root`, and Codex's entry when `options` names its configuration; returns what it did
/// plus the Codex snippet.
pub fn wire_agents(root: &Path, options: &AgentsOptions) -> Result<AgentsReport> {
    let mut files = Vec::new();
    for t in JSON_TARGETS {
        files.push(wire_json(root, t)?);
    }
    for name in GUIDE_FILES {
        files.push(wire_guide(root, name)?);
    }
    if let Some(config) = &options.codex_config {
        files.push(wire_codex(config)?);
    }
    Ok(AgentsReport {
        files,
        codex_config: options.codex_config.as_ref().map_or_else(
            || "~/.codex/config.toml".into(),
            |p| p.display().to_string(),
        ),
        codex_written: options.codex_config.is_some(),
        codex_snippet: codex_snippet(),
    })
}

/// The `[mcp_servers.loci]` table for Codex. Codex's configuration is global, so the
/// entry names no checkout: `loci mcp` serves the repository Codex is started in (the
/// nearest folder above it with `.loci/` or `.git`).
pub fn codex_snippet() -> String {
    "[mcp_servers.loci]\ncommand = \"loci\"\nargs = [\"mcp\"]\n".to_string()
}

/// loci's entry in Codex's `config.toml` at `path`: added under `[mcp_servers]` with
/// every other table, key and comment kept; an entry already there is kept as it is.
fn wire_codex(path: &Path) -> Result<WiredFile> {
    use toml_edit::{Array, DocumentMut, Item, Table, value};
    let done = |action, note: Option<String>| WiredFile {
        path: path.display().to_string(),
        agent: "codex",
        action,
        note,
    };
    let existing = match std::fs::read_to_string(path) {
        Ok(s) => Some(s),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(source) => {
            return Err(EngineError::Io {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    let by_hand = format!("add this to it by hand:\n{}", codex_snippet());
    let mut doc: DocumentMut = match existing.as_deref().unwrap_or("").parse() {
        Ok(doc) => doc,
        Err(e) => {
            return Ok(done(
                Action::Skipped,
                Some(format!(
                    "cannot parse it as TOML ({}); {by_hand}",
                    e.message()
                )),
            ));
        }
    };
    let servers = doc
        .entry("mcp_servers")
        .or_insert_with(|| {
            let mut t = Table::new();
            t.set_implicit(true);
            Item::Table(t)
        })
        .as_table_like_mut();
    let Some(servers) = servers else {
        return Ok(done(
            Action::Skipped,
            Some(format!("`mcp_servers` is not a table; {by_hand}")),
        ));
    };
    if let Some(current) = servers.get("loci") {
        let command = current.get("command").and_then(|c| c.as_str());
        let args: Option<Vec<&str>> = current
            .get("args")
            .and_then(|a| a.as_array())
            .map(|a| a.iter().filter_map(|v| v.as_str()).collect());
        if command == Some("loci") && args.as_deref() == Some(&["mcp"][..]) {
            return Ok(done(Action::Unchanged, None));
        }
        return Ok(done(
            Action::Kept,
            Some(format!(
                "it already configures a `loci` server; kept as is (loci's default:\n{})",
                codex_snippet()
            )),
        ));
    }
    let mut entry = Table::new();
    entry.insert("command", value("loci"));
    entry.insert("args", value(Array::from_iter(["mcp"])));
    servers.insert("loci", Item::Table(entry));
    let mut text = doc.to_string();
    if !text.ends_with('\n') {
        text.push('\n');
    }
    write_atomically(path, &text)?;
    Ok(done(
        if existing.is_some() {
            Action::Updated
        } else {
            Action::Created
        },
        None,
    ))
}

/// A JSON text's value as `jsonc-parser` inserts it, its keys in the text's order (loci's
/// entries read `type`, `command`, `args`, as the agents' docs write them).
fn input_of(text: &str) -> CstInputValue {
    fn walk(node: &CstNode) -> CstInputValue {
        match node {
            CstNode::Container(CstContainerNode::Object(o)) => CstInputValue::Object(
                o.properties()
                    .iter()
                    .filter_map(|p| Some((p.name()?.decoded_value().ok()?, walk(&p.value()?))))
                    .collect(),
            ),
            CstNode::Container(CstContainerNode::Array(a)) => {
                CstInputValue::Array(a.elements().iter().map(walk).collect())
            }
            other => other
                .to_serde_value()
                .map_or(CstInputValue::Null, |v| to_input(&v)),
        }
    }
    CstRootNode::parse(text, &jsonc_parser::ParseOptions::default())
        .ok()
        .and_then(|root| root.value())
        .map_or(CstInputValue::Null, |v| walk(&v))
}

/// A JSON value as `jsonc-parser` inserts it.
fn to_input(v: &Json) -> CstInputValue {
    match v {
        Json::Null => CstInputValue::Null,
        Json::Bool(b) => CstInputValue::Bool(*b),
        Json::Number(n) => CstInputValue::Number(n.to_string()),
        Json::String(s) => CstInputValue::String(s.clone()),
        Json::Array(a) => CstInputValue::Array(a.iter().map(to_input).collect()),
        Json::Object(o) => {
            CstInputValue::Object(o.iter().map(|(k, v)| (k.clone(), to_input(v))).collect())
        }
    }
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
    let text = match existing.as_deref() {
        Some(s) if !s.trim().is_empty() => s,
        _ => "{}\n",
    };
    // JSONC: comments and trailing commas are kept as the user wrote them.
    let doc = match CstRootNode::parse(text, &jsonc_parser::ParseOptions::default()) {
        Ok(doc) => doc,
        Err(e) => {
            return Ok(done(
                Action::Skipped,
                Some(format!(
                    "cannot parse it as JSON with comments ({e}); add {snippet} to it by hand"
                )),
            ));
        }
    };
    let Some(top) = doc.object_value() else {
        return Ok(done(
            Action::Skipped,
            Some(format!("not a JSON object; add {snippet} to it by hand")),
        ));
    };
    let Some(servers) = top.object_value_or_create(t.servers_key) else {
        return Ok(done(
            Action::Skipped,
            Some(format!(
                "`{}` is not an object; add {snippet} to it by hand",
                t.servers_key
            )),
        ));
    };
    match servers.get("loci") {
        Some(current)
            if current.value().and_then(|v| v.to_serde_value()).as_ref() == Some(&entry) =>
        {
            return Ok(done(Action::Unchanged, None));
        }
        Some(_) => {
            return Ok(done(
                Action::Kept,
                Some(format!(
                    "it already configures a `loci` server; kept as is (loci's default: {})",
                    serde_json::to_string(&entry).unwrap_or_default()
                )),
            ));
        }
        None => {
            servers.append("loci", input_of(t.entry));
        }
    }
    let mut text = doc.to_string();
    if !text.ends_with('\n') {
        text.push('\n');
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn read(path: &Path) -> String {
        std::fs::read_to_string(path).unwrap_or_default()
    }

    /// A `.vscode/mcp.json` with comments and a trailing comma (VS Code accepts JSONC) gets
    /// loci's server; the comments, the other server and its formatting are kept; a second
    /// run changes nothing.
    #[test]
    fn a_jsonc_config_round_trips_with_its_comments() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root = dir.path();
        let file = root.join(".vscode/mcp.json");
        let _ = std::fs::create_dir_all(file.parent().unwrap_or(root));
        let jsonc = "{\n  // my servers\n  \"servers\": {\n    /* keep me */\n    \"other\": {\"command\": \"other\"},\n  },\n}\n";
        let _ = std::fs::write(&file, jsonc);
        let t = &JSON_TARGETS[2];
        let first = wire_json(root, t).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(first.action, Action::Updated, "{first:?}");
        let text = read(&file);
        expect_test::expect![[r#"
            {
              // my servers
              "servers": {
                /* keep me */
                "other": {"command": "other"},
                "loci": {
                  "type": "stdio",
                  "command": "loci",
                  "args": ["-C", "${workspaceFolder}", "mcp"],
                },
              },
            }
        "#]]
        .assert_eq(&text);
        let second = wire_json(root, t).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(second.action, Action::Unchanged);
        assert_eq!(read(&file), text);
    }

    /// Codex's `config.toml` gets `[mcp_servers.loci]`; the user's other servers, keys and
    /// comments are kept; a second run changes nothing; a `loci` entry of the user's own is
    /// kept.
    #[test]
    fn the_codex_config_round_trips_with_the_users_entries() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let config = dir.path().join(".codex/config.toml");
        let _ = std::fs::create_dir_all(config.parent().unwrap_or(dir.path()));
        let _ = std::fs::write(
            &config,
            "# my settings\nmodel = \"o3\"\n\n[mcp_servers.docs]\ncommand = \"docs-server\" # local\nargs = [\"--port\", \"1\"]\n",
        );
        let first = wire_codex(&config).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(first.action, Action::Updated, "{first:?}");
        let text = read(&config);
        expect_test::expect![[r#"
            # my settings
            model = "o3"

            [mcp_servers.docs]
            command = "docs-server" # local
            args = ["--port", "1"]

            [mcp_servers.loci]
            command = "loci"
            args = ["mcp"]
        "#]]
        .assert_eq(&text);
        assert_eq!(
            wire_codex(&config).map(|f| f.action).ok(),
            Some(Action::Unchanged)
        );
        assert_eq!(read(&config), text);

        // None yet: the file and its folder are created.
        let fresh = dir.path().join("home/.codex/config.toml");
        assert_eq!(
            wire_codex(&fresh).map(|f| f.action).ok(),
            Some(Action::Created)
        );
        assert_eq!(read(&fresh), codex_snippet());

        // The user's own entry is theirs; broken TOML is left alone.
        let _ = std::fs::write(&config, "[mcp_servers.loci]\ncommand = \"/opt/loci\"\n");
        assert_eq!(
            wire_codex(&config).map(|f| f.action).ok(),
            Some(Action::Kept)
        );
        let _ = std::fs::write(&config, "[mcp_servers\n");
        let skipped = wire_codex(&config).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(skipped.action, Action::Skipped);
        assert_eq!(read(&config), "[mcp_servers\n");
    }
}
