//! `loci init --agents`: MCP configuration for Claude Code, Cursor and VS Code, the Codex
//! snippet, and the operator guide in AGENTS.md / CLAUDE.md. Idempotent to the byte;
//! content outside loci's markers and other servers are preserved; files loci cannot
//! parse are left untouched.

use crate::mcp_support;

use std::collections::BTreeMap;
use std::path::Path;

use mcp_support::{run, write};
use serde_json::{Value, json};

const FILES: &[&str] = &[
    ".mcp.json",
    ".cursor/mcp.json",
    ".vscode/mcp.json",
    "AGENTS.md",
    "CLAUDE.md",
];

fn snapshot(root: &Path) -> BTreeMap<&'static str, Option<Vec<u8>>> {
    FILES
        .iter()
        .map(|f| (*f, std::fs::read(root.join(f)).ok()))
        .collect()
}

fn read_json(root: &Path, rel: &str) -> Value {
    let text = std::fs::read_to_string(root.join(rel)).expect("read");
    serde_json::from_str(&text).expect("valid JSON")
}

fn init_agents(root: &Path) -> String {
    let (status, stdout, stderr) = run(root, &["init", "--agents"]);
    assert!(status.success(), "{stderr}");
    stdout
}

#[test]
fn init_agents_wires_every_agent_and_is_idempotent() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    write(root, "AGENTS.md", "# Team rules\n\nBe kind to the build.\n");
    write(
        root,
        ".mcp.json",
        "{\n  \"mcpServers\": {\n    \"other\": {\"command\": \"other-server\"}\n  },\n  \"zeta\": 1\n}\n",
    );
    let out = init_agents(root);
    assert!(out.contains("[mcp_servers.loci]"), "{out}");
    assert!(out.contains("~/.codex/config.toml"), "{out}");

    // Claude Code: merged into the existing file, other servers and keys kept in order.
    let text = std::fs::read_to_string(root.join(".mcp.json")).expect("read");
    let other = text.find("\"other\"").expect("other kept");
    let loci = text.find("\"loci\"").expect("loci added");
    let zeta = text.find("\"zeta\"").expect("zeta kept");
    assert!(other < loci && loci < zeta, "order preserved:\n{text}");
    let mcp = read_json(root, ".mcp.json");
    assert_eq!(
        mcp["mcpServers"]["other"],
        json!({"command": "other-server"})
    );
    assert_eq!(mcp["mcpServers"]["loci"]["command"], "loci");
    assert_eq!(mcp["mcpServers"]["loci"]["args"], json!(["mcp"]));

    // Cursor uses "mcpServers", VS Code "servers".
    let cursor = read_json(root, ".cursor/mcp.json");
    assert_eq!(cursor["mcpServers"]["loci"]["command"], "loci");
    let vscode = read_json(root, ".vscode/mcp.json");
    assert!(vscode.get("mcpServers").is_none());
    assert_eq!(vscode["servers"]["loci"]["type"], "stdio");
    assert_eq!(
        vscode["servers"]["loci"]["args"],
        json!(["-C", "${workspaceFolder}", "mcp"])
    );

    // The guide: appended after the existing content, between markers, once.
    let agents = std::fs::read_to_string(root.join("AGENTS.md")).expect("read");
    assert!(agents.starts_with("# Team rules\n\nBe kind to the build.\n\n<!-- loci:begin -->\n"));
    assert!(agents.ends_with("<!-- loci:end -->\n"));
    assert_eq!(agents.matches("<!-- loci:begin -->").count(), 1);
    assert!(agents.contains("session_begin") && agents.contains("session_end"));
    let claude = std::fs::read_to_string(root.join("CLAUDE.md")).expect("read");
    assert!(claude.starts_with("<!-- loci:begin -->\n"));

    // Twice changes nothing, byte for byte.
    let before = snapshot(root);
    let out = init_agents(root);
    assert_eq!(snapshot(root), before);
    assert_eq!(out.matches("unchanged").count(), FILES.len(), "{out}");
}

#[test]
fn init_agents_refreshes_its_section_and_never_clobbers() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    // A stale section between text the user owns.
    write(
        root,
        "CLAUDE.md",
        "Intro.\n\n<!-- loci:begin -->\nold guide\n<!-- loci:end -->\n\nOutro stays.\n",
    );
    // VS Code's mcp.json may hold comments (JSONC): loci's server is added, they stay.
    let jsonc = "{\n  // my servers\n  \"servers\": {}\n}\n";
    write(root, ".vscode/mcp.json", jsonc);
    // A user's own `loci` entry is kept.
    write(
        root,
        ".cursor/mcp.json",
        r#"{"mcpServers": {"loci": {"command": "/opt/bin/loci", "args": ["mcp"]}}}"#,
    );
    let out = init_agents(root);
    let claude = std::fs::read_to_string(root.join("CLAUDE.md")).expect("read");
    assert!(
        claude.starts_with("Intro.\n\n<!-- loci:begin -->\n## loci"),
        "{claude}"
    );
    assert!(
        claude.ends_with("<!-- loci:end -->\n\nOutro stays.\n"),
        "{claude}"
    );
    assert!(!claude.contains("old guide"));
    let vscode = std::fs::read_to_string(root.join(".vscode/mcp.json")).expect("read");
    assert!(
        vscode.starts_with("{\n  // my servers\n  \"servers\": {\n    \"loci\": {"),
        "{vscode}"
    );
    assert!(out.contains("updated   .vscode/mcp.json"), "{out}");
    // Broken JSON is left alone, with what to add by hand.
    write(root, ".mcp.json", "{ \"mcpServers\": ");
    let out = init_agents(root);
    assert!(out.contains("skipped   .mcp.json"), "{out}");
    assert!(
        out.contains("add \"mcpServers\""),
        "says what to add by hand: {out}"
    );
    assert_eq!(
        read_json(root, ".cursor/mcp.json")["mcpServers"]["loci"]["command"],
        "/opt/bin/loci"
    );
    assert!(out.contains("kept      .cursor/mcp.json"), "{out}");

    let before = snapshot(root);
    init_agents(root);
    assert_eq!(snapshot(root), before, "idempotent");

    // Unbalanced markers: left alone.
    write(root, "AGENTS.md", "<!-- loci:begin -->\nno end\n");
    let out = init_agents(root);
    assert!(out.contains("skipped   AGENTS.md"), "{out}");
    assert_eq!(
        std::fs::read_to_string(root.join("AGENTS.md")).expect("read"),
        "<!-- loci:begin -->\nno end\n"
    );
}

/// `--global` writes Codex's entry into `$HOME/.codex/config.toml` (a temporary HOME here),
/// keeping the user's other entries and comments; a second run changes nothing. Without
/// `--global`, nothing outside the workspace is written.
#[test]
fn init_agents_global_writes_codex_config_and_is_idempotent() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("repo");
    let home = dir.path().join("home");
    std::fs::create_dir_all(&root).expect("mkdir");
    let config = home.join(".codex/config.toml");
    let mine = "# mine\n[mcp_servers.docs]\ncommand = \"docs\"\n";
    write(&home, ".codex/config.toml", mine);
    let run_with_home = |args: &[&str]| {
        let out = std::process::Command::new(mcp_support::loci())
            .arg("-C")
            .arg(&root)
            .args(args)
            .env("HOME", &home)
            .env_remove("CODEX_HOME")
            .env_remove("LOCI_DB")
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run loci");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    // No consent, no write.
    let out = run_with_home(&["init", "--agents"]);
    assert!(out.contains("--global"), "{out}");
    assert_eq!(std::fs::read_to_string(&config).expect("read"), mine);

    let out = run_with_home(&["init", "--agents", "--global"]);
    assert!(out.contains("updated") && out.contains("(codex)"), "{out}");
    assert!(
        !out.contains("add (or run"),
        "no snippet once written: {out}"
    );
    let text = std::fs::read_to_string(&config).expect("read");
    assert_eq!(
        text,
        "# mine\n[mcp_servers.docs]\ncommand = \"docs\"\n\n[mcp_servers.loci]\ncommand = \"loci\"\nargs = [\"mcp\"]\n"
    );
    let out = run_with_home(&["init", "--agents", "--global"]);
    assert_eq!(std::fs::read_to_string(&config).expect("read"), text);
    assert_eq!(out.matches("unchanged").count(), FILES.len() + 1, "{out}");
}
