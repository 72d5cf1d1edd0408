//! Trust through every door: the same scenario asked through the CLI, through `loci mcp`
//! and through `loci lsp`'s commands gives the same warnings — an earlier decision stays
//! stale after a new one (item 1), an answer serving memory checks its files against the
//! disk (item 4), and memory false about what a question names is served with a banner
//! (item 3).

use crate::lsp_support;
use crate::mcp_support;

use std::path::Path;

use lsp_support::Lsp;
use mcp_support::{Mcp, run, write};
use serde_json::{Value, json};

fn cli_json(root: &Path, args: &[&str]) -> Value {
    let (_, out, err) = run(root, args);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: {e}: {out}{err}"))
}

/// The warnings of an envelope, sorted, as `path: reason`.
fn warnings(envelope: &Value) -> Vec<String> {
    let mut w: Vec<String> = envelope["stale_warnings"]
        .as_array()
        .unwrap_or_else(|| panic!("no stale_warnings in {envelope}"))
        .iter()
        .map(|w| {
            format!(
                "{}: {}",
                w["path"].as_str().unwrap(),
                w["reason"].as_str().unwrap()
            )
        })
        .collect();
    w.sort();
    w
}

#[test]
fn the_cli_mcp_and_lsp_give_the_same_warnings_about_memory() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "app.py", "def hello():\n    return 1\n");
    write(root, "other.py", "def other():\n    return 2\n");
    write(
        root,
        "config.py",
        "def parse_config(path):\n    return open(path).read()\n",
    );
    assert!(run(root, &["scan"]).0.success());
    let ok = |args: &[&str]| {
        let (status, out, err) = run(root, args);
        assert!(status.success(), "{args:?}: {out}{err}");
    };
    ok(&[
        "decide",
        "Keep `hello()` returning an int",
        "--subject",
        "app.py",
    ]);
    ok(&[
        "remember",
        "config.py",
        "--text",
        "Settings are read by `parse_config()`.",
    ]);
    write(root, "app.py", "def hello():\n    return \"one\"\n");
    write(
        root,
        "config.py",
        "def load_settings(path):\n    return open(path).read()\n",
    );
    ok(&["scan"]);
    // Item 1: a new, unrelated decision keeps the earlier one's stale marks.
    ok(&[
        "decide",
        "Unrelated: `other()` stays private",
        "--subject",
        "other.py",
    ]);
    let lint = cli_json(root, &["lint", "--json"]);
    let stale: Vec<String> = lint["result"]["stale"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| format!("{} {}", s["subject"].as_str().unwrap(), s["claim_text"]))
        .collect();
    assert!(
        stale
            .iter()
            .any(|s| s.starts_with("decision:1 \"hello()\"")),
        "{stale:?}"
    );
    // Item 4: edited on disk after the scan.
    write(root, "app.py", "def hello():\n    return 3\n");
    let why_cli = cli_json(root, &["why", "app.py:1", "--json"]);
    let context_cli = cli_json(
        root,
        &["context", "how are settings read by parse_config", "--json"],
    );

    let why_warnings = warnings(&why_cli);
    assert!(
        why_warnings.contains(&"app.py: changed on disk since the last scan".to_string()),
        "{why_warnings:?}"
    );
    assert_eq!(why_cli["freshness"]["changed_since_scan"], 1);
    // Item 3: the page about `parse_config()`, which the code no longer has, is served as
    // false.
    let banner = "⚠ memory `config.py` names `parse_config()`, which the code no longer has: it is false about what you asked until it is corrected (`loci lint`)";
    assert_eq!(context_cli["result"]["banners"], json!([banner]));

    // The MCP server maps the edit when it starts; asked the same, both doors then agree.
    let mut mcp = Mcp::start(root, &[]);
    mcp.initialize("trust-doors");
    let why_mcp = mcp.call("why", json!({"target": "app.py:1"}));
    let why_mcp = &why_mcp["result"]["structuredContent"];
    let context_mcp = mcp.call(
        "context",
        json!({"query": "how are settings read by parse_config"}),
    );
    let context_mcp = &context_mcp["result"]["structuredContent"];
    let why_cli = cli_json(root, &["why", "app.py:1", "--json"]);
    let context_cli = cli_json(
        root,
        &["context", "how are settings read by parse_config", "--json"],
    );
    assert_eq!(warnings(why_mcp), warnings(&why_cli));
    assert!(
        warnings(why_mcp)
            .iter()
            .any(|w| w.contains("claim `hello()` is stale")),
        "{why_mcp}"
    );
    assert_eq!(context_mcp["result"]["banners"], json!([banner]));
    assert_eq!(context_cli["result"]["banners"], json!([banner]));
    assert_eq!(warnings(context_mcp), warnings(&context_cli));
    let (status, _, _) = mcp.finish();
    assert!(status.success());

    // The language server's commands answer with the same envelopes.
    let canonical = root.canonicalize().unwrap();
    let mut lsp = Lsp::start(&canonical);
    lsp.request(
        "initialize",
        json!({"processId": null, "rootUri": format!("file://{}", canonical.display()), "capabilities": {}}),
    );
    lsp.send(json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
    let command = |lsp: &mut Lsp, name: &str, args: Value| {
        lsp.request(
            "workspace/executeCommand",
            json!({"command": name, "arguments": [args]}),
        )
    };
    let why_lsp = command(&mut lsp, "loci.why", json!({"target": "app.py:1"}));
    let context_lsp = command(
        &mut lsp,
        "loci.context",
        json!({"query": "how are settings read by parse_config"}),
    );
    assert_eq!(warnings(&why_lsp), warnings(&why_cli));
    assert_eq!(context_lsp["result"]["banners"], json!([banner]));
    assert_eq!(warnings(&context_lsp), warnings(&context_cli));
    // Item 1 in the editor: the earlier decision's stale mark is a diagnostic on the file.
    let uri = format!("file://{}/app.py", canonical.display());
    lsp.send(
        json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
        "textDocument": {"uri": uri, "languageId": "python", "version": 1,
                         "text": "def hello():\n    return 3\n"}}}),
    );
    let published = lsp.until("the stale decision's diagnostic", |v| {
        v["method"] == "textDocument/publishDiagnostics"
            && v["params"]["uri"] == json!(uri)
            && v["params"]["diagnostics"]
                .as_array()
                .is_some_and(|d| !d.is_empty())
    });
    let messages: Vec<&str> = published["params"]["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|d| d["message"].as_str())
        .collect();
    assert!(
        messages
            .iter()
            .any(|m| m.contains("decision:1") && m.contains("`hello()`") && m.contains("stale")),
        "{messages:?}"
    );
}
