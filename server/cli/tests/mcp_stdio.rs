//! `loci mcp` as a real process over stdio: stdout carries only protocol even at
//! `RUST_LOG=trace` (case B21), malformed input gets `-32700` and the session goes on,
//! and the process exits cleanly when the client closes stdin.

mod mcp_support;

use mcp_support::{Mcp, write};
use serde_json::json;

#[test]
fn b21_stdout_is_only_json_rpc_at_trace_level() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    write(
        root,
        "src/lib.rs",
        "pub fn target() {}\n\nfn caller() { target(); }\n",
    );
    // No prior scan: the server's first refresh builds the map (and logs a lot).
    let mut mcp = Mcp::start(root, &[("RUST_LOG", "trace"), ("NO_COLOR", "1")]);
    let init = mcp.initialize("b21");
    assert_eq!(init["result"]["serverInfo"]["name"], "loci");
    mcp.send(&json!({"jsonrpc": "2.0", "id": 100, "method": "tools/list"}));
    let tools = mcp.response(100);
    assert!(
        tools["result"]["tools"]
            .as_array()
            .is_some_and(|t| !t.is_empty())
    );
    let r = mcp.call("symbol", json!({"name": "target"}));
    assert_eq!(
        r["result"]["structuredContent"]["result"][0]["line"], 0,
        "{r}"
    );
    mcp.send_raw("{ this is not json");
    let err = mcp.recv();
    assert_eq!(err["error"]["code"], -32700, "{err}");
    let r = mcp.call("callers", json!({"symbol": "target"}));
    assert_eq!(
        r["result"]["structuredContent"]["result"]["calls"][0]["path"],
        "src/lib.rs"
    );
    mcp.send(&json!({"jsonrpc": "2.0", "id": 101, "method": "ping"}));
    assert!(mcp.response(101)["result"].is_object());
    let (status, rest, stderr) = mcp.finish();
    assert!(status.success(), "exit status {status}");
    assert!(
        rest.is_empty(),
        "unexpected output after the last response: {rest:?}"
    );
    // The logs went somewhere: stderr.
    assert!(
        stderr.contains("TRACE") && stderr.contains("DEBUG"),
        "trace logs went to stderr"
    );
}

/// Issue 31, items 1 and 3 on the wire: `tools/list` declares an `outputSchema` for every
/// tool; a tool result's text is the answer as the CLI prints it (no JSON envelope) and
/// its structured content the envelope; an argument or domain error is a result with
/// `isError: true`, and only an unknown tool is a JSON-RPC error.
#[test]
fn answers_are_text_errors_are_results_and_every_tool_declares_its_output() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    write(
        root,
        "src/lib.rs",
        "pub fn target() {}\n\nfn caller() { target(); }\n",
    );
    let mut mcp = Mcp::start(root, &[("NO_COLOR", "1")]);
    mcp.initialize("issue31");
    let id = mcp.id();
    mcp.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"}));
    let tools = mcp.response(id)["result"]["tools"].clone();
    let tools = tools.as_array().expect("tools");
    assert_eq!(tools.len(), 35);
    for t in tools {
        let list = [
            "search",
            "symbol",
            "references",
            "recap",
            "fact_list",
            "memory_list",
            "topics",
        ]
        .contains(&t["name"].as_str().unwrap_or(""));
        assert_eq!(
            t["outputSchema"],
            json!({
                "type": "object",
                "properties": {
                    "result": {"type": if list { "array" } else { "object" }},
                    "page": {"type": "object"},
                    "error": {"type": "object"}
                },
                "anyOf": [{"required": ["result"]}, {"required": ["error"]}]
            }),
            "{}",
            t["name"]
        );
    }

    let r = mcp.call("callers", json!({"symbol": "target"}));
    assert_eq!(r["result"]["isError"], false, "{r}");
    assert_eq!(
        r["result"]["content"],
        json!([{"type": "text", "text":
            "definition src/lib.rs#target@function (src/lib.rs:1)\nsrc/lib.rs:3:15: call target in src/lib.rs#caller@function -> src/lib.rs#target@function (derived, 0.90)\n"}])
    );
    let envelope = &r["result"]["structuredContent"];
    let fields: Vec<&str> = envelope
        .as_object()
        .map(|o| o.keys().map(String::as_str).collect())
        .unwrap_or_default();
    assert_eq!(
        fields,
        [
            "capability",
            "freshness",
            "index",
            "limits",
            "result",
            "stale_warnings"
        ]
    );
    assert_eq!(envelope["result"]["calls"][0]["line"], 2);

    let r = mcp.call("why", json!({"target": "src/lib.rs:40"}));
    assert_eq!(
        (&r["result"]["isError"], &r["result"]["content"][0]["text"]),
        (
            &json!(true),
            &json!(
                "invalid_argument: invalid argument `target`: `src/lib.rs:40`: line 40 is past the end of `src/lib.rs`, which has 3 lines; fix `target` and call `why` again"
            )
        ),
        "{r}"
    );
    assert_eq!(
        r["result"]["structuredContent"],
        json!({"error": {
            "kind": "invalid_argument",
            "argument": "target",
            "retryable": false,
            "message": "invalid argument `target`: `src/lib.rs:40`: line 40 is past the end of `src/lib.rs`, which has 3 lines; fix `target` and call `why` again"
        }})
    );
    let r = mcp.call("no_such_tool", json!({}));
    assert_eq!(
        r["error"],
        json!({"code": -32602, "message": "unknown tool `no_such_tool`; call tools/list for the available tools", "data": {"argument": "name"}})
    );
    let (status, rest, _) = mcp.finish();
    assert!(status.success(), "exit status {status}");
    assert!(rest.is_empty(), "unexpected output: {rest:?}");
}
