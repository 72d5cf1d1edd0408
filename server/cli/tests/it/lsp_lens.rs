//! The editor shows one truth: after an unsaved edit makes a claim stale, the server asks
//! the client to refresh its code lenses when it publishes the diagnostic, and the lens
//! then counts the stale memory the diagnostic reports — both from the buffer's overlay.
//! `loci lsp` as a real process over stdio.

use crate::lsp_support;

use lsp_support::{Lsp, loci};
use serde_json::json;

#[test]
fn fault_the_lens_said_0_stale_while_the_diagnostic_said_stale() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join("src")).unwrap();
    let before = "def hello():\n    return 1\n";
    std::fs::write(root.join("src/app.py"), before).unwrap();
    loci(&root, &["scan"]);
    loci(
        &root,
        &["remember", "src/app.py", "--text", "`hello()` returns one."],
    );
    let uri = format!("file://{}/src/app.py", root.display());

    let mut lsp = Lsp::start(&root);
    lsp.request(
        "initialize",
        json!({
            "processId": null,
            "rootUri": format!("file://{}", root.display()),
            "capabilities": {"workspace": {"codeLens": {"refreshSupport": true}}},
        }),
    );
    lsp.send(json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
    lsp.send(
        json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
        "textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": before}}}),
    );
    // An unsaved edit of the remembered function's body.
    lsp.send(
        json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
        "textDocument": {"uri": uri, "version": 2},
        "contentChanges": [{"text": "def hello():\n    return 2\n"}]}}),
    );
    let published = lsp.until("stale diagnostic", |v| {
        v["method"] == "textDocument/publishDiagnostics"
            && v["params"]["version"] == 2
            && v["params"]["diagnostics"].as_array().is_some_and(|d| {
                d.iter()
                    .any(|d| d["message"].as_str().unwrap_or("").contains("stale"))
            })
    });
    assert_eq!(published["params"]["uri"], json!(uri));
    // The lens is asked for again, and counts what the diagnostic says.
    lsp.until("codeLens refresh", |v| {
        v["method"] == "workspace/codeLens/refresh"
    });
    let lenses = lsp.request(
        "textDocument/codeLens",
        json!({"textDocument": {"uri": uri}}),
    );
    let lens = lenses[0].clone();
    let resolved = lsp.request("codeLens/resolve", lens);
    assert_eq!(resolved["command"]["title"], "1 memory · 1 stale");
}
